/* Wine 8.0 has no bcryptprimitives.dll, whose ProcessPrng Rust's std (1.78 and later) calls for
 * every random number (HashMap seeds among them). This stand-in, put beside a test .exe only under
 * Wine, fills the buffer from advapi32's RtlGenRandom (exported as SystemFunction036), which Wine
 * has. Never shipped: Windows 10 and later have the real DLL. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG n = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        length -= n;
    }
    return TRUE;
}

/* Wine 8.0 has no api-ms-win-core-synch-l1-2-0.dll, from which Rust's std imports WaitOnAddress,
 * WakeByAddressSingle and WakeByAddressAll (its Mutex, Condvar and Once); Wine's kernelbase has
 * all three. This DLL only forwards them there (synch.def); its one function is the entry point a
 * DLL built without the C runtime needs. Never shipped: Windows 8 and later have the real API set. */
#include <windows.h>

BOOL WINAPI DllMainCRTStartup(HINSTANCE dll, DWORD reason, LPVOID reserved)
{
    (void)dll;
    (void)reason;
    (void)reserved;
    return TRUE;
}

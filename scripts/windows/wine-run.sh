#!/usr/bin/env bash
# Runs a Windows .exe under Wine as cargo's runner for x86_64-pc-windows-gnu
# (CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER), and as the end-to-end test's: the two shim DLLs
# Wine 8.0 lacks are put beside the .exe first, and Wine runs in the private prefix under target/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
exe="$1"
shift
shims="${NOTEBRIDGE_WINE_SHIMS:-$root/target/windows/shims}"
dir="$(dirname "$exe")"
for dll in bcryptprimitives.dll api-ms-win-core-synch-l1-2-0.dll; do
    [ -e "$dir/$dll" ] || cp "$shims/$dll" "$dir/$dll"
done
export WINEPREFIX="${WINEPREFIX:-$root/target/windows/wineprefix}"
export WINEDEBUG="${WINEDEBUG:--all}"
# No Wine window, no desktop integration, no Gecko/Mono install prompts.
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml,winemenubuilder.exe=}"
export DISPLAY=
# Wine turns the Unix arguments and environment into UTF-16 through the Unix locale's charset: in a
# clean environment (C, ASCII) a non-ASCII path would arrive mangled.
export LC_ALL=C.UTF-8
exec wine "$exe" "$@"

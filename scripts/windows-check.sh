#!/usr/bin/env bash
# Builds notebridge for Windows (x86_64-pc-windows-gnu) on a Debian machine and runs it under Wine:
# the library's unit tests, the whole integration suite (tests/it, built for Windows, the test
# servers running inside it under Wine too), then the end-to-end test of the Windows binary driven
# from the host against the test servers running natively (tests/it/windows_exe.rs). Installs what
# it needs with apt-get when missing (CI runs as root on a fresh Debian machine). Its own target
# folder, target/windows, and Wine prefix, target/windows/wineprefix, leave the host build alone.
#
#   scripts/windows-check.sh            # everything
#   scripts/windows-check.sh --no-e2e   # build and unit tests only
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
e2e=1
[ "${1:-}" = "--no-e2e" ] && e2e=0

# Debian's Rust 1.96 with the std sources (std is built for the target with -Zbuild-std), the
# MinGW-w64 linker and Wine 8.0 (`wine64` is the 64-bit loader alone; the `wine` and `wineboot`
# commands come with `wine`).
packages=(cargo-web rustc-web rust-web-src gcc-mingw-w64-x86-64 wine64 wine)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "windows-check: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Debian's Rust builds the Windows binary: it must be at least the version Cargo.toml declares
# (bookworm's own rustc-web is older; its security suite carries a newer one, which apt finds once
# its lists are refreshed).
declared=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
debian=$(/usr/bin/rustc --version | awk '{print $2}')
if [ "$(printf '%s\n%s\n' "$declared" "$debian" | sort -V | head -n1)" != "$declared" ]; then
    echo "windows-check: Debian's rustc is $debian, older than the rust-version $declared that" \
        "Cargo.toml declares; refresh apt's lists (apt-get update) and upgrade rustc-web," \
        "cargo-web and rust-web-src from the security suite" >&2
    exit 2
fi

# `win_cargo SUBCOMMAND ARGS...`: the target's flags go right after the subcommand, before any `--`
# that hands the rest to the test binaries.
win_cargo() {
    local sub=$1
    shift
    RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 \
        CARGO_TARGET_DIR="$root/target/windows" \
        CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
        CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$root/scripts/windows/wine-run.sh" \
        /usr/bin/cargo "$sub" -Zbuild-std=std,panic_abort --target x86_64-pc-windows-gnu --locked "$@"
}

# The two DLLs Wine 8.0 lacks and Rust's std imports (scripts/windows/*.c, *.def).
shims="$root/target/windows/shims"
mkdir -p "$shims"
x86_64-w64-mingw32-gcc -O2 -shared -o "$shims/bcryptprimitives.dll" \
    scripts/windows/bcryptprimitives.c scripts/windows/bcryptprimitives.def -ladvapi32
x86_64-w64-mingw32-gcc -shared -nostdlib -o "$shims/api-ms-win-core-synch-l1-2-0.dll" \
    scripts/windows/synch.c scripts/windows/synch.def

export WINEPREFIX="$root/target/windows/wineprefix"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml,winemenubuilder.exe="
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    DISPLAY= wineboot -i >/dev/null 2>&1 || true
fi

start=$(date +%s)
# Tests that need what Wine does not do: keep a file's ACL (Wine 8.0's SetNamedSecurityInfoW
# succeeds and stores nothing, and reading the ACL back gives one made from the Unix mode, with
# Everyone), so the owner-only ACL is checked by the SDDL tests (platform::acl) and by reading
# windows.rs, not here. First the library's, then the integration suite's: those about the check
# itself (`doctor`'s `database_mode`, `login`'s private database). The integration tests that only
# run `doctor` on the way accept that one check failing under Wine alone
# (tests/it/bin_support.rs, `doctor_passed`).
no_acl_under_wine=(
    platform::tests::a_file_made_private_is_private_and_one_made_open_is_not
    store::tests::creates_folder_and_file_private_to_their_owner
    cli::doctor::tests::a_notion_port_that_refuses_fails_at_the_timeout
    cli::doctor::tests::a_notion_that_accepts_and_never_answers_fails_at_the_timeout
)
no_acl_under_wine_it=(
    auth_login::happy_path_json_stores_the_account_privately
    doctor_cli::all_checks_pass_with_one_graph_request_and_no_notion_write
    doctor_cli::an_unreachable_notion_fails_its_checks_with_what_was_tried_and_doctor_ends
    doctor_cli::doctor_says_which_way_the_notebooks_take_and_what_the_file_permission_would_save
    doctor_cli::each_failing_check_names_itself_with_its_exit_code
)
skips=()
for t in "${no_acl_under_wine[@]}"; do skips+=(--skip "$t"); done
win_cargo test --lib -- --exact "${skips[@]}"
after_unit=$(date +%s)
echo "windows-check: unit tests under Wine passed ($((after_unit - start)) s with the build)"

if [ "$e2e" = 1 ]; then
    # The integration suite as a Windows program: every test's binary runs in a clean environment
    # whose user folders (%LOCALAPPDATA%, %APPDATA%, %USERPROFILE%) are the test's own
    # (tests/it/bin_support.rs). Four at a time: most of a test's time is waiting on a process
    # or on the test servers, and Wine starts a process in a second or two.
    skips=()
    for t in "${no_acl_under_wine_it[@]}"; do skips+=(--skip "$t"); done
    # The tests start notebridge.exe themselves (Wine runs it as a child of the test's .exe), so
    # the shims go beside it too: the runner only places them beside the .exe it is handed.
    bin_dir="$root/target/windows/x86_64-pc-windows-gnu/debug"
    mkdir -p "$bin_dir"
    cp "$shims/bcryptprimitives.dll" "$shims/api-ms-win-core-synch-l1-2-0.dll" "$bin_dir/"
    win_cargo test --test it -- --exact --test-threads=4 "${skips[@]}"
    after_it=$(date +%s)
    echo "windows-check: the integration suite under Wine passed ($((after_it - after_unit)) s with the build)"

    # The binary as the integration tests built it (with the test-only crash points, a kill at a
    # chosen point), driven by the host's test binary under Wine: the state database found in the
    # prefix's own %LOCALAPPDATA%, arguments and paths as a Unix caller hands them to Wine.
    exe="$root/target/windows/x86_64-pc-windows-gnu/debug/notebridge.exe"
    NOTEBRIDGE_WINDOWS_EXE="$exe" \
        NOTEBRIDGE_WINDOWS_RUNNER="$root/scripts/windows/wine-run.sh" \
        cargo test --locked --test it windows_exe -- --nocapture
    echo "windows-check: the end-to-end run under Wine passed ($(($(date +%s) - after_it)) s)"
fi

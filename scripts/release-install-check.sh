#!/usr/bin/env bash
# Builds the Linux x86_64 release the way the release workflow does and installs it the way a person
# without Rust would, from a copy of the release served on 127.0.0.1:
#   1. `dist` at the version `dist-workspace.toml` names: the one on PATH when it is that version,
#      else `cargo install`ed into `target/release-install/tools` (kept there for the next run);
#   2. a clean checkout of HEAD (uncommitted changes are not in it), and `scripts/release-check.sh`
#      (the workflow matches the config; what ships; the packages);
#   3. from it, with `dist build` as the release workflow runs it (`--artifacts=local --target
#      x86_64-unknown-linux-gnu`, then `--artifacts=global`): the `.tar.xz`, its `.sha256`,
#      `sha256.sum`, `notebridge-installer.sh` and `notebridge-installer.ps1`;
#   4. the release served at the path it has on GitHub, and the installer's one-liner run against it
#      (`NOTEBRIDGE_INSTALLER_GITHUB_BASE_URL`, the installer's switch for a mirror of GitHub) with a
#      fresh HOME and a PATH without cargo, rustc or rustup; then the installed `notebridge`, found
#      through the PATH line the installer wrote, runs `--version`, `doctor --help` and an offline
#      `convert` whose output must equal the test suite's snapshot; the same with CARGO_HOME set;
#   5. the archive with one byte changed: the installer refuses it (checksum) and installs nothing;
#   6. the PowerShell installer (not run here: no PowerShell) names the Windows zip, the
#      `notebridge.exe` in it, and adds its folder to the user's PATH.
# Everything it makes stays in `target/release-install`. Needs git, python3, curl, xz and the
# crates.io index (steps 1-3).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/target/release-install
triple=x86_64-unknown-linux-gnu
archive=notebridge-$triple.tar.xz
stamp() { date +%s; }
fail() {
    echo "release-install-check: $*" >&2
    exit 1
}

want=$(sed -n 's/^cargo-dist-version = "\(.*\)"/\1/p' dist-workspace.toml)
version=$(sed -n '/^\[package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
repository=$(sed -n '/^\[package\]/,/^\[/s/^repository = "\(.*\)"/\1/p' Cargo.toml)
mkdir -p "$work"

echo "== 1. dist $want"
dist_version() { "$1" --version 2>/dev/null | awk '{print $2}'; }
if command -v dist >/dev/null && [ "$(dist_version dist)" = "$want" ]; then
    dist=$(command -v dist)
else
    dist=$work/tools/bin/dist
    if [ ! -x "$dist" ] || [ "$(dist_version "$dist")" != "$want" ]; then
        t=$(stamp)
        cargo install --quiet --locked cargo-dist --version "$want" \
            --root "$work/tools" --target-dir "$work/tools/build"
        echo "installed dist $want in $(($(stamp) - t)) s"
        rm -rf "$work/tools/build"
    fi
fi
echo "dist: $dist ($(dist_version "$dist"))"

echo "== 2. a clean checkout of HEAD; scripts/release-check.sh"
src=$work/src
if [ ! -d "$src/.git" ]; then
    rm -rf "$src"
    git clone --quiet --no-checkout "$root" "$src"
fi
# Files that did not change keep their times, so an unchanged build is not done again.
git -C "$src" fetch --quiet "$root" HEAD
git -C "$src" checkout --quiet --force --detach FETCH_HEAD
git -C "$src" clean --quiet -ffdx
commit=$(git -C "$src" rev-parse --short HEAD)
# Here, not in the checkout: inside this repository's `target/` the vendored parser would take
# this repository for its workspace.
PATH="$(dirname "$dist"):$PATH" scripts/release-check.sh

echo "== 3. the release, built from it"
# dist writes the artifacts to the checkout's `target/distrib` (`git clean` emptied it); cargo
# builds in `target/release-install/target`, kept between runs.
distrib=$src/target/distrib
t=$(stamp)
# As the workflow does: the target's archive, then the installers and `sha256.sum` from the
# manifest it left in `target/distrib` (the shell installer carries the archive's SHA-256). One run with `--target` and
# `--artifacts=all` would leave out the PowerShell installer: it plans no Windows build.
(
    cd "$src"
    export CARGO_TARGET_DIR=$work/target
    "$dist" build --tag "v$version" --artifacts=local --target "$triple" --output-format=json \
        >"$work/dist-local.json"
    # The global step reads the archives' checksums from the local steps' manifests.
    cp "$work/dist-local.json" "$distrib/$triple-dist-manifest.json"
    "$dist" build --tag "v$version" --artifacts=global --output-format=json >"$work/dist-global.json"
)
built=$(($(stamp) - t))
for f in "$archive" "$archive.sha256" sha256.sum notebridge-installer.sh notebridge-installer.ps1; do
    [ -s "$distrib/$f" ] || fail "dist built no $f (in $distrib)"
done
(cd "$distrib" && sha256sum --quiet -c "$archive.sha256") || fail "$archive.sha256 does not match"
grep -q " \*\?$archive\$" "$distrib/sha256.sum" || fail "sha256.sum does not list $archive"
size=$(stat -c %s "$distrib/$archive")
binsize=$(tar -xJOf "$distrib/$archive" "notebridge-$triple/notebridge" | wc -c)
echo "built $commit in $built s: $archive $size bytes, notebridge $binsize bytes"

echo "== 4. installed as a person would"
# The release at the path it has on GitHub (`<repository>/releases/download/v<version>/` and
# `.../releases/latest/download/`), served on 127.0.0.1 alone.
serve_release() { # DIR: the served root; copies the artifacts in
    local rel=$1${repository#https://github.com}/releases
    mkdir -p "$rel/download" "$rel/latest"
    cp -r "$distrib" "$rel/download/v$version"
    ln -s "../download/v$version" "$rel/latest/download"
}
server_pid=
stop_server() { [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true; }
trap stop_server EXIT
start_server() { # DIR: serves it; sets base (the server's URL)
    stop_server
    rm -f "$work/port"
    python3 - "$1" "$work/port" "$work/requests.log" <<'PY' &
import functools, http.server, sys
root, port_file, log_file = sys.argv[1:]
log = open(log_file, "a", buffering=1)
class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        log.write(f"{self.command} {self.path} {args[1] if len(args) > 1 else ''}\n")
server = http.server.ThreadingHTTPServer(
    ("127.0.0.1", 0), functools.partial(Handler, directory=root))
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os; os.rename(port_file + ".tmp", port_file)
server.serve_forever()
PY
    server_pid=$!
    for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
    [ -s "$work/port" ] || fail "the HTTP server did not start"
    base=http://127.0.0.1:$(cat "$work/port")
}
# A PATH with the system's commands but without Rust: every command of /usr/local/bin, /usr/bin and
# /bin except cargo, rustc, rustup and their kin.
nopath=$work/path-without-rust
rm -rf "$nopath"
mkdir -p "$nopath"
for f in /usr/local/bin/* /usr/bin/* /bin/*; do
    name=${f##*/}
    case $name in cargo* | rust* | clippy-driver) continue ;; esac
    [ -e "$nopath/$name" ] || ln -s "$f" "$nopath/$name"
done
for tool in cargo rustc rustup; do
    if PATH=$nopath command -v "$tool" >/dev/null; then fail "$tool is on the PATH without Rust"; fi
done
# A person's shell: a fresh HOME, nothing of this shell's environment.
as_person() { # HOME [VAR=VALUE...] -- COMMAND...
    local home=$1
    shift
    local vars=()
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    env -i HOME="$home" PATH="$nopath" SHELL=/bin/bash LANG=C.UTF-8 "${vars[@]}" "$@"
}
one_liner() { # the one a release page shows, against the local server
    echo "curl --proto '=http' -LsSf $base${repository#https://github.com}/releases/latest/download/notebridge-installer.sh | sh"
}

served=$work/served
rm -rf "$served" "$work/requests.log"
serve_release "$served"
start_server "$served"
# The snapshot's body: after its header (from the first `---` line to the second).
expected=$(sed '1,/^---$/d' tests/it/snapshots/it__convert_cli__human-11-tables.html.snap)
check_install() { # HOME BIN_DIR [VAR=VALUE...]
    local home=$1 bindir=$2
    shift 2
    rm -rf "$home"
    mkdir -p "$home"
    as_person "$home" NOTEBRIDGE_INSTALLER_GITHUB_BASE_URL="$base" "$@" -- \
        sh -c "$(one_liner)" >"$home.log" 2>&1 || { cat "$home.log"; fail "the installer failed"; }
    [ -x "$bindir/notebridge" ] || { cat "$home.log"; fail "no $bindir/notebridge"; }
    # A new login shell finds it through the line the installer added to ~/.profile.
    local run=(as_person "$home" "$@" -- sh -c '. "$HOME/.profile" && exec notebridge "$@"' sh)
    [ "$(as_person "$home" "$@" -- sh -c '. "$HOME/.profile" && command -v notebridge')" = \
        "$bindir/notebridge" ] || fail "a login shell does not find $bindir/notebridge"
    [ "$("${run[@]}" --version)" = "notebridge $version" ] || fail "--version: $("${run[@]}" --version)"
    local got
    got=$("${run[@]}" doctor --help) || fail "doctor --help failed"
    grep -q '^Usage: notebridge doctor' <<<"$got" || fail "doctor --help: $got"
    got=$("${run[@]}" convert "$root/fixtures/11-tables.html")
    [ "$got" = "$expected" ] || {
        diff <(echo "$expected") <(echo "$got") >&2 || true
        fail "the installed convert differs from tests/it/snapshots (11-tables.html)"
    }
    echo "installed $bindir/notebridge: --version, doctor --help and convert as tested"
}
check_install "$work/home" "$work/home/.cargo/bin"
grep -q "GET ${repository#https://github.com}/releases/download/v$version/$archive 200" \
    "$work/requests.log" || fail "the installer did not download $archive from the server"
check_install "$work/home-cargo" "$work/home-cargo/cargo-home/bin" \
    CARGO_HOME="$work/home-cargo/cargo-home"

echo "== 5. a damaged archive is refused"
damaged=$work/served-damaged
rm -rf "$damaged"
serve_release "$damaged"
python3 - "$damaged${repository#https://github.com}/releases/download/v$version/$archive" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0x01
open(path, "wb").write(data)
PY
start_server "$damaged"
home=$work/home-damaged
rm -rf "$home"
mkdir -p "$home"
if as_person "$home" NOTEBRIDGE_INSTALLER_GITHUB_BASE_URL="$base" -- sh -c "$(one_liner)" \
    >"$home.log" 2>&1; then
    cat "$home.log"
    fail "the installer installed a damaged archive"
fi
grep -q 'checksum mismatch' "$home.log" || { cat "$home.log"; fail "refused, but not for its checksum"; }
[ ! -e "$home/.cargo/bin/notebridge" ] || fail "a damaged archive left $home/.cargo/bin/notebridge"
echo "refused: $(grep -m1 'checksum mismatch' "$home.log" | sed 's/^ *//'), nothing installed"
stop_server

echo "== 6. the PowerShell installer (read, not run)"
python3 - "$distrib/notebridge-installer.ps1" "$repository/releases/download/v$version" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
url = sys.argv[2]
def need(pattern, what):
    if not re.search(pattern, text, re.S):
        sys.exit(f"release-install-check: the PowerShell installer does not {what}")
need(r'"x86_64-pc-windows-msvc" = @\{\s*"artifact_name" = "notebridge-x86_64-pc-windows-msvc\.zip"\s*"bins" = @\("notebridge\.exe"\)',
     "map x86_64 Windows to notebridge-x86_64-pc-windows-msvc.zip holding notebridge.exe")
need(re.escape(f'"{url}"'), f"download from {url}")
need(r'Expand-Archive -Path \$dir_path', "unpack the zip")
need(r'Join-Path \$base_dir "\.cargo".*\$dest_dir = Join-Path \$root "bin"',
     "install into %USERPROFILE%\\.cargo\\bin ($env:CARGO_HOME\\bin when set)")
need(r"if \(Add-Path \$dest_dir\)", "add the install folder to PATH")
need(r"registry::HKEY_CURRENT_USER\\Environment'.*Set-ItemProperty -Type ExpandString -LiteralPath \$RegistryPath Path \$NewPath",
     "add the install folder to the user's PATH (HKCU\\Environment)")
print("the PowerShell installer fetches notebridge-x86_64-pc-windows-msvc.zip, installs notebridge.exe, adds its folder to the user's PATH")
PY
echo "release-install-check: ok ($archive $size bytes, built in $built s)"

#!/usr/bin/env bash
# Checks the release set-up locally, building and publishing nothing:
#   1. `.github/workflows/release.yml` is what `dist` writes from `dist-workspace.toml`
#      (`dist generate --check`), and `dist plan` lists, for each of the five targets, its archive
#      and checksum, plus the two installers;
#   2. what ships is the `notebridge` package alone, without the test-only `crash-points` feature
#      and without the test servers (`testkit/`);
#   3. both packages to publish package: the patched parser (`notebridge-onenote-parser`, dry-run
#      publish) and notebridge (its file list and a package without a lock file: its lock file
#      needs the parser on crates.io first).
# Needs `dist` 0.34.0 on PATH (`cargo install cargo-dist --locked --version 0.34.0`) and the
# crates.io index (step 3).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v dist >/dev/null; then
    echo "release-check: dist is not installed (cargo install cargo-dist --locked --version 0.34.0)" >&2
    exit 2
fi
want=$(sed -n 's/^cargo-dist-version = "\(.*\)"/\1/p' dist-workspace.toml)
have=$(dist --version | awk '{print $2}')
if [ "$want" != "$have" ]; then
    echo "release-check: dist-workspace.toml asks for dist $want, this is $have" >&2
    exit 2
fi

echo "== 1. the workflow matches the config; the plan"
dist generate --check
plan=$(mktemp)
trap 'rm -f "$plan"' EXIT
dist plan --output-format=json --no-local-paths >"$plan" 2>/dev/null
python3 - "$plan" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
artifacts = set(plan["artifacts"])
want = {"notebridge-installer.sh", "notebridge-installer.ps1", "sha256.sum"}
for target, ext in [
    ("aarch64-apple-darwin", ".tar.xz"),
    ("x86_64-apple-darwin", ".tar.xz"),
    ("aarch64-unknown-linux-gnu", ".tar.xz"),
    ("x86_64-unknown-linux-gnu", ".tar.xz"),
    ("x86_64-pc-windows-msvc", ".zip"),
]:
    archive = f"notebridge-{target}{ext}"
    want |= {archive, archive + ".sha256"}
missing = sorted(want - artifacts)
apps = [r["app_name"] for r in plan["releases"]]
assert not missing, f"missing from the plan: {missing}"
assert apps == ["notebridge"], f"releases: {apps}"
print(f"plan: {len(artifacts)} artifacts, releases {apps}")
PY

echo "== 2. what ships"
features=$(cargo tree --locked -p notebridge -e no-dev --depth 0 -f '{f}' | head -1)
case ",$features," in
    *,crash-points,*) echo "release-check: crash-points is on in the shipped build" >&2; exit 1 ;;
esac
if cargo tree --locked -p notebridge -e no-dev --prefix none | grep -q '^notebridge-testkit'; then
    echo "release-check: the shipped build depends on the testkit" >&2
    exit 1
fi
grep -q '^precise-builds = true' dist-workspace.toml || {
    echo "release-check: dist would build the whole workspace (testkit included)" >&2
    exit 1
}
echo "shipped build: notebridge only, features [${features}]"

echo "== 3. the packages"
(cd vendor/onenote_parser && cargo publish --dry-run --no-verify --allow-dirty --quiet)
rm -rf vendor/onenote_parser/target
cargo package --list --allow-dirty --quiet >/dev/null
cargo package --no-verify --exclude-lockfile --allow-dirty --quiet
echo "release-check: ok"

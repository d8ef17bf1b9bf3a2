#!/usr/bin/env bash
# Checks that the Rust version the workspace declares (`rust-version` in Cargo.toml, which README's
# set-up repeats) builds it: no package in Cargo.lock, for any target, asks for a newer rustc.
# `cargo install --locked` on the declared version would otherwise fail on the first such package.
# Reads `cargo metadata` (which downloads the locked packages of every target it lacks) and README.
set -euo pipefail
cd "$(dirname "$0")/.."

meta=$(mktemp)
trap 'rm -f "$meta"' EXIT
cargo metadata --format-version 1 --locked >"$meta"
python3 - "$meta" README.md <<'PY'
import json, re, sys

meta = json.load(open(sys.argv[1]))
readme = open(sys.argv[2], encoding="utf-8").read()


def version(v):
    return tuple(int(x) for x in v.split("."))[:2]


ours = {p["id"] for p in meta["packages"] if p["id"] in meta["workspace_members"]}
declared = {p["rust_version"] for p in meta["packages"] if p["id"] in ours}
if len(declared) != 1 or None in declared:
    sys.exit(f"rust-version-check: the workspace's packages declare {sorted(map(str, declared))}: one version, please")
declared = declared.pop()
newer = sorted(
    (p["rust_version"], p["name"], p["version"])
    for p in meta["packages"]
    if p["id"] not in ours and p.get("rust_version") and version(p["rust_version"]) > version(declared)
)
failed = False
if newer:
    failed = True
    print(f"rust-version-check: Cargo.toml declares rust-version {declared}, but locked packages need more:")
    for need, name, v in newer:
        print(f"  {name} {v} needs rustc {need}")
    top = max((version(n), n) for n, _, _ in newer)[1]
    print(f"  declare rust-version = \"{top}\" (and README's set-up), or lock older versions of those packages")
said = set(re.findall(r"Rust toolchain \((\d+\.\d+) or newer\)", readme))
if said != {declared}:
    failed = True
    print(f"rust-version-check: README states Rust {sorted(said) or 'nowhere'} or newer; Cargo.toml declares {declared}")
if failed:
    sys.exit(1)
print(f"rust-version-check: rust-version {declared} builds every locked package ({len(meta['packages'])}); README says the same")
PY

#!/usr/bin/env bash
# The test command (README "Two commands"). On a fresh Debian 12 machine it
# installs what the tests need, boots a private systemd user manager when none
# is reachable (tests/support/user-manager.sh: the scoped tests need a real
# `systemd --user`), runs the gates (fmt, clippy) and every test (the unit
# tests, and the integration suite: one binary, tests/suite/), and stops the
# manager it booted.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*" >&2; }

missing=()
for pkg in systemd dbus dbus-user-session; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}"
fi
if ! command -v python3 >/dev/null 2>&1; then
    log "installing python3"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq python3 python3-pip
fi
if ! python3 -c 'import croniter' >/dev/null 2>&1; then
    log "installing croniter (the DST oracle of tests/suite/dst_oracles.rs)"
    python3 -m pip --version >/dev/null 2>&1 || apt-get install -y -qq python3-pip
    python3 -m pip install --quiet --root-user-action=ignore --break-system-packages 'croniter==7.0.0'
fi
if ! cargo nextest --version >/dev/null 2>&1; then
    log "installing cargo-nextest"
    cargo install --locked cargo-nextest
fi

log "user manager"
eval "$(tests/support/user-manager.sh start)"
trap 'tests/support/user-manager.sh stop || true' EXIT
export XDG_RUNTIME_DIR DBUS_SESSION_BUS_ADDRESS

log "cargo fmt --check"
cargo fmt --all --check
log "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
log "build"
cargo build --workspace --all-targets
log "tests"
cargo nextest run --workspace --no-fail-fast --failure-output final
log "doc tests"
cargo test --workspace --doc -q
log "all green"

#!/usr/bin/env bash
# The test command (README "Two commands"). On a fresh Debian 12 machine it
# installs what the tests need, boots a private systemd user manager when none
# is reachable (tests/support/user-manager.sh: the scoped tests need a real
# `systemd --user`), starts a throwaway PostgreSQL server in a temp data
# directory (tests/support/pg-server.sh: the cluster tests and the ledger's
# PostgreSQL pass), runs the gates (fmt, clippy) and every test (the unit
# tests, and the integration suite: one binary, tests/suite/), then the
# ledger's tests again with every home on PostgreSQL, and stops what it
# started.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*" >&2; }

missing=()
# postgresql: the cluster tests' server; iproute2: their network namespaces;
# groff-base and binutils: the man pages are rendered and the .deb's
# binaries stripped (tests/suite/packaging.rs).
for pkg in systemd dbus dbus-user-session postgresql iproute2 groff-base binutils; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}"
fi
# The documented alerting rules are checked and unit-tested with promtool
# (tests/suite/operators.rs); Debian ships it in the prometheus package.
if ! command -v promtool >/dev/null 2>&1; then
    log "installing promtool (the documented Prometheus rules' tests run it)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends prometheus
fi
# The status page is loaded in a real headless browser (tests/suite/http_endpoint.rs).
if ! command -v chromium >/dev/null 2>&1; then
    log "installing chromium (the status page's test loads it headless)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium
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
if ! python3 -c 'import jsonschema' >/dev/null 2>&1; then
    log "installing jsonschema (the validator of docs/schemas/ in tests/suite/json_schemas.rs)"
    python3 -m pip --version >/dev/null 2>&1 || apt-get install -y -qq python3-pip
    python3 -m pip install --quiet --root-user-action=ignore --break-system-packages 'jsonschema==4.26.0'
fi
# The real Hermes Agent, for the tests that share its home: a venv created
# once and cached outside the repository (about 30 s and 230 MB).
HERMES_AGENT_VERSION=0.19.0
export HERMES_CRON_TEST_HERMES_VENV=${HERMES_CRON_TEST_HERMES_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/hermes-cron-tests/hermes-agent-$HERMES_AGENT_VERSION}
if [ ! -e "$HERMES_CRON_TEST_HERMES_VENV/.installed" ]; then
    log "installing hermes-agent==$HERMES_AGENT_VERSION into $HERMES_CRON_TEST_HERMES_VENV"
    if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq python3-venv
    fi
    rm -rf "$HERMES_CRON_TEST_HERMES_VENV"
    mkdir -p "$(dirname "$HERMES_CRON_TEST_HERMES_VENV")"
    # A venv cannot be moved (its scripts name it): built in place, marked
    # complete last.
    python3 -m venv "$HERMES_CRON_TEST_HERMES_VENV"
    "$HERMES_CRON_TEST_HERMES_VENV/bin/pip" install --quiet --disable-pip-version-check \
        "hermes-agent==$HERMES_AGENT_VERSION"
    touch "$HERMES_CRON_TEST_HERMES_VENV/.installed"
fi

if ! cargo nextest --version >/dev/null 2>&1; then
    log "installing cargo-nextest"
    cargo install --locked cargo-nextest
fi

log "user manager"
eval "$(tests/support/user-manager.sh start)"
PG_TEST_DIR=
PACKAGES_DIR=
trap 'tests/support/user-manager.sh stop || true; [ -z "$PG_TEST_DIR" ] || tests/support/pg-server.sh stop "$PG_TEST_DIR" || true; [ -z "$PACKAGES_DIR" ] || rm -rf "$PACKAGES_DIR"' EXIT
export XDG_RUNTIME_DIR DBUS_SESSION_BUS_ADDRESS

log "PostgreSQL (a throwaway server in a temp data directory)"
eval "$(tests/support/pg-server.sh start)"
export HERMES_CRON_TEST_PG

log "cargo fmt --check"
cargo fmt --all --check
log "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
log "build"
cargo build --workspace --all-targets
# The wheel, a `cargo install` and the .deb, from the tree, for the packaging
# tests; before the tests, as it relinks target/debug's binaries.
log "packages (tests/support/packages.sh)"
PACKAGES_DIR=$(mktemp -d -t hermes-cron-packages.XXXXXX)
eval "$(tests/support/packages.sh "$PACKAGES_DIR")"
export HERMES_CRON_TEST_PACKAGES
log "tests"
cargo nextest run --workspace --no-fail-fast --failure-output final
# The same tests with every home's ledger in a fresh schema of that server:
# all of them but those about SQLite itself (its file, journal, pragmas, a
# full disk under it) and those that never open a ledger (schedules, config,
# the D-Bus edge, the oracles).
log "tests on the PostgreSQL ledger"
HERMES_CRON_TEST_LEDGER=postgresql cargo nextest run --workspace --no-fail-fast --failure-output final \
    -E "$(cat tests/postgres-pass.filter)"
log "the Hermes provider plugin's own tests (integrations/hermes, Hermes's interpreter)"
"$HERMES_CRON_TEST_HERMES_VENV/bin/python" -m unittest discover -s integrations/hermes/tests
log "doc tests"
cargo test --workspace --doc -q
log "all green"

#!/usr/bin/env bash
# Build the three ways hermes-cron is installed, from the tree, for the
# packaging tests (tests/suite/packaging.rs):
#
#   eval "$(tests/support/packages.sh OUT_DIR)"   # sets HERMES_CRON_TEST_PACKAGES=OUT_DIR
#
#   OUT_DIR/wheel/hermes_cron-*.whl   maturin, bindings = "bin" (pyproject.toml)
#   OUT_DIR/cargo/bin/                `cargo install --locked --path . --root OUT_DIR/cargo`
#   OUT_DIR/deb/hermes-cron_*.deb     packaging/deb/build.sh from those binaries
#
# All three build with the dev profile into the usual target/ directory, so
# they reuse what `cargo build` already compiled (seconds, not a release
# build's minutes); a release is the same commands with --release. maturin
# comes from PyPI into a venv cached outside the repository. Run it before
# the tests, not during them: it relinks target/debug's binaries.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=${1:?usage: packages.sh OUT_DIR}
MATURIN_VERSION=1.16.0
cache=${XDG_CACHE_HOME:-$HOME/.cache}/hermes-cron-tests
maturin_venv=$cache/maturin-$MATURIN_VERSION
if [ ! -e "$maturin_venv/.installed" ]; then
    echo "packages.sh: installing maturin==$MATURIN_VERSION into $maturin_venv" >&2
    rm -rf "$maturin_venv"
    mkdir -p "$cache"
    python3 -m venv "$maturin_venv"
    "$maturin_venv/bin/pip" install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION"
    touch "$maturin_venv/.installed"
fi

rm -rf "$out"
mkdir -p "$out"
echo "packages.sh: wheel" >&2
"$maturin_venv/bin/maturin" build --locked --profile dev --out "$out/wheel" --quiet >&2
echo "packages.sh: cargo install" >&2
cargo install --locked --path . --root "$out/cargo" --debug --quiet --no-track >&2
echo "packages.sh: .deb" >&2
packaging/deb/build.sh "$out/cargo/bin" "$out/deb" >&2
echo "export HERMES_CRON_TEST_PACKAGES=$out"

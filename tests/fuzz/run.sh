#!/usr/bin/env bash
# Run one fuzz target for SECONDS (default 600) on one core, then minimize its
# corpus. Usage: tests/fuzz/run.sh <schedule|config|import> [SECONDS]
# Needs cargo-fuzz and a nightly toolchain (tests/fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
target=$1
seconds=${2:-600}
toolchain=${FUZZ_TOOLCHAIN:-nightly}
mkdir -p "tests/fuzz/corpus/$target"
cargo "+$toolchain" fuzz run --fuzz-dir tests/fuzz -O "$target" "tests/fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
cargo "+$toolchain" fuzz cmin --fuzz-dir tests/fuzz -O "$target" "tests/fuzz/corpus/$target"

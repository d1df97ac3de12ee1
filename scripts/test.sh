#!/usr/bin/env bash
# Sets up, builds and runs every test. Extra arguments go to ctest
# (e.g. -R '^vm/' to run one layer's tests).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CANARY_BUILD_DIR:-$root/build}"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
# Tests run single-threaded: the CI machine has two shared cores.
export OMP_NUM_THREADS=1
ctest --test-dir "$build" --output-on-failure --no-tests=error -j "${CANARY_JOBS:-$(nproc)}" "$@"

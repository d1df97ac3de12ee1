#!/usr/bin/env bash
# Configures (once) and builds Canary into build/ (RelWithDebInfo, ccache).
# Extra arguments go to `cmake --build` (e.g. --target canary_vm_tests).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CANARY_BUILD_DIR:-$root/build}"
export CCACHE_BASEDIR="$root"
jobs="${CANARY_JOBS:-$(nproc)}"

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" -j "$jobs" "$@"

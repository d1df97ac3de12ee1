#!/usr/bin/env bash
# Runs the CUDA backend's checks on a GPU machine without ctest: the CUDA
# test suite, then gpu_check's one-table summary.
#
#   bash bench/gpu/gpu_check.sh <dir>
#
# <dir> is a build directory (tests/canary_cuda_tests, bench/gpu/gpu_check)
# or a folder made by pack_for_device.sh (bin/, lib/, lib/glibc/); a relative
# path is taken from the current directory (e.g. the repository root of a
# copied tree). When <dir>/lib exists it is prepended to LD_LIBRARY_PATH; if
# the binaries cannot start with the machine's glibc, they run through the
# packed loader in <dir>/lib/glibc instead.
# Exit status: 0 when both pass, else the first failing step's status.
set -uo pipefail

dir="${1:?usage: gpu_check.sh <build-or-carry-dir>}"
dir="$(cd "$dir" && pwd)" || exit 2
if [[ -x "$dir/bin/gpu_check" ]]; then
  tests="$dir/bin/canary_cuda_tests" check="$dir/bin/gpu_check"
else
  tests="$dir/tests/canary_cuda_tests" check="$dir/bench/gpu/gpu_check"
fi
for b in "$tests" "$check"; do
  [[ -x "$b" ]] || { echo "gpu_check.sh: missing $b" >&2; exit 2; }
done
[[ -d "$dir/lib" ]] && export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# How to start a binary: directly, or through the packed loader when the
# machine's glibc is older than the one the binaries were built against.
launcher=()
if ! "$tests" --help >/dev/null 2>&1; then
  loader="$(ls "$dir"/lib/glibc/ld-linux*.so.* 2>/dev/null | head -1)"
  if [[ -n "$loader" ]] && "$loader" --library-path "$dir/lib/glibc:$dir/lib" "$tests" --help >/dev/null 2>&1; then
    launcher=("$loader" --library-path "$dir/lib/glibc:$dir/lib")
    echo "gpu_check.sh: the machine's glibc is too old; using the packed loader $loader"
  else
    echo "gpu_check.sh: $tests does not start:" >&2
    "$tests" --help 2>&1 | head -5 >&2
    exit 2
  fi
fi

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

echo "== canary_cuda_tests"
"${launcher[@]}" "$tests" --warn NoAssertions
status=$?

echo "== gpu_check"
"${launcher[@]}" "$check" --require-gpu
check_status=$?
[[ $status -eq 0 ]] && status=$check_status
exit $status

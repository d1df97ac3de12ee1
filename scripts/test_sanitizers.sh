#!/usr/bin/env bash
# Builds and runs the tests under sanitizers (CMakePresets.json):
#   asan: AddressSanitizer + UndefinedBehaviorSanitizer, every unit and
#         differential test except the CLI's and the samples' end-to-end runs,
#         the replay of the fuzz corpus and recorded findings, and (where the
#         CUDA toolkit's headers are) the CUDA backend's tests, its GPU tests
#         on the PTX emulator included;
#   tsan: ThreadSanitizer, the concurrency tests (sessions on many threads,
#         background compiles, the cost model's trials).
# Usage: scripts/test_sanitizers.sh [asan|tsan|all] (default all).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
which="${1:-all}"
jobs="${CANARY_JOBS:-$(nproc)}"
export CCACHE_BASEDIR="$root"
export OMP_NUM_THREADS=1

bash "$root/scripts/setup.sh"
cd "$root"

# Configures a preset once, then builds the given targets.
build() {
  local preset="$1" dir="$2"
  shift 2
  if [ ! -f "$dir/build.ninja" ]; then cmake --preset "$preset" >/dev/null; fi
  cmake --build "$dir" -j "$jobs" --target "$@"
}

if [ "$which" = asan ] || [ "$which" = all ]; then
  dir="$root/build-sanitize-asan"
  targets=(canary_graph_tests canary_kernel_tests canary_vm_tests canary_jit_tests
           canary_jit_differential_tests canary_api_tests canary_fuzz_tests)
  suites='graph|kernels|vm|jit|jit_differential|runtime|fuzz'
  if [ ! -f "$dir/build.ninja" ]; then cmake --preset asan >/dev/null; fi
  # The CUDA backend is built where the toolkit's headers are found.
  if cmake --build "$dir" --target help | grep -q '^canary_cuda_tests:'; then
    targets+=(canary_cuda_tests canary_cuda_emulator)
    suites="$suites|cuda|cuda-emulated|jit_differential-emulated"
  fi
  build asan "$dir" "${targets[@]}"
  # Leak checking needs ptrace, which containers often forbid; errors still halt.
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1:strict_string_checks=1"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "$jobs" -R "^($suites)/"
fi

if [ "$which" = tsan ] || [ "$which" = all ]; then
  dir="$root/build-sanitize-tsan"
  build tsan "$dir" canary_api_tests
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/tsan.supp"
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -j 1 -R 'concurrency|several threads'
fi

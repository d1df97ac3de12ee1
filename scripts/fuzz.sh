#!/usr/bin/env bash
# Builds the libFuzzer targets (CMakePresets.json: fuzz, clang with
# ASan+UBSan, into build-fuzz/) and runs one target, or each in turn, for a
# number of seconds on a scratch copy of its seed corpus and recorded
# findings (tests/fuzz/corpus/, tests/fuzz/regressions/). Nothing is written
# into the repository: new corpus inputs, crash artifacts and logs stay in
# the scratch folder, which the summary names.
# Usage: scripts/fuzz.sh onnx_import|text_format|npy|graph_stream|shape_profile|all SECONDS
# Environment: CANARY_FUZZ_SCRATCH (scratch folder; default a new one under
# /tmp), CANARY_FUZZ_ARGS (more libFuzzer flags), CANARY_JOBS (build jobs).
# Exits 1 when a run ended with a finding.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
targets=(onnx_import text_format npy graph_stream shape_profile)

usage() {
  echo "usage: scripts/fuzz.sh onnx_import|text_format|npy|graph_stream|shape_profile|all SECONDS" >&2
  exit 2
}

[ $# -eq 2 ] || usage
which="$1" seconds="$2"
[[ "$seconds" =~ ^[0-9]+$ ]] || usage
if [ "$which" = all ]; then
  run=("${targets[@]}")
elif [[ " ${targets[*]} " == *" $which "* ]]; then
  run=("$which")
else
  usage
fi

# Per target: the longest input libFuzzer makes (the largest seed fits), the
# seconds one input may take, the memory the process may hold, and more
# flags. graph_stream reaches the whole runtime and JIT, so each execution
# sets tens of thousands of coverage features, and libFuzzer's entropic
# schedule spent more time ranking them than the target ran (3x fewer execs).
limits_of() {
  case "$1" in
    onnx_import) echo "32768 10 2560" ;;
    text_format) echo "16384 10 2560" ;;
    npy) echo "4096 10 2048" ;;
    graph_stream) echo "64 30 4096 -entropic=0" ;;
    shape_profile) echo "2048 20 4096" ;;
  esac
}

# Only the fuzz build needs clang and its sanitizer and libFuzzer runtimes.
bash "$root/scripts/setup.sh" clang libclang-rt-14-dev
export CCACHE_BASEDIR="$root"
cd "$root"
build="$root/build-fuzz"
if [ ! -f "$build/build.ninja" ]; then cmake --preset fuzz >/dev/null; fi
cmake --build "$build" -j "${CANARY_JOBS:-$(nproc)}" --target "${run[@]/#/fuzz_}"

scratch="${CANARY_FUZZ_SCRATCH:-$(mktemp -d /tmp/canary-fuzz.XXXXXX)}"
export OMP_NUM_THREADS=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

# The last libFuzzer status line's value of a field ("cov:", "ft:").
status_field() {
  grep -E '^#[0-9]+' "$1" | tail -1 | sed -nE "s/.* $2 ([0-9]+).*/\1/p"
}

# A final-stats value (stat::number_of_executed_units and the like).
final_stat() {
  sed -nE "s/^stat::$2: *([0-9]+).*/\1/p" "$1" | tail -1
}

# Runs one target; prints its summary line; returns 1 on a finding.
fuzz_one() {
  local target="$1" dir="$scratch/$1"
  local max_len timeout rss flags
  read -r max_len timeout rss flags <<<"$(limits_of "$target")"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp "$root/tests/fuzz/corpus/$target/"* "$dir/corpus/"
  if [ -d "$root/tests/fuzz/regressions/$target" ]; then
    find "$root/tests/fuzz/regressions/$target" -type f -exec cp {} "$dir/corpus/" \;
  fi
  echo "fuzz: $target for ${seconds}s (log $dir/fuzz.log)"
  local rc=0
  # shellcheck disable=SC2086  # flags and CANARY_FUZZ_ARGS are lists of flags
  "$build/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len="$max_len" -timeout="$timeout" \
    -rss_limit_mb="$rss" -print_final_stats=1 -artifact_prefix="$dir/artifacts/" $flags ${CANARY_FUZZ_ARGS:-} \
    "$dir/corpus" >"$dir/fuzz.log" 2>&1 || rc=$?
  local log="$dir/fuzz.log" findings
  findings="$(find "$dir/artifacts" -type f | wc -l)"
  printf 'fuzz: %-12s runs %s, exec/s %s, cov %s, ft %s, corpus %s files (%s bytes), findings %s, rc %s\n' \
    "$target" "$(final_stat "$log" number_of_executed_units)" "$(final_stat "$log" average_exec_per_sec)" \
    "$(status_field "$log" cov:)" "$(status_field "$log" ft:)" "$(find "$dir/corpus" -type f | wc -l)" \
    "$(du -sb "$dir/corpus" | cut -f1)" "$findings" "$rc" | tee -a "$scratch/summary.txt"
  # libFuzzer exits 72 when a signal (SIGINT, SIGTERM) ends the run early.
  if [ "$rc" -eq 72 ] && [ "$findings" -eq 0 ]; then
    echo "fuzz:   interrupted before ${seconds}s: no finding, but the run is incomplete"
    return 1
  fi
  if [ "$findings" -gt 0 ] || [ "$rc" -ne 0 ]; then
    find "$dir/artifacts" -type f -printf 'fuzz:   finding %p\n'
    grep -m1 -A8 -E '^==[0-9]+==ERROR|canary fuzz finding|runtime error:|ERROR: libFuzzer' "$log" | sed 's/^/fuzz:   /' || true
    return 1
  fi
}

status=0
for target in "${run[@]}"; do
  fuzz_one "$target" || status=1
done
echo "fuzz: scratch folder $scratch (summary.txt, <target>/fuzz.log, <target>/artifacts/)"
exit "$status"

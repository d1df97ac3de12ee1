#!/usr/bin/env bash
# Canary against ONNX Runtime and PyTorch, side by side, on a fresh Debian 12
# machine: installs the build dependencies and the peers, builds the Canary
# worker and the machine-floor benchmark, runs every workload at 1 and 2
# threads, and writes bench/RESULTS.md and bench/results.json.
#   bash bench/peers/run.sh [orchestrate.py options, e.g. --quick or --threads 1]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${CANARY_BUILD_DIR:-$root/build}"
bash "$root/scripts/setup.sh"
bash "$root/bench/peers/install_peers.sh"
bash "$root/scripts/build.sh" --target canary_peer_worker canary_bench_machine_floors
exec /usr/bin/python3 "$root/bench/peers/orchestrate.py" --build "$build" "$@"

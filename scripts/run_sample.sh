#!/usr/bin/env bash
# Sets up, builds and runs the flow-meter sample end to end: a trained 1-D
# conv net estimates oil, gas and water rates for a generated field of wells
# whose input shapes change at run time (samples/flowmeter/README.md), and
# prints its report. Arguments go to canary-flowmeter (e.g. --calls 40).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CANARY_BUILD_DIR:-$root/build}"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" --target canary_flowmeter
"$build/samples/flowmeter/canary-flowmeter" "$@"

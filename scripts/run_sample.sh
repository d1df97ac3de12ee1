#!/usr/bin/env bash
# Sets up, builds and runs the quickstart sample end to end: a 1-D conv net
# with a symbolic window over a stream of changing batch and window sizes,
# each call checked against the fp64 reference.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CANARY_BUILD_DIR:-$root/build}"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" --target canary_quickstart
"$build/samples/quickstart/canary_quickstart" "$@"

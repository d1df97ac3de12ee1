#!/usr/bin/env bash
# Installs the Debian packages Canary builds against. Idempotent: when every
# package is already installed it does nothing (no apt-get update).
# Extra arguments are more packages to install with them (scripts/fuzz.sh
# passes the clang toolchain that only the fuzz build needs).
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git
  libasmjit-dev libdnnl-dev ocl-icd-opencl-dev libboost-graph-dev catch2
  libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  python3-onnx python3-numpy  # tests/conformance generates ONNX's node suite with them
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"

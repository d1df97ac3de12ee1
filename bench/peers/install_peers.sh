#!/usr/bin/env bash
# Installs what the peer benchmark's workers need on Debian 12: torch, onnx,
# numpy and OpenBLAS for the Python workers, Node.js with npm, and the pinned
# onnxruntime-node from package-lock.json. Run it as root or with sudo:
#   bench/peers/install_peers.sh
# Idempotent: when everything is present it changes nothing (no apt-get
# update, no npm call).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

packages=(python3-torch python3-torchvision python3-onnx python3-numpy libopenblas0-pthread nodejs npm)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# A Node.js from another source (e.g. NodeSource) ships its own npm and
# conflicts with Debian's npm package, so a working command counts as present.
present() {
  case "$1" in
    nodejs) installed nodejs || command -v node >/dev/null 2>&1 ;;
    npm) installed npm || command -v npm >/dev/null 2>&1 ;;
    *) installed "$1" ;;
  esac
}

missing=()
for p in "${packages[@]}"; do
  if ! present "$p"; then missing+=("$p"); fi
done

if [ ${#missing[@]} -eq 0 ]; then
  apt_msg="all ${#packages[@]} packages present"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "install_peers: installing ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  apt_msg="installed ${missing[*]}"
fi

# The version package-lock.json pins, and the one node_modules holds ("" if none).
version_of() {
  node -e '
    const fs = require("fs");
    const [file, key] = process.argv.slice(1);
    try {
      const j = JSON.parse(fs.readFileSync(file, "utf8"));
      process.stdout.write(String(key ? j.packages[key].version : j.version));
    } catch (e) { process.stdout.write(""); }
  ' "$@"
}

want="$(version_of "$here/package-lock.json" node_modules/onnxruntime-node)"
have="$(version_of "$here/node_modules/onnxruntime-node/package.json")"

if [ -n "$have" ] && [ "$have" = "$want" ]; then
  npm_msg="onnxruntime-node $have present"
else
  # skip: the postinstall would otherwise fetch GPU providers from the network.
  (cd "$here" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error >&2)
  npm_msg="npm ci: onnxruntime-node ${have:-none} -> $want"
fi

echo "install_peers: $apt_msg; $npm_msg"

#!/usr/bin/env bash
# Packs the CUDA check for a GPU machine that has no package registry:
# canary_cuda_tests and gpu_check (debug info stripped) plus every shared
# library they load except the vDSO, into one folder:
#   <out>/bin/{canary_cuda_tests,gpu_check}
#   <out>/lib/          libdnnl, libprotobuf, libonnx_proto, libgomp, libstdc++, ...
#   <out>/lib/glibc/    the C library and its loader, used only when the
#                       machine's own glibc is too old for the binaries
# Then run there (from a copy of the repository):  bash bench/gpu/gpu_check.sh <out>
#
#   bench/gpu/pack_for_device.sh [build-dir (build-cuda)] [out-dir (build-gpu-carry)]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build-cuda}"
out="${2:-$root/build-gpu-carry}"
bins=("$build/tests/canary_cuda_tests" "$build/bench/gpu/gpu_check")
for b in "${bins[@]}"; do
  [[ -x "$b" ]] || { echo "pack_for_device: missing $b (build targets canary_cuda_tests and gpu_check first)" >&2; exit 1; }
done

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib/glibc"
for b in "${bins[@]}"; do
  cp "$b" "$out/bin/"
  strip --strip-debug "$out/bin/$(basename "$b")"
done

# The C library's own pieces go to lib/glibc so the default run keeps the machine's glibc.
is_glibc() {
  case "$1" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*.so.*) return 0 ;;
    *) return 1 ;;
  esac
}
for b in "${bins[@]}"; do
  ldd "$b" | awk '/=> \// {print $3} /^[ \t]*\/.*ld-linux/ {print $1}'
done | sort -u | while read -r lib; do
  name="$(basename "$lib")"
  if is_glibc "$name"; then cp -L "$lib" "$out/lib/glibc/$name"; else cp -L "$lib" "$out/lib/$name"; fi
done
# libcuda.so.1 (dlopen-ed at run time) pulls these in; they must match the packed libc in loader mode.
libdir="$(dirname "$(ldd "${bins[0]}" | awk '/libc\.so\.6 =>/ {print $3}')")"
for extra in libdl.so.2 libpthread.so.0 librt.so.1; do
  [[ -e "$libdir/$extra" ]] && cp -L "$libdir/$extra" "$out/lib/glibc/$extra"
done

echo "packed into $out:"
du -sh "$out/bin" "$out/lib" | sed 's/^/  /'
du -sh "$out" | sed 's/^/  total /'

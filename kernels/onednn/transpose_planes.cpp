// Transposes as runs and planes (see transpose_planes.h).
#include "kernels/onednn/transpose_planes.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/onednn/threading.h"
#include "kernels/transpose_block.h"

namespace canary::kernels::onednn {
namespace {

// One dim of the output after merging: its size and its stride in the input.
struct Axis {
  std::int64_t size, in_stride;
};

// The output's dims in order, size-1 dims dropped and neighbours that are
// neighbours in the input too (same order) merged into one.
std::vector<Axis> merged_axes(std::span<const std::int64_t> perm, const Shape& in_shape) {
  std::vector<std::int64_t> in_strides(in_shape.size(), 1);
  for (std::size_t d = in_shape.size(); d-- > 1;) in_strides[d - 1] = in_strides[d] * in_shape[d];
  std::vector<Axis> axes;
  for (std::int64_t p : perm) {
    const Axis a{in_shape[static_cast<std::size_t>(p)], in_strides[static_cast<std::size_t>(p)]};
    if (a.size == 1) continue;
    if (!axes.empty() && axes.back().in_stride == a.in_stride * a.size) {
      axes.back() = {axes.back().size * a.size, a.in_stride};
    } else {
      axes.push_back(a);
    }
  }
  return axes;
}

// Output strides (dense) of the merged axes.
std::vector<std::int64_t> out_strides(const std::vector<Axis>& axes) {
  std::vector<std::int64_t> s(axes.size(), 1);
  for (std::size_t k = axes.size(); k-- > 1;) s[k - 1] = s[k] * axes[k].size;
  return s;
}

// Calls body(in_offset, out_offset) for every index of the axes other than
// those in `inner` (at most two), in [begin, end) of their row-major order.
template <typename Body>
void for_outer(const std::vector<Axis>& axes, const std::vector<std::int64_t>& out_stride, std::size_t inner_a,
               std::size_t inner_b, std::int64_t begin, std::int64_t end, Body body) {
  std::vector<std::size_t> outer;
  for (std::size_t k = 0; k < axes.size(); ++k)
    if (k != inner_a && k != inner_b) outer.push_back(k);
  for (std::int64_t i = begin; i < end; ++i) {
    std::int64_t rest = i, in = 0, out = 0;
    for (std::size_t j = outer.size(); j-- > 0;) {
      const std::size_t k = outer[j];
      const std::int64_t idx = rest % axes[k].size;
      rest /= axes[k].size;
      in += idx * axes[k].in_stride;
      out += idx * out_stride[k];
    }
    body(in, out);
  }
}

// Tiles of a plane: at most this many rows and columns per block call, so a
// large plane's source and destination lines stay in cache.
constexpr std::int64_t kPlaneTile = 64;

void transpose_plane(const float* src, std::int64_t src_stride, float* dst, std::int64_t dst_stride, std::int64_t rows,
                     std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; r += kPlaneTile)
    for (std::int64_t c = 0; c < cols; c += kPlaneTile)
      transpose_block(src + r * src_stride + c, src_stride, dst + c * dst_stride + r, dst_stride,
                      std::min(kPlaneTile, rows - r), std::min(kPlaneTile, cols - c));
}

}  // namespace

bool transpose_by_planes(std::span<const std::int64_t> perm, const Tensor& x, Tensor& y) {
  const std::size_t elem = dtype_size(x.dtype());
  const std::vector<Axis> axes = merged_axes(perm, x.shape());
  const std::vector<std::int64_t> out_stride = out_strides(axes);
  // The output's innermost axis and the axis that is the input's innermost.
  const std::size_t last = axes.empty() ? 0 : axes.size() - 1;
  const bool runs = axes.empty() || axes[last].in_stride == 1;
  if (!runs && elem != sizeof(float)) return false;
  Shape out(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) out[i] = x.shape()[static_cast<std::size_t>(perm[i])];
  const Tensor source = x;  // keeps x's buffer alive should y be x's register
  y.reset(x.dtype(), out);
  if (x.numel() == 0) return true;
  const auto* in = static_cast<const unsigned char*>(source.raw());
  auto* dst = static_cast<unsigned char*>(y.raw());
  // Element-count threshold of the parallel split, in the flop units for_row_blocks takes.
  const double work = static_cast<double>(x.numel()) * (kParallelMinFlops / kParallelMinElements);
  if (runs) {
    const std::int64_t run = axes.empty() ? 1 : axes[last].size;
    const std::int64_t count = x.numel() / run;
    for_row_blocks(count, work, [&](std::int64_t begin, std::int64_t end) {
      for_outer(axes, out_stride, last, last, begin, end, [&](std::int64_t i, std::int64_t o) {
        std::memcpy(dst + o * elem, in + i * elem, static_cast<std::size_t>(run) * elem);
      });
    });
    return true;
  }
  std::size_t inner = 0;
  while (axes[inner].in_stride != 1) ++inner;  // exists: the input's innermost non-1 dim has stride 1
  const std::int64_t planes = x.numel() / (axes[last].size * axes[inner].size);
  const auto* src = reinterpret_cast<const float*>(in);
  auto* out_f = reinterpret_cast<float*>(dst);
  for_row_blocks(planes, work, [&](std::int64_t begin, std::int64_t end) {
    for_outer(axes, out_stride, last, inner, begin, end, [&](std::int64_t i, std::int64_t o) {
      // Element (a, b) of the plane: out[o + a + b * out_stride[inner]] = in[i + a * in_stride[last] + b].
      transpose_plane(src + i, axes[last].in_stride, out_f + o, out_stride[inner], axes[last].size,
                      axes[inner].size);
    });
  });
  return true;
}

}  // namespace canary::kernels::onednn

// f32 ReduceSum and ReduceMean with no per-shape set-up where the reduced
// dims form one run (after merging): at the end as row sums, before kept
// dims as column sums (kernels/row_sums.h); other patterns whose reduced
// dims end the shape as a oneDNN reduction.
//
// Consecutive dims that are all reduced or all kept merge into one, so the
// primitive sees at most a few dims ([N*C, H*W] for a mean over the spatial
// axes of [N, C, H, W]) and one primitive serves every shape with the same
// merged sizes. ReduceMax stays on the reference kernel, which propagates
// NaN (oneDNN's max need not). Axes the reference rejects (out of range,
// repeated) and empty tensors return false, so its error or result stands.
#include <array>
#include <optional>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn.h"
#include "kernels/onednn/engine.h"
#include "kernels/onednn/plain_layout.h"
#include "kernels/onednn/primitive_cache.h"
#include "kernels/onednn/threading.h"
#include "kernels/row_sums.h"

namespace canary::kernels {
namespace {

using onednn::CachedPrimitive;
using onednn::PrimitiveKey;
using onednn::PrimitiveKind;

// The reduced dims of x, or an empty vector when the axes are invalid.
std::vector<bool> reduced_dims(const ReduceParams& p, const Tensor& x) {
  const std::int64_t rank = x.rank();
  std::vector<bool> reduced(static_cast<std::size_t>(rank), p.axes.empty());
  for (std::int64_t a : p.axes) {
    const std::int64_t d = a < 0 ? a + rank : a;
    if (d < 0 || d >= rank || reduced[static_cast<std::size_t>(d)]) return {};
    reduced[static_cast<std::size_t>(d)] = true;
  }
  return reduced;
}

// x's dims merged into runs of reduced or kept dims: source and destination dims.
struct Merged {
  std::vector<std::int64_t> src, dst;
};

Merged merge(const Tensor& x, const std::vector<bool>& reduced) {
  Merged m;
  bool last_reduced = false;
  for (std::size_t d = 0; d < reduced.size(); ++d) {
    const std::int64_t size = x.shape()[d];
    if (size == 1) continue;  // size-1 dims change nothing
    if (!m.src.empty() && reduced[d] == last_reduced) {
      m.src.back() *= size;
      if (!reduced[d]) m.dst.back() *= size;
      continue;
    }
    m.src.push_back(size);
    m.dst.push_back(reduced[d] ? 1 : size);
    last_reduced = reduced[d];
  }
  if (m.src.empty()) m.src = m.dst = {1};
  return m;
}

// The sizes of a reduction over one run of dims with kept dims after it.
struct ColumnRun {
  std::int64_t outer, length, inner;
};

std::optional<ColumnRun> column_run(const Merged& m) {
  if (m.src.size() == 2 && m.dst[0] == 1 && m.dst[1] == m.src[1]) return ColumnRun{1, m.src[0], m.src[1]};
  if (m.src.size() == 3 && m.dst[0] == m.src[0] && m.dst[1] == 1 && m.dst[2] == m.src[2])
    return ColumnRun{m.src[0], m.src[1], m.src[2]};
  return std::nullopt;
}

CachedPrimitive make_reduction(dnnl::algorithm algorithm, const Merged& m) {
  const dnnl::memory::desc x_md = onednn::row_major_desc(m.src);
  const dnnl::memory::desc y_md = onednn::row_major_desc(m.dst);
  const dnnl::reduction::desc desc(algorithm, x_md, y_md, 0.f, 0.f);
  const dnnl::reduction::primitive_desc pd(desc, onednn::cpu_engine());
  CachedPrimitive entry{dnnl::reduction(pd)};
  entry.add_argument(DNNL_ARG_SRC, x_md);
  entry.add_argument(DNNL_ARG_DST, y_md);
  return entry;
}

}  // namespace

bool onednn_reduce(const ReduceParams& p, const Tensor& x, Tensor& y) {
  onednn::thread_primitive_cache().count_call();
  if (p.op == ReduceOp::Max || x.dtype() != DType::F32 || &x == &y || x.numel() == 0) return false;
  if (p.axes.empty() && p.noop_with_empty_axes) return false;
  const std::vector<bool> reduced = reduced_dims(p, x);
  if (reduced.empty() && x.rank() > 0) return false;
  const Merged m = merge(x, reduced);
  Shape out;
  for (std::size_t d = 0; d < reduced.size(); ++d) {
    if (!reduced[d]) out.push_back(x.shape()[d]);
    else if (p.keepdims) out.push_back(1);
  }
  // One reduced run at the end ([rows, length] -> [rows]): row sums, with no primitive to make per shape.
  if (m.src.size() <= 2 && m.dst.back() == 1 && (m.src.size() == 1 || m.dst[0] == m.src[0])) {
    const std::int64_t rows = m.src.size() == 1 ? 1 : m.src[0], length = m.src.back();
    const float divisor = p.op == ReduceOp::Mean ? static_cast<float>(length) : 1.0f;
    const Tensor source = x;  // keeps x's buffer alive should y be x's register
    y.reset(DType::F32, out);
    const float* in = source.data<float>();
    float* sums = y.data<float>();
    const double work = static_cast<double>(x.numel()) * (onednn::kParallelMinFlops / onednn::kParallelMinElements);
    onednn::for_row_blocks(rows, work, [&](std::int64_t begin, std::int64_t end) {
      row_sums(in + begin * length, end - begin, length, divisor, sums + begin);
    });
    return true;
  }
  // One reduced run between kept ones ([outer, length, inner] -> [outer, inner]): column sums.
  if (const std::optional<ColumnRun> run = column_run(m)) {
    const float divisor = p.op == ReduceOp::Mean ? static_cast<float>(run->length) : 1.0f;
    const Tensor source = x;
    y.reset(DType::F32, out);
    const float* in = source.data<float>();
    float* sums = y.data<float>();
    const double work = static_cast<double>(x.numel()) * (onednn::kParallelMinFlops / onednn::kParallelMinElements);
    onednn::for_row_blocks(run->outer, work, [&](std::int64_t begin, std::int64_t end) {
      column_sums(in + begin * run->length * run->inner, end - begin, run->length, run->inner, divisor,
                  sums + begin * run->inner);
    });
    return true;
  }
  // oneDNN 2.6 reduces the innermost dim with its jit kernels but any other
  // with a reference loop; those are the reference kernel's (its strided sums vectorise).
  if (m.src.size() > DNNL_MAX_NDIMS || m.dst.back() != 1) return false;
  const dnnl::algorithm algorithm =
      p.op == ReduceOp::Mean ? dnnl::algorithm::reduction_mean : dnnl::algorithm::reduction_sum;
  const onednn::SerialWhenSmall threads(static_cast<double>(x.numel()), onednn::kParallelMinElements);
  PrimitiveKey key(PrimitiveKind::Reduce);
  key.push(static_cast<std::int64_t>(p.op));
  key.push_list(m.src);
  key.push_list(m.dst);
  if (!key.valid()) return false;
  try {
    CachedPrimitive& prim =
        onednn::thread_primitive_cache().find_or_create(key, [&] { return make_reduction(algorithm, m); });
    y.reset(DType::F32, out);
    const std::array<const void*, 2> buffers{x.raw(), y.raw()};
    prim.execute(buffers);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace canary::kernels

// Kept layout copies of constant weights (see weight_copies.h).
#include "kernels/onednn/weight_copies.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/onednn/engine.h"
#include "kernels/onednn/transpose_planes.h"

namespace canary::kernels::onednn {
namespace {

// The permutation that lays w out as `chosen` when `chosen` is a dense plain
// layout of w's dims in another order (no blocks, no padding); empty otherwise.
std::vector<std::int64_t> plain_permutation(const Tensor& w, const dnnl::memory::desc& plain,
                                            const dnnl::memory::desc& chosen) {
  const dnnl_memory_desc_t& d = chosen.data;
  const int rank = d.ndims;
  if (d.format_kind != dnnl_blocked || d.format_desc.blocking.inner_nblks != 0 || d.offset0 != 0) return {};
  if (plain.dims() != chosen.dims() || w.rank() != rank) return {};
  for (int i = 0; i < rank; ++i)
    if (d.dims[i] != w.dim(i) || d.padded_dims[i] != d.dims[i]) return {};
  std::vector<std::int64_t> perm(static_cast<std::size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  const auto* strides = d.format_desc.blocking.strides;
  std::stable_sort(perm.begin(), perm.end(), [&](std::int64_t a, std::int64_t b) { return strides[a] > strides[b]; });
  // Dense: each dim's stride is the product of the sizes inside it (size-1 dims may have any).
  std::int64_t inside = 1;
  for (int i = rank - 1; i >= 0; --i) {
    const std::int64_t dim = perm[static_cast<std::size_t>(i)];
    if (d.dims[dim] != 1 && strides[dim] != inside) return {};
    inside *= d.dims[dim];
  }
  return perm;
}

}  // namespace

void reorder_weights(const Tensor& w, const dnnl::memory::desc& plain, const dnnl::memory& into) {
  dnnl::memory source(plain, cpu_engine(), const_cast<void*>(w.raw()));
  dnnl::memory target = into;
  dnnl::reorder(source, target).execute(thread_stream(), source, target);
  thread_stream().wait();
}

const dnnl::memory& WeightCopies::copy_of(const Tensor& w, const dnnl::memory::desc& plain,
                                          const dnnl::memory::desc& chosen) {
  std::vector<Copy>& copies = by_buffer_[w.raw()];
  for (const Copy& c : copies)
    if (c.source.shares_storage_with(w) && c.copy.get_desc() == chosen) return c.copy;
  if (copies_ >= kMaxCopies) {
    clear();
    return copy_of(w, plain, chosen);
  }
  // A plain layout in another order (the patch product's transposed weights)
  // is our plane transpose: oneDNN's reorder for such strides ran at a
  // tenth of its speed (30 ms for 512x512x3x3).
  Copy made{w, {}, {}};
  const std::vector<std::int64_t> perm = plain_permutation(w, plain, chosen);
  if (!perm.empty() && transpose_by_planes(perm, w, made.storage)) {
    made.copy = dnnl::memory(chosen, cpu_engine(), made.storage.raw());
  } else {
    made.copy = dnnl::memory(chosen, cpu_engine());
    reorder_weights(w, plain, made.copy);
  }
  ++copies_;
  copies.push_back(std::move(made));
  return copies.back().copy;
}

void WeightCopies::clear() {
  by_buffer_.clear();
  copies_ = 0;
}

WeightCopies& thread_weight_copies() {
  thread_local WeightCopies copies;
  return copies;
}

}  // namespace canary::kernels::onednn

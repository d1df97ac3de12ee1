// Kept layout copies of constant weights (see weight_copies.h).
#include "kernels/onednn/weight_copies.h"

#include "kernels/onednn/engine.h"

namespace canary::kernels::onednn {

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
  Copy made{w, dnnl::memory(chosen, cpu_engine())};
  reorder_weights(w, plain, made.copy);
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

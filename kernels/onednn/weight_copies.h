// Constant weights copied once into the layout a primitive reads, and kept.
//
// Convolutions of one shape share a primitive but not weights (a ResNet
// stage repeats its shape), so copies are kept per constant, keyed by its
// buffer and the layout asked for. A copy pins its constant's buffer, so the
// address cannot be reused by another tensor while the copy lives. Per
// thread, like the primitives that read them: no locking.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "canary/tensor.h"

namespace canary::kernels::onednn {

class WeightCopies {
 public:
  // The copy of w (laid out as `plain` describes) in layout `chosen`, made
  // on first use: by a plane transpose when `chosen` is a dense plain layout
  // in another dim order, else by a oneDNN reorder. w must own its storage and never be
  // written while a tensor shares its buffer (a constant).
  const dnnl::memory& copy_of(const Tensor& w, const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen);
  std::size_t size() const { return copies_; }
  void clear();

 private:
  static constexpr std::size_t kMaxCopies = 512;
  struct Copy {
    Tensor source;   // pins the constant's buffer
    Tensor storage;  // the copy's buffer when it is a plain transpose of the source
    dnnl::memory copy;
  };
  std::unordered_map<const void*, std::vector<Copy>> by_buffer_;
  std::size_t copies_ = 0;
};

WeightCopies& thread_weight_copies();

// Reorders the tensor w, laid out as `plain` describes, into `into`.
void reorder_weights(const Tensor& w, const dnnl::memory::desc& plain, const dnnl::memory& into);

}  // namespace canary::kernels::onednn

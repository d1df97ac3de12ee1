// DeviceArena: size-class free lists over cuMemAlloc, the out-of-memory
// retry, and the pinned staging buffer.
#include "jit/cuda/device_arena.h"

#include "jit/cuda/fault_injection.h"

namespace canary::jit::cuda {

int DeviceArena::size_class(std::size_t bytes) {
  int k = 0;
  while (class_bytes(k) < bytes) ++k;
  return k;
}

std::size_t DeviceArena::class_bytes(int size_class) { return std::size_t{256} << size_class; }

DeviceArena::~DeviceArena() {
  trim();
  for (const auto& [ptr, cls] : in_use_) (void)driver_.release(ptr);
  (void)driver_.release_pinned(staging_);
}

CudaStatus DeviceArena::acquire(std::size_t bytes, DevicePtr* out) {
  *out = 0;
  if (injected_cuda_fault() == CudaFault::Oom)
    return CudaStatus::failure("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2), injected (CANARY_CUDA_FAULT=oom)");
  const int cls = size_class(bytes == 0 ? 1 : bytes);
  if (static_cast<std::size_t>(cls) >= free_.size()) free_.resize(cls + 1);
  if (!free_[cls].empty()) {
    *out = free_[cls].back();
    free_[cls].pop_back();
    ++stats_.reuses;
  } else {
    CudaStatus s = driver_.allocate(class_bytes(cls), out);
    if (!s.ok()) {
      trim();
      s = driver_.allocate(class_bytes(cls), out);
    }
    if (!s.ok()) return s;
    ++stats_.device_allocations;
    stats_.bytes_reserved += class_bytes(cls);
  }
  in_use_[*out] = cls;
  stats_.bytes_in_use += class_bytes(cls);
  return {};
}

void DeviceArena::give_back(DevicePtr ptr) {
  auto it = in_use_.find(ptr);
  if (it == in_use_.end()) return;
  free_[it->second].push_back(ptr);
  stats_.bytes_in_use -= class_bytes(it->second);
  in_use_.erase(it);
}

CudaStatus DeviceArena::staging(std::size_t bytes, void** out) {
  *out = nullptr;
  if (bytes > staging_bytes_) {
    (void)driver_.release_pinned(staging_);
    staging_ = nullptr;
    staging_bytes_ = 0;
    stats_.staging_bytes = 0;
    const std::size_t want = class_bytes(size_class(bytes));
    if (CudaStatus s = driver_.allocate_pinned(want, &staging_); !s.ok()) return s;
    staging_bytes_ = want;
    stats_.staging_bytes = want;
  }
  *out = staging_;
  return {};
}

void DeviceArena::trim() {
  for (std::size_t cls = 0; cls < free_.size(); ++cls) {
    for (DevicePtr ptr : free_[cls]) {
      (void)driver_.release(ptr);
      stats_.bytes_reserved -= class_bytes(static_cast<int>(cls));
    }
    free_[cls].clear();
  }
}

}  // namespace canary::jit::cuda

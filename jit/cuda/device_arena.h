// DeviceArena: device memory reused by size class (powers of two from
// 256 bytes), so a trace that runs again with the same shapes allocates
// nothing; plus one growable pinned host staging buffer for transfers.
// Not thread-safe: its owner serialises access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "jit/cuda/driver.h"

namespace canary::jit::cuda {

struct ArenaStats {
  std::uint64_t device_allocations = 0;  // cuMemAlloc calls that succeeded
  std::uint64_t reuses = 0;              // acquisitions served from a free list
  std::uint64_t bytes_reserved = 0;      // device bytes held (in use + cached)
  std::uint64_t bytes_in_use = 0;
  std::uint64_t staging_bytes = 0;       // pinned host bytes held
};

class DeviceArena {
 public:
  explicit DeviceArena(const CudaDriver& driver) : driver_(driver) {}
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // A device block of at least `bytes`. On out-of-memory the cached blocks
  // are freed and the allocation retried once; CANARY_CUDA_FAULT=oom fails it.
  CudaStatus acquire(std::size_t bytes, DevicePtr* out);
  // Returns a block from acquire() to its size class.
  void give_back(DevicePtr ptr);
  // A pinned host buffer of at least `bytes`, valid until the next call.
  CudaStatus staging(std::size_t bytes, void** out);
  // Frees every cached (not in use) device block.
  void trim();
  const ArenaStats& stats() const { return stats_; }

  // The size class of a request: the smallest 256 << k that holds it.
  static int size_class(std::size_t bytes);
  static std::size_t class_bytes(int size_class);

 private:
  const CudaDriver& driver_;
  std::vector<std::vector<DevicePtr>> free_;       // per size class
  std::unordered_map<DevicePtr, int> in_use_;      // block -> size class
  void* staging_ = nullptr;
  std::size_t staging_bytes_ = 0;
  ArenaStats stats_;
};

}  // namespace canary::jit::cuda

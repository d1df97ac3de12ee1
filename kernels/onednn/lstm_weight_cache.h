// The per-thread cache of LSTM weights converted to the kernel's layouts, for
// weights the caller guarantees immutable (model constants).
//
// An entry is keyed by the source buffers' addresses, the dims and the
// direction, and holds a copy of each source Tensor (a shared storage handle):
// while the entry exists its buffers cannot be freed, so no other tensor can
// be given one of those addresses, and a key match means the same, unchanged
// contents. Only Canary-owned buffers are cached: a wrapped buffer's lifetime
// is the caller's, so holding a handle to it would not keep its address
// reserved. Like the primitive cache it is thread-local (no locking) and a
// small LRU; an entry may keep a destroyed model's weights alive until it is
// evicted or the cache is cleared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <vector>

#include "canary/tensor.h"
#include "kernels/onednn.h"

namespace canary::kernels::onednn {

// LSTM weights as the kernel multiplies them: W and R transposed to [D][K][4H], bias Wb + Rb [D][4H].
struct LstmWeights {
  std::vector<float> layer, iter, bias;
};

// Identity of one conversion: source buffers (b null when absent), dims and direction.
struct LstmWeightsKey {
  const void* w = nullptr;
  const void* r = nullptr;
  const void* b = nullptr;
  std::int64_t directions = 0, hidden = 0, input = 0, direction = 0;
  bool operator==(const LstmWeightsKey&) const = default;
};

// Bounded LRU of converted weights, with hit/miss/eviction counters.
class LstmWeightCache {
 public:
  explicit LstmWeightCache(std::size_t capacity = kOnednnLstmWeightCacheCapacity) : capacity_(capacity) {}
  // True when w, r and b (if present) live in Canary-owned buffers, which an entry can pin.
  static bool cacheable(const Tensor& w, const Tensor& r, const Tensor* b);
  // The entry for key whose sources share storage with w, r, b (now most
  // recently used), or nullptr; counts a hit or a miss.
  const LstmWeights* find(const LstmWeightsKey& key, const Tensor& w, const Tensor& r, const Tensor* b);
  // Stores converted weights for key, holding w, r, b; evicts beyond capacity.
  const LstmWeights& insert(const LstmWeightsKey& key, const Tensor& w, const Tensor& r, const Tensor* b,
                            LstmWeights weights);
  void set_capacity(std::size_t capacity);
  void clear();
  OnednnLstmWeightCacheStats stats() const;

 private:
  struct Entry {
    LstmWeightsKey key;
    Tensor w, r;
    std::optional<Tensor> b;
    LstmWeights weights;
  };
  void evict_to(std::size_t size);

  std::size_t capacity_;
  std::list<Entry> lru_;  // front: most recently used; a linear scan suits the small bound
  std::uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

// The calling thread's cache.
LstmWeightCache& thread_lstm_weight_cache();

}  // namespace canary::kernels::onednn

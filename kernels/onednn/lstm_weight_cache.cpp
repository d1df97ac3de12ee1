// The per-thread LRU cache of converted constant LSTM weights.
#include "kernels/onednn/lstm_weight_cache.h"

#include <algorithm>
#include <utility>

namespace canary::kernels::onednn {
namespace {

// True when an entry's held b matches the call's b (both absent, or the same storage).
bool same_bias(const std::optional<Tensor>& held, const Tensor* b) {
  if (b == nullptr) return !held.has_value();
  return held.has_value() && held->shares_storage_with(*b);
}

}  // namespace

// Owned buffers only: a wrapped one may be freed by its owner while an entry holds it.
bool LstmWeightCache::cacheable(const Tensor& w, const Tensor& r, const Tensor* b) {
  return w.owns_storage() && r.owns_storage() && (b == nullptr || b->owns_storage());
}

// Looks key up, requiring the held sources to be the very buffers passed, and
// moves a hit to the front.
const LstmWeights* LstmWeightCache::find(const LstmWeightsKey& key, const Tensor& w, const Tensor& r,
                                         const Tensor* b) {
  auto it = std::find_if(lru_.begin(), lru_.end(), [&](const Entry& e) {
    return e.key == key && e.w.shares_storage_with(w) && e.r.shares_storage_with(r) && same_bias(e.b, b);
  });
  if (it == lru_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it);
  return &lru_.front().weights;
}

// Inserts at the front (replacing an entry with the same key), then trims to capacity.
const LstmWeights& LstmWeightCache::insert(const LstmWeightsKey& key, const Tensor& w, const Tensor& r,
                                           const Tensor* b, LstmWeights weights) {
  lru_.remove_if([&](const Entry& e) { return e.key == key; });
  std::optional<Tensor> held_b;
  if (b != nullptr) held_b = *b;
  lru_.push_front(Entry{key, w, r, std::move(held_b), std::move(weights)});
  evict_to(capacity_);
  return lru_.front().weights;
}

// Drops least recently used entries until at most `size` remain.
void LstmWeightCache::evict_to(std::size_t size) {
  while (lru_.size() > size) {
    lru_.pop_back();
    ++evictions_;
  }
}

// Changes the bound (at least 1) and evicts what no longer fits.
void LstmWeightCache::set_capacity(std::size_t capacity) {
  capacity_ = std::max<std::size_t>(capacity, 1);
  evict_to(capacity_);
}

// Empties the cache (releasing the held sources) and zeroes the counters.
void LstmWeightCache::clear() {
  lru_.clear();
  hits_ = misses_ = evictions_ = 0;
}

// The counters and current size.
OnednnLstmWeightCacheStats LstmWeightCache::stats() const {
  return OnednnLstmWeightCacheStats{hits_, misses_, evictions_, lru_.size(), capacity_};
}

// One cache per thread.
LstmWeightCache& thread_lstm_weight_cache() {
  thread_local LstmWeightCache cache;
  return cache;
}

}  // namespace canary::kernels::onednn

namespace canary::kernels {

// The calling thread's weight cache counters.
OnednnLstmWeightCacheStats onednn_lstm_weight_cache_stats() { return onednn::thread_lstm_weight_cache().stats(); }

// Rebounds the calling thread's weight cache.
void onednn_set_lstm_weight_cache_capacity(std::size_t capacity) {
  onednn::thread_lstm_weight_cache().set_capacity(capacity);
}

// Empties the calling thread's weight cache.
void onednn_clear_lstm_weight_cache() { onednn::thread_lstm_weight_cache().clear(); }

}  // namespace canary::kernels

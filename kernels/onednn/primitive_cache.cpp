// The per-thread LRU cache of oneDNN primitives and the per-call argument binding.
#include "kernels/onednn/primitive_cache.h"

#include <algorithm>
#include <bit>

#include "kernels/onednn/conv_blocked.h"
#include "kernels/onednn/conv_tiled.h"
#include "kernels/onednn/engine.h"
#include "kernels/onednn/rows_class.h"
#include "kernels/onednn/threading.h"
#include "runtime/core/fault_injection.h"

namespace canary::kernels::onednn {

// An empty key of `kind` and `encoding` for the calling thread's current oneDNN thread count.
PrimitiveKey::PrimitiveKey(PrimitiveKind kind, OperandEncoding encoding)
    : kind_(kind), encoding_(encoding), threads_(current_threads()) {}

// Appends one value, or marks the key invalid when full.
void PrimitiveKey::push(std::int64_t v) {
  if (count_ == kMaxValues) {
    overflow_ = true;
    return;
  }
  values_[count_++] = v;
}

// Appends the length of v, then its values.
void PrimitiveKey::push_list(std::span<const std::int64_t> v) {
  push(static_cast<std::int64_t>(v.size()));
  for (std::int64_t x : v) push(x);
}

// Appends a double's bits, so attributes compare exactly.
void PrimitiveKey::push_double(double v) { push(std::bit_cast<std::int64_t>(v)); }

// Same kind, encoding, thread count and values in the same order.
bool PrimitiveKey::operator==(const PrimitiveKey& other) const {
  return kind_ == other.kind_ && encoding_ == other.encoding_ && threads_ == other.threads_ &&
         overflow_ == other.overflow_ && count_ == other.count_ &&
         std::equal(values_.begin(), values_.begin() + count_, other.values_.begin());
}

// FNV-1a style mix of the kind, encoding, thread count and the values.
std::size_t PrimitiveKey::hash() const {
  std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(kind_) ^
                    (static_cast<std::uint64_t>(encoding_) << 5) ^ (static_cast<std::uint64_t>(threads_) << 8);
  for (std::uint32_t i = 0; i < count_; ++i) h = (h ^ static_cast<std::uint64_t>(values_[i])) * 1099511628211ull;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

// Adds an argument slot with a handle-less memory object.
void CachedPrimitive::add_argument(int arg, const dnnl::memory::desc& md) {
  if (num_args_ == kMaxArgs) throw dnnl::error(dnnl_invalid_arguments, "too many primitive arguments");
  memories_[num_args_] = dnnl::memory(md, cpu_engine(), DNNL_MEMORY_NONE);
  args_[num_args_] = dnnl_exec_arg_t{arg, memories_[num_args_].get()};
  ++num_args_;
}

// Binds the buffers and runs the primitive through the C API (no argument map).
void CachedPrimitive::execute(std::span<const void* const> buffers) {
  if (buffers.size() != num_args_) throw dnnl::error(dnnl_invalid_arguments, "wrong number of primitive buffers");
  for (std::size_t i = 0; i < num_args_; ++i) memories_[i].set_data_handle(const_cast<void*>(buffers[i]));
  dnnl::stream& stream = thread_stream();
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(primitive_.get(), stream.get(), static_cast<int>(num_args_), args_.data()),
      "could not execute a primitive");
  stream.wait();
}

// Looks key up and makes a hit the most recently used entry.
CachedPrimitive* PrimitiveCache::find(const PrimitiveKey& key) {
  auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  return &it->second->second;
}

// Inserts (or replaces) key's entry at the front, then trims to capacity.
CachedPrimitive& PrimitiveCache::insert(const PrimitiveKey& key, CachedPrimitive entry) {
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.erase(it->second);
    index_.erase(it);
  }
  lru_.emplace_front(key, std::move(entry));
  index_.emplace(key, lru_.begin());
  evict_to(capacity_);
  return lru_.front().second;
}

// Drops least recently used entries until at most `size` remain.
void PrimitiveCache::evict_to(std::size_t size) {
  while (lru_.size() > size) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
    ++evictions_;
  }
}

// Changes the bound (at least 1) and evicts what no longer fits.
void PrimitiveCache::set_capacity(std::size_t capacity) {
  capacity_ = std::max<std::size_t>(capacity, 1);
  evict_to(capacity_);
}

// Empties the cache and zeroes the counters.
void PrimitiveCache::clear() {
  index_.clear();
  lru_.clear();
  calls_ = hits_ = misses_ = evictions_ = 0;
}

// The counters and current size.
OnednnCacheStats PrimitiveCache::stats() const {
  return OnednnCacheStats{calls_, hits_, misses_, evictions_, lru_.size(), capacity_};
}

// One cache per thread.
PrimitiveCache& thread_primitive_cache() {
  thread_local PrimitiveCache cache;
  return cache;
}

// Fails one primitive creation when the "onednn" fault point says so.
void throw_if_creation_fault() {
  if (take_fault(FaultPoint::OnednnPrimitive))
    throw dnnl::error(dnnl_out_of_memory, "injected fault: oneDNN primitive creation (fault injection point 'onednn')");
}

}  // namespace canary::kernels::onednn

namespace canary::kernels {

// The calling thread's cache counters.
OnednnCacheStats onednn_cache_stats() {
  OnednnCacheStats stats = onednn::thread_primitive_cache().stats();
  onednn::add_tiled_conv_stats(stats);
  onednn::add_blocked_conv_stats(stats);
  const onednn::RowsClasses& classes = onednn::thread_rows_classes();
  stats.shape_class_calls = classes.calls();
  stats.hits += classes.hits();
  stats.misses += classes.misses();
  stats.size += classes.size();
  return stats;
}

// Rebounds the calling thread's cache.
void onednn_set_cache_capacity(std::size_t capacity) { onednn::thread_primitive_cache().set_capacity(capacity); }

// Empties the calling thread's cache.
void onednn_clear_cache() {
  onednn::thread_primitive_cache().clear();
  onednn::clear_tiled_convs();
  onednn::clear_blocked_convs();
  onednn::thread_rows_classes().clear();
}

}  // namespace canary::kernels::onednn

// The oneDNN primitive cache: created primitives with handle-less memory
// objects, kept in a bounded LRU keyed by op kind, shapes and attributes.
//
// The cache is thread-local (thread_primitive_cache()): no locking, and each
// entry's memory objects, whose data handles are set on every call, are never
// touched by two threads. A lookup builds its key in a fixed-size array and a
// hit only moves a list node, so a cache hit allocates nothing of ours.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <utility>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn.h"
#include "kernels/onednn/bf16_operands.h"

namespace canary::kernels::onednn {

enum class PrimitiveKind : std::uint8_t {
  MatMul, Gemm, Conv, ConvTranspose, Softmax, LayerNorm,
  Pool, GlobalAveragePool, BatchNorm, Reduce, Transpose,
};

// Op kind, the thread count oneDNN would use now (primitives may partition
// work for the thread count they were created under), the operand encoding
// (so f32 and bf16 primitives never mix; F32 for ops without a precision
// mode) and a bounded list of integers (dims, flags, attribute bits).
class PrimitiveKey {
 public:
  static constexpr std::size_t kMaxValues = 48;

  explicit PrimitiveKey(PrimitiveKind kind, OperandEncoding encoding = OperandEncoding::F32);
  // Appends one value; a key that runs out of room becomes invalid.
  void push(std::int64_t v);
  // Appends a length-prefixed list.
  void push_list(std::span<const std::int64_t> v);
  // Appends the bit pattern of a double.
  void push_double(double v);
  // False once a push did not fit (the case is then not cached nor run).
  bool valid() const { return !overflow_; }
  bool operator==(const PrimitiveKey& other) const;
  std::size_t hash() const;

 private:
  PrimitiveKind kind_;
  OperandEncoding encoding_;
  int threads_ = 0;
  bool overflow_ = false;
  std::uint32_t count_ = 0;
  std::array<std::int64_t, kMaxValues> values_{};
};

struct PrimitiveKeyHash {
  std::size_t operator()(const PrimitiveKey& k) const { return k.hash(); }
};

// A primitive and its execution arguments, whose buffers are bound per call.
class CachedPrimitive {
 public:
  static constexpr std::size_t kMaxArgs = 12;

  explicit CachedPrimitive(dnnl::primitive primitive) : primitive_(std::move(primitive)) {}
  // Adds argument `arg` (DNNL_ARG_*) backed by a memory of md with no buffer yet.
  void add_argument(int arg, const dnnl::memory::desc& md);
  // Binds buffers[i] to the i-th added argument and runs to completion on the thread's stream.
  void execute(std::span<const void* const> buffers);

 private:
  dnnl::primitive primitive_;
  std::array<dnnl::memory, kMaxArgs> memories_;
  std::array<dnnl_exec_arg_t, kMaxArgs> args_{};
  std::size_t num_args_ = 0;
};

// Throws dnnl::error (out of memory) when fault injection ("onednn") makes
// the primitive creation about to happen fail; callers then return false and
// the reference kernel runs.
void throw_if_creation_fault();

// Bounded LRU map from keys to primitives, with hit/miss/eviction counters.
class PrimitiveCache {
 public:
  explicit PrimitiveCache(std::size_t capacity = kOnednnCacheCapacity) : capacity_(capacity) {}
  // The entry for key (now most recently used), or nullptr; counts a hit or a miss.
  CachedPrimitive* find(const PrimitiveKey& key);
  // Whether key has an entry; counts nothing and leaves the order alone.
  bool contains(const PrimitiveKey& key) const { return index_.contains(key); }
  // Stores an entry for key, evicting the least recently used beyond capacity.
  CachedPrimitive& insert(const PrimitiveKey& key, CachedPrimitive entry);
  // Counts one oneDNN kernel call (applied or not).
  void count_call() { ++calls_; }
  void set_capacity(std::size_t capacity);
  void clear();
  OnednnCacheStats stats() const;

  // The cached entry for key, or make() (may throw dnnl::error) stored under it.
  template <typename Make>
  CachedPrimitive& find_or_create(const PrimitiveKey& key, Make&& make) {
    if (CachedPrimitive* hit = find(key)) return *hit;
    throw_if_creation_fault();
    return insert(key, make());
  }

 private:
  using Entry = std::pair<PrimitiveKey, CachedPrimitive>;
  void evict_to(std::size_t size);

  std::size_t capacity_;
  std::list<Entry> lru_;  // front: most recently used
  std::unordered_map<PrimitiveKey, std::list<Entry>::iterator, PrimitiveKeyHash> index_;
  std::uint64_t calls_ = 0, hits_ = 0, misses_ = 0, evictions_ = 0;
};

// The calling thread's cache.
PrimitiveCache& thread_primitive_cache();


}  // namespace canary::kernels::onednn

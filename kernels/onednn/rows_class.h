// Matrix products whose row count changes from call to call (a batch dim)
// without a oneDNN primitive per row count.
//
// An exact matmul primitive (oneDNN's brgemm kernels) costs 130-1500 us to
// create for each new M, so the first call at a new batch size paid more for
// set-up than for the product. oneDNN's gemm-based matmul takes the row count
// at execution time (DNNL_RUNTIME_DIM_VAL): one primitive per shape class
// (everything but M), 10-200 us to create once, and about as fast (a
// standalone oneDNN 2.6 test, one thread, exact vs class: 32x32x32 0.64 vs
// 0.92 us, 17x64x256 3.0 vs 3.7, 1x512x512 29 vs 8.8, 64x512x512 172 vs
// 162, 512x256x1024 1282 vs 1449). So every product that fits a class runs
// on it, whatever its row count; which also keeps a product's bits a
// function of its shape alone, not of the row counts seen before it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/onednn/primitive_cache.h"

namespace canary::kernels::onednn {

// One argument of a class primitive: a plain 2-D (or lower) layout whose
// first dim is the run-time row count when `runtime_rows` is set.
struct RowsArgument {
  int arg = 0;  // DNNL_ARG_*
  dnnl::memory::dims dims, strides;
  dnnl::memory::data_type type = dnnl::memory::data_type::f32;
  bool runtime_rows = false;

  // The descriptor the primitive is created with (DNNL_RUNTIME_DIM_VAL rows where run-time).
  dnnl::memory::desc class_desc() const;
  // The descriptor of one call's buffer with `rows` rows.
  dnnl::memory::desc call_desc(std::int64_t rows) const;
};

// A primitive whose row count is bound per call, with its memory objects for
// the row counts it has run (a few, kept so a repeated count allocates nothing).
class RowsClassPrimitive {
 public:
  RowsClassPrimitive(dnnl::primitive primitive, std::vector<RowsArgument> arguments);
  // Binds buffers[i] to the i-th argument for `rows` rows and runs to completion on the thread's stream.
  void execute(std::int64_t rows, std::span<const void* const> buffers);

 private:
  static constexpr std::size_t kMaxKeptRowCounts = 32;
  using Memories = std::vector<dnnl::memory>;
  Memories& memories_for(std::int64_t rows);

  dnnl::primitive primitive_;
  std::vector<RowsArgument> arguments_;
  std::unordered_map<std::int64_t, Memories> by_rows_;
};

// The calling thread's shape-class primitives.
class RowsClasses {
 public:
  // Runs a product on its class's primitive (made by make() on first use),
  // binding `rows`; false when oneDNN has no implementation for the class
  // (remembered: the caller then runs an exact primitive). Any other failure
  // to make it (out of memory, an injected fault) throws dnnl::error, as an
  // exact primitive's would, and the next call tries again.
  template <typename Make>
  bool try_run(const PrimitiveKey& class_key, std::int64_t rows, std::span<const void* const> buffers, Make&& make) {
    if (!class_key.valid()) return false;
    RowsClassPrimitive* primitive = find_or_make(class_key, make);
    if (primitive == nullptr) return false;
    primitive->execute(rows, buffers);
    ++calls_;
    return true;
  }
  // Counters in the primitive cache's terms: calls on a class primitive,
  // class primitives made (misses) and calls that found theirs (hits), and
  // how many are held.
  std::uint64_t calls() const { return calls_; }
  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }
  std::size_t size() const;
  void clear();

 private:
  static constexpr std::size_t kMaxClasses = 256;

  // The class primitive, made on first use; nullptr when oneDNN has no implementation for it.
  template <typename Make>
  RowsClassPrimitive* find_or_make(const PrimitiveKey& class_key, Make&& make) {
    auto it = primitives_.find(class_key);
    if (it != primitives_.end()) {
      ++hits_;
      return it->second.get();
    }
    ++misses_;
    if (primitives_.size() >= kMaxClasses) primitives_.clear();
    std::unique_ptr<RowsClassPrimitive> made;
    throw_if_creation_fault();
    try {
      made = std::make_unique<RowsClassPrimitive>(make());
    } catch (const dnnl::error& e) {
      if (e.status != dnnl_unimplemented) throw;
      // Remembered as unusable: this class's calls create exact primitives.
    }
    return primitives_.emplace(class_key, std::move(made)).first->second.get();
  }

  std::unordered_map<PrimitiveKey, std::unique_ptr<RowsClassPrimitive>, PrimitiveKeyHash> primitives_;
  std::uint64_t calls_ = 0, hits_ = 0, misses_ = 0;
};

RowsClasses& thread_rows_classes();

}  // namespace canary::kernels::onednn

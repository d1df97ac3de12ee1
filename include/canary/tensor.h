// Tensor: a dtype, a shape and a buffer that is either owned (64-byte aligned) or the caller's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "canary/dtype.h"

namespace canary {

using Shape = std::vector<std::int64_t>;

// Highest rank a tensor may have; Tensor::reset rejects more with Error(Shape).
inline constexpr std::size_t kMaxTensorRank = 64;

// Alignment of every buffer Canary allocates; vector kernels rely on it.
inline constexpr std::size_t kTensorAlignment = 64;

// Number of elements of a shape, or an error naming the shape: Shape when a
// dim is negative, Resource when the product of its non-zero dims overflows
// int64 (also for an empty shape, whose strides would overflow).
std::int64_t checked_numel(std::span<const std::int64_t> shape);

// Renders "[2, 3, 4]".
std::string shape_to_string(std::span<const std::int64_t> shape);

// The largest buffer a Tensor may allocate on the calling thread, in bytes.
// A larger request throws Error(Resource) before anything is allocated, so a
// hostile shape never reaches the allocator. Sessions set it to
// Options::max_tensor_bytes for the duration of each call; elsewhere it is
// kDefaultTensorAllocationLimit.
inline constexpr std::size_t kDefaultTensorAllocationLimit = std::size_t{1} << 40;
std::size_t tensor_allocation_limit() noexcept;

// Sets tensor_allocation_limit() on this thread until destroyed. Allocations
// made while one is alive belong to a model call (the interpreter holds one per
// call): they are the ones the fault-injection point "alloc" makes fail.
class ScopedTensorAllocationLimit {
 public:
  explicit ScopedTensorAllocationLimit(std::size_t max_bytes) noexcept;
  ~ScopedTensorAllocationLimit();
  ScopedTensorAllocationLimit(const ScopedTensorAllocationLimit&) = delete;
  ScopedTensorAllocationLimit& operator=(const ScopedTensorAllocationLimit&) = delete;

 private:
  std::size_t previous_;
};

// Tensor buffers of 64 KiB or more that are released (a tensor dropped, a
// register outgrown) are kept, process-wide, for the next tensor of their
// size class instead of going back to the system: a fresh page costs a
// fault on first touch, about 10 us on a virtual machine, which made a call
// at a new shape slower than its arithmetic. The cache holds at most its
// limit (256 MiB unless set), evicting the least recently released first.
struct HostBufferCacheStats {
  std::size_t kept_bytes = 0;   // held now, ready for reuse
  std::size_t limit_bytes = 0;
  std::uint64_t kept = 0;       // buffers taken in, all time
  std::uint64_t reused = 0;     // buffers handed out again
  std::uint64_t evicted = 0;    // buffers freed to make room
};
// Sets the limit; what the cache holds above it is freed at once. 0 keeps nothing.
void set_host_buffer_cache_limit(std::size_t bytes) noexcept;
HostBufferCacheStats host_buffer_cache_stats() noexcept;

class Tensor {
 public:
  // An undefined tensor: no dtype meaningfully set, no storage.
  Tensor() = default;

  // Allocates zero-filled storage; throws Error(Resource) when
  // the element count overflows or the allocation fails.
  static Tensor empty(DType dtype, std::span<const std::int64_t> shape);
  static Tensor empty(DType dtype, std::initializer_list<std::int64_t> shape) {
    return empty(dtype, std::span<const std::int64_t>(shape.begin(), shape.size()));
  }
  // Wraps caller-owned memory without copying; the caller keeps it alive and
  // aligned to its element size for as long as the tensor (or a copy) exists.
  static Tensor wrap(void* data, DType dtype, std::span<const std::int64_t> shape);

  // Copies values into a new tensor of the given shape (numel must match).
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, std::span<const std::int64_t> shape);
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, std::initializer_list<std::int64_t> shape) {
    return from_vector<T>(values, std::span<const std::int64_t>(shape.begin(), shape.size()));
  }
  template <typename T>
  static Tensor scalar(T value) {
    return from_vector<T>(std::vector<T>{value}, std::span<const std::int64_t>());
  }

  bool defined() const noexcept { return storage_ != nullptr; }
  DType dtype() const noexcept { return dtype_; }
  const Shape& shape() const noexcept { return shape_; }
  int rank() const noexcept { return static_cast<int>(shape_.size()); }
  std::int64_t dim(int axis) const { return shape_.at(static_cast<std::size_t>(axis)); }
  std::int64_t numel() const noexcept { return numel_; }
  std::size_t nbytes() const noexcept { return static_cast<std::size_t>(numel_) * dtype_size(dtype_); }

  void* raw() noexcept;
  const void* raw() const noexcept;
  // Typed access; throws Error(Internal) when T does not match dtype().
  template <typename T>
  T* data() {
    check_type(dtype_of<T>::value);
    return static_cast<T*>(raw());
  }
  template <typename T>
  const T* data() const {
    check_type(dtype_of<T>::value);
    return static_cast<const T*>(raw());
  }
  // Element i of the flattened tensor converted to double (any dtype).
  double element_as_double(std::int64_t i) const;

  // Re-shapes this tensor for new contents: keeps its own buffer when it is the
  // sole owner and large enough, otherwise allocates a new one. Contents are
  // unspecified afterwards (the caller overwrites them). This is how the interpreter reuses register buffers.
  void reset(DType dtype, std::span<const std::int64_t> shape);

  // A tensor with another shape of the same element count sharing this buffer.
  Tensor reshaped(std::span<const std::int64_t> shape) const;
  // A deep copy into owned storage.
  Tensor clone() const;
  // True when both tensors view the same buffer.
  bool shares_storage_with(const Tensor& other) const noexcept { return storage_ && storage_ == other.storage_; }
  // True when the buffer was allocated by Canary (not wrapped).
  bool owns_storage() const noexcept;

  // "f32[2, 3]".
  std::string type_string() const;

  // Internal (runtime/core/arena_budget.h): stops charging this tensor's
  // storage to the session arena it was allocated in.
  friend void release_from_arena(Tensor& tensor) noexcept;

 private:
  struct Storage;
  void check_type(DType expected) const;
  // Throws Error(Input) when a value count does not match numel().
  void check_count(std::int64_t count) const;
  static std::shared_ptr<Storage> allocate(std::size_t bytes, DType dtype, std::span<const std::int64_t> shape);

  DType dtype_ = DType::F32;
  Shape shape_;
  std::int64_t numel_ = 0;
  std::shared_ptr<Storage> storage_;
};

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, std::span<const std::int64_t> shape) {
  Tensor t = empty(dtype_of<T>::value, shape);
  t.check_count(static_cast<std::int64_t>(values.size()));
  T* out = t.data<T>();
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace canary

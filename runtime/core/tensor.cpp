// Tensor storage: aligned allocation, wrapping, reuse and views.
#include "canary/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#include "canary/error.h"
#include "runtime/core/arena_budget.h"
#include "runtime/core/fault_injection.h"
#include "runtime/core/host_memory.h"

namespace canary {

struct Tensor::Storage {
  void* data = nullptr;
  // Bytes the tensor may use: the size class of the request that allocated
  // it, whatever buffer the cache handed out, so that charges and reuse
  // depend on the calls alone, never on what the process cache held.
  std::size_t capacity = 0;
  std::size_t buffer_bytes = 0;  // the host buffer's own size (owned storage)
  bool owned = false;
  std::shared_ptr<ArenaBudget> arena;  // charged `capacity` bytes; null: none
  ~Storage() {
    if (arena) arena->release(capacity);
    if (owned) release_host_buffer({data, buffer_bytes});
  }
};

namespace {
// The arena the calling thread's allocations are charged to (ScopedArenaBudget).
thread_local std::shared_ptr<ArenaBudget> current_arena;
thread_local std::size_t current_allocation_limit = kDefaultTensorAllocationLimit;
// Live ScopedTensorAllocationLimits on this thread: above 0 inside a model call,
// whose allocations are the ones FaultPoint::HostAllocation makes fail.
thread_local int call_scopes = 0;
}  // namespace

std::size_t tensor_allocation_limit() noexcept { return current_allocation_limit; }

ScopedTensorAllocationLimit::ScopedTensorAllocationLimit(std::size_t max_bytes) noexcept
    : previous_(current_allocation_limit) {
  current_allocation_limit = max_bytes;
  ++call_scopes;
}

ScopedTensorAllocationLimit::~ScopedTensorAllocationLimit() {
  current_allocation_limit = previous_;
  --call_scopes;
}

void ArenaBudget::charge(std::size_t bytes, DType dtype, std::span<const std::int64_t> shape) {
  std::size_t held = held_.load(std::memory_order_relaxed);
  do {
    if (bytes > max_bytes_ || held > max_bytes_ - bytes)
      throw Error(ErrorKind::Resource, "tensor " + std::string(dtype_name(dtype)) + shape_to_string(shape) +
                                           " needs " + std::to_string(bytes) +
                                           " bytes, but this session's tensors already hold " + std::to_string(held) +
                                           " of the " + std::to_string(max_bytes_) +
                                           " bytes allowed (Options::max_arena_bytes)");
  } while (!held_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
  std::size_t peak = peak_.load(std::memory_order_relaxed);
  while (held + bytes > peak && !peak_.compare_exchange_weak(peak, held + bytes, std::memory_order_relaxed)) {
  }
}

ScopedArenaBudget::ScopedArenaBudget(std::shared_ptr<ArenaBudget> budget) noexcept
    : previous_(std::exchange(current_arena, std::move(budget))) {}

ScopedArenaBudget::~ScopedArenaBudget() { current_arena = std::move(previous_); }

void release_from_arena(Tensor& tensor) noexcept {
  Tensor::Storage* s = tensor.storage_.get();
  // A buffer the session still shares (an output that is a reshaped view of a
  // register) stays charged: the session may reuse it on a later call.
  if (!s || !s->arena || tensor.storage_.use_count() != 1) return;
  s->arena->release(s->capacity);
  s->arena.reset();
}

// Throws Error(Shape) for a rank above kMaxTensorRank.
static void check_rank(std::span<const std::int64_t> shape) {
  if (shape.size() > kMaxTensorRank)
    throw Error(ErrorKind::Shape, "rank " + std::to_string(shape.size()) + " is above the supported maximum of " +
                                      std::to_string(kMaxTensorRank));
}

// Product of dims with overflow and negativity checks. The non-zero dims must
// multiply within int64 even when another dim is 0: kernels compute strides
// and row sizes from the dims of empty tensors too, so f32[0, 2^40, 2^40] is
// refused here rather than overflowing in every one of them.
std::int64_t checked_numel(std::span<const std::int64_t> shape) {
  std::int64_t nonzero = 1;
  bool empty = false;
  for (std::int64_t d : shape) {
    if (d < 0) throw Error(ErrorKind::Shape, "negative dimension in shape " + shape_to_string(shape));
    if (d == 0) {
      empty = true;
    } else if (nonzero > std::numeric_limits<std::int64_t>::max() / d) {
      throw Error(ErrorKind::Resource, "the dims of shape " + shape_to_string(shape) + " multiply past int64");
    } else {
      nonzero *= d;
    }
  }
  return empty ? 0 : nonzero;
}

std::string shape_to_string(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// Allocates `bytes` (at least one alignment unit) for a tensor of that dtype
// and shape (named in errors), charged to the thread's arena before anything is allocated;
// throws Resource when the budget, the fault injector or the allocator says no.
std::shared_ptr<Tensor::Storage> Tensor::allocate(std::size_t bytes, DType dtype, std::span<const std::int64_t> shape) {
  // The buffer's size class: what is charged, allocated and kept as capacity.
  const std::size_t rounded = host_buffer_class(bytes == 0 ? 1 : bytes);
  if (rounded == 0) throw Error(ErrorKind::Resource, "allocation of " + std::to_string(bytes) + " bytes overflows");
  if (call_scopes > 0 && take_fault(FaultPoint::HostAllocation))
    throw Error(ErrorKind::Resource, "injected host allocation failure: cannot allocate " + std::to_string(bytes) +
                                         " bytes for a tensor (fault injection point 'alloc')");
  auto s = std::make_shared<Storage>();
  if (current_arena) current_arena->charge(rounded, dtype, shape);
  // From here the storage's destructor gives the charge back, whatever fails.
  s->arena = current_arena;
  s->capacity = rounded;
  const HostBuffer buffer = allocate_host_buffer(rounded);
  s->data = buffer.data;
  s->buffer_bytes = buffer.bytes;
  if (!s->data) throw Error(ErrorKind::Resource, "cannot allocate " + std::to_string(bytes) + " bytes for a tensor");
  s->owned = true;
  return s;
}

// Byte size of numel elements of dtype, or a Resource error on overflow.
static std::size_t checked_bytes(DType dtype, std::int64_t numel, std::span<const std::int64_t> shape) {
  const auto elem = static_cast<std::int64_t>(dtype_size(dtype));
  if (numel > std::numeric_limits<std::int64_t>::max() / elem)
    throw Error(ErrorKind::Resource, "byte size of " + std::string(dtype_name(dtype)) + shape_to_string(shape) + " overflows");
  return static_cast<std::size_t>(numel * elem);
}

Tensor Tensor::empty(DType dtype, std::span<const std::int64_t> shape) {
  Tensor t;
  t.reset(dtype, shape);
  if (t.nbytes()) std::memset(t.raw(), 0, t.nbytes());
  return t;
}

Tensor Tensor::wrap(void* data, DType dtype, std::span<const std::int64_t> shape) {
  check_rank(shape);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_.assign(shape.begin(), shape.end());
  t.numel_ = checked_numel(shape);
  if (!data && t.numel_ > 0) throw Error(ErrorKind::Input, "Tensor::wrap given a null pointer for " + t.type_string());
  t.storage_ = std::make_shared<Storage>();
  t.storage_->data = data;
  t.storage_->capacity = checked_bytes(dtype, t.numel_, shape);
  t.storage_->owned = false;
  return t;
}

void Tensor::reset(DType dtype, std::span<const std::int64_t> shape) {
  check_rank(shape);
  const std::int64_t numel = checked_numel(shape);
  const std::size_t bytes = checked_bytes(dtype, numel, shape);
  const bool reusable = storage_ && storage_->owned && storage_.use_count() == 1 && storage_->capacity >= bytes;
  if (!reusable) {
    if (bytes > current_allocation_limit)
      throw Error(ErrorKind::Resource, "tensor " + std::string(dtype_name(dtype)) + shape_to_string(shape) + " needs " +
                                           std::to_string(bytes) + " bytes, above the limit of " +
                                           std::to_string(current_allocation_limit) + " bytes (Options::max_tensor_bytes)");
    storage_ = allocate(bytes, dtype, shape);
  }
  dtype_ = dtype;
  if (shape_.size() != shape.size() || !std::equal(shape.begin(), shape.end(), shape_.begin()))
    shape_.assign(shape.begin(), shape.end());
  numel_ = numel;
}

void* Tensor::raw() noexcept { return storage_ ? storage_->data : nullptr; }
const void* Tensor::raw() const noexcept { return storage_ ? storage_->data : nullptr; }
bool Tensor::owns_storage() const noexcept { return storage_ && storage_->owned; }

Tensor Tensor::reshaped(std::span<const std::int64_t> shape) const {
  check_rank(shape);
  const std::int64_t n = checked_numel(shape);
  if (n != numel_)
    throw Error(ErrorKind::Shape, "cannot view " + type_string() + " as " + shape_to_string(shape) +
                                      ": element counts differ (" + std::to_string(numel_) + " vs " + std::to_string(n) + ")");
  Tensor t = *this;
  t.shape_.assign(shape.begin(), shape.end());
  return t;
}

Tensor Tensor::clone() const {
  if (!defined()) return Tensor();
  Tensor t = empty(dtype_, shape_);
  if (nbytes()) std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

double Tensor::element_as_double(std::int64_t i) const {
  if (i < 0 || i >= numel_) throw Error(ErrorKind::Input, "element index " + std::to_string(i) + " out of range for " + type_string());
  switch (dtype_) {
    case DType::F32: return static_cast<const float*>(raw())[i];
    case DType::F64: return static_cast<const double*>(raw())[i];
    case DType::I64: return static_cast<double>(static_cast<const std::int64_t*>(raw())[i]);
    case DType::I32: return static_cast<const std::int32_t*>(raw())[i];
    case DType::Bool: return static_cast<const bool*>(raw())[i] ? 1.0 : 0.0;
  }
  return 0.0;
}

std::string Tensor::type_string() const { return std::string(dtype_name(dtype_)) + shape_to_string(shape_); }

void Tensor::check_type(DType expected) const {
  if (expected != dtype_)
    throw Error(ErrorKind::Internal, "tensor of type " + type_string() + " accessed as " + std::string(dtype_name(expected)));
}

void Tensor::check_count(std::int64_t count) const {
  if (count != numel_)
    throw Error(ErrorKind::Input, std::to_string(count) + " values given for a tensor of type " + type_string() + " (" +
                                      std::to_string(numel_) + " elements)");
}

}  // namespace canary

// Tensor storage: aligned allocation, wrapping, reuse and views.
#include "canary/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "canary/error.h"
#include "runtime/core/fault_injection.h"

namespace canary {

struct Tensor::Storage {
  void* data = nullptr;
  std::size_t capacity = 0;  // bytes
  bool owned = false;
  ~Storage() {
    if (owned) std::free(data);
  }
};

namespace {
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

// Throws Error(Shape) for a rank above kMaxTensorRank.
static void check_rank(std::span<const std::int64_t> shape) {
  if (shape.size() > kMaxTensorRank)
    throw Error(ErrorKind::Shape, "rank " + std::to_string(shape.size()) + " is above the supported maximum of " +
                                      std::to_string(kMaxTensorRank));
}

// Product of dims with overflow and negativity checks.
std::int64_t checked_numel(std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw Error(ErrorKind::Shape, "negative dimension in shape " + shape_to_string(shape));
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)
      throw Error(ErrorKind::Resource, "element count of shape " + shape_to_string(shape) + " overflows int64");
    n *= d;
  }
  return n;
}

std::string shape_to_string(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// Allocates `bytes` (at least one alignment unit), or throws Resource.
std::shared_ptr<Tensor::Storage> Tensor::allocate(std::size_t bytes) {
  std::size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  if (rounded == 0) rounded = kTensorAlignment;
  if (rounded < bytes) throw Error(ErrorKind::Resource, "allocation of " + std::to_string(bytes) + " bytes overflows");
  if (call_scopes > 0 && take_fault(FaultPoint::HostAllocation))
    throw Error(ErrorKind::Resource, "injected host allocation failure: cannot allocate " + std::to_string(bytes) +
                                         " bytes for a tensor (fault injection point 'alloc')");
  void* p = std::aligned_alloc(kTensorAlignment, rounded);
  if (!p) throw Error(ErrorKind::Resource, "cannot allocate " + std::to_string(bytes) + " bytes for a tensor");
  auto s = std::make_shared<Storage>();
  s->data = p;
  s->capacity = rounded;
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
    storage_ = allocate(bytes);
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

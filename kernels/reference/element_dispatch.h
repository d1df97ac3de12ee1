// Dtype dispatch for the reference kernels: calls a generic lambda with a value
// of the C++ element type, or throws Error(Input) naming the op and the dtype.
#pragma once

#include <cstdint>
#include <string>

#include "canary/dtype.h"
#include "canary/error.h"

namespace canary::kernels::detail {

// Throws Error(Input): `op` does not support `dtype`.
[[noreturn]] inline void throw_unsupported_dtype(const char* op, DType dtype) {
  throw Error(ErrorKind::Input, std::string(op) + ": unsupported dtype " + std::string(dtype_name(dtype)));
}

// f(T{}) for f32 and f64.
template <typename F>
void dispatch_float(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::F32: f(float{}); return;
    case DType::F64: f(double{}); return;
    default: throw_unsupported_dtype(op, t);
  }
}

// f(T{}) for f32, f64, i64 and i32.
template <typename F>
void dispatch_numeric(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::F32: f(float{}); return;
    case DType::F64: f(double{}); return;
    case DType::I64: f(std::int64_t{}); return;
    case DType::I32: f(std::int32_t{}); return;
    default: throw_unsupported_dtype(op, t);
  }
}

// f(T{}) for every dtype.
template <typename F>
void dispatch_any(DType t, F&& f) {
  switch (t) {
    case DType::F32: f(float{}); return;
    case DType::F64: f(double{}); return;
    case DType::I64: f(std::int64_t{}); return;
    case DType::I32: f(std::int32_t{}); return;
    case DType::Bool: f(bool{}); return;
  }
}

// f(U{}) with an unsigned integer type as wide as one element of dtype: for
// kernels that only move elements and never look at their values.
template <typename F>
void dispatch_bits(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 1: f(std::uint8_t{}); return;
    case 4: f(std::uint32_t{}); return;
    default: f(std::uint64_t{}); return;
  }
}

}  // namespace canary::kernels::detail

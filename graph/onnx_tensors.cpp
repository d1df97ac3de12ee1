// ONNX tensors: element types and TensorProto (raw_data or typed fields) to
// canary::Tensor, with every size checked before anything is allocated.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "graph/onnx_import_internal.h"

namespace canary::graph::onnx_import {
namespace {

using onnx::TensorProto;

// The ONNX name of an element type ("FLOAT16"), or its number.
std::string element_type_name(std::int64_t elem_type) {
  if (elem_type >= std::numeric_limits<int>::min() && elem_type <= std::numeric_limits<int>::max() &&
      onnx::TensorProto_DataType_IsValid(static_cast<int>(elem_type))) {
    return onnx::TensorProto_DataType_Name(static_cast<TensorProto::DataType>(elem_type));
  }
  return "element type " + std::to_string(elem_type);
}

// The element count of the dims; Error(Model) naming the tensor for a
// negative dim or a product that overflows int64.
std::int64_t checked_count(const TensorProto& proto, const std::string& what) {
  std::int64_t count = 1;
  for (std::int64_t d : proto.dims()) {
    if (d < 0) fail(what + " has negative dim " + std::to_string(d));
    if (d != 0 && count > std::numeric_limits<std::int64_t>::max() / d) {
      fail(what + " has dims whose element count overflows int64");
    }
    count *= d;
  }
  return count;
}

// Error(Model) for a data count that does not match the dims.
[[noreturn]] void fail_count(const std::string& what, std::int64_t expected, std::size_t found, const char* field) {
  fail(what + " has dims holding " + std::to_string(expected) + " elements but " + field + " holds " +
       std::to_string(found));
}

// Copies little-endian raw_data of `count` elements of size `width`.
void copy_raw(const std::string& raw, std::int64_t count, std::size_t width, void* out, const std::string& what) {
  if (raw.size() % width != 0 || static_cast<std::uint64_t>(count) != raw.size() / width) {
    fail_count(what, count, raw.size() / width, "raw_data");
  }
  std::memcpy(out, raw.data(), raw.size());
  if constexpr (std::endian::native == std::endian::big) {
    auto* bytes = static_cast<unsigned char*>(out);
    for (std::size_t i = 0; i < raw.size(); i += width) std::reverse(bytes + i, bytes + i + width);
  }
}

// Copies a repeated typed field into the tensor, converting each element.
template <typename Out, typename Field>
void copy_field(const Field& field, std::int64_t count, Out* out, const std::string& what, const char* name) {
  if (static_cast<std::uint64_t>(field.size()) != static_cast<std::uint64_t>(count)) {
    fail_count(what, count, static_cast<std::size_t>(field.size()), name);
  }
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Out>(field.Get(i));
}

// Checks the data's size against the dims before the tensor is allocated.
void check_size_before_allocating(const TensorProto& proto, DType dtype, std::int64_t count, const std::string& what) {
  std::uint64_t available = 0;
  const char* field = "raw_data";
  if (proto.has_raw_data()) {
    available = proto.raw_data().size() / dtype_size(dtype);
  } else {
    switch (dtype) {
      case DType::F32:
        available = proto.float_data_size(), field = "float_data";
        break;
      case DType::F64:
        available = proto.double_data_size(), field = "double_data";
        break;
      case DType::I64:
        available = proto.int64_data_size(), field = "int64_data";
        break;
      case DType::I32:
      case DType::Bool:
        available = proto.int32_data_size(), field = "int32_data";
        break;
    }
  }
  if (available != static_cast<std::uint64_t>(count)) fail_count(what, count, available, field);
}

// Fills an allocated tensor from raw_data or the typed field of its dtype.
void fill_tensor(const TensorProto& proto, Tensor& t, const std::string& what) {
  std::int64_t n = t.numel();
  if (proto.has_raw_data()) {
    copy_raw(proto.raw_data(), n, dtype_size(t.dtype()), t.raw(), what);
    if (t.dtype() == DType::Bool) {
      // Normalise any nonzero byte to a valid bool.
      auto* bytes = static_cast<unsigned char*>(t.raw());
      for (std::int64_t i = 0; i < n; ++i) bytes[i] = bytes[i] != 0 ? 1 : 0;
    }
    return;
  }
  switch (t.dtype()) {
    case DType::F32:
      copy_field(proto.float_data(), n, t.data<float>(), what, "float_data");
      break;
    case DType::F64:
      copy_field(proto.double_data(), n, t.data<double>(), what, "double_data");
      break;
    case DType::I64:
      copy_field(proto.int64_data(), n, t.data<std::int64_t>(), what, "int64_data");
      break;
    case DType::I32:
      copy_field(proto.int32_data(), n, t.data<std::int32_t>(), what, "int32_data");
      break;
    case DType::Bool: {
      bool* out = t.data<bool>();
      const auto& field = proto.int32_data();
      if (field.size() != n) fail_count(what, n, static_cast<std::size_t>(field.size()), "int32_data");
      for (int i = 0; i < field.size(); ++i) out[i] = field.Get(i) != 0;
      break;
    }
  }
}

}  // namespace

// FLOAT, DOUBLE, INT64, INT32 and BOOL map to f32, f64, i64, i32 and bool.
DType dtype_from_onnx(std::int64_t elem_type, const std::string& what) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DType::F32;
    case TensorProto::DOUBLE:
      return DType::F64;
    case TensorProto::INT64:
      return DType::I64;
    case TensorProto::INT32:
      return DType::I32;
    case TensorProto::BOOL:
      return DType::Bool;
    default:
      break;
  }
  fail(what + " has unsupported element type " + element_type_name(elem_type) +
       " (supported: FLOAT, DOUBLE, INT64, INT32, BOOL)");
}

std::int64_t onnx_elem_type(DType dtype) {
  switch (dtype) {
    case DType::F32: return TensorProto::FLOAT;
    case DType::F64: return TensorProto::DOUBLE;
    case DType::I64: return TensorProto::INT64;
    case DType::I32: return TensorProto::INT32;
    case DType::Bool: return TensorProto::BOOL;
  }
  return TensorProto::UNDEFINED;
}

// Checks location, dtype, dims and counts, then allocates and copies.
Tensor tensor_from_onnx(const TensorProto& proto, const std::string& what) {
  if (proto.data_location() == TensorProto::EXTERNAL) {
    fail(what + " stores its data externally (data_location EXTERNAL), which is not supported");
  }
  if (proto.has_segment()) fail(what + " is segmented, which is not supported");
  DType dtype = dtype_from_onnx(proto.data_type(), what);
  std::int64_t count = checked_count(proto, what);
  check_size_before_allocating(proto, dtype, count, what);
  Shape shape(proto.dims().begin(), proto.dims().end());
  Tensor t = Tensor::empty(dtype, shape);
  fill_tensor(proto, t, what);
  return t;
}

}  // namespace canary::graph::onnx_import

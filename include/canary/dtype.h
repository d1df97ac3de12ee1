// Element types of tensors: the closed set, their sizes and names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace canary {

// X(enum, name, C++ type)
#define CANARY_DTYPES(X)          \
  X(F32, "f32", float)            \
  X(F64, "f64", double)           \
  X(I64, "i64", std::int64_t)     \
  X(I32, "i32", std::int32_t)     \
  X(Bool, "bool", bool)

enum class DType : std::uint8_t {
#define CANARY_DTYPE_ENUM(e, n, t) e,
  CANARY_DTYPES(CANARY_DTYPE_ENUM)
#undef CANARY_DTYPE_ENUM
};

// Bytes per element.
constexpr std::size_t dtype_size(DType t) {
  switch (t) {
#define CANARY_DTYPE_SIZE(e, n, ty) \
  case DType::e:                    \
    return sizeof(ty);
    CANARY_DTYPES(CANARY_DTYPE_SIZE)
#undef CANARY_DTYPE_SIZE
  }
  return 0;
}

// Short lower-case name as used by the text format ("f32").
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
#define CANARY_DTYPE_NAME(e, n, ty) \
  case DType::e:                    \
    return n;
    CANARY_DTYPES(CANARY_DTYPE_NAME)
#undef CANARY_DTYPE_NAME
  }
  return "?";
}

// Parses a name produced by dtype_name; nullopt if unknown.
std::optional<DType> parse_dtype(std::string_view name);

constexpr bool is_floating(DType t) { return t == DType::F32 || t == DType::F64; }
constexpr bool is_integer(DType t) { return t == DType::I64 || t == DType::I32; }

// Maps a C++ element type to its DType.
template <typename T>
struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::F32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::F64; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::I64; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::I32; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };

}  // namespace canary

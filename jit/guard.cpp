// Guards in C++: the evaluator (oracle for emitted guard code and fallback
// where none can be emitted) and the text that describes a guard and what a
// failing header actually held.
#include "jit/guard.h"

#include <cstdio>
#include <string>

#include "canary/dtype.h"

namespace canary::jit {

namespace {

// Number of DType values (from the dtype table).
constexpr std::int64_t dtype_count() {
  std::int64_t n = 0;
#define CANARY_DTYPE_COUNT(e, nm, ty) ++n;
  CANARY_DTYPES(CANARY_DTYPE_COUNT)
#undef CANARY_DTYPE_COUNT
  return n;
}

// dims[axis] of a header, or false when the header has no such axis.
bool read_dim(const TensorHeader& h, std::uint32_t axis, std::int64_t& out) {
  if (h.dims == nullptr || h.rank <= static_cast<std::int64_t>(axis)) return false;
  out = h.dims[axis];
  return true;
}

// Whether one guard holds for the headers; CaptureDim writes its symbol.
bool check_guard(const Guard& g, const TensorHeader* headers, std::int64_t* symbols) {
  const TensorHeader& h = headers[g.tensor];
  std::int64_t d = 0;
  switch (g.kind) {
    case GuardKind::Rank:
      return h.rank == g.value;
    case GuardKind::DType:
      return h.dtype == g.value;
    case GuardKind::DimEquals:
      return read_dim(h, g.axis, d) && d == g.value;
    case GuardKind::DimRange:
      return read_dim(h, g.axis, d) && g.value <= d && d <= g.value2;
    case GuardKind::DimDivisible:
      return g.value > 0 && read_dim(h, g.axis, d) && d % g.value == 0;
    case GuardKind::DimsEqual: {
      std::int64_t d2 = 0;
      return read_dim(h, g.axis, d) && read_dim(headers[g.tensor2], g.axis2, d2) && d == d2;
    }
    case GuardKind::Aligned:
      return g.value > 0 &&
             reinterpret_cast<std::uintptr_t>(h.data) % static_cast<std::uintptr_t>(g.value) == 0;
    case GuardKind::CaptureDim:
      if (!read_dim(h, g.axis, d)) return false;
      symbols[g.value] = d;
      return true;
  }
  return false;
}

// Display name of header index t.
std::string tensor_name(std::uint32_t t, const std::vector<std::string>& names) {
  if (t < names.size() && !names[t].empty()) return names[t];
  return "t" + std::to_string(t);
}

// "x.dim1" for a tensor and axis.
std::string dim_name(std::uint32_t t, std::uint32_t axis, const std::vector<std::string>& names) {
  return tensor_name(t, names) + ".dim" + std::to_string(axis);
}

// "f32" for a known dtype code, else "dtype#7".
std::string dtype_text(std::int64_t code) {
  if (code >= 0 && code < dtype_count()) {
    return std::string(dtype_name(static_cast<DType>(code)));
  }
  return "dtype#" + std::to_string(code);
}

// "96", or "no axis 2 (rank 1)" when the header has no such axis.
std::string observed_dim(const TensorHeader& h, std::uint32_t axis) {
  std::int64_t d = 0;
  if (read_dim(h, axis, d)) return std::to_string(d);
  return "no axis " + std::to_string(axis) + " (rank " + std::to_string(h.rank) + ")";
}

}  // namespace

// Runs the guards in order; 0 when all pass, else the failing index + 1.
std::uint32_t evaluate_guards(const GuardSet& set, const TensorHeader* headers, std::int64_t* symbols) {
  for (std::size_t i = 0; i < set.guards.size(); ++i) {
    if (!check_guard(set.guards[i], headers, symbols)) return static_cast<std::uint32_t>(i + 1);
  }
  return 0;
}

// One guard as a condition: "x.dim1 == 128", "16 <= x.dim0 <= 4096", ...
std::string describe_guard(const Guard& g, const std::vector<std::string>& names) {
  const std::string dim = dim_name(g.tensor, g.axis, names);
  switch (g.kind) {
    case GuardKind::Rank:
      return tensor_name(g.tensor, names) + ".rank == " + std::to_string(g.value);
    case GuardKind::DType:
      return tensor_name(g.tensor, names) + ".dtype == " + dtype_text(g.value);
    case GuardKind::DimEquals:
      return dim + " == " + std::to_string(g.value);
    case GuardKind::DimRange:
      return std::to_string(g.value) + " <= " + dim + " <= " + std::to_string(g.value2);
    case GuardKind::DimDivisible:
      return dim + " % " + std::to_string(g.value) + " == 0";
    case GuardKind::DimsEqual:
      return dim + " == " + dim_name(g.tensor2, g.axis2, names);
    case GuardKind::Aligned:
      return tensor_name(g.tensor, names) + " is " + std::to_string(g.value) + "-byte aligned";
    case GuardKind::CaptureDim:
      return "s" + std::to_string(g.value) + " := " + dim;
  }
  return "?";
}

// What the headers held for guard g: "saw 96", "saw rank 2", "saw f64", ...
std::string describe_observed(const Guard& g, const TensorHeader* headers) {
  const TensorHeader& h = headers[g.tensor];
  switch (g.kind) {
    case GuardKind::Rank:
      if (h.rank < 0) return "saw an undefined tensor";
      return "saw rank " + std::to_string(h.rank);
    case GuardKind::DType:
      return "saw " + dtype_text(h.dtype);
    case GuardKind::DimEquals:
    case GuardKind::DimRange:
    case GuardKind::DimDivisible:
    case GuardKind::CaptureDim:
      return "saw " + observed_dim(h, g.axis);
    case GuardKind::DimsEqual:
      return "saw " + observed_dim(h, g.axis) + " vs " + observed_dim(headers[g.tensor2], g.axis2);
    case GuardKind::Aligned: {
      const auto addr = reinterpret_cast<std::uintptr_t>(h.data);
      const auto rem = g.value > 0 ? addr % static_cast<std::uintptr_t>(g.value) : addr;
      char text[96];
      std::snprintf(text, sizeof text, "saw address 0x%llx %% %lld == %llu",
                    static_cast<unsigned long long>(addr), static_cast<long long>(g.value),
                    static_cast<unsigned long long>(rem));
      return text;
    }
  }
  return "saw ?";
}

}  // namespace canary::jit

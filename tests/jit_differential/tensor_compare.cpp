// Element-wise comparison of run results (see tensor_compare.h).
#include "tests/jit_differential/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace canary::differential {
namespace {

// "element 7: got 0.5 (finite), want nan (NaN), tolerance 1e-06".
std::string describe(std::int64_t i, double got, double want, double tol) {
  std::ostringstream s;
  s.precision(9);
  s << "element " << i << ": got " << got << " (" << class_name(classify(got)) << "), want " << want << " ("
    << class_name(classify(want)) << "), |difference| " << std::abs(got - want) << ", tolerance " << tol;
  return s.str();
}

// A shape mismatch message, or "" when the shapes agree.
std::string shape_difference(const Tensor& got, const Tensor& want) {
  if (got.shape() == want.shape()) return "";
  return "shape " + shape_to_string(got.shape()) + " but expected " + shape_to_string(want.shape());
}

// True when the mask is given, covers element i and marks it.
bool skipped(const SkipMask* skip, std::int64_t i) {
  return skip != nullptr && static_cast<std::size_t>(i) < skip->size() && (*skip)[static_cast<std::size_t>(i)];
}

}  // namespace

// The class of a value.
ValueClass classify(double v) {
  if (std::isnan(v)) return ValueClass::NaN;
  if (std::isinf(v)) return v > 0 ? ValueClass::PosInf : ValueClass::NegInf;
  return ValueClass::Finite;
}

// The printable name of a class.
const char* class_name(ValueClass c) {
  switch (c) {
    case ValueClass::Finite: return "finite";
    case ValueClass::NaN: return "NaN";
    case ValueClass::PosInf: return "+Inf";
    case ValueClass::NegInf: return "-Inf";
  }
  return "?";
}

// Same shape, same non-finite class per element, finite values within tol.
CompareResult compare_tensors(const Tensor& got, const Tensor& want, Tolerance tol, const SkipMask* skip) {
  CompareResult r;
  r.difference = shape_difference(got, want);
  if (!r.difference.empty()) return r;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    if (skipped(skip, i)) {
      ++r.skipped;
      continue;
    }
    double g = got.element_as_double(i), w = want.element_as_double(i);
    ++r.compared;
    if (classify(g) != classify(w)) {
      r.difference = describe(i, g, w, 0.0);
      return r;
    }
    if (classify(w) != ValueClass::Finite) {
      ++r.non_finite;
      continue;
    }
    double limit = tol.abs + tol.rel * std::abs(w), d = std::abs(g - w);
    if (limit > 0) r.worst_ratio = std::max(r.worst_ratio, d / limit);
    if (d > limit) {
      r.difference = describe(i, g, w, limit);
      return r;
    }
  }
  return r;
}

// Against the fp64 reference, skipping ill-conditioned reference elements.
CompareResult compare_to_reference(const Tensor& got, const Tensor& ref, Tolerance tol, double huge,
                                   const SkipMask* skip) {
  CompareResult r;
  r.difference = shape_difference(got, ref);
  if (!r.difference.empty()) return r;
  for (std::int64_t i = 0; i < ref.numel(); ++i) {
    double g = got.element_as_double(i), w = ref.element_as_double(i);
    if (classify(w) != ValueClass::Finite || std::abs(w) > huge || skipped(skip, i)) {
      ++r.skipped;
      continue;
    }
    ++r.compared;
    double limit = tol.abs + tol.rel * std::abs(w), d = std::abs(g - w);
    if (limit > 0) r.worst_ratio = std::max(r.worst_ratio, d / limit);
    if (classify(g) != ValueClass::Finite || d > limit) {
      r.difference = describe(i, g, w, limit);
      return r;
    }
  }
  return r;
}

// Where the model's and its twin's references differ: bit for bit, since both
// are the same fp64 computation except where a clamped infinity flowed.
SkipMask saturated_elements(const Tensor& ref, const Tensor& twin) {
  if (ref.shape() != twin.shape()) return {};
  SkipMask mask(static_cast<std::size_t>(ref.numel()), false);
  for (std::int64_t i = 0; i < ref.numel(); ++i) {
    double a = ref.element_as_double(i), b = twin.element_as_double(i);
    bool same = std::isnan(a) ? std::isnan(b) : std::memcmp(&a, &b, sizeof a) == 0;
    mask[static_cast<std::size_t>(i)] = !same;
  }
  return mask;
}

}  // namespace canary::differential

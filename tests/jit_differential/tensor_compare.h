// Element-wise comparison of run results: identical NaN/+Inf/-Inf positions,
// finite values within an absolute plus relative tolerance, and the variant
// against the fp64 reference that skips ill-conditioned reference elements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canary/tensor.h"

namespace canary::differential {

// |got - want| <= abs + rel * |want|.
struct Tolerance {
  double abs = 0.0;
  double rel = 0.0;
};

enum class ValueClass : std::uint8_t { Finite, NaN, PosInf, NegInf };

// The class of a value.
ValueClass classify(double v);
// "NaN", "+Inf", "-Inf" or "finite".
const char* class_name(ValueClass c);

struct CompareResult {
  std::string difference;   // empty when the tensors agree; else the first difference
  double worst_ratio = 0.0; // largest |got - want| / tolerance over finite elements
  std::int64_t compared = 0;
  std::int64_t skipped = 0;  // reference elements too large or not finite
  std::int64_t non_finite = 0;  // NaN/Inf elements of want (compare_tensors)
};

// Elements a comparison leaves out (counted as skipped): true where the value
// depends on an infinity clamped to the f32 limits (see saturated_elements).
using SkipMask = std::vector<bool>;

// Same shape, same non-finite class per element, finite values within tol;
// elements the mask marks (when given) are skipped.
CompareResult compare_tensors(const Tensor& got, const Tensor& want, Tolerance tol, const SkipMask* skip = nullptr);
// Against the fp64 reference: same shape; elements where the reference is not
// finite or larger than huge, or that the mask marks, are skipped; elsewhere
// got must be finite and within tol.
CompareResult compare_to_reference(const Tensor& got, const Tensor& ref, Tolerance tol, double huge = 1e30,
                                   const SkipMask* skip = nullptr);
// The elements where two fp64 reference results of the same inputs differ
// (any bit, NaNs aside): ref from the model, twin from its unsaturated twin.
// Empty when the shapes differ (then nothing is skipped).
SkipMask saturated_elements(const Tensor& ref, const Tensor& twin);

}  // namespace canary::differential

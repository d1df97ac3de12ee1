// Element-wise comparison of run results: identical NaN/+Inf/-Inf positions,
// finite values within an absolute plus relative tolerance, and the variant
// against the fp64 reference that skips ill-conditioned reference elements.
#pragma once

#include <cstdint>
#include <string>

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

// Same shape, same non-finite class per element, finite values within tol.
CompareResult compare_tensors(const Tensor& got, const Tensor& want, Tolerance tol);
// Against the fp64 reference: same shape; elements where the reference is not
// finite or larger than huge are skipped; elsewhere got must be finite and within tol.
CompareResult compare_to_reference(const Tensor& got, const Tensor& ref, Tolerance tol, double huge = 1e30);

}  // namespace canary::differential

#include "jit/shape_knowledge.h"

#include <algorithm>

namespace canary::jit {

std::int64_t power_divisor(std::int64_t value) {
  for (std::int64_t d : {16, 8, 4})
    if (value % d == 0) return d;
  return 1;
}

void DimFacts::note(std::int64_t value) {
  if (value < 2 || value > kMaxSymbolicDim) return;
  if (!known()) {
    lo = hi = value;
    divisor = power_divisor(value);
    return;
  }
  lo = std::min(lo, value);
  hi = std::max(hi, value);
  // Each candidate divides the larger ones, so the common one is the smaller.
  divisor = std::min(divisor, power_divisor(value));
}

void DimFacts::merge(const DimFacts& other) {
  if (!other.known()) return;
  if (!known()) {
    *this = other;
    return;
  }
  lo = std::min(lo, other.lo);
  hi = std::max(hi, other.hi);
  divisor = std::min(divisor, other.divisor);
}

std::string DimFacts::describe() const {
  if (!known()) return "not recorded";
  std::string text = lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi);
  if (divisor > 1) text += ", divisible by " + std::to_string(divisor);
  return text;
}

void ShapeKnowledge::note_values(std::uint32_t reg, std::span<const std::int64_t> dims) {
  for (std::uint32_t axis = 0; axis < dims.size(); ++axis) {
    const auto it = symbolic.find(RegDim{reg, axis});
    if (it != symbolic.end()) it->second.note(dims[axis]);
  }
}

}  // namespace canary::jit

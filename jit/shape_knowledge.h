// ShapeKnowledge: what the retrace policy has learned about an anchor's
// entry shapes. Dims seen with several values are symbolic (the planner
// guards them by constraints, not by value), dims once equal and later not
// stop sharing a symbol, and each symbolic dim keeps DimFacts: the range of
// the values seen and the largest of 16, 8 and 4 dividing all of them.
//
// Facts are not guarded. Every kernel a symbolic plan compiles takes any
// value the dim's range guard admits (2 to kMaxSymbolicDim), so a value outside the
// range seen or off its divisor costs a run-time branch, never a compile.
// What facts decide is which versions one compile holds
// (jit/plan_versions.h): a group whose dims were seen short enough to run
// its rows as tiles also gets the kernel those tiles need, whichever shape
// the compile itself recorded.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>

namespace canary::jit {

// A dim of the value a register holds at the region's entry. Learned facts
// are keyed by register, not by position in Trace::entry, so they hold for
// traces that read the entry values in another order.
struct RegDim {
  std::uint32_t reg = 0;
  std::uint32_t axis = 0;
  friend bool operator<(RegDim a, RegDim b) { return std::pair(a.reg, a.axis) < std::pair(b.reg, b.axis); }
  friend bool operator==(RegDim a, RegDim b) { return a.reg == b.reg && a.axis == b.axis; }
};

// The largest value a symbolic dim's range guard admits (jit/plan_guards.cpp;
// beyond it the size checks of the kernels and Options::max_tensor_bytes
// decide).
inline constexpr std::int64_t kMaxSymbolicDim = std::int64_t{1} << 40;

// The largest of 16, 8 and 4 that divides `value`, or 1.
std::int64_t power_divisor(std::int64_t value);

struct DimFacts {
  std::int64_t lo = 0, hi = 0;  // the smallest and largest value seen
  std::int64_t divisor = 0;     // 16, 8, 4 or 1; 0 while nothing was seen

  bool known() const { return divisor != 0; }
  // Widens the facts to hold `value`. Values a symbolic dim never takes
  // (0, 1, above kMaxSymbolicDim) are left out: those calls are refused by
  // the range guard and go to sibling traces.
  void note(std::int64_t value);
  // Widens the facts to hold every value `other` holds.
  void merge(const DimFacts& other);
  // "8..16, divisible by 8", "5..200", "64, divisible by 16", "not recorded".
  std::string describe() const;

  friend bool operator==(const DimFacts&, const DimFacts&) = default;
};

struct ShapeKnowledge {
  std::map<RegDim, DimFacts> symbolic;          // dims seen with several values (never 0 or 1)
  std::set<std::pair<RegDim, RegDim>> unequal;  // dims once equal, later seen different

  // Widens the facts of register `reg`'s symbolic dims with `dims`, the
  // shape it holds in a recorded trace or a refused call (values of 0 or 1
  // are left out: those shapes go to sibling traces).
  void note_values(std::uint32_t reg, std::span<const std::int64_t> dims);
};

}  // namespace canary::jit

// Which versions one symbolic compile holds, decided from what was seen of
// its symbolic dims (the DimFacts of ShapeKnowledge) instead of from the one
// shape the compile happened to record. Each version is picked per call by
// a cheap predicate on the call's own layout, so a new shape costs a
// branch, never a compile; the facts only decide which versions are there.
//
// Today that is the per-element kernel of a fused group with inputs holding
// one value per row (fused_tiling.h): calls whose rows are short run as
// long tiles through it, the others row by row without it. A group recorded
// on rows of 200 floats whose row dim was also seen at 5 gets it; one whose
// rows were only ever long, or whole numbers of vectors, does not.
//
// Intermediate values carry no symbols, so a group's dims are matched to
// symbols by value: a dim recorded at a symbol's recorded value is taken to
// be that symbol. A coincidence (a channel count equal to a batch size)
// costs at most a version compiled in vain or one missing; never a wrong
// result, since the predicates look at the real layout of each call.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "jit/plan.h"
#include "jit/plan_fusion.h"

namespace canary::jit {

struct SeenSymbol {
  std::int64_t recorded = 0;  // its value in the recorded trace
  DimFacts facts;             // known()
};

// The plan's symbols whose facts are known (after plan_entry_guards).
std::vector<SeenSymbol> seen_symbols(const Plan& plan);

// The values of a symbol the versions are decided on: its smallest value
// seen, the next multiple of its divisor (another residue modulo the
// vector width, when the values seen have one), and its largest.
inline constexpr int kSymbolSamples = 3;
std::int64_t symbol_sample(const DimFacts& facts, int k);

// The collapsed layouts a group recorded with output shape `out` and
// `inputs` would have at each sample: every symbol at its k-th sample at
// once. Samples that do not collapse like `recorded` (the kernel would not
// take them) are left out.
std::vector<CollapsedLayout> seen_layouts(std::span<const std::int64_t> out,
                                          std::span<const std::span<const std::int64_t>> inputs,
                                          const CollapsedLayout& recorded, const std::vector<SeenSymbol>& seen);

}  // namespace canary::jit

#include "jit/plan_versions.h"

#include <algorithm>

namespace canary::jit {

namespace {

// `shape` with each dim recorded at a symbol's value replaced by that
// symbol's k-th sample (the first symbol of that value wins).
Shape at_sample(std::span<const std::int64_t> shape, const std::vector<SeenSymbol>& seen, int k) {
  Shape out(shape.begin(), shape.end());
  for (std::int64_t& d : out) {
    const auto s = std::find_if(seen.begin(), seen.end(), [&](const SeenSymbol& s) { return s.recorded == d; });
    if (s != seen.end()) d = symbol_sample(s->facts, k);
  }
  return out;
}

// Whether `shape` holds a number of elements an int64 counts. Each sample
// is at most kMaxSymbolicDim, but a group with several symbolic dims at
// their largest can still hold more than any call could bring.
bool countable(std::span<const std::int64_t> shape) {
  std::int64_t elements = 1;
  for (std::int64_t d : shape)
    if (__builtin_mul_overflow(elements, d, &elements)) return false;
  return true;
}

bool same_collapse(const CollapsedLayout& a, const CollapsedLayout& b) {
  return std::equal(std::begin(a.full), std::end(a.full), std::begin(b.full)) &&
         a.inner_broadcast == b.inner_broadcast;
}

}  // namespace

std::vector<SeenSymbol> seen_symbols(const Plan& plan) {
  std::vector<SeenSymbol> seen;
  for (const Plan::Symbol& s : plan.symbols) {
    if (!s.facts.known()) continue;
    const DimRef d = s.dims.front();
    seen.push_back({plan.entry[d.entry].shape[d.axis], s.facts});
  }
  return seen;
}

std::int64_t symbol_sample(const DimFacts& facts, int k) {
  if (k == 0) return facts.lo;
  if (k == 1) return std::min(facts.hi, (facts.lo / facts.divisor + 1) * facts.divisor);
  return facts.hi;
}

std::vector<CollapsedLayout> seen_layouts(std::span<const std::int64_t> out,
                                          std::span<const std::span<const std::int64_t>> inputs,
                                          const CollapsedLayout& recorded, const std::vector<SeenSymbol>& seen) {
  std::vector<CollapsedLayout> layouts;
  if (seen.empty()) return layouts;
  for (int k = 0; k < kSymbolSamples; ++k) {
    const Shape o = at_sample(out, seen, k);
    if (!countable(o)) continue;  // inputs broadcast to `o`: they hold no more
    std::vector<Shape> in;
    for (std::span<const std::int64_t> s : inputs) in.push_back(at_sample(s, seen, k));
    std::vector<std::span<const std::int64_t>> spans(in.begin(), in.end());
    CollapsedLayout layout;
    if (collapse_layout(o, spans, layout) && same_collapse(layout, recorded)) layouts.push_back(layout);
  }
  return layouts;
}

}  // namespace canary::jit

// The readable JIT report: one block per anchor, one per installed variant.
#include "cli/inspect_text.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "cli/run_summary.h"

namespace canary::cli {

namespace {

// "a b c" of a list of names.
std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : " ") + n;
  return s;
}

// One fusion group: its nodes and the fused expression.
void print_group(std::ostream& os, std::size_t index, const FusionGroupReport& g) {
  fmt::print(os, "      group {}: {} ({} in, {} out)\n", index + 1, joined(g.nodes), g.inputs, g.outputs);
  fmt::print(os, "        {}\n", g.expression);
}

// One installed variant with its groups, kernels and guards.
void print_variant(std::ostream& os, const VariantReport& v, bool listing) {
  fmt::print(os, "    variant trace {}: {}, {} math, {}{}, pc {}..{}\n", v.trace, v.tier, v.math, v.isa,
             v.loop ? ", loop body" : "", v.start_pc, v.end_pc);
  fmt::print(os, "      ran {} times, {} deopts; compiled in {:.3f} ms, {} bytes of code\n", v.entries, v.deopts,
             v.compile_ms, v.code_bytes);
  fmt::print(os, "      fusion groups: {}\n", v.groups.size());
  for (std::size_t i = 0; i < v.groups.size(); ++i) print_group(os, i, v.groups[i]);
  fmt::print(os, "      kernel calls: {}\n", v.kernels.empty() ? "none" : joined(v.kernels));
  fmt::print(os, "      guards ({}), with failures:\n", v.guards.size());
  for (const GuardReport& g : v.guards) fmt::print(os, "        {:<40} {}\n", g.condition, g.failures);
  if (!listing) return;
  fmt::print(os, "      plan:\n");
  std::size_t pos = 0;
  while (pos < v.listing.size()) {
    const std::size_t nl = v.listing.find('\n', pos);
    fmt::print(os, "        {}\n", v.listing.substr(pos, nl == std::string::npos ? nl : nl - pos));
    pos = nl == std::string::npos ? v.listing.size() : nl + 1;
  }
}

}  // namespace

void print_jit_report(std::ostream& os, const JitReport& r, bool listing) {
  if (!r.enabled) {
    fmt::print(os, "jit: off (--no-jit, or the CPU lacks AVX2+FMA)\n");
    return;
  }
  fmt::print(os, "jit: on, isa {}, {} anchors\n", r.isa, r.anchors.size());
  for (const AnchorReport& a : r.anchors) {
    fmt::print(os, "  anchor '{}' ({} at pc {}): {}; {} compiles\n", a.name, a.kind, a.pc,
               a.state.empty() ? "interpreted" : a.state, a.compiles);
    for (const VariantReport& v : a.variants) print_variant(os, v, listing);
  }
}

void print_inspect(std::ostream& os, const JitReport& report, const RunResult& run, bool listing) {
  print_jit_report(os, report, listing);
  fmt::print(os, "time per tier:\n");
  print_call_times(os, run.calls);
  print_stats(os, run.stats);
}

}  // namespace canary::cli

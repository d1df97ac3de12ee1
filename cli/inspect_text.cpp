// The readable JIT report: one block per anchor, one per installed variant.
#include "cli/inspect_text.h"

#include <algorithm>
#include <string_view>

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
  fmt::print(os, "      group {}: {} ({} in, {} out{}{})\n", index + 1, joined(g.nodes), g.inputs, g.outputs,
             g.sunk ? "; sunk: runs at its last node" : "", g.device.empty() ? "" : "; on " + g.device);
  fmt::print(os, "        {}\n", g.expression);
}

// True when a guard condition names one of the inputs ("x.dim0 == 8", "x is 4-byte aligned").
bool checks_input(const std::string& condition, const std::vector<std::string>& inputs) {
  std::size_t pos = 0;
  while (pos < condition.size()) {
    const std::size_t end = std::min(condition.find(' ', pos), condition.size());
    const std::string_view token(condition.data() + pos, end - pos);
    for (const std::string& in : inputs)
      if (token == in || (token.size() > in.size() && token.substr(0, in.size()) == in && token[in.size()] == '.'))
        return true;
    pos = end + 1;
  }
  return false;
}

// The guards of a variant: all with `listing`, else the failed ones and those on model inputs.
void print_guards(std::ostream& os, const VariantReport& v, const std::vector<std::string>& inputs, bool listing) {
  std::size_t hidden = 0;
  fmt::print(os, "      guards ({}), with failures:\n", v.guards.size());
  for (const GuardReport& g : v.guards) {
    if (listing || g.failures > 0 || checks_input(g.condition, inputs))
      fmt::print(os, "        {:<40} {}\n", g.condition, g.failures);
    else
      ++hidden;
  }
  if (hidden) fmt::print(os, "        ... {} more on constants and inner values, none failed (--listing shows them)\n", hidden);
}

// One installed variant with its groups, kernels and guards.
void print_variant(std::ostream& os, const VariantReport& v, const std::vector<std::string>& inputs, bool listing) {
  fmt::print(os, "    {} {}: {}, {} math, {}{}, pc {}..{}\n", v.side ? "side trace" : "variant trace", v.trace, v.tier,
             v.math, v.isa, v.loop ? ", loop body" : "", v.start_pc, v.end_pc);
  fmt::print(os, "      ran {} times, {} deopts; compiled in {:.3f} ms, {} bytes of code\n", v.entries, v.deopts,
             v.compile_ms, v.code_bytes);
  if (!v.device_error.empty())
    fmt::print(os, "      its groups run on the CPU since a GPU run failed: {}\n", v.device_error);
  fmt::print(os, "      fusion groups: {}\n", v.groups.size());
  for (std::size_t i = 0; i < v.groups.size(); ++i) print_group(os, i, v.groups[i]);
  fmt::print(os, "      kernel calls: {}\n", v.kernels.empty() ? "none" : joined(v.kernels));
  print_guards(os, v, inputs, listing);
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

void print_jit_report(std::ostream& os, const JitReport& r, const std::vector<std::string>& model_inputs,
                      bool listing) {
  if (!r.enabled) {
    fmt::print(os, "jit: off (--no-jit, or the CPU lacks AVX2+FMA)\n");
    return;
  }
  fmt::print(os, "jit: on, isa {}, {} anchors\n", r.isa, r.anchors.size());
  if (!r.device.empty()) fmt::print(os, "  fused groups may run on {}\n", r.device);
  if (!r.device_absent.empty()) fmt::print(os, "  no GPU is usable ({}): fused groups run on the CPU\n", r.device_absent);
  for (const AnchorReport& a : r.anchors) {
    fmt::print(os, "  anchor '{}' ({} at pc {}): {}; {} compiles\n", a.name, a.kind, a.pc,
               a.state.empty() ? "interpreted" : a.state, a.compiles);
    for (const VariantReport& v : a.variants) print_variant(os, v, model_inputs, listing);
    for (const VariantReport& v : a.side_traces) print_variant(os, v, model_inputs, listing);
  }
}

void print_graph_passes(std::ostream& os, const std::vector<GraphPassReport>& passes) {
  if (passes.empty()) {
    fmt::print(os, "graph passes: off\n");
    return;
  }
  fmt::print(os, "graph passes:\n");
  for (const GraphPassReport& p : passes) {
    fmt::print(os, "  {}: {} change{}, nodes {} -> {}\n", p.pass, p.changes, p.changes == 1 ? "" : "s",
               p.nodes_before, p.nodes_after);
    for (const std::string& d : p.details) fmt::print(os, "    {}\n", d);
  }
}

void print_inspect(std::ostream& os, const JitReport& report, const std::vector<std::string>& model_inputs,
                   const RunResult& run, bool listing) {
  print_jit_report(os, report, model_inputs, listing);
  fmt::print(os, "time per tier:\n");
  print_call_times(os, run.calls);
  print_stats(os, run.stats);
}

}  // namespace canary::cli

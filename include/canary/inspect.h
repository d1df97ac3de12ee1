// JitReport: a snapshot of what the JIT holds for a model — anchors, the
// variants installed at each, their fusion groups, guards (with how often
// each failed), compile times and code sizes. What `canary inspect` prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace canary {

// What one graph-optimizer pass did at load (Model::graph_passes()).
struct GraphPassReport {
  std::string pass;                  // "fold_batch_norm"
  int changes = 0;                   // rewrites applied
  int nodes_before = 0, nodes_after = 0;
  std::vector<std::string> details;  // one line per rewrite: "'bn1' folded into 'conv1'"
};

struct GuardReport {
  std::string condition;      // "x.dim0 == 8", "16 <= x.dim0 <= 4096", "branch at pc 12 ..."
  std::uint64_t failures = 0; // entry refusals (entry guards) or side exits (mid-trace checks)
};

// A fused elementwise group, a row kernel, or a contraction with its
// epilogue (expression "conv + relu (oneDNN post-ops on large results)").
struct FusionGroupReport {
  std::vector<std::string> nodes;  // graph node names, in order
  std::string expression;          // the fused expression, e.g. "in0 in1 add tanh -> out0"
  std::size_t inputs = 0, outputs = 0;
  // Non-adjacent fusion: other ops ran between its nodes when recorded, and
  // the earlier nodes run later, at the last node's place (JitOptions::nonadjacent_fusion).
  bool sunk = false;
  // Where it runs: "" for the CPU, else the device's name (JitOptions::device).
  std::string device;
};

struct VariantReport {
  std::uint32_t trace = 0;
  std::string tier;                // "exact fused", "symbolic fused", "unfused"
  std::string math;                // "exact" or "fast"
  std::string isa;                 // "avx512", "avx2", "scalar"
  bool loop = false;               // iterates a loop body
  bool side = false;               // a side trace: entered from exits that resume at start_pc
  std::uint32_t start_pc = 0, end_pc = 0;
  std::vector<FusionGroupReport> groups;
  std::vector<std::string> kernels;  // nodes run as direct kernel calls
  std::vector<GuardReport> guards;   // entry guards, then mid-trace checks
  std::uint64_t entries = 0;         // times it ran
  std::uint64_t deopts = 0;          // side exits taken mid-trace (also those a side trace continued)
  double compile_ms = 0.0;
  std::uint64_t code_bytes = 0;
  // Why its groups left the device for the CPU (a run there failed); "" while they stay.
  std::string device_error;
  std::string listing;               // the full plan, readable
};

struct AnchorReport {
  std::string name;                  // "entry", the loop node's name, or "after <loop node's name>"
  std::string kind;                  // "entry", "loop" or "continuation" (after a top-level loop)
  std::uint32_t pc = 0;
  std::uint64_t compiles = 0;        // compile attempts so far
  std::string state;                 // "compiled", "interpreted", "penalised for N ms", ...
  std::vector<VariantReport> variants;
  // Side traces (JitOptions::side_traces), most recently installed first.
  std::vector<VariantReport> side_traces;
};

struct JitReport {
  bool enabled = false;              // JIT on and the CPU supported (AVX2+FMA)
  std::string isa;
  // JitOptions::device: the device fused groups may run on ("" when none),
  // or, when one was asked for and none is usable, why.
  std::string device;
  std::string device_absent;
  std::vector<AnchorReport> anchors;
};

}  // namespace canary

// Energy: RAPL package and DRAM counters from the powercap sysfs tree where
// readable (with wraparound), and a model from bytes moved, flops, ISA and
// time where not. A modelled figure is always labelled as such.
// rapl_reader.cpp, work_estimate.cpp and energy_model.cpp implement it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/plan.h"
#include "jit/x86/isa.h"
#include "vm/program.h"

namespace canary::jit::cost {

// One read of every RAPL zone found (package zones and their DRAM subzones).
struct RaplSample {
  std::vector<std::uint64_t> energy_uj;  // per zone, as read
  bool ok = false;                       // every zone read
};

class RaplReader {
 public:
  // Looks for intel-rapl:N (package) and their "dram" subzones under root
  // (normally /sys/class/powercap). Unreadable files (no permission, no
  // RAPL, not Linux) leave the reader not readable; never throws.
  explicit RaplReader(std::string root);
  bool readable() const { return !zones_.empty(); }
  // "package-0 + dram-0 (/sys/class/powercap)", or why not readable.
  const std::string& description() const { return description_; }
  RaplSample read() const;
  // Joules between two samples; a counter that went down wrapped at its
  // max_energy_range_uj. 0 when either sample is not ok.
  double joules_between(const RaplSample& before, const RaplSample& after) const;

 private:
  struct Zone {
    std::string energy_path;
    std::uint64_t max_range_uj = 0;
  };
  std::vector<Zone> zones_;
  std::string description_;
};

// What a plan does per call, estimated from the shapes its trace recorded
// (a Plan alone keeps no shapes of the values its kernel steps read).
struct WorkEstimate {
  double bytes_moved = 0.0;        // bytes read and written by steps (fused groups: inputs and outputs only)
  double flops = 0.0;              // arithmetic (elementwise ops, MatMul/Gemm/Conv 2 per MAC, ...)
  double bytes_materialised = 0.0; // bytes of register values the steps write (peak-memory proxy)
  double device_bytes = 0.0;       // bytes copied to and from the GPU: the inputs and outputs of steps placed there
};
// `trace` is the one the plan was made from: it gives every step's shapes.
// For a loop trace it is the work of one iteration (hoisted steps excluded).
WorkEstimate estimate_work(const Plan& plan, const Trace& trace, const vm::Program& program);
// The interpreter runs every op of the region on its own: what the trace
// recorded, unfused.
WorkEstimate estimate_interpreter_work(const Trace& trace, const vm::Program& program);

// Joules per call modelled from work, ISA and measured time: core power by
// ISA while busy plus DRAM energy per byte, and for groups on a GPU the
// board's active power while the copies occupy the bus plus the link's
// energy per byte (constants in energy_model.cpp, with their sources in
// docs/COST_MODEL.md).
double modelled_joules(const WorkEstimate& work, x86::Isa isa, double seconds);

}  // namespace canary::jit::cost

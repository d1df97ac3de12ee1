// The differential harness: runs one generated graph over a shape stream on
// three sessions — JIT on (synchronous, low hot threshold), JIT off, and the
// fp64 reference — and compares every output of every call:
//   JIT vs interpreter: identical NaN/Inf positions, finite values within
//     4 g u + 8 depth u |x| (g: the output's static error bound, u = 2^-24);
//   both vs the reference: within 1.25 g u + u |ref| (elements where the
//     reference is not finite or huge are skipped and counted).
// With infinities injected, elements that depend on one clamped to the f32
// limits by a Clip without that bound are left out of both comparisons: the
// fp64 reference of the graph's unsaturated twin (RandomGraph) differs there.
// A failure is described with the seed, the call, the output and element,
// the JIT's events and the graph text, so it can be replayed.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "canary/canary.h"
#include "tests/runtime/host_fused_device.h"
#include "tests/jit_differential/random_graph.h"
#include "tests/jit_differential/shape_stream.h"
#include "tests/jit_differential/tensor_compare.h"

namespace canary::differential {

inline constexpr std::size_t kEventKinds = static_cast<std::size_t>(EventKind::Penalty) + 1;

struct HarnessOptions {
  std::uint64_t hot_threshold = 1;
  bool value_canaries = false;
  bool compare_reference = true;
  ValueOptions values;
  std::string fault_injection;          // JitOptions::fault_injection of the JIT runtime
  bool identical_to_interpreter = false;  // JIT results must equal the interpreter's bit for bit
  std::string isa = "auto";             // JitOptions::isa of the JIT runtime
  // Fused groups run on a device (JitOptions::device "gpu"): the host
  // stand-in (tests/runtime/host_fused_device.h), computing through the
  // reference evaluator on the arguments a GPU would get.
  bool device = false;
  // Fused groups run on the CUDA backend itself (JitOptions::device "gpu",
  // no stand-in): a real GPU, or the PTX emulator where its libcuda.so.1
  // leads the library path (tests/cuda/emulator).
  bool cuda_device = false;
};

// What one graph's run found.
struct DifferentialReport {
  std::string failure;             // empty when every comparison passed
  std::size_t calls = 0;           // calls run
  std::size_t error_calls = 0;     // calls where every session threw the same kind of error
  std::int64_t compared = 0;       // elements compared (JIT vs interpreter)
  std::int64_t skipped_reference = 0;
  std::int64_t saturated = 0;      // elements left out as dependent on a clamped infinity (JIT vs interpreter)
  std::int64_t non_finite = 0;     // NaN/Inf elements in the interpreter's outputs
  double worst_jit_ratio = 0.0;    // largest |JIT - interpreter| / tolerance
  double worst_reference_ratio = 0.0;
  std::size_t then_calls = 0;      // calls where the main If took its then branch
  std::size_t else_calls = 0;
  std::array<std::size_t, kEventKinds> events{};  // the JIT model's events by kind
  JitStats jit;                    // the JIT session's counters after the stream
  std::size_t device_row_runs = 0; // of jit.device_fused_calls: row kernels (HarnessOptions::device)
  std::string device;              // JitReport::device of the JIT model ("" when it runs on the CPU alone)
  std::string device_absent;       // JitReport::device_absent: why no device, when one was asked for
  bool ok() const { return failure.empty(); }
  std::size_t count(EventKind kind) const { return events[static_cast<std::size_t>(kind)]; }
};

// The options of the JIT-on runtime: synchronous compiles after hot_threshold anchor visits.
Options jit_options(std::uint64_t hot_threshold, bool value_canaries = false, const std::string& fault_injection = "");
// The options of the interpreter-only runtime.
Options interpreter_options();
// The tolerance of JIT vs interpreter for an output.
Tolerance jit_tolerance(const OutputBound& out);
// The tolerance of an f32 result vs the fp64 reference for an output.
Tolerance reference_tolerance(const OutputBound& out);
// Events of a model by kind.
std::array<std::size_t, kEventKinds> count_events(const std::vector<Event>& events);
// Compiled events per anchor.
std::map<std::string, std::size_t> compiles_per_anchor(const std::vector<Event>& events);
// The first `limit` events, one per line.
std::string describe_events(const std::vector<Event>& events, std::size_t limit = 12);

// Holds the runtimes (one per JIT configuration) across many graphs.
class DifferentialRunner {
 public:
  DifferentialRunner();
  // Runs graph over stream on the three sessions and compares everything.
  DifferentialReport run(const RandomGraph& graph, const std::vector<StreamCall>& stream, const HarnessOptions& options);

 private:
  const Runtime& jit_runtime(const HarnessOptions& options);
  Runtime interpreter_;
  std::shared_ptr<const test::HostFusedDevice> device_;  // for HarnessOptions::device
  std::map<std::string, std::unique_ptr<Runtime>> jit_;
};

}  // namespace canary::differential

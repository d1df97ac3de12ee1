// A trial: the candidates of one trace, what each has measured so far, the
// shapes the anchor has seen, and the scheduling rules (which candidate the
// next trial call runs, whether it is shadowed, when the trial is over).
// The engine owns trials and their locking; this file is plain data and
// functions so the rules are testable alone.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "canary/cost.h"
#include "jit/compiled_trace.h"
#include "jit/cost/candidates.h"
#include "jit/cost/energy.h"
#include "jit/cost/objective.h"

namespace canary::jit::cost {

// What one session call measured for the candidate it ran.
struct TrialSample {
  double call_us = 0.0;
  bool candidate_ran = false;   // its guards admitted the call (otherwise the interpreter ran the region)
  bool timed = true;            // call_us is a latency sample (false: an extra run for a shared shadow)
  bool shadowed = false;        // compared with the fp64 reference
  double max_relative_error = 0.0;
  double max_ulp = 0.0;
  std::uint64_t decisions = 0, near_flips = 0, far_flips = 0;
  double min_far_margin = 0.0;
  std::vector<double> margins;  // the reference's margin per decision (at most kMaxMarginSamples)
  std::uint64_t new_non_finite = 0, saturated = 0;
  std::uint64_t noise_copies = 0;
  double variance_ratio = 1.0;
  bool energy_measured = false;   // RAPL: the host package and DRAM during the call
  double energy_joules = 0.0;
  // NVML: the GPU board during the call (candidates with groups on the GPU).
  bool device_energy_read = false;
  double device_energy_joules = 0.0;
};

struct TrialCandidate {
  CandidateSpec spec;
  std::shared_ptr<const CompiledTrace> trace;  // null: the interpreter
  WorkEstimate work;
  CandidateMeasurements measured;
  std::uint64_t issued = 0;                    // trial tickets handed out
  std::uint64_t reported = 0;                  // timed samples received (the first is the warm-up)
  std::uint64_t refused = 0;                   // trial calls its guards refused (the interpreter ran)
  std::uint64_t energy_samples = 0;            // RAPL-measured calls
  double host_energy_joules = 0.0;             // their mean
  // NVML reads around its calls: summed joules and call time, and how many.
  double device_energy_joules = 0.0;
  double device_energy_window_us = 0.0;
  std::uint64_t device_energy_calls = 0;
  bool device_energy_seen = false;  // NVML was read for it (its warm-up call included)
};

// NVML's counter advances every 20-100 ms: where it is read (every
// candidate's calls while a GPU is in use, after each one's warm-up call), a
// candidate's energy counts as measured only once its read calls add up to
// this much time and the counter moved over them; otherwise it is modelled.
inline constexpr double kDeviceEnergyWindowUs = 200'000.0;

// The handle a session holds for one call.
struct Ticket {
  std::uint32_t anchor = 0;
  std::uint64_t epoch = 0;       // which trial (a new trace starts a new one)
  std::uint32_t candidate = 0;
  bool shadow = false;
  bool monitor = false;          // after the decision: watching the chosen candidate
  // The candidate's outputs may be served to the caller: it is the ladder's
  // own variant, the interpreter, or it has passed a shadow comparison.
  // Otherwise the call serves what is installed and runs the candidate once
  // more, on the same inputs, to measure it.
  bool serve = true;
};

struct Trial {
  std::uint64_t epoch = 0;
  std::uint32_t trace = 0;
  std::vector<TrialCandidate> candidates;
  std::uint64_t tickets = 0;
  bool decided = false;
  std::size_t chosen = 0;
  // Entry shapes seen at the anchor (each value: rank, dtype, dims), with counts.
  std::map<std::vector<std::int64_t>, std::uint64_t> shapes;
};

// Folds one sample into a candidate's measurements. The first call of each
// candidate is its warm-up: its latency is not kept (caches, primitive
// creation), its accuracy is. A call its guards refused measures nothing
// about it and is counted as refused. At most kMaxLatencySamples latencies
// are kept (monitoring goes on for the model's life): the oldest is replaced.
inline constexpr std::size_t kMaxLatencySamples = 256;
void add_sample(TrialCandidate& c, const TrialSample& s);

// The candidate the next trial call should run: while latency samples are
// missing, the candidate with the fewest tickets; then, only for a call the
// session can shadow (may_shadow), one that still needs shadowed calls;
// nullopt when the trial has what it needs or the call cannot help.
std::optional<std::uint32_t> next_candidate(const Trial& trial, const CostModelOptions& options, bool may_shadow);
// Whether a candidate's outputs may reach callers during its trial: the
// ladder's variant (index 0), the interpreter, or a candidate whose shadowed
// calls showed no new NaN/Inf, no far flip and an error within `max_error`
// (or twice the ladder variant's own measured error).
bool servable(const Trial& trial, std::uint32_t candidate, double max_error);

// Whether that candidate still needs shadowed calls (never once its guards
// have refused trial_calls calls).
bool wants_shadow(const TrialCandidate& c, const CostModelOptions& options);
// Every candidate has its trial calls (after warm-up) and shadow samples, or
// the trial ran out of calls (kMaxTrialRounds x candidates x trial_calls).
bool trial_complete(const Trial& trial, const CostModelOptions& options);
inline constexpr std::uint64_t kMaxTrialRounds = 20;

// The shape key of the entry headers, and headers rebuilt from a key (for
// evaluating a candidate's guards on every recorded shape).
std::vector<std::int64_t> shape_key(const std::vector<TensorHeader>& headers);
std::vector<TensorHeader> headers_of_key(const std::vector<std::int64_t>& key, std::vector<std::int64_t>& dims_storage);

// Fills each compiled candidate's expected deopt time per call: the share of
// recorded shapes its guards reject times (the interpreter's p50 + one
// exit), from the trial's shape histogram.
void fill_expected_deopt(Trial& trial);
// Energy per candidate: measured where RAPL was read (and, for a candidate
// with groups on the GPU, NVML over kDeviceEnergyWindowUs), otherwise
// modelled; and planned memory.
void fill_energy_and_memory(Trial& trial, x86::Isa host_isa);

}  // namespace canary::jit::cost

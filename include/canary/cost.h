// The robustness-weighted cost model: what the user states (a profile or
// weights, hard limits, which outputs are decisions, how much shadow running
// is allowed) and the decision tables it logs. docs/COST_MODEL.md defines
// every term.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace canary {

enum class CostProfile : std::uint8_t {
  Speed,     // latency and deopts only; loose error limit
  Balanced,  // latency first, robustness terms weigh half as much
  Robust,    // robustness terms weigh twice latency; tight error limit
};
std::string cost_profile_name(CostProfile profile);

// Weights of the normalised terms (each term is 0 for the best candidate or
// a perfect result; docs/COST_MODEL.md gives each normalisation).
struct CostWeights {
  double latency = 1.0;   // p50 call time / the fastest candidate's, minus 1
  double tail = 0.0;      // fraction of calls over 3x the candidate's p50
  double error = 0.0;     // max relative error / the error limit
  double flips = 0.0;     // near-threshold decision flip rate
  double variance = 0.0;  // output spread under input noise / the reference's, minus 1
  double deopt = 1.0;     // expected deopt time per call / the fastest p50
  double energy = 0.0;    // energy per call / the lowest candidate's, minus 1
  double memory = 0.0;    // bytes materialised / the lowest candidate's, minus 1
  // Bus time of the copies between host and GPU a candidate with groups on
  // the GPU makes per call (modelled from its bytes) / the fastest p50.
  // Latency already holds the copies as the trial saw them; this prices the
  // bus itself, which other work on the machine competes for.
  double transfer = 0.0;
};

// Hard gates: a candidate that fails one is never chosen, whatever its cost.
// A new NaN, Inf or saturation the reference does not have always fails.
struct CostLimits {
  // Max over elements of |candidate - reference| / max(|reference|, floor),
  // where floor = relative_floor x the RMS of the reference output, so that
  // values near zero do not explode the ratio.
  double max_relative_error = 1e-4;
  double relative_floor = 1e-3;
  // Reject a candidate that flips a decision the reference made with a
  // margin above the decision's near_margin.
  bool reject_far_flips = true;
  // Largest (candidate spread / reference spread) under input noise.
  double max_variance_ratio = 2.0;
};

// A model output whose values are decisions, so flips are counted.
struct DecisionOutput {
  enum class Kind : std::uint8_t {
    Threshold,  // each element: value > threshold
    Argmax,     // each row (last axis): index of the largest value
  };
  std::string output;
  Kind kind = Kind::Threshold;
  double threshold = 0.5;
  // A flip where the reference's margin (|value - threshold|, or the gap
  // between the top two of a row) is at most this is "near" (expected);
  // above it, "far" (a defect).
  double near_margin = 1e-3;
};

struct CostModelOptions {
  // Off: the JIT installs the first variant it compiles (the ladder of
  // docs/ARCHITECTURE.md). On: it compiles candidates, trials them on real
  // calls with shadow runs against the fp64 reference, and installs the
  // cheapest that passes every gate.
  bool enabled = false;
  CostProfile profile = CostProfile::Balanced;
  // Replace the profile's weights or limits (custom objective).
  std::optional<CostWeights> weights;
  std::optional<CostLimits> limits;

  // Candidate axes beyond the ladder's own variant.
  bool try_fast_math = true;   // fast polynomials (when the trace has transcendentals)
  bool try_unfused = true;     // one kernel per op
  bool try_isas = true;        // the next narrower tier: AVX2 on AVX-512 hosts, scalar on AVX2 ones
  bool try_bf16 = true;        // bf16 MatMul/Gemm/Conv (when the trace has one)
  bool try_symbolic = true;    // every entry dim symbolic (when the shapes are exact)
  bool try_compensated = true; // compensated (Neumaier) sums in row kernels (when the trace has some)
  // MatMul, Gemm, Conv, LSTM and GRU on Canary's own kernels, which sum the
  // products in f64 and round each result once, instead of oneDNN's f32 sums
  // (when the trace has one). The accurate choice a tight error limit can
  // hold, at the latency of kernels that are not oneDNN's (the trial shows it).
  bool try_wide_accumulation = true;
  // The other placement of the fused groups, on the GPU or on the CPU, when
  // JitOptions::device is "auto" or "gpu" and a GPU is usable.
  bool try_device = true;
  // More intra-op threads (up to max_candidate_threads, at most the host's
  // cores) for the region's heavy ops and large fused groups, when the host
  // has more than one core and the trace has such work. Off by default: on a
  // shared host, oversubscribed OpenMP threads can make each trial call of
  // that candidate orders of magnitude slower (seen: 1700x on an LSTM on a
  // loaded 2-core machine), and trial calls run on live traffic.
  bool try_threads = false;
  int max_candidate_threads = 8;

  // Shadow sampling. During a trial each candidate runs trial_calls calls;
  // shadow_samples of them also run the fp64 reference (and noise copies).
  // The first call at a new input shape is shadowed; after the decision,
  // 1 in monitor_every calls is (0: never).
  int trial_calls = 6;
  int shadow_samples = 2;
  int monitor_every = 100;
  // Most shadow time per unit of call time, per session: a shadow run that
  // would exceed it is skipped (the trial waits for a later call).
  // shadow_burst_ms more are allowed on top, so a trial can finish within
  // its first calls; over a long run the overhead tends to the budget.
  double max_shadow_overhead = 0.25;
  double shadow_burst_ms = 250.0;
  // Output variance: noise_copies perturbed copies of the inputs (relative
  // Gaussian noise noise_sigma) per shadowed trial call; 0 disables the term.
  int noise_copies = 3;
  double noise_sigma = 1e-3;
  // The fp64 reference runs the copies as one batch stacked along dim 0
  // where the model's signature makes dim 0 a batch and the first shadowed
  // call confirms it gives each copy's own bits (runtime/shadow_runner.h);
  // the candidate's copies always run one by one, at the call's shape. Off
  // by default: the reference kernels cost per element, so a batch saved
  // nothing measurable (0.94-1.09x the shadow time on the samples and on a
  // model of 30 small ops; docs/COST_MODEL.md).
  bool batch_noise_copies = false;
  std::uint64_t seed = 1;
  // Inputs that are dropout masks (0/1 tensors): perturbed copies redraw
  // them (keep probability: the mask's mean) instead of adding noise.
  std::vector<std::string> dropout_mask_inputs;
  std::vector<DecisionOutput> decisions;
  // Where RAPL energy counters are read; unreadable means modelled energy.
  std::string powercap_root = "/sys/class/powercap";
};

// One term of one candidate.
struct CostTerm {
  std::string name;        // "latency p50", "max relative error", ...
  double value = 0.0;      // in `unit`
  std::string unit;        // "us", "", "J", "bytes", ...
  double normalised = 0.0; // what the weight multiplies
  double weight = 0.0;
  std::string source;      // "measured", "modelled" or "not measured"
};

struct CostGate {
  std::string name;        // "max relative error", "no far flips", ...
  bool passed = true;
  std::string detail;      // "3.1e-05 <= 1e-04"
};

struct CostCandidate {
  std::string name;        // "fused exact avx512 fp32", "interpreter"
  bool passed = false;     // every gate
  double cost = 0.0;       // weighted sum of normalised terms
  std::uint64_t calls = 0;         // trial calls measured
  std::uint64_t shadow_calls = 0;  // of them, compared with the reference
  std::vector<CostTerm> terms;
  std::vector<CostGate> gates;
};

// One choice, with everything it was based on.
struct CostDecision {
  std::string anchor;
  std::uint32_t trace = 0;
  std::uint64_t call = 0;
  std::string profile;     // "balanced", or "custom"
  CostWeights weights;
  CostLimits limits;
  std::vector<CostCandidate> candidates;
  std::size_t chosen = 0;  // index into candidates
  std::string reason;      // one sentence
  // The candidates as an aligned text table (what `canary explain` prints).
  std::string to_table() const;
};

// What shadow running cost one session (Stats::cost).
struct CostStats {
  std::uint64_t trial_calls = 0;          // calls that ran a candidate under trial
  std::uint64_t shadow_calls = 0;         // calls compared with the fp64 reference
  std::uint64_t shadow_skipped = 0;       // shadows a ticket asked for but skipped after the call (it ran
                                          // longer than estimated, or the candidate's guards refused it)
  double shadow_us = 0.0;                 // time in reference and noise runs
  double max_shadow_us = 0.0;             // the longest single shadowed call (the budget's granularity:
                                          // a shadow is admitted on an estimate, so it may overshoot by one)
  double calls_us = 0.0;                  // time in run() outside shadows (the budget's denominator)
  // Shadowed calls whose reference ran the noise copies as one batch (dim 0
  // a batch by the signature, confirmed bit for bit on the first shadow).
  std::uint64_t batched_noise_calls = 0;
  double overhead() const { return calls_us > 0 ? shadow_us / calls_us : 0.0; }
};

}  // namespace canary

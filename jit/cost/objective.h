// The objective: profiles' weights and limits, the raw measurements of each
// candidate, their normalisation into terms, the hard gates, and the choice.
// Pure functions: the same measurements always give the same decision.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canary/cost.h"

namespace canary::jit::cost {

CostWeights profile_weights(CostProfile profile);
CostLimits profile_limits(CostProfile profile);

// Everything measured or modelled about one candidate during its trial.
struct CandidateMeasurements {
  std::string name;
  bool is_reference_path = false;      // the interpreter: the fallback when nothing passes
  std::vector<double> latency_us;      // one per trial call (whole call)
  double compile_ms = 0.0;             // 0 for the interpreter
  // Accuracy (over the shadowed calls; shadow_calls == 0: not measured).
  std::uint64_t shadow_calls = 0;
  double max_relative_error = 0.0;
  double max_ulp = 0.0;
  std::uint64_t decisions = 0, near_flips = 0, far_flips = 0;
  double min_far_margin = 0.0;         // smallest reference margin among far flips
  // The reference's margin of each compared decision (at most
  // kMaxMarginSamples, the first ones): its distribution is reported.
  std::vector<double> reference_margins;
  std::uint64_t new_non_finite = 0, saturated = 0;
  // Output spread under noise (copies == 0: not measured).
  std::uint64_t noise_copies = 0;
  double variance_ratio = 1.0;
  // Expected deopt time per call from the shape histogram.
  double expected_deopt_us = 0.0;
  std::uint64_t histogram_shapes = 0;  // distinct shapes it was computed over
  // Energy per call; measured (RAPL) or modelled.
  double energy_joules = 0.0;
  bool energy_measured = false;
  double memory_bytes = 0.0;           // bytes materialised per call (planned)
  // Bytes copied between host and GPU per call (groups placed on the GPU), modelled.
  double transfer_bytes = 0.0;
  // Its groups left the GPU after a run there failed (CompiledTrace::device_error):
  // it runs other code than its name says, and fails the "device ran" gate.
  std::string device_failure;
};

// The bus bandwidth the transfer term models copies at: a PCIe Gen4/Gen5
// x16 link's achieved host-to-device rate from pinned memory (docs/COST_MODEL.md).
inline constexpr double kModelledBusBytesPerSecond = 25e9;

inline constexpr std::size_t kMaxMarginSamples = 4096;

// Latency percentile (p in [0, 1]) of a candidate's samples; 0 when empty.
double percentile(std::vector<double> samples, double p);

// Builds the decision table: terms normalised across candidates, gates per
// candidate, cost = sum of weight x normalised term, and the cheapest
// candidate that passes every gate (ties: the earlier candidate). When none
// passes, the reference path (is_reference_path) is chosen and the reason
// names the gates that failed. `candidates` must hold a reference path.
CostDecision decide(const std::vector<CandidateMeasurements>& candidates, const CostWeights& weights,
                    const CostLimits& limits, const std::string& profile_name);

}  // namespace canary::jit::cost

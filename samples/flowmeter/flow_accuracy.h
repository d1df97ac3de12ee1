// What a replay's numbers add up to: MAPE per phase against the fp64 ground
// truth, sanity counts, latency percentiles, and how calls ended.
#pragma once

#include <array>
#include <cstdint>

#include "samples/flowmeter/replay.h"

namespace flowmeter {

// Rates below the floor are measured against the floor (dead and choked-back
// wells have rates near zero, where a percentage means nothing).
inline constexpr std::array<double, kPhases> kMapeFloor = {5.0, 1000.0, 5.0};  // Sm3/h: oil, gas, water

struct AccuracySummary {
  std::array<double, kPhases> mape{};        // mean absolute percentage error, percent
  std::array<double, kPhases> median_ape{};  // median absolute percentage error, percent
  std::int64_t estimates = 0;          // (call, well) pairs estimated
  std::int64_t negative_rates = 0;     // must stay 0 (softplus output)
  std::int64_t non_finite_rates = 0;   // must stay 0 (NaN never reaches the model)
  double max_reference_error = 0.0;    // worst relative deviation from the fp64 reference
};

// Percentiles over warm calls (every call that ran after the first, which
// pays for oneDNN primitive creation and first-touch page faults).
struct LatencySummary {
  double p50_us = 0.0, p99_us = 0.0, max_us = 0.0;
  double first_us = 0.0;
  int samples = 0;
};

struct OutcomeSummary {
  int ran = 0, rejected = 0, no_wells = 0;
  std::int64_t masked_wells = 0, imputed_values = 0, trimmed_steps = 0;
};

// MAPE and median APE with floors, negative and non-finite counts over every estimated well.
AccuracySummary summarize_accuracy(const ReplayResult& result);
// Latency percentiles of the warm calls that ran, and the first call's latency.
LatencySummary summarize_latency(const ReplayResult& result);
// How calls ended and what gap handling did.
OutcomeSummary summarize_outcomes(const ReplayResult& result);

// One call's MAPE per phase (all zero when it produced nothing).
std::array<double, kPhases> call_mape(const CallRecord& call);

}  // namespace flowmeter

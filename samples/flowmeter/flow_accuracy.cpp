// Accuracy, latency and outcome summaries of a replay.
#include "samples/flowmeter/flow_accuracy.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace flowmeter {
namespace {

// Absolute percentage error of one estimate against the floored truth.
double percentage_error(double estimate, double truth, int phase) {
  return 100.0 * std::abs(estimate - truth) / std::max(truth, kMapeFloor[static_cast<std::size_t>(phase)]);
}

// The q-quantile (0..1) of sorted values, nearest rank.
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace

// Percentage errors over every (call, well, phase): their mean and median.
AccuracySummary summarize_accuracy(const ReplayResult& result) {
  AccuracySummary s;
  std::array<std::vector<double>, kPhases> errors;
  for (const CallRecord& c : result.calls) {
    s.max_reference_error = std::max(s.max_reference_error, c.max_reference_error);
    for (std::size_t k = 0; k < c.wells.size(); ++k) {
      ++s.estimates;
      for (int p = 0; p < kPhases; ++p) {
        const double est = c.rates[k * kPhases + static_cast<std::size_t>(p)];
        if (!std::isfinite(est)) ++s.non_finite_rates;
        if (est < 0.0) ++s.negative_rates;
        errors[static_cast<std::size_t>(p)].push_back(
            percentage_error(est, c.truth[k * kPhases + static_cast<std::size_t>(p)], p));
      }
    }
  }
  for (std::size_t p = 0; p < kPhases; ++p) {
    std::vector<double>& e = errors[p];
    if (e.empty()) continue;
    for (double v : e) s.mape[p] += v / static_cast<double>(e.size());
    std::sort(e.begin(), e.end());
    s.median_ape[p] = quantile(e, 0.5);
  }
  return s;
}

// Nearest-rank p50 and p99 after the first call.
LatencySummary summarize_latency(const ReplayResult& result) {
  std::vector<double> us;
  LatencySummary s;
  for (const CallRecord& c : result.calls)
    if (c.outcome == CallOutcome::Ran) us.push_back(c.latency_us);
  if (!us.empty()) {
    s.first_us = us.front();
    us.erase(us.begin());
  }
  std::sort(us.begin(), us.end());
  s.samples = static_cast<int>(us.size());
  s.p50_us = quantile(us, 0.50);
  s.p99_us = quantile(us, 0.99);
  s.max_us = us.empty() ? 0.0 : us.back();
  return s;
}

// Counts outcomes and gap handling.
OutcomeSummary summarize_outcomes(const ReplayResult& result) {
  OutcomeSummary s;
  for (const CallRecord& c : result.calls) {
    s.ran += c.outcome == CallOutcome::Ran;
    s.rejected += c.outcome == CallOutcome::Rejected;
    s.no_wells += c.outcome == CallOutcome::NoWells;
    s.masked_wells += static_cast<std::int64_t>(c.masked.size());
    s.imputed_values += c.imputed_values;
    s.trimmed_steps += c.trimmed_steps;
  }
  return s;
}

// MAPE of one call.
std::array<double, kPhases> call_mape(const CallRecord& call) {
  std::array<double, kPhases> m{};
  if (call.wells.empty()) return m;
  for (std::size_t k = 0; k < call.wells.size(); ++k)
    for (int p = 0; p < kPhases; ++p)
      m[static_cast<std::size_t>(p)] += percentage_error(call.rates[k * kPhases + static_cast<std::size_t>(p)],
                                                         call.truth[k * kPhases + static_cast<std::size_t>(p)], p);
  for (double& v : m) v /= static_cast<double>(call.wells.size());
  return m;
}

}  // namespace flowmeter

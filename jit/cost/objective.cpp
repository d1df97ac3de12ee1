// The objective: profiles, term normalisation across candidates, the hard
// gates and the choice of the cheapest passing candidate.
#include "jit/cost/objective.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "canary/error.h"

namespace canary {

// The profile's name as options and decision logs spell it.
std::string cost_profile_name(CostProfile profile) {
  switch (profile) {
    case CostProfile::Speed: return "speed";
    case CostProfile::Balanced: return "balanced";
    case CostProfile::Robust: return "robust";
  }
  return "unknown";
}

}  // namespace canary

namespace canary::jit::cost {

namespace {

constexpr double kTailFactor = 3.0;
constexpr double kAchievableErrorFactor = 2.0;  // see decide()    // a call over 3x the candidate's p50 is a tail excursion
constexpr double kCostTieEps = 1e-12;  // costs closer than this are equal: the earlier candidate wins

// Cross-candidate minima that the normalisations divide by.
struct Baselines {
  double min_p50 = 0.0;       // over candidates with latency samples
  double reference_p50 = 0.0; // the reference path's p50 (0: no samples)
  double min_energy = 0.0;
  double min_memory = 0.0;
  bool any_transfer = false;  // some candidate copies to and from a GPU (the transfer term is shown)
};

// Two significant digits in exponent form without a trailing ".0": 3.1e-05, 1e-04.
std::string format_sci(double v) {
  if (v == 0.0) return "0";
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.1e", v);
  std::string s = text;
  const std::size_t dot = s.find(".0e");
  if (dot != std::string::npos) s.erase(dot, 2);
  return s;
}

// Compact number (%.3g).
std::string format_short(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

// a / b, or 0 when b is 0 (or not a positive number).
double ratio_or_zero(double a, double b) { return b > 0.0 ? a / b : 0.0; }

// v / lowest - 1 (how much worse than the best), or 0 when the lowest is 0.
double excess_over(double v, double lowest) { return lowest > 0.0 ? v / lowest - 1.0 : 0.0; }

// The reference-path candidate; throws when there is none.
std::size_t find_reference_path(const std::vector<CandidateMeasurements>& candidates) {
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].is_reference_path) return i;
  throw Error(ErrorKind::Internal, "cost decision: none of the " + std::to_string(candidates.size()) +
                                       " candidates is the reference path (expected exactly one fallback)");
}

// Minima over all candidates that the normalisations need.
Baselines compute_baselines(const std::vector<CandidateMeasurements>& candidates, std::size_t reference) {
  Baselines b;
  bool have_p50 = false;
  for (const CandidateMeasurements& c : candidates) {
    if (!c.latency_us.empty()) {
      const double p50 = percentile(c.latency_us, 0.5);
      b.min_p50 = have_p50 ? std::min(b.min_p50, p50) : p50;
      have_p50 = true;
    }
  }
  b.reference_p50 = percentile(candidates[reference].latency_us, 0.5);
  b.min_energy = candidates.front().energy_joules;
  b.min_memory = candidates.front().memory_bytes;
  for (const CandidateMeasurements& c : candidates) {
    b.min_energy = std::min(b.min_energy, c.energy_joules);
    b.min_memory = std::min(b.min_memory, c.memory_bytes);
    b.any_transfer = b.any_transfer || c.transfer_bytes > 0.0;
  }
  return b;
}

// One term row; `measured` false blanks the normalised value and marks the source.
CostTerm make_term(const char* name, double value, const char* unit, double normalised, double weight,
                   bool measured, const char* source = "measured") {
  CostTerm t;
  t.name = name;
  t.value = value;
  t.unit = unit;
  t.weight = weight;
  t.normalised = measured ? normalised : 0.0;
  t.source = measured ? source : "not measured";
  return t;
}

// Fraction of samples above kTailFactor x p50.
double tail_fraction(const std::vector<double>& samples, double p50) {
  if (samples.empty()) return 0.0;
  const auto over = std::count_if(samples.begin(), samples.end(), [&](double s) { return s > kTailFactor * p50; });
  return static_cast<double>(over) / static_cast<double>(samples.size());
}

// Calls needed to pay back the compile time from the saving against the reference path.
double break_even_calls(double compile_ms, double reference_p50, double own_p50) {
  if (compile_ms <= 0.0) return 0.0;
  const double saving = std::max(0.0, reference_p50 - own_p50);
  return saving > 0.0 ? compile_ms * 1000.0 / saving : std::numeric_limits<double>::infinity();
}

// Latency rows: p50, p99, tail excursions, compile time, break-even calls.
void append_latency_terms(const CandidateMeasurements& c, const Baselines& b, const CostWeights& w,
                          std::vector<CostTerm>& terms) {
  const bool timed = !c.latency_us.empty();
  const double p50 = percentile(c.latency_us, 0.5);
  const double p99 = percentile(c.latency_us, 0.99);
  const double tail = tail_fraction(c.latency_us, p50);
  terms.push_back(make_term("latency p50", p50, "us", excess_over(p50, b.min_p50), w.latency, timed));
  terms.push_back(make_term("latency p99", p99, "us", 0.0, 0.0, timed));
  terms.push_back(make_term("tail excursions", tail, "", tail, w.tail, timed));
  terms.push_back(make_term("compile time", c.compile_ms, "ms", 0.0, 0.0, true));
  const bool both_timed = timed && b.reference_p50 > 0.0;
  terms.push_back(make_term("break-even calls", break_even_calls(c.compile_ms, b.reference_p50, p50), "calls", 0.0,
                            0.0, both_timed || c.compile_ms <= 0.0));
}

// Accuracy rows (over shadowed calls): relative error, ULP, near flips, far flips.
void append_accuracy_terms(const CandidateMeasurements& c, const CostLimits& limits, const CostWeights& w,
                           std::vector<CostTerm>& terms) {
  const bool shadowed = c.shadow_calls > 0;
  const double near_rate = c.decisions > 0 ? static_cast<double>(c.near_flips) / static_cast<double>(c.decisions) : 0.0;
  terms.push_back(make_term("max relative error", c.max_relative_error, "",
                            ratio_or_zero(c.max_relative_error, limits.max_relative_error), w.error, shadowed));
  terms.push_back(make_term("max ulp", c.max_ulp, "ulp", 0.0, 0.0, shadowed));
  terms.push_back(make_term("near flip rate", near_rate, "", near_rate, w.flips, shadowed));
  terms.push_back(make_term("far flips", static_cast<double>(c.far_flips), "", 0.0, 0.0, shadowed));
  // How close the reference's own decisions come to their thresholds: the
  // context of the flip counts (weight 0).
  const bool margins = shadowed && !c.reference_margins.empty();
  terms.push_back(make_term("decision margin p10", percentile(c.reference_margins, 0.1), "", 0.0, 0.0, margins));
  terms.push_back(make_term("decision margin p50", percentile(c.reference_margins, 0.5), "", 0.0, 0.0, margins));
}

// Variance, deopt, energy, memory and host-device transfer rows.
void append_resource_terms(const CandidateMeasurements& c, const Baselines& b, const CostWeights& w,
                           std::vector<CostTerm>& terms) {
  terms.push_back(make_term("variance ratio", c.variance_ratio, "", std::max(0.0, c.variance_ratio - 1.0), w.variance,
                            c.noise_copies > 0));
  terms.push_back(make_term("expected deopt", c.expected_deopt_us, "us", ratio_or_zero(c.expected_deopt_us, b.min_p50),
                            w.deopt, true, "modelled"));
  terms.push_back(make_term("energy", c.energy_joules, "J", excess_over(c.energy_joules, b.min_energy), w.energy, true,
                            c.energy_measured ? "measured" : "modelled"));
  terms.push_back(make_term("peak memory", c.memory_bytes, "bytes", excess_over(c.memory_bytes, b.min_memory),
                            w.memory, true, "modelled"));
  if (!b.any_transfer) return;  // no candidate uses a GPU
  const double transfer_us = c.transfer_bytes / kModelledBusBytesPerSecond * 1e6;
  terms.push_back(make_term("host-device transfer", c.transfer_bytes, "bytes", ratio_or_zero(transfer_us, b.min_p50),
                            w.transfer, true, "modelled"));
}

// A gate row.
CostGate make_gate(const char* name, bool passed, std::string detail) {
  return CostGate{name, passed, std::move(detail)};
}

// The hard gates of one candidate, in their fixed order.
std::vector<CostGate> evaluate_gates(const CandidateMeasurements& c, const CostLimits& limits) {
  std::vector<CostGate> gates;
  std::string missing;
  if (c.latency_us.empty()) missing = "no latency samples";
  if (c.shadow_calls == 0) missing += std::string(missing.empty() ? "" : ", ") + "no shadow calls";
  gates.push_back(make_gate("measured", missing.empty(),
                            missing.empty() ? std::to_string(c.latency_us.size()) + " calls, " +
                                                  std::to_string(c.shadow_calls) + " shadowed"
                                            : missing));
  gates.push_back(make_gate("no new NaN/Inf", c.new_non_finite == 0 && c.saturated == 0,
                            std::to_string(c.new_non_finite) + " new non-finite, " + std::to_string(c.saturated) +
                                " saturated"));
  if (c.shadow_calls == 0) {
    gates.push_back(make_gate("max relative error", true, "not measured"));
  } else {
    const bool ok = c.max_relative_error <= limits.max_relative_error;
    gates.push_back(make_gate("max relative error", ok,
                              format_sci(c.max_relative_error) + (ok ? " <= " : " > ") +
                                  format_sci(limits.max_relative_error)));
  }
  if (limits.reject_far_flips) {
    std::string detail = std::to_string(c.far_flips) + " far flips";
    if (c.far_flips > 0) detail += " (smallest reference margin " + format_sci(c.min_far_margin) + ")";
    gates.push_back(make_gate("no far flips", c.far_flips == 0, detail));
  }
  if (!c.device_failure.empty())
    gates.push_back(make_gate("device ran", false, "its GPU run failed: " + c.device_failure));
  if (c.noise_copies == 0) {
    gates.push_back(make_gate("variance ratio", true, "not measured"));
  } else {
    const bool ok = c.variance_ratio <= limits.max_variance_ratio;
    gates.push_back(make_gate("variance ratio", ok,
                              format_sci(c.variance_ratio) + (ok ? " <= " : " > ") +
                                  format_sci(limits.max_variance_ratio)));
  }
  return gates;
}

// One candidate's row: terms, gates, pass flag and weighted cost.
CostCandidate evaluate_candidate(const CandidateMeasurements& c, const Baselines& b, const CostWeights& w,
                                 const CostLimits& limits) {
  CostCandidate out;
  out.name = c.name;
  out.calls = c.latency_us.size();
  out.shadow_calls = c.shadow_calls;
  append_latency_terms(c, b, w, out.terms);
  append_accuracy_terms(c, limits, w, out.terms);
  append_resource_terms(c, b, w, out.terms);
  out.gates = evaluate_gates(c, limits);
  out.passed = std::all_of(out.gates.begin(), out.gates.end(), [](const CostGate& g) { return g.passed; });
  for (const CostTerm& t : out.terms)
    if (t.weight != 0.0) out.cost += t.weight * t.normalised;
  return out;
}

// A cost for comparisons: NaN never beats a real number.
double comparable_cost(double cost) { return std::isnan(cost) ? std::numeric_limits<double>::infinity() : cost; }

// "name: gate, gate; name: gate" over the candidates that failed.
std::string describe_failures(const std::vector<CostCandidate>& candidates) {
  std::string text;
  for (const CostCandidate& c : candidates) {
    if (!text.empty()) text += "; ";
    text += c.name + ":";
    const char* sep = " ";
    for (const CostGate& g : c.gates) {
      if (g.passed) continue;
      text += sep + g.name;
      sep = ", ";
    }
  }
  return text;
}

// Picks the cheapest passing candidate (ties: the earlier) and writes the reason.
void choose(CostDecision& d, std::size_t reference) {
  std::size_t passing = 0;
  bool found = false;
  for (std::size_t i = 0; i < d.candidates.size(); ++i) {
    const CostCandidate& c = d.candidates[i];
    if (!c.passed) continue;
    ++passing;
    if (!found || comparable_cost(c.cost) < comparable_cost(d.candidates[d.chosen].cost) - kCostTieEps) d.chosen = i;
    found = true;
  }
  if (!found) {
    d.chosen = reference;
    d.reason = "no candidate passed the gates (" + describe_failures(d.candidates) + "): the reference path runs";
    return;
  }
  d.reason = d.candidates[d.chosen].name + " has the lowest cost (" + format_short(d.candidates[d.chosen].cost) +
             ") of the " + std::to_string(passing) +
             (passing == 1 ? " candidate that passes every gate" : " candidates that pass every gate");
}

}  // namespace

// The default weights of a profile.
CostWeights profile_weights(CostProfile profile) {
  switch (profile) {
    case CostProfile::Speed: return CostWeights{1.0, 0.25, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0};
    case CostProfile::Balanced: return CostWeights{1.0, 0.25, 0.5, 0.5, 0.5, 1.0, 0.25, 0.1, 0.5};
    case CostProfile::Robust: return CostWeights{1.0, 0.5, 2.0, 2.0, 2.0, 1.0, 0.5, 0.1, 1.0};
  }
  throw Error(ErrorKind::Internal, "cost profile: unknown profile value " +
                                       std::to_string(static_cast<int>(profile)));
}

// The default hard limits of a profile.
CostLimits profile_limits(CostProfile profile) {
  switch (profile) {
    case CostProfile::Speed: return CostLimits{1e-2, 1e-3, true, 10.0};
    case CostProfile::Balanced: return CostLimits{1e-4, 1e-3, true, 2.0};
    case CostProfile::Robust: return CostLimits{1e-6, 1e-3, true, 1.25};
  }
  throw Error(ErrorKind::Internal, "cost profile: unknown profile value " +
                                       std::to_string(static_cast<int>(profile)));
}

// Nearest-rank percentile: the ceil(p x n)-th smallest sample (NaN samples ignored).
double percentile(std::vector<double> samples, double p) {
  samples.erase(std::remove_if(samples.begin(), samples.end(), [](double s) { return std::isnan(s); }), samples.end());
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const double clamped = p > 0.0 ? std::min(p, 1.0) : 0.0;
  const double n = static_cast<double>(samples.size());
  // The small slack keeps p x n that should be an integer (0.99 x 100) from rounding up a rank.
  const auto rank = static_cast<std::size_t>(std::ceil(clamped * n - 1e-9));
  return samples[std::clamp<std::size_t>(rank, 1, samples.size()) - 1];
}

// Normalises every candidate's terms, applies the gates and picks the cheapest passing one.
CostDecision decide(const std::vector<CandidateMeasurements>& candidates, const CostWeights& weights,
                    const CostLimits& limits, const std::string& profile_name) {
  if (candidates.empty()) throw Error(ErrorKind::Internal, "cost decision: no candidates (expected at least the reference path)");
  const std::size_t reference = find_reference_path(candidates);
  const Baselines baselines = compute_baselines(candidates, reference);
  // The error gate never rejects a candidate for error the most accurate
  // candidate shares: fp32 sums over long reductions cannot hold 1e-6 against
  // fp64, and gating every candidate would only hand the call to an
  // interpreter with the same error. The limit becomes at least
  // kAchievableErrorFactor x the smallest measured error.
  CostLimits effective = limits;
  double min_error = std::numeric_limits<double>::infinity();
  for (const CandidateMeasurements& c : candidates)
    if (c.shadow_calls > 0 && std::isfinite(c.max_relative_error)) min_error = std::min(min_error, c.max_relative_error);
  const bool raised = std::isfinite(min_error) && kAchievableErrorFactor * min_error > limits.max_relative_error;
  if (raised) effective.max_relative_error = kAchievableErrorFactor * min_error;
  CostDecision d;
  d.profile = profile_name;
  d.weights = weights;
  d.limits = limits;
  d.candidates.reserve(candidates.size());
  for (const CandidateMeasurements& c : candidates) {
    d.candidates.push_back(evaluate_candidate(c, baselines, weights, effective));
    if (!raised) continue;
    for (CostGate& g : d.candidates.back().gates)
      if (g.name == "max relative error" && c.shadow_calls > 0)
        g.detail += " (limit raised from " + format_sci(limits.max_relative_error) + " to " +
                    format_sci(effective.max_relative_error) + ": 2x the most accurate candidate)";
  }
  choose(d, reference);
  return d;
}

}  // namespace canary::jit::cost

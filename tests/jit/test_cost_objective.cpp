// The cost objective: profiles, percentiles, term normalisation, the hard
// gates, the choice, the decision table, and properties over random tables.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "canary/error.h"
#include "jit/cost/objective.h"

using namespace canary;
using namespace canary::jit::cost;

namespace {

const std::vector<std::string> kTermOrder = {
    "latency p50", "latency p99", "tail excursions", "compile time", "break-even calls",
    "max relative error", "max ulp", "near flip rate", "far flips", "decision margin p10", "decision margin p50",
    "variance ratio", "expected deopt", "energy", "peak memory"};

// A fully measured candidate whose calls all take `us`.
CandidateMeasurements timed(const std::string& name, double us, bool reference = false) {
  CandidateMeasurements m;
  m.name = name;
  m.is_reference_path = reference;
  m.latency_us.assign(4, us);
  m.shadow_calls = 2;
  m.max_relative_error = 1e-7;
  m.noise_copies = 3;
  m.variance_ratio = 1.0;
  return m;
}

// Weights with only latency counting.
CostWeights latency_only() {
  CostWeights w;
  w.latency = 1.0;
  w.deopt = 0.0;
  return w;
}

// The term or gate called `name` of a candidate (fails the test when absent).
const CostTerm& term(const CostCandidate& c, const std::string& name) {
  auto it = std::find_if(c.terms.begin(), c.terms.end(), [&](const CostTerm& t) { return t.name == name; });
  REQUIRE(it != c.terms.end());
  return *it;
}
const CostGate& gate(const CostCandidate& c, const std::string& name) {
  auto it = std::find_if(c.gates.begin(), c.gates.end(), [&](const CostGate& g) { return g.name == name; });
  REQUIRE(it != c.gates.end());
  return *it;
}
bool has_gate(const CostCandidate& c, const std::string& name) {
  return std::any_of(c.gates.begin(), c.gates.end(), [&](const CostGate& g) { return g.name == name; });
}

// The fast-exp scenario: 2x faster, relative error 2e-5.
std::vector<CandidateMeasurements> fast_exp_table() {
  CandidateMeasurements fast = timed("fused fast avx512", 10.0);
  fast.max_relative_error = 2e-5;
  CandidateMeasurements exact = timed("fused exact avx512", 20.0);
  exact.max_relative_error = 1e-7;
  return {fast, exact, timed("interpreter", 100.0, true)};
}

// The chosen candidate's name under a profile's weights and limits.
std::string chosen_under(CostProfile p, const std::vector<CandidateMeasurements>& table) {
  const CostDecision d = decide(table, profile_weights(p), profile_limits(p), cost_profile_name(p));
  return d.candidates[d.chosen].name;
}

}  // namespace

TEST_CASE("cost profiles: names, weights and limits", "[unit][cost]") {
  CHECK(cost_profile_name(CostProfile::Speed) == "speed");
  CHECK(cost_profile_name(CostProfile::Balanced) == "balanced");
  CHECK(cost_profile_name(CostProfile::Robust) == "robust");
  const CostWeights s = profile_weights(CostProfile::Speed);
  CHECK(s.latency == 1.0);
  CHECK(s.tail == 0.25);
  CHECK(s.deopt == 1.0);
  CHECK(s.error == 0.0);
  CHECK(s.flips == 0.0);
  CHECK(s.variance == 0.0);
  CHECK(s.energy == 0.0);
  CHECK(s.memory == 0.0);
  const CostWeights b = profile_weights(CostProfile::Balanced);
  CHECK(b.error == 0.5);
  CHECK(b.flips == 0.5);
  CHECK(b.variance == 0.5);
  CHECK(b.energy == 0.25);
  CHECK(b.memory == 0.1);
  const CostWeights r = profile_weights(CostProfile::Robust);
  CHECK(r.tail == 0.5);
  CHECK(r.error == 2.0);
  CHECK(r.flips == 2.0);
  CHECK(r.variance == 2.0);
  CHECK(r.energy == 0.5);
  CHECK(r.memory == 0.1);
  CHECK(profile_limits(CostProfile::Speed).max_relative_error == 1e-2);
  CHECK(profile_limits(CostProfile::Speed).max_variance_ratio == 10.0);
  CHECK(profile_limits(CostProfile::Balanced).max_relative_error == 1e-4);
  CHECK(profile_limits(CostProfile::Balanced).max_variance_ratio == 2.0);
  CHECK(profile_limits(CostProfile::Robust).max_relative_error == 1e-6);
  CHECK(profile_limits(CostProfile::Robust).max_variance_ratio == 1.25);
  CHECK(profile_limits(CostProfile::Robust).relative_floor == 1e-3);
  CHECK(profile_limits(CostProfile::Robust).reject_far_flips);
}

TEST_CASE("percentile is nearest-rank on a sorted copy", "[unit][cost]") {
  CHECK(percentile({4.0, 1.0, 3.0, 2.0}, 0.5) == 2.0);
  CHECK(percentile({4.0, 1.0, 3.0, 2.0}, 0.0) == 1.0);
  CHECK(percentile({4.0, 1.0, 3.0, 2.0}, 1.0) == 4.0);
  CHECK(percentile({}, 0.5) == 0.0);
  std::vector<double> hundred(100);
  std::iota(hundred.begin(), hundred.end(), 1.0);
  std::reverse(hundred.begin(), hundred.end());
  CHECK(percentile(hundred, 0.99) == 99.0);
  CHECK(percentile(hundred, 0.5) == 50.0);
}

TEST_CASE("cost latency terms are normalised to the fastest candidate", "[unit][cost]") {
  CandidateMeasurements fast = timed("fast", 10.0);
  fast.latency_us = {10.0, 10.0, 10.0, 10.0, 40.0};  // p50 10, p99 40, one call over 30
  fast.compile_ms = 2.0;
  CandidateMeasurements slow = timed("slow", 20.0);
  slow.compile_ms = 1.0;
  slow.latency_us = {200.0, 200.0, 200.0, 200.0};  // slower than the reference path: never pays back
  CandidateMeasurements mid = timed("mid", 20.0);
  const CostDecision d = decide({fast, mid, slow, timed("interpreter", 100.0, true)}, latency_only(),
                                profile_limits(CostProfile::Balanced), "custom");
  REQUIRE(d.candidates.size() == 4);
  for (const CostCandidate& c : d.candidates) {
    REQUIRE(c.terms.size() == kTermOrder.size());
    for (std::size_t i = 0; i < kTermOrder.size(); ++i) CHECK(c.terms[i].name == kTermOrder[i]);
  }
  CHECK(term(d.candidates[0], "latency p50").value == 10.0);
  CHECK(term(d.candidates[0], "latency p99").value == 40.0);
  CHECK(term(d.candidates[0], "tail excursions").value == Approx(0.2));
  CHECK(term(d.candidates[0], "break-even calls").value == Approx(2000.0 / 90.0));
  CHECK(std::isinf(term(d.candidates[2], "break-even calls").value));
  CHECK(term(d.candidates[3], "break-even calls").value == 0.0);  // nothing compiled
  CHECK(term(d.candidates[0], "latency p50").normalised == 0.0);
  CHECK(term(d.candidates[1], "latency p50").normalised == Approx(1.0));
  CHECK(term(d.candidates[2], "latency p50").normalised == Approx(19.0));
  CHECK(term(d.candidates[3], "latency p50").normalised == Approx(9.0));
  CHECK(d.candidates[1].cost == Approx(1.0));
  CHECK(d.candidates[3].cost == Approx(9.0));
  CHECK(d.chosen == 0);
  CHECK(d.candidates[0].calls == 5);
  CHECK(d.reason == "fast has the lowest cost (0) of the 4 candidates that pass every gate");
}

TEST_CASE("cost deopt, variance, energy and memory normalisations", "[unit][cost]") {
  CandidateMeasurements a = timed("a", 10.0);
  a.expected_deopt_us = 5.0;  // / fastest p50 10 -> 0.5
  a.variance_ratio = 1.5;     // -> 0.5
  a.energy_joules = 3.0;      // / lowest 2 - 1 -> 0.5
  a.memory_bytes = 4000.0;    // / lowest 1000 - 1 -> 3
  a.energy_measured = true;
  CandidateMeasurements ref = timed("interpreter", 40.0, true);
  ref.energy_joules = 2.0;
  ref.memory_bytes = 1000.0;
  ref.variance_ratio = 0.5;  // better than the reference itself: clamps to 0
  CostWeights w;
  w.latency = 1.0;
  w.deopt = 1.0;
  w.variance = 2.0;
  w.energy = 1.0;
  w.memory = 0.5;
  const CostDecision d = decide({a, ref}, w, profile_limits(CostProfile::Speed), "custom");
  const CostCandidate& ca = d.candidates[0];
  CHECK(term(ca, "expected deopt").normalised == Approx(0.5));
  CHECK(term(ca, "variance ratio").normalised == Approx(0.5));
  CHECK(term(ca, "energy").normalised == Approx(0.5));
  CHECK(term(ca, "energy").source == "measured");
  CHECK(term(ca, "peak memory").normalised == Approx(3.0));
  CHECK(term(ca, "peak memory").source == "modelled");
  // 0 (latency) + 0.5 (deopt) + 2 x 0.5 (variance) + 0.5 (energy) + 0.5 x 3 (memory)
  CHECK(ca.cost == Approx(3.5));
  const CostCandidate& cr = d.candidates[1];
  CHECK(term(cr, "variance ratio").normalised == 0.0);
  CHECK(term(cr, "energy").source == "modelled");
  CHECK(term(cr, "energy").normalised == 0.0);
  CHECK(cr.cost == Approx(3.0));  // latency 40 / 10 - 1
  CHECK(d.chosen == 1);
}

TEST_CASE("cost energy and memory of zero do not divide by zero", "[unit][cost]") {
  CandidateMeasurements a = timed("a", 10.0);
  a.energy_joules = 1.0;
  a.memory_bytes = 100.0;
  CandidateMeasurements ref = timed("interpreter", 10.0, true);  // energy and memory 0
  CostWeights w;
  w.energy = 1.0;
  w.memory = 1.0;
  const CostDecision d = decide({a, ref}, w, profile_limits(CostProfile::Balanced), "custom");
  CHECK(term(d.candidates[0], "energy").normalised == 0.0);
  CHECK(term(d.candidates[0], "peak memory").normalised == 0.0);
  CHECK(std::isfinite(d.candidates[0].cost));
}

TEST_CASE("cost error gate passes at the limit and fails just above it", "[unit][cost]") {
  CandidateMeasurements at = timed("at limit", 10.0);
  at.max_relative_error = 1e-4;
  CandidateMeasurements above = timed("above limit", 5.0);
  above.max_relative_error = 1.1e-4;
  CandidateMeasurements below = timed("below limit", 20.0);
  below.max_relative_error = 3.1e-5;
  const CostDecision d = decide({at, above, below, timed("interpreter", 100.0, true)}, latency_only(),
                                profile_limits(CostProfile::Balanced), "balanced");
  CHECK(gate(d.candidates[0], "max relative error").passed);
  CHECK(gate(d.candidates[0], "max relative error").detail == "1e-04 <= 1e-04");
  CHECK(term(d.candidates[0], "max relative error").normalised == Approx(1.0));
  CHECK_FALSE(gate(d.candidates[1], "max relative error").passed);
  CHECK(gate(d.candidates[1], "max relative error").detail == "1.1e-04 > 1e-04");
  CHECK_FALSE(d.candidates[1].passed);
  CHECK(gate(d.candidates[2], "max relative error").detail == "3.1e-05 <= 1e-04");
  CHECK(d.chosen == 0);  // the faster "above limit" is excluded
}

TEST_CASE("cost far flips are rejected only when the limits say so", "[unit][cost]") {
  CandidateMeasurements bf16 = timed("bf16 matmul", 5.0);
  bf16.decisions = 100;
  bf16.near_flips = 4;
  bf16.far_flips = 1;
  bf16.min_far_margin = 0.3;
  const std::vector<CandidateMeasurements> table = {bf16, timed("fp32 matmul", 10.0), timed("interpreter", 50.0, true)};
  CostLimits limits = profile_limits(CostProfile::Speed);
  const CostDecision strict = decide(table, latency_only(), limits, "custom");
  CHECK_FALSE(gate(strict.candidates[0], "no far flips").passed);
  CHECK(gate(strict.candidates[0], "no far flips").detail == "1 far flips (smallest reference margin 3e-01)");
  CHECK(term(strict.candidates[0], "near flip rate").value == Approx(0.04));
  CHECK(term(strict.candidates[0], "far flips").value == 1.0);
  CHECK(strict.chosen == 1);
  limits.reject_far_flips = false;
  const CostDecision lax = decide(table, latency_only(), limits, "custom");
  CHECK_FALSE(has_gate(lax.candidates[0], "no far flips"));
  CHECK(lax.chosen == 0);
}

TEST_CASE("cost near flips count through the flips weight", "[unit][cost]") {
  CandidateMeasurements a = timed("a", 10.0);
  a.decisions = 50;
  a.near_flips = 5;  // rate 0.1
  CandidateMeasurements none = timed("no decisions", 10.0);
  CostWeights w;
  w.latency = 0.0;
  w.deopt = 0.0;
  w.flips = 3.0;
  const CostDecision d = decide({a, none, timed("interpreter", 10.0, true)}, w, profile_limits(CostProfile::Speed), "c");
  CHECK(d.candidates[0].cost == Approx(0.3));
  CHECK(term(d.candidates[1], "near flip rate").value == 0.0);
  CHECK(d.chosen == 1);
}

TEST_CASE("cost a new NaN or saturation is rejected even when fastest", "[unit][cost]") {
  CandidateMeasurements nan = timed("fast exp", 1.0);
  nan.new_non_finite = 3;
  CandidateMeasurements sat = timed("fast tanh", 2.0);
  sat.saturated = 1;
  const CostDecision d = decide({nan, sat, timed("exact", 10.0), timed("interpreter", 50.0, true)},
                                profile_weights(CostProfile::Speed), profile_limits(CostProfile::Speed), "speed");
  CHECK_FALSE(gate(d.candidates[0], "no new NaN/Inf").passed);
  CHECK(gate(d.candidates[0], "no new NaN/Inf").detail == "3 new non-finite, 0 saturated");
  CHECK_FALSE(gate(d.candidates[1], "no new NaN/Inf").passed);
  CHECK(gate(d.candidates[2], "no new NaN/Inf").passed);
  CHECK(d.chosen == 2);
  CHECK(d.reason == "exact has the lowest cost (9) of the 2 candidates that pass every gate");
}

TEST_CASE("cost variance gate bounds the ratio and passes when not measured", "[unit][cost]") {
  CandidateMeasurements noisy = timed("noisy", 5.0);
  noisy.variance_ratio = 2.5;
  CandidateMeasurements edge = timed("edge", 8.0);
  edge.variance_ratio = 2.0;
  CandidateMeasurements unmeasured = timed("unmeasured", 9.0);
  unmeasured.noise_copies = 0;
  unmeasured.variance_ratio = 50.0;
  CostWeights w = latency_only();
  w.variance = 1.0;
  const CostDecision d = decide({noisy, edge, unmeasured, timed("interpreter", 50.0, true)}, w,
                                profile_limits(CostProfile::Balanced), "custom");
  CHECK_FALSE(gate(d.candidates[0], "variance ratio").passed);
  CHECK(gate(d.candidates[0], "variance ratio").detail == "2.5e+00 > 2e+00");
  CHECK(gate(d.candidates[1], "variance ratio").passed);
  CHECK(gate(d.candidates[2], "variance ratio").passed);
  CHECK(gate(d.candidates[2], "variance ratio").detail == "not measured");
  CHECK(term(d.candidates[2], "variance ratio").source == "not measured");
  CHECK(term(d.candidates[2], "variance ratio").normalised == 0.0);
  // edge: latency 8/5 - 1 = 0.6, variance 1; unmeasured: latency 9/5 - 1 = 0.8
  CHECK(d.candidates[1].cost == Approx(1.6));
  CHECK(d.candidates[2].cost == Approx(0.8));
  CHECK(d.chosen == 2);
}

TEST_CASE("cost unmeasured candidates fail the measured gate", "[unit][cost]") {
  CandidateMeasurements untimed = timed("untimed", 1.0);
  untimed.latency_us.clear();
  CandidateMeasurements unshadowed = timed("unshadowed", 1.0);
  unshadowed.shadow_calls = 0;
  unshadowed.max_relative_error = 1.0;  // ignored: not measured
  const CostDecision d = decide({untimed, unshadowed, timed("interpreter", 20.0, true)}, latency_only(),
                                profile_limits(CostProfile::Balanced), "balanced");
  CHECK(gate(d.candidates[0], "measured").detail == "no latency samples");
  CHECK(term(d.candidates[0], "latency p50").source == "not measured");
  CHECK(term(d.candidates[0], "latency p50").normalised == 0.0);
  CHECK(gate(d.candidates[1], "measured").detail == "no shadow calls");
  CHECK(term(d.candidates[1], "max relative error").source == "not measured");
  CHECK(term(d.candidates[1], "max relative error").normalised == 0.0);
  CHECK(gate(d.candidates[2], "measured").detail == "4 calls, 2 shadowed");
  CHECK(d.chosen == 2);
}

TEST_CASE("cost no passing candidate falls back to the reference path", "[unit][cost]") {
  CandidateMeasurements fast = timed("fast", 1.0);
  fast.new_non_finite = 1;
  fast.max_relative_error = 0.5;
  CandidateMeasurements ref = timed("interpreter", 30.0, true);
  ref.shadow_calls = 0;
  CandidateMeasurements other = timed("other", 2.0);
  other.far_flips = 2;
  const CostDecision d = decide({fast, ref, other}, profile_weights(CostProfile::Robust),
                                profile_limits(CostProfile::Robust), "robust");
  CHECK(d.chosen == 1);
  CHECK(d.reason ==
        "no candidate passed the gates (fast: no new NaN/Inf, max relative error; interpreter: measured; "
        "other: no far flips): the reference path runs");
}

TEST_CASE("cost equal costs choose the earlier candidate", "[unit][cost]") {
  const CostDecision d = decide({timed("first", 10.0), timed("second", 10.0), timed("interpreter", 10.0, true)},
                                latency_only(), profile_limits(CostProfile::Balanced), "balanced");
  CHECK(d.chosen == 0);
}

TEST_CASE("cost preconditions: empty list or no reference path", "[unit][cost]") {
  const CostWeights w = profile_weights(CostProfile::Balanced);
  const CostLimits l = profile_limits(CostProfile::Balanced);
  try {
    decide({}, w, l, "balanced");
    FAIL("expected an error for an empty candidate list");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Internal);
  }
  try {
    decide({timed("a", 1.0), timed("b", 2.0)}, w, l, "balanced");
    FAIL("expected an error without a reference path");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Internal);
    CHECK(e.detail().find("reference path") != std::string::npos);
  }
}

TEST_CASE("cost profile flips a 2x faster, less accurate exp", "[unit][cost]") {
  const std::vector<CandidateMeasurements> table = fast_exp_table();
  CHECK(chosen_under(CostProfile::Speed, table) == "fused fast avx512");
  CHECK(chosen_under(CostProfile::Balanced, table) == "fused fast avx512");
  CHECK(chosen_under(CostProfile::Robust, table) == "fused exact avx512");
  const CostDecision robust = decide(table, profile_weights(CostProfile::Robust), profile_limits(CostProfile::Robust),
                                     "robust");
  CHECK(gate(robust.candidates[0], "max relative error").detail == "2e-05 > 1e-06");
  // balanced: fast = 0.5 x (2e-5 / 1e-4) = 0.1; exact = 1 + 0.5 x (1e-7 / 1e-4) = 1.0005
  const CostDecision balanced = decide(table, profile_weights(CostProfile::Balanced),
                                       profile_limits(CostProfile::Balanced), "balanced");
  CHECK(balanced.candidates[0].cost == Approx(0.1));
  CHECK(balanced.candidates[1].cost == Approx(1.0005));
}

TEST_CASE("cost decision table shows the choice, terms and failed gates", "[unit][cost]") {
  std::vector<CandidateMeasurements> table = fast_exp_table();
  table[2].shadow_calls = 0;  // the interpreter: accuracy not measured
  CostDecision d = decide(table, profile_weights(CostProfile::Robust), profile_limits(CostProfile::Robust), "robust");
  d.anchor = "entry";
  d.trace = 3;
  d.call = 42;
  const std::string text = d.to_table();
  CHECK(text.rfind("profile robust, anchor 'entry', trace 3, call 42, chosen 'fused exact avx512': ", 0) == 0);
  CHECK(text.find("weights: latency 1, tail 0.5, error 2, flips 2, variance 2, deopt 1, energy 0.5, memory 0.1, transfer 1\n") !=
        std::string::npos);
  CHECK(text.find("limits: max relative error 1e-06, relative floor 0.001, reject far flips yes, max variance ratio 1.25\n") !=
        std::string::npos);
  std::vector<std::string> lines;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = text.find('\n', pos);
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  REQUIRE(lines.size() == 7);  // header, weights, limits, column header, 3 candidates
  CHECK(lines[3].find("candidate") != std::string::npos);
  CHECK(lines[3].find("latency p50") != std::string::npos);
  CHECK(lines[3].find("failed gates") != std::string::npos);
  CHECK(lines[4].rfind("   fused fast avx512", 0) == 0);
  CHECK(lines[4].find("FAIL") != std::string::npos);
  CHECK(lines[4].find("max relative error (2e-05 > 1e-06)") != std::string::npos);
  CHECK(lines[4].find("10 us") != std::string::npos);
  CHECK(lines[5].rfind("*  fused exact avx512", 0) == 0);
  CHECK(lines[5].find("pass") != std::string::npos);
  CHECK(lines[5].find("0 J (modelled)") != std::string::npos);
  CHECK(lines[6].find("measured (no shadow calls)") != std::string::npos);
  CHECK(lines[6].find(" - ") != std::string::npos);  // unmeasured accuracy terms
  // Every row is as wide as the header up to the last column: the columns line up.
  const std::size_t gates_col = lines[3].find("failed gates");
  for (std::size_t i = 4; i < 7; ++i) CHECK(lines[i].size() >= gates_col);
}

namespace {

// One random candidate; some are unmeasured, some break gates.
CandidateMeasurements random_candidate(std::mt19937_64& rng, const std::string& name) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> small(0, 8);
  CandidateMeasurements m;
  m.name = name;
  const int samples = unit(rng) < 0.1 ? 0 : 1 + small(rng);
  for (int i = 0; i < samples; ++i) m.latency_us.push_back(1.0 + 99.0 * unit(rng));
  m.compile_ms = unit(rng) < 0.2 ? 0.0 : 50.0 * unit(rng);
  m.shadow_calls = unit(rng) < 0.1 ? 0 : 1 + small(rng);
  m.max_relative_error = std::pow(10.0, -8.0 + 6.0 * unit(rng));
  m.max_ulp = std::floor(1000.0 * unit(rng));
  m.decisions = static_cast<std::uint64_t>(small(rng)) * 10;
  m.near_flips = m.decisions > 0 ? static_cast<std::uint64_t>(small(rng)) : 0;
  m.far_flips = unit(rng) < 0.15 ? 1 : 0;
  m.new_non_finite = unit(rng) < 0.1 ? 2 : 0;
  m.saturated = unit(rng) < 0.05 ? 1 : 0;
  m.noise_copies = unit(rng) < 0.2 ? 0 : 3;
  m.variance_ratio = 0.5 + 2.5 * unit(rng);
  m.expected_deopt_us = unit(rng) < 0.5 ? 0.0 : 20.0 * unit(rng);
  m.energy_joules = unit(rng) < 0.05 ? 0.0 : 1e-3 * unit(rng);
  m.energy_measured = unit(rng) < 0.5;
  m.memory_bytes = std::floor(1e6 * unit(rng));
  return m;
}

// A random table with exactly one reference path at a random position.
std::vector<CandidateMeasurements> random_table(std::mt19937_64& rng) {
  const std::size_t n = 1 + rng() % 6;
  std::vector<CandidateMeasurements> table;
  for (std::size_t i = 0; i < n; ++i) table.push_back(random_candidate(rng, "candidate " + std::to_string(i)));
  table[rng() % n].is_reference_path = true;
  return table;
}

}  // namespace

TEST_CASE("cost properties over random candidate tables", "[unit][cost]") {
  std::mt19937_64 rng(20240605);
  const CostProfile profiles[] = {CostProfile::Speed, CostProfile::Balanced, CostProfile::Robust};
  int fallbacks = 0, choices = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const std::vector<CandidateMeasurements> table = random_table(rng);
    const CostProfile p = profiles[iter % 3];
    const CostDecision d = decide(table, profile_weights(p), profile_limits(p), cost_profile_name(p));
    INFO(d.to_table());
    REQUIRE(d.candidates.size() == table.size());
    REQUIRE(d.chosen < d.candidates.size());
    const CostCandidate& chosen = d.candidates[d.chosen];
    const bool any_pass = std::any_of(d.candidates.begin(), d.candidates.end(), [](const CostCandidate& c) { return c.passed; });
    if (any_pass) {
      ++choices;
      CHECK(chosen.passed);
      for (const CostGate& g : chosen.gates) CHECK(g.passed);
      for (const CostCandidate& c : d.candidates)
        if (c.passed) CHECK(c.cost >= chosen.cost - 1e-12);
    } else {
      ++fallbacks;
      CHECK(table[d.chosen].is_reference_path);
      CHECK(d.reason.find("no candidate passed the gates") == 0);
    }
    for (const CostCandidate& c : d.candidates) {
      bool all = true;
      for (const CostGate& g : c.gates) all = all && g.passed;
      CHECK(c.passed == all);
      CHECK(c.terms.size() == kTermOrder.size());
    }
    const std::string text = d.to_table();
    CHECK(decide(table, profile_weights(p), profile_limits(p), cost_profile_name(p)).to_table() == text);
    for (const CandidateMeasurements& m : table) CHECK(text.find(m.name) != std::string::npos);
  }
  // The generator exercises both branches.
  CHECK(fallbacks > 10);
  CHECK(choices > 100);
}

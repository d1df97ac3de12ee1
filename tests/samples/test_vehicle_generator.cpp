// The vehicle sample's generator and scoring: IDM physics against the formula,
// deterministic streams, a shape-event script that matches the calls, and the
// evaluation's arithmetic on hand-made rows.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "samples/vehicle/evaluation.h"
#include "samples/vehicle/idm.h"
#include "samples/vehicle/scene.h"
#include "samples/vehicle/stream.h"

using namespace vehicle;

TEST_CASE("IDM equilibrium gap and zero acceleration at it, by hand", "[unit][vehicle]") {
  IdmParams p;
  p.desired_speed = 30.0;
  p.time_headway = 1.5;
  p.max_accel = 1.2;
  p.comfort_decel = 1.8;
  // (2 + 25 * 1.5) / sqrt(1 - (25/30)^4) = 39.5 / sqrt(0.5177469) = 54.89571
  CHECK(idm_equilibrium_gap(p, 25.0) == Approx(54.89571).epsilon(1e-6));
  CHECK(std::abs(idm_acceleration(p, 25.0, 54.89571, 25.0)) < 1e-5);
  // Closing in at 5 m/s on a 30 m gap: s* = 2 + 37.5 + 25 * 5 / (2 sqrt(2.16)) = 82.02584;
  // a = 1.2 (1 - 0.4822531 - (82.02584 / 30)^2) = -8.34969
  CHECK(idm_acceleration(p, 25.0, 30.0, 20.0) == Approx(-8.34969).epsilon(1e-5));
  CHECK(idm_free_acceleration(p, 15.0) == Approx(1.2 * (1.0 - 0.0625)));
}

TEST_CASE("a platoon started too far apart settles at the IDM equilibrium gap", "[unit][vehicle]") {
  ScenarioConfig c;
  c.seed = 3;
  c.vehicles = 5;
  c.seconds = 200.0;
  c.attacks = c.shape_events = c.speed_changes = false;
  c.benign_brakings = 0;
  c.initial_gap_scale = 1.5;
  const Scene scene = build_scene(c);
  const double v = scene.scenario.head_speed.front().speed;
  for (int i = 1; i < c.vehicles; ++i) {
    const IdmParams& p = scene.scenario.drivers[static_cast<std::size_t>(i)];
    const double expected = (p.jam_gap + v * p.time_headway) / std::sqrt(1.0 - std::pow(v / p.desired_speed, 4.0));
    CHECK(scene.truth.at(0, i).gap == Approx(1.5 * expected).epsilon(1e-9));
    const VehicleState& end = scene.truth.at(scene.truth.ticks, i);
    CHECK(end.gap == Approx(expected).margin(0.05));
    CHECK(end.speed == Approx(v).margin(0.01));
  }
}

namespace {

bool same_bytes(const StreamCall& a, const StreamCall& b) {
  auto eq = [](const auto& x, const auto& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0;
  };
  bool labels = a.labels.size() == b.labels.size();
  for (std::size_t i = 0; labels && i < a.labels.size(); ++i)
    labels = a.labels[i].kind == b.labels[i].kind && a.labels[i].event == b.labels[i].event;
  return eq(a.inputs, b.inputs) && eq(a.observed, b.observed) && eq(a.truth, b.truth) && eq(a.stale, b.stale) &&
         a.spec.vehicles == b.spec.vehicles && labels;
}

}  // namespace

TEST_CASE("the same seed gives the same stream bytes, another seed does not", "[unit][vehicle]") {
  ScenarioConfig c;
  c.seed = 11;
  c.seconds = 12.0;
  const VehicleStream a(c), b(c);
  c.seed = 12;
  const VehicleStream other(c);
  REQUIRE(a.calls() == b.calls());
  REQUIRE(a.calls() > 40);
  int differ = 0;
  for (int i = 0; i < a.calls(); ++i) {
    REQUIRE(same_bytes(a.call(i), b.call(i)));
    if (i < other.calls() && !same_bytes(a.call(i), other.call(i))) ++differ;
  }
  CHECK(differ > a.calls() / 2);
  REQUIRE(a.scene().scenario.events.size() == b.scene().scenario.events.size());
}

TEST_CASE("the shape-event script names every change and matches the calls", "[unit][vehicle]") {
  ScenarioConfig c;
  c.seed = 7;
  const VehicleStream stream(c);
  int dims[3] = {0, 0, 0};
  for (const ShapeEvent& e : stream.script()) {
    const CallSpec& now = stream.spec(e.last_call);
    const CallSpec& before = stream.spec(e.first_call - 1);
    const std::int64_t value = e.dim == 'N' ? static_cast<std::int64_t>(now.vehicles.size())
                               : e.dim == 'W' ? now.window : now.features;
    const std::int64_t prior = e.dim == 'N' ? static_cast<std::int64_t>(before.vehicles.size())
                               : e.dim == 'W' ? before.window : before.features;
    CHECK(value == e.final_value);
    CHECK(prior == e.before);
    CHECK_FALSE(e.reason.empty());
    ++dims[e.dim == 'N' ? 0 : e.dim == 'W' ? 1 : 2];
  }
  CHECK(dims[0] >= 3);  // joins and leaves
  CHECK(dims[1] >= 5);  // start-up, operator window, 25 Hz there and back, restart
  CHECK(dims[2] == 2);  // format v2 and back
  bool fast = false, refill = false;
  for (int i = 0; i < stream.calls(); ++i) {
    fast = fast || (stream.spec(i).rate_hz() == 25 && stream.spec(i).window == 50);
    refill = refill || (i > 100 && stream.spec(i).window == kMinWindow);
  }
  CHECK(fast);
  CHECK(refill);
}

TEST_CASE("the evaluation counts rows, events and delays as computed by hand", "[unit][vehicle]") {
  Scenario s;
  s.events.push_back({LabelKind::BiasSpeed, 1, 100, 200, 2.0});  // 2.0 s to 4.0 s on vehicle 1
  Evaluation eval(s);
  StreamCall call;
  call.spec.tick = 150;  // 3.0 s
  call.spec.vehicles = {0, 1};
  call.labels = {RowLabel{}, RowLabel{LabelKind::BiasSpeed, 0, false}};
  CallResult result;
  result.rows.resize(2);
  result.rows[0].alarm = true;   // a false alarm on a clean row
  result.rows[1].alarm = true;   // the attack, 1.0 s after its start
  result.model_rows = 2;
  result.latency_us = 100.0;
  eval.add(call, result);
  call.spec.tick = 175;
  result.rows[0].alarm = false;
  result.rows[1].alarm = false;  // a miss
  eval.add(call, result);
  const Summary sum = eval.finish();
  const KindScore& k = sum.kinds[static_cast<std::size_t>(LabelKind::BiasSpeed)];
  CHECK(k.rows == 2);
  CHECK(k.alarms == 1);
  CHECK(k.events == 1);
  CHECK(k.detected == 1);
  CHECK(k.median_delay() == Approx(1.0));
  CHECK(sum.clean_rows == 2);
  CHECK(sum.clean_alarms == 1);
  CHECK(k.recall() == Approx(0.5));
  CHECK(k.precision(sum.false_alarms()) == Approx(0.5));
  CHECK(k.f1(sum.false_alarms()) == Approx(0.5));
  CHECK(sum.percentile_latency(0.99) == Approx(100.0));
}

// The flow-meter stream generator: deterministic from its seed, replayable
// from its shape-event script, every scheduled event visible in the tensors;
// gap repair on hand-made windows; .npy round trips.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

#include "samples/flowmeter/npy_io.h"
#include "samples/flowmeter/stream_generator.h"
#include "samples/flowmeter/window_cleaning.h"

using namespace flowmeter;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

StreamConfig short_stream(std::uint64_t seed) {
  StreamConfig c;
  c.seed = seed;
  c.wells = 16;
  c.calls = 40;
  return c;
}

// Byte-for-byte equality of two calls (NaN compares equal to the same NaN).
bool same_bytes(const FlowCall& a, const FlowCall& b) {
  return a.wells == b.wells && a.channels == b.channels && a.window == b.window && a.x.size() == b.x.size() &&
         std::memcmp(a.x.data(), b.x.data(), a.x.size() * sizeof(float)) == 0 && a.truth == b.truth;
}

// The first event of a kind in the script.
const ShapeEvent& first_event(const ShapeScript& s, ShapeEventKind kind) {
  for (const ShapeEvent& e : s.events)
    if (e.kind == kind) return e;
  FAIL("no " << shape_event_kind_name(kind) << " event in the script");
  return s.events.front();
}

}  // namespace

TEST_CASE("flow stream: the same seed gives the same bytes, another seed does not", "[unit][flowmeter][generator]") {
  const StreamGenerator a(short_stream(3)), b(short_stream(3)), c(short_stream(4));
  CHECK(a.script().to_text() == b.script().to_text());
  for (int i : {0, 5, 12, 20, 33})  // built in a different order than b builds them below
    CHECK(same_bytes(a.call(i), b.call(i)));
  CHECK(same_bytes(b.call(5), a.call(5)));
  CHECK_FALSE(same_bytes(a.call(5), c.call(5)));
}

TEST_CASE("flow stream: a written script replays the exact stream", "[unit][flowmeter][generator]") {
  const StreamGenerator original(short_stream(9));
  const ShapeScript parsed = ShapeScript::parse(original.script().to_text());
  CHECK(parsed == original.script());
  const StreamGenerator replayed(short_stream(9), parsed);
  for (int i = 0; i < 40; ++i) CHECK(same_bytes(original.call(i), replayed.call(i)));
  CHECK_THROWS_AS(ShapeScript::parse("call=3 kind=no_such_kind"), std::invalid_argument);
  CHECK_THROWS_AS(ShapeScript::parse("call"), std::invalid_argument);
}

TEST_CASE("flow stream: 40 calls hold every shape event, visible in the tensors", "[unit][flowmeter][generator]") {
  const StreamGenerator g(short_stream(7));
  std::set<ShapeEventKind> kinds;
  for (const ShapeEvent& e : g.script().events) kinds.insert(e.kind);
  CHECK(kinds.size() == kShapeEventKinds);
  const ShapeScript& s = g.script();

  const FlowCall nominal = g.call(0);
  CHECK(nominal.shape() == std::array<std::int64_t, 3>{15, 7, 60});  // 16 wells, one held back as a new well

  const FlowCall removed = g.call(first_event(s, ShapeEventKind::ChannelRemoved).call);
  CHECK(removed.channels.size() == 6);
  CHECK(std::count(removed.channels.begin(), removed.channels.end(), Channel::PBH) == 0);
  const FlowCall added = g.call(first_event(s, ShapeEventKind::ChannelAdded).call);
  CHECK(added.channels.size() == 8);
  CHECK(added.channels.back() == Channel::PAN);

  const FlowCall burst = g.call(first_event(s, ShapeEventKind::BurstSampling).call);
  CHECK(burst.window == 360);
  CHECK(burst.step_min == Approx(1.0 / 6.0));
  const FlowCall gap = g.call(first_event(s, ShapeEventKind::ShortWindow).call);
  CHECK(gap.window >= 16);
  CHECK(gap.window <= 40);
  CHECK(g.call(first_event(s, ShapeEventKind::PartialBatch).call).wells.size() == 1);

  const ShapeEvent& shut = first_event(s, ShapeEventKind::WellsShutIn);
  const FlowCall after_shut = g.call(shut.call);
  for (int w : shut.wells) CHECK(std::count(after_shut.wells.begin(), after_shut.wells.end(), w) == 0);
  const ShapeEvent& online = first_event(s, ShapeEventKind::WellsOnline);
  const FlowCall after_online = g.call(online.call);
  CHECK(after_online.wells.size() == 16);
  // The new well came online 25 min before the call: the first 34 samples of its window read nothing.
  const auto row = static_cast<std::size_t>(std::find(after_online.wells.begin(), after_online.wells.end(), 15) -
                                            after_online.wells.begin());
  const float* pwh = after_online.x.data() + (row * 7 + 2) * 60;
  CHECK(std::isnan(pwh[33]));
  CHECK(std::isfinite(pwh[36]));
}

TEST_CASE("flow stream: truth is the window mean of non-negative rates", "[unit][flowmeter][generator]") {
  const StreamGenerator g(short_stream(7));
  const FlowCall c = g.call(3);
  for (std::size_t r = 0; r < c.wells.size(); ++r) {
    double mean[3] = {0, 0, 0};
    for (int j = 0; j < 60; ++j) {
      const WellSample& s = g.field().sample(c.wells[r], c.end_min - (59 - j));
      for (int p = 0; p < 3; ++p) mean[p] += s.rates[static_cast<std::size_t>(p)] / 60.0;
    }
    for (int p = 0; p < 3; ++p) {
      CHECK(c.truth[r * 3 + static_cast<std::size_t>(p)] == Approx(mean[p]));
      CHECK(c.truth[r * 3 + static_cast<std::size_t>(p)] >= 0.0);
    }
  }
}

TEST_CASE("gap repair fills, trims or masks, and never leaves NaN", "[unit][flowmeter][cleaning]") {
  // Two wells, two channels, ten steps.
  const std::vector<float> x = {
      kNaN, 2, kNaN, 4, 5, 6, 7, 8, 9, 10,  11, 12, 13, 14, 15, 16, 17, 18, 19, 20,  // well 0: ch 0 gaps at 0 and 2
      kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, 1, 2, 3, 4,  1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  // well 1: ch 0 misses 6 of 10
  };
  const std::vector<std::string> names = {"PBH", "PWH"};
  const CleanBatch filled = clean_batch(x, 2, 2, 10, GapPolicy::Impute, names);
  REQUIRE(filled.rows == std::vector<int>{0});
  CHECK(filled.x == std::vector<float>{2, 2, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20});
  CHECK(filled.imputed_values == 2);
  CHECK(filled.lens == std::vector<std::int32_t>{10});
  REQUIRE(filled.masked.size() == 1);
  CHECK(filled.masked[0].row == 1);
  CHECK(filled.masked[0].reason == "PBH missing 6/10 samples");

  // Trimming cuts well 0's leading step and shifts the rest to the front (zero tail, length 9);
  // well 1 keeps 4 valid steps, fewer than 8: masked.
  const CleanBatch trimmed = clean_batch(x, 2, 2, 10, GapPolicy::TrimLeading, names);
  REQUIRE(trimmed.rows == std::vector<int>{0});
  CHECK(trimmed.lens == std::vector<std::int32_t>{9});
  CHECK(trimmed.x == std::vector<float>{2, 2, 4, 5, 6, 7, 8, 9, 10, 0, 12, 13, 14, 15, 16, 17, 18, 19, 20, 0});
  CHECK(trimmed.trimmed_steps == 1);
  CHECK(trimmed.imputed_values == 1);
  REQUIRE(trimmed.masked.size() == 1);
  CHECK(trimmed.masked[0].reason == "only 4 of 10 steps reported");
}

TEST_CASE("npy files round-trip f32, f64 and i32", "[unit][flowmeter][npy]") {
  const std::string path = "flowmeter_npy_roundtrip_test.npy";
  write_npy(path, std::vector<float>{1.5f, -2.0f, 3.25f, 0.0f, 5.0f, 6.0f}, {2, 3});
  NpyArray a = read_npy(path);
  CHECK(a.dtype == "<f4");
  CHECK(a.shape == std::vector<std::int64_t>{2, 3});
  CHECK(a.values == std::vector<double>{1.5, -2.0, 3.25, 0.0, 5.0, 6.0});
  write_npy(path, std::vector<std::int32_t>{7, -8}, {2});
  a = read_npy(path);
  CHECK(a.dtype == "<i4");
  CHECK(a.shape == std::vector<std::int64_t>{2});
  CHECK(a.values == std::vector<double>{7, -8});
  write_npy(path, std::vector<double>{0.1}, {1, 1, 1});
  CHECK(read_npy(path).values == std::vector<double>{0.1});
  CHECK_THROWS_AS(write_npy(path, std::vector<double>{0.1, 0.2}, {3}), std::runtime_error);
  std::remove(path.c_str());
  CHECK_THROWS_AS(read_npy(path), std::runtime_error);
}

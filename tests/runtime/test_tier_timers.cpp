// Options::collect_timings: Stats::time says where calls spent their time, by
// tier and op, and stays empty when timing is off.
#include <catch2/catch.hpp>

#include <algorithm>

#include "jit_test_models.h"

using canary::TierTime;
using namespace canary::test;

namespace {

const TierTime* find_row(const canary::TimeStats& time, const std::string& tier, const std::string& op) {
  auto it = std::find_if(time.tiers.begin(), time.tiers.end(),
                         [&](const TierTime& t) { return t.tier == tier && t.op == op; });
  return it == time.tiers.end() ? nullptr : &*it;
}

double covered_us(const canary::TimeStats& time) {
  double sum = 0;
  for (const TierTime& t : time.tiers) sum += t.total_us;
  return sum;
}

void run_calls(canary::Session& s, int calls) {
  for (int i = 0; i < calls; ++i)
    s.run({{"x", random_tensor({8, 33}, 1 + static_cast<std::uint32_t>(i))}, {"b", random_tensor({33}, 2)}});
}

}  // namespace

TEST_CASE("timers: interpreted calls are counted per op kind", "[unit][timers][api]") {
  canary::Options o = interpreter_options();
  o.collect_timings = true;
  canary::Runtime rt(o);
  auto s = elementwise_chain(rt).session();
  run_calls(s, 3);
  const canary::TimeStats& time = s.stats().time;
  REQUIRE(time.collected);
  // The chain has two Muls and one each of Add, Tanh, Sub, Relu.
  const TierTime* mul = find_row(time, "interpreted", "Mul");
  const TierTime* tanh = find_row(time, "interpreted", "Tanh");
  REQUIRE(mul);
  REQUIRE(tanh);
  CHECK(mul->count == 6);
  CHECK(tanh->count == 3);
  CHECK(find_row(time, "compiled: fused group", "") == nullptr);
  CHECK(time.calls_us > 0);
  CHECK(covered_us(time) <= time.calls_us);
  for (std::size_t i = 1; i < time.tiers.size(); ++i) CHECK(time.tiers[i - 1].total_us >= time.tiers[i].total_us);
}

TEST_CASE("timers: compiled calls show fused groups and guards", "[unit][timers][api]") {
  canary::Options o = jit_options(2);
  o.collect_timings = true;
  canary::Runtime rt(o);
  auto s = elementwise_chain(rt).session();
  run_calls(s, 6);
  const canary::Stats& stats = s.stats();
  REQUIRE(stats.jit.compiled_entries > 0);
  const TierTime* fused = find_row(stats.time, "compiled: fused group", "");
  const TierTime* guards = find_row(stats.time, "compiled: guards", "");
  REQUIRE(fused);
  REQUIRE(guards);
  CHECK(fused->count == stats.jit.compiled_entries);  // the whole chain is one group
  CHECK(guards->count == stats.jit.compiled_entries + stats.jit.guard_failures);
  CHECK(covered_us(stats.time) <= stats.time.calls_us);
}

TEST_CASE("timers: off by default", "[unit][timers][api]") {
  canary::Runtime rt(jit_options(2));
  auto s = elementwise_chain(rt).session();
  run_calls(s, 4);
  CHECK_FALSE(s.stats().time.collected);
  CHECK(s.stats().time.tiers.empty());
  CHECK(s.stats().time.calls_us == 0.0);
}

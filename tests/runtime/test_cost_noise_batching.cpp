// The cost model's noise copies through the fp64 reference as one batch:
// only where the signature makes dim 0 a batch and the first shadowed call
// confirms, bit for bit, that the batch gives each copy's own outputs; a
// model that mixes rows, an input without the batch dim, or a batch that
// outgrows a limit keeps the copies one by one, and the trial goes on.
#include <catch2/catch.hpp>

#include "jit_test_models.h"

using namespace canary;
using namespace canary::test;

namespace {

// Row-independent: every value leads with N.
const char* kRowwise = R"(canary v1
graph main(x: f32[N, 256], s: f32[N, 1]) -> (y) {
  a = Mul(x, s)
  t = Tanh(a)
  y = Add(t, x)
}
)";

// Declares N as its batch, but each output row depends on every input row.
const char* kMixesRows = R"(canary v1
graph main(x: f32[N, 256]) -> (y) {
  m = ReduceMean(x) {axes = [0], keepdims = 1}
  d = Sub(x, m)
  y = Tanh(d)
}
)";

// A per-channel input without the batch dim (the noise perturbs it too).
const char* kChannelInput = R"(canary v1
graph main(x: f32[N, 256], b: f32[256]) -> (y) {
  a = Add(x, b)
  y = Tanh(a)
}
)";

Options noise_options() {
  Options o = jit_options(2);
  o.cost.enabled = true;
  o.cost.trial_calls = 3;
  o.cost.shadow_samples = 2;
  o.cost.noise_copies = 3;
  o.cost.batch_noise_copies = true;
  o.cost.max_shadow_overhead = 1e9;
  o.cost.monitor_every = 0;
  o.cost.try_unfused = o.cost.try_isas = o.cost.try_symbolic = o.cost.try_bf16 = false;
  o.cost.try_compensated = false;
  return o;
}

bool decided(const Model& m) {
  for (const Event& e : m.events())
    if (e.kind == EventKind::Decision && e.cost) return true;
  return false;
}

// Runs 64-row calls of `text` until the cost model decides; returns the session's cost stats.
CostStats run_trial(const Options& o, const char* text, bool with_scale) {
  Runtime rt(o);
  const Model m = rt.load_text(text);
  Session s = m.session();
  for (int i = 0; i < 300 && !decided(m); ++i) {
    NamedTensors in{{"x", random_tensor({64, 256}, 40 + static_cast<std::uint32_t>(i))}};
    if (with_scale) in.emplace("s", random_tensor({64, 1}, 70 + static_cast<std::uint32_t>(i), 0.5f, 1.5f));
    if (std::string(text).find("b: f32[256]") != std::string::npos)
      in.emplace("b", random_tensor({256}, 90 + static_cast<std::uint32_t>(i)));
    s.run(in);
  }
  REQUIRE(decided(m));
  return s.stats().cost;
}

}  // namespace

TEST_CASE("cost noise copies: a row-wise batch model runs them through the reference as one batch",
          "[unit][cost][api]") {
  const CostStats c = run_trial(noise_options(), kRowwise, true);
  REQUIRE(c.shadow_calls >= 2);
  // The first shadowed call confirms (one by one, then batched), the later ones batch.
  CHECK(c.batched_noise_calls >= 1);
  CHECK(c.batched_noise_calls == c.shadow_calls - 1);
  Options off = noise_options();
  off.cost.batch_noise_copies = CostModelOptions{}.batch_noise_copies;  // the default: off
  CHECK_FALSE(off.cost.batch_noise_copies);
  CHECK(run_trial(off, kRowwise, true).batched_noise_calls == 0);
}

TEST_CASE("cost noise copies: rows that mix, or an input without the batch dim, keep them one by one",
          "[unit][cost][api]") {
  const CostStats mixes = run_trial(noise_options(), kMixesRows, false);
  CHECK(mixes.shadow_calls >= 2);
  CHECK(mixes.batched_noise_calls == 0);  // the batched outputs differ: batching is off
  const CostStats channel = run_trial(noise_options(), kChannelInput, false);
  CHECK(channel.shadow_calls >= 2);
  CHECK(channel.batched_noise_calls == 0);  // b: f32[256] has no batch dim to stack along
}

TEST_CASE("cost noise copies: a batch that outgrows max_tensor_bytes goes one by one and the trial goes on",
          "[unit][cost][api]") {
  Options o = noise_options();
  // One copy's fp64 reference tensors are 128 KiB; three stacked are 384 KiB.
  o.max_tensor_bytes = 200 * 1024;
  const CostStats c = run_trial(o, kRowwise, true);
  CHECK(c.shadow_calls >= 2);
  CHECK(c.batched_noise_calls == 0);
}

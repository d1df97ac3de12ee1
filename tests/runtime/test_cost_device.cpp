// GPU placement chosen by the cost model (JitOptions::device "auto"), through
// the public API with HostFusedDevice standing in for the GPU: the trial
// holds the placement as a candidate with its transfer bytes and modelled
// energy, the choice passes the gates and runs where it says; under "gpu"
// the CPU placement is the candidate instead.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "host_fused_device.h"
#include "jit_test_models.h"

using namespace canary;
using namespace canary::test;

namespace {

constexpr std::int64_t kRows = 64, kCols = 256;

Options placement_options(const std::string& device, CostProfile profile) {
  Options o = jit_options(2);
  o.jit.device = device;
  o.cost.enabled = true;
  o.cost.profile = profile;
  o.cost.trial_calls = 4;
  o.cost.shadow_samples = 1;
  o.cost.noise_copies = 1;
  o.cost.max_shadow_overhead = 1e9;  // about the choice, not the budget
  o.cost.monitor_every = 0;
  o.cost.try_fast_math = o.cost.try_unfused = o.cost.try_isas = o.cost.try_symbolic = false;
  o.cost.try_bf16 = o.cost.try_compensated = false;
  o.cost.powercap_root = "/nonexistent/powercap";  // every candidate's energy modelled, so they compare
  return o;
}

NamedTensors chain_inputs(int i) {
  return {{"x", random_tensor({kRows, kCols}, 300 + static_cast<std::uint32_t>(i))},
          {"b", random_tensor({kCols}, 900 + static_cast<std::uint32_t>(i))}};
}

std::shared_ptr<const CostDecision> first_decision(const Model& m) {
  for (const Event& e : m.events())
    if (e.kind == EventKind::Decision && e.cost) return e.cost;
  return nullptr;
}

const CostCandidate* candidate(const CostDecision& d, const std::string& name) {
  for (const CostCandidate& c : d.candidates)
    if (c.name == name) return &c;
  return nullptr;
}

const CostTerm* term(const CostCandidate& c, const std::string& name) {
  for (const CostTerm& t : c.terms)
    if (t.name == name) return &t;
  return nullptr;
}

// Runs the chain until the cost model decides, every output checked against
// the interpreter's; returns the decision.
std::shared_ptr<const CostDecision> decide(const Model& m, Session& s) {
  const Runtime ref_rt(interpreter_options());
  Session ref = elementwise_chain(ref_rt).session();
  for (int i = 0; i < 300 && !first_decision(m); ++i) {
    const NamedTensors in = chain_inputs(i);
    check_same_values(s.run(in).at("y"), ref.run(in).at("y"), 1e-5);
  }
  return first_decision(m);
}

}  // namespace

TEST_CASE("cost model: with device 'auto' the GPU placement is a measured candidate with its transfer and energy",
          "[unit][cost][api][device]") {
  auto device = std::make_shared<HostFusedDevice>();
  jit::ScopedDeviceOverride installed(device);
  Runtime rt(placement_options("auto", CostProfile::Balanced));
  const Model m = elementwise_chain(rt);
  Session s = m.session();
  const auto d = decide(m, s);
  REQUIRE(d);
  INFO(d->to_table());
  const CostCandidate* cpu = candidate(*d, "fused exact avx512 fp32");
  if (!cpu) cpu = candidate(*d, "fused exact avx2 fp32");
  REQUIRE(cpu);
  const CostCandidate* gpu = candidate(*d, cpu->name + " on gpu");
  REQUIRE(gpu);
  CHECK(d->candidates.front().name == cpu->name);  // the ladder's variant stays on the CPU under "auto"
  CHECK(gpu->calls > 0);
  CHECK(gpu->shadow_calls > 0);
  CHECK(gpu->passed);  // the stand-in computes in float like the interpreter
  // x and b in, y out: what the one group on the GPU copies per call.
  const double bytes = 4.0 * (2 * kRows * kCols + kCols);
  REQUIRE(term(*gpu, "host-device transfer"));
  CHECK(term(*gpu, "host-device transfer")->value == bytes);
  CHECK(term(*cpu, "host-device transfer")->value == 0.0);
  CHECK(term(*gpu, "energy")->source == "modelled");  // no NVML here (nor a board to read)
  CHECK(term(*gpu, "energy")->value > term(*cpu, "energy")->value);
  CHECK(device->runs() > 0);
  // Whatever was chosen passes its gates and runs where its name says.
  const CostCandidate& chosen = d->candidates[d->chosen];
  CHECK(chosen.passed);
  const std::uint64_t before = s.stats().jit.device_fused_calls;
  for (int i = 0; i < 3; ++i) s.run(chain_inputs(1000 + i));
  const bool on_gpu = chosen.name.find(" on gpu") != std::string::npos;
  CHECK((s.stats().jit.device_fused_calls > before) == on_gpu);
}

TEST_CASE("cost model: with device 'gpu' the ladder's variant is on the GPU and the CPU placement is the candidate",
          "[unit][cost][api][device]") {
  auto device = std::make_shared<HostFusedDevice>();
  jit::ScopedDeviceOverride installed(device);
  Runtime rt(placement_options("gpu", CostProfile::Speed));
  const Model m = elementwise_chain(rt);
  Session s = m.session();
  const auto d = decide(m, s);
  REQUIRE(d);
  INFO(d->to_table());
  const std::string primary = d->candidates.front().name;
  CHECK_THAT(primary, Catch::EndsWith(" on gpu"));
  CHECK(candidate(*d, primary.substr(0, primary.size() - 7)));
  CHECK(d->candidates[d->chosen].passed);
}

TEST_CASE("cost model: with device 'auto' a trace whose only work is a row kernel gets the GPU placement too",
          "[unit][cost][api][device][rows]") {
  // A ReduceMax alone: no elementwise op, no sum; only its placement can differ.
  const char* row_only = R"(canary v1
graph main(x: f32[N, T]) -> (y) {
  y = ReduceMax(x) {axes = [-1], keepdims = 1}
}
)";
  auto device = std::make_shared<HostFusedDevice>();
  jit::ScopedDeviceOverride installed(device);
  Runtime rt(placement_options("auto", CostProfile::Balanced)), ref_rt(interpreter_options());
  const Model m = rt.load_text(row_only);
  Session s = m.session(), ref = ref_rt.load_text(row_only).session();
  for (int i = 0; i < 300 && !first_decision(m); ++i) {
    const NamedTensors in = {{"x", random_tensor({kRows, kCols}, 40 + static_cast<std::uint32_t>(i))}};
    CHECK(bit_identical(s.run(in).at("y"), ref.run(in).at("y")));  // a max rounds nothing
  }
  const auto d = first_decision(m);
  REQUIRE(d);
  INFO(d->to_table());
  const std::string cpu = d->candidates.front().name;
  const CostCandidate* gpu = candidate(*d, cpu + " on gpu");
  REQUIRE(gpu);
  CHECK(gpu->calls > 0);
  CHECK(device->row_runs() > 0);
  // x in, one float per row out.
  REQUIRE(term(*gpu, "host-device transfer"));
  CHECK(term(*gpu, "host-device transfer")->value == 4.0 * (kRows * kCols + kRows));
}

// The cost model's GPU placement axis: the candidate that moves fused groups
// to the GPU (or back), the host-device transfer term and how the profiles
// weigh it, the modelled GPU energy, energy measured only where NVML covers
// a long enough window, and NVML's unreadable path.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "jit/cost/candidates.h"
#include "jit/cost/energy.h"
#include "jit/cost/nvml_energy.h"
#include "jit/cost/objective.h"
#include "jit/cost/trial.h"

using namespace canary;
using namespace canary::jit;
using namespace canary::jit::cost;

namespace {

CandidateSpec cpu_primary() {
  CandidateSpec p;
  p.isa = x86::Isa::Avx512;
  p.name = candidate_name(p.plan, p.isa, false);
  return p;
}

TraceTraits elementwise_traits() {
  TraceTraits t;
  t.elementwise = true;
  return t;
}

CostModelOptions device_axis_only() {
  CostModelOptions o;
  o.try_fast_math = o.try_unfused = o.try_isas = o.try_bf16 = o.try_symbolic = o.try_compensated = false;
  return o;
}

std::vector<std::string> names(const std::vector<CandidateSpec>& specs) {
  std::vector<std::string> out;
  for (const CandidateSpec& s : specs) out.push_back(s.name);
  return out;
}

// A measured candidate whose calls all take `us`, moving `transfer` bytes to and from a GPU.
CandidateMeasurements timed(const std::string& name, double us, double transfer = 0.0, bool reference = false) {
  CandidateMeasurements m;
  m.name = name;
  m.is_reference_path = reference;
  m.latency_us.assign(4, us);
  m.shadow_calls = 2;
  m.max_relative_error = 1e-7;
  m.energy_joules = 1e-3;
  m.transfer_bytes = transfer;
  return m;
}

const CostTerm* find_term(const CostCandidate& c, const std::string& name) {
  for (const CostTerm& t : c.terms)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace

TEST_CASE("cost candidates: the other placement of fused groups and row kernels is offered only where a GPU is usable",
          "[unit][cost][device]") {
  const CostModelOptions options = device_axis_only();
  const Trace trace;
  CHECK(names(candidate_specs(cpu_primary(), elementwise_traits(), trace, options, 1, false)) ==
        std::vector<std::string>{"fused exact avx512 fp32", "interpreter"});
  const auto specs = candidate_specs(cpu_primary(), elementwise_traits(), trace, options, 1, true);
  CHECK(names(specs) ==
        std::vector<std::string>{"fused exact avx512 fp32", "fused exact avx512 fp32 on gpu", "interpreter"});
  CHECK(specs[1].plan.fused_on_device);
  CHECK(specs[1].isa == x86::Isa::Avx512);  // differs in placement only

  // From a primary on the GPU (JitOptions::device "gpu"), the candidate goes back to the CPU.
  CandidateSpec gpu = cpu_primary();
  gpu.plan.fused_on_device = true;
  gpu.name = candidate_name(gpu.plan, gpu.isa, false);
  const auto back = candidate_specs(gpu, elementwise_traits(), trace, options, 1, true);
  CHECK(names(back) ==
        std::vector<std::string>{"fused exact avx512 fp32 on gpu", "fused exact avx512 fp32", "interpreter"});

  // A trace whose only work is a row kernel (a ReduceMax, say) has something to place too.
  TraceTraits rows_only;
  rows_only.rows = true;
  CHECK(candidate_specs(cpu_primary(), rows_only, trace, options, 1, true).size() == 3);

  // Products are placed by every tier, the unfused one included.
  TraceTraits products;
  products.products = true;
  CandidateSpec unfused_products = cpu_primary();
  unfused_products.plan.tier = Tier::Unfused;
  CHECK(candidate_specs(unfused_products, products, trace, options, 1, true).size() == 3);

  // Nothing to place: no elementwise ops, row kernels or products, the unfused tier, or the axis off.
  CHECK(candidate_specs(cpu_primary(), TraceTraits{}, trace, options, 1, true).size() == 2);
  CandidateSpec unfused = cpu_primary();
  unfused.plan.tier = Tier::Unfused;
  CHECK(candidate_specs(unfused, elementwise_traits(), trace, options, 1, true).size() == 2);
  CostModelOptions off = options;
  off.try_device = false;
  CHECK(candidate_specs(cpu_primary(), elementwise_traits(), trace, off, 1, true).size() == 2);
}

TEST_CASE("cost objective: the transfer term prices bus time, and the profiles weigh it apart",
          "[unit][cost][device]") {
  // The GPU candidate is 10% faster as measured but copies 2.5 MB per call:
  // 100 us of bus time at the modelled 25 GB/s, 1.11x the fastest p50.
  const std::vector<CandidateMeasurements> table = {timed("cpu", 100.0), timed("gpu", 90.0, 2.5e6),
                                                    timed("interpreter", 400.0, 0.0, true)};
  const CostDecision speed = decide(table, profile_weights(CostProfile::Speed), profile_limits(CostProfile::Speed), "speed");
  const CostTerm* transfer = find_term(speed.candidates[1], "host-device transfer");
  REQUIRE(transfer);
  CHECK(transfer->value == 2.5e6);
  CHECK(transfer->unit == "bytes");
  CHECK(transfer->source == "modelled");
  CHECK(transfer->normalised == Approx(100.0 / 90.0));
  CHECK(transfer->weight == 0.0);
  REQUIRE(find_term(speed.candidates[0], "host-device transfer"));
  CHECK(find_term(speed.candidates[0], "host-device transfer")->normalised == 0.0);
  CHECK(speed.candidates[speed.chosen].name == "gpu");  // speed counts the copies once, in latency

  for (const CostProfile p : {CostProfile::Balanced, CostProfile::Robust}) {
    const CostDecision d = decide(table, profile_weights(p), profile_limits(p), cost_profile_name(p));
    INFO(d.to_table());
    CHECK(d.candidates[d.chosen].name == "cpu");
    CHECK(find_term(d.candidates[1], "host-device transfer")->weight == profile_weights(p).transfer);
  }

  // Without a GPU candidate the column is not shown at all.
  const CostDecision cpu_only = decide({timed("cpu", 100.0), timed("interpreter", 400.0, 0.0, true)},
                                       profile_weights(CostProfile::Balanced),
                                       profile_limits(CostProfile::Balanced), "balanced");
  CHECK_FALSE(find_term(cpu_only.candidates[0], "host-device transfer"));
}

TEST_CASE("cost energy: a GPU placement's modelled energy charges the board and the link for the bus time",
          "[unit][cost][device]") {
  WorkEstimate cpu;
  cpu.bytes_moved = 1e6;
  WorkEstimate gpu = cpu;
  gpu.device_bytes = 1e6;
  const double seconds = 1e-4;
  // 1 MB at 25 GB/s is 40 us of bus time at 60 W, plus 50 pJ per byte.
  CHECK(modelled_joules(gpu, x86::Isa::Avx512, seconds) - modelled_joules(cpu, x86::Isa::Avx512, seconds) ==
        Approx(60.0 * 40e-6 + 50e-12 * 1e6));
  gpu.device_bytes = -1.0;  // nonsense counts as nothing
  CHECK(modelled_joules(gpu, x86::Isa::Avx512, seconds) == modelled_joules(cpu, x86::Isa::Avx512, seconds));
}

TEST_CASE("cost trial: a GPU candidate's energy is measured only with NVML over a long window, never half",
          "[unit][cost][device]") {
  Trial trial;
  TrialCandidate gpu;
  gpu.work.bytes_moved = 1e6;
  gpu.work.device_bytes = 1e6;
  gpu.measured.latency_us.assign(4, 100.0);
  TrialSample s;
  s.candidate_ran = true;
  s.call_us = 100.0;
  s.energy_measured = true;  // RAPL read
  s.energy_joules = 2e-3;
  add_sample(gpu, s);
  trial.candidates.push_back(gpu);
  fill_energy_and_memory(trial, x86::Isa::Avx512);
  // RAPL alone does not see the board: the whole figure is modelled.
  CHECK_FALSE(trial.candidates[0].measured.energy_measured);
  CHECK(trial.candidates[0].measured.energy_joules ==
        Approx(modelled_joules(gpu.work, x86::Isa::Avx512, 100e-6)));

  // NVML reads over calls adding up to the window, with the counter moving.
  TrialSample n = s;
  n.call_us = kDeviceEnergyWindowUs / 2;
  n.device_energy_read = true;
  n.device_energy_joules = 0.0;  // the counter had not advanced yet
  add_sample(trial.candidates[0], n);
  fill_energy_and_memory(trial, x86::Isa::Avx512);
  CHECK_FALSE(trial.candidates[0].measured.energy_measured);  // half the window, nothing counted
  n.device_energy_joules = 0.5;
  add_sample(trial.candidates[0], n);
  fill_energy_and_memory(trial, x86::Isa::Avx512);
  CHECK(trial.candidates[0].measured.energy_measured);
  // Host mean (2 mJ) plus the board's 0.5 J over 2 calls.
  CHECK(trial.candidates[0].measured.energy_joules == Approx(2e-3 + 0.25));
  // Deciding again recomputes rather than adding twice.
  fill_energy_and_memory(trial, x86::Isa::Avx512);
  CHECK(trial.candidates[0].measured.energy_joules == Approx(2e-3 + 0.25));
}

TEST_CASE("cost trial: where NVML is read, a CPU candidate needs the window too, and warm-up calls do not count",
          "[unit][cost][device]") {
  Trial trial;
  TrialCandidate cpu;
  cpu.work.bytes_moved = 1e6;
  cpu.measured.latency_us.assign(4, 100.0);
  TrialSample s;
  s.candidate_ran = true;
  s.call_us = kDeviceEnergyWindowUs;  // a whole window in one call...
  s.energy_measured = true;
  s.energy_joules = 2e-3;
  s.device_energy_read = true;
  s.device_energy_joules = 5.0;
  add_sample(cpu, s);  // ...but the first call is the warm-up
  trial.candidates.push_back(cpu);
  fill_energy_and_memory(trial, x86::Isa::Avx512);
  CHECK_FALSE(trial.candidates[0].measured.energy_measured);  // RAPL read, NVML window not yet covered
  add_sample(trial.candidates[0], s);
  fill_energy_and_memory(trial, x86::Isa::Avx512);
  CHECK(trial.candidates[0].measured.energy_measured);
  CHECK(trial.candidates[0].measured.energy_joules == Approx(2e-3 + 5.0));  // the board's idle share included
}

TEST_CASE("cost objective: a candidate whose GPU run failed fails the 'device ran' gate", "[unit][cost][device]") {
  std::vector<CandidateMeasurements> table = {timed("cpu", 100.0), timed("gpu", 50.0, 1e3),
                                              timed("interpreter", 400.0, 0.0, true)};
  table[1].device_failure = "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED (719)";
  const CostDecision d = decide(table, profile_weights(CostProfile::Speed), profile_limits(CostProfile::Speed), "speed");
  CHECK_FALSE(d.candidates[1].passed);
  CHECK(d.candidates[d.chosen].name == "cpu");
  CHECK(d.to_table().find("device ran (its GPU run failed: cuLaunchKernel failed") != std::string::npos);
  for (const CostGate& g : d.candidates[0].gates) CHECK(g.name != "device ran");  // only where it failed
}

TEST_CASE("cost energy: NVML that cannot be loaded is not readable and says why", "[unit][cost][device]") {
  const NvmlEnergy missing("libcanary-no-such-nvml.so.1");
  CHECK_FALSE(missing.readable());
  CHECK_FALSE(missing.read_mj().has_value());
  CHECK_THAT(missing.description(), Catch::Contains("libcanary-no-such-nvml.so.1"));
  // The real library: readable exactly where a driver with a Volta or later GPU is present.
  const NvmlEnergy real;
  if (real.readable()) {
    CHECK(real.read_mj().has_value());
    CHECK_THAT(real.description(), Catch::StartsWith("NVML energy counter of GPU 0"));
  } else {
    CHECK_FALSE(real.description().empty());
  }
}

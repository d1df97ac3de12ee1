// The host model of the emitted kernel (same index decoding and op lowering
// as the PTX, CpuMath arithmetic) against evaluate_fused_reference over the
// whole differential catalog, plus the magic-number division the kernel
// uses for index decoding.
#include <catch2/catch.hpp>

#include <random>

#include "jit/cuda/ptx_elementwise.h"
#include "tests/cuda/diff_cases.h"
#include "tests/cuda/kernel_model.h"

namespace cuda = canary::jit::cuda;
namespace ct = canary::jit::cuda_test;

TEST_CASE("magic-number division matches n / d for dividends below 2^31", "[unit][cuda]") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> any(0, 0x7fffffffu);
  std::vector<std::uint32_t> divisors = {1, 2, 3, 5, 7, 641, 1000, 1031, 4096, 65537, 0x7fffffffu, 0x40000001u};
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + any(rng) % (i < 100 ? 5000u : 0x7ffffffeu));
  for (std::uint32_t d : divisors) {
    const cuda::Divider div = cuda::make_divider(d);
    const std::uint32_t edges[] = {0, 1, d - 1, d, d + 1, 2 * d - 1, 0x7fffffffu, 0x7ffffffeu};
    for (std::uint32_t n : edges) {
      if (n > 0x7fffffffu) continue;
      INFO("d = " << d << ", n = " << n);
      REQUIRE(div.divide(n) == n / d);
    }
    for (int j = 0; j < 2000; ++j) {
      const std::uint32_t n = any(rng);
      INFO("d = " << d << ", n = " << n);
      REQUIRE(div.divide(n) == n / d);
    }
  }
}

TEST_CASE("launch scalars cover the requested rows", "[unit][cuda]") {
  const cuda::FusedLaunchScalars s = cuda::make_launch_scalars(5, 1031, 2, 7);
  CHECK(s.d1 == 5);
  CHECK(s.d2 == 1031);
  CHECK(s.begin == 2 * 1031);
  CHECK(s.end == 7 * 1031);
  CHECK(cuda::Divider{s.magic2, s.shift2}.divide(7 * 1031 - 1) == 6);
  CHECK(cuda::Divider{s.magic1, s.shift1}.divide(6) == 1);
}

TEST_CASE("the kernel model matches the reference evaluator on the differential catalog", "[unit][cuda]") {
  for (const ct::DiffCase& c : ct::differential_cases()) {
    ct::CaseData want, got;
    ct::make_case_data(c, c.dims, 42, &want);
    ct::make_case_data(c, c.dims, 42, &got, -777.0f);
    const std::uint32_t want_flag = canary::jit::evaluate_fused_reference(c.spec, want.args);
    const std::uint32_t got_flag = ct::evaluate_fused_model(c.spec, got.args);
    const ct::DiffOutcome o = ct::compare_outputs(c, got, want);
    INFO(c.name << ": max " << o.max_ulp << " ulp, max abs " << o.max_abs << "; " << o.first_failure);
    CHECK(o.passed());
    CHECK(got_flag == want_flag);
  }
}

TEST_CASE("the value canary flag is raised exactly when an output is not finite", "[unit][cuda]") {
  for (const ct::DiffCase& c : ct::differential_cases()) {
    if (!c.spec.check_non_finite) continue;
    ct::CaseData data;
    ct::make_case_data(c, c.dims, 3, &data);
    const std::uint32_t flag = ct::evaluate_fused_model(c.spec, data.args);
    const bool clean = c.name.find("clean") != std::string::npos;
    INFO(c.name);
    CHECK(flag == (clean ? 0u : 1u));
  }
}

TEST_CASE("the kernel model computes a partial row range and leaves other rows alone", "[unit][cuda]") {
  const auto cases = ct::differential_cases();
  const ct::DiffCase* bcast = nullptr;
  for (const auto& c : cases)
    if (c.name == "add dense+row") bcast = &c;
  REQUIRE(bcast != nullptr);
  ct::CaseData data;
  ct::make_case_data(*bcast, bcast->dims, 5, &data, -1.0f);
  data.args.row_begin = 4;
  data.args.row_end = 9;
  ct::evaluate_fused_model(bcast->spec, data.args);
  const std::int64_t d2 = bcast->dims[2];
  const auto& out = data.outputs[0];
  CHECK(out[4 * d2 - 1] == -1.0f);
  CHECK(out[9 * d2] == -1.0f);
  // Row 6 = (i0 1, i1 1): x[6 d2 + 3] + row value 6.
  CHECK(out[6 * d2 + 3] == data.inputs[0][6 * d2 + 3] + data.inputs[1][6]);
}

// The GPU check's correctness rows: the differential catalog against the
// CPU reference (per math mode, with the measured ulp of each
// transcendental), the fault fallback, and the dynamic-shape stream.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

#include "bench/gpu/check_table.h"
#include "jit/cuda/fused_runner.h"
#include "tests/cuda/diff_cases.h"

namespace canary::gpu_check {
namespace {

namespace ct = jit::cuda_test;
using jit::MathMode;

// Differential result of one case: GPU against evaluate_fused_reference.
struct CaseOutcome {
  bool ran = false;
  std::string error;
  ct::DiffOutcome diff;
  bool flag_matches = true;
};

CaseOutcome run_case(const ct::DiffCase& c, const std::array<std::int64_t, 3>& dims, std::uint64_t seed) {
  ct::CaseData want, got;
  ct::make_case_data(c, dims, seed, &want);
  ct::make_case_data(c, dims, seed, &got, -777.0f);
  const std::uint32_t want_flag = jit::evaluate_fused_reference(c.spec, want.args);
  const jit::cuda::GpuRunResult r = jit::cuda::run_fused_on_gpu(c.spec, got.args);
  CaseOutcome o;
  o.ran = r.ok;
  o.error = r.error;
  if (!r.ok) return o;
  o.diff = ct::compare_outputs(c, got, want);
  o.flag_matches = r.flag == want_flag;
  return o;
}

// One row per math mode: pass count, and the max ulp of each single transcendental.
void add_mode_row(std::vector<Row>& rows, MathMode mode, const std::vector<ct::DiffCase>& cases,
                  const std::vector<CaseOutcome>& outcomes) {
  int total = 0, passed = 0;
  std::string failures, ulps;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].spec.math != mode) continue;
    ++total;
    const CaseOutcome& o = outcomes[i];
    const bool ok = o.ran && o.diff.passed() && o.flag_matches;
    passed += ok;
    if (!ok && failures.size() < 200)
      failures += "; " + cases[i].name + ": " + (o.ran ? o.diff.first_failure : o.error);
    const std::string& n = cases[i].name;
    const bool transcendental = n.find("exp") == 0 || n.find("log") == 0 || n.find("tanh") == 0 ||
                                n.find("erf") == 0 || n.find("sigmoid") == 0 || n.find("softplus") == 0;
    if (transcendental && n.find(' ') == std::string::npos && o.ran) {
      char t[48];
      std::snprintf(t, sizeof t, "%s%s %.0f", ulps.empty() ? "" : ", ", n.substr(0, n.find('/')).c_str(),
                    o.diff.max_ulp);
      ulps += t;
    }
  }
  char head[64];
  std::snprintf(head, sizeof head, "%d/%d pass; max ulp: ", passed, total);
  rows.push_back({std::string("differential ") + (mode == MathMode::Exact ? "exact" : "fast"), head + ulps + failures,
                  passed == total});
}

const ct::DiffCase& find_case(const std::vector<ct::DiffCase>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name == name) return c;
  std::fprintf(stderr, "gpu_check: no differential case %s\n", name.c_str());
  std::exit(3);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

void check_differential(std::vector<Row>& rows) {
  const std::vector<ct::DiffCase> cases = ct::differential_cases();
  std::vector<CaseOutcome> outcomes;
  for (const auto& c : cases) outcomes.push_back(run_case(c, c.dims, 11));
  add_mode_row(rows, MathMode::Exact, cases, outcomes);
  add_mode_row(rows, MathMode::Fast, cases, outcomes);
}

void check_fault_fallback(std::vector<Row>& rows) {
  const auto cases = ct::differential_cases();
  ct::DiffCase c = find_case(cases, "chain10 arith");
  c.spec.nodes[1].imm0 = 1.625f;  // a key nothing else compiled, so "load" reaches the loader
  std::string result;
  bool ok = true;
  for (const char* fault : {"load", "launch", "oom"}) {
    ct::CaseData data;
    ct::make_case_data(c, c.dims, 4, &data, -5.0f);
    setenv("CANARY_CUDA_FAULT", fault, 1);
    const jit::cuda::GpuRunResult r = jit::cuda::run_fused_on_gpu(c.spec, data.args);
    unsetenv("CANARY_CUDA_FAULT");
    const bool untouched = data.outputs[0].front() == -5.0f && data.outputs[0].back() == -5.0f;
    const CaseOutcome again = run_case(c, c.dims, 4);
    const bool this_ok = !r.ok && untouched && again.ran && again.diff.passed();
    ok = ok && this_ok;
    result += std::string(result.empty() ? "" : ", ") + fault + (this_ok ? " refused+recovered" : " WRONG: " + r.error);
  }
  rows.push_back({"fault fallback", result, ok});
}

void check_dynamic_shapes(std::vector<Row>& rows) {
  const auto cases = ct::differential_cases();
  ct::DiffCase c = find_case(cases, "a*b+c (dense,row,shared-d0)");
  jit::EwNode sig;
  sig.op = jit::EwOp::Sigmoid;
  sig.a = static_cast<std::uint16_t>(c.spec.nodes.size() - 1);
  c.spec.nodes.push_back(sig);
  c.spec.outputs = {static_cast<std::uint16_t>(c.spec.nodes.size() - 1)};
  c.max_ulp = 4.0;
  const int compiled_before = jit::cuda::gpu_fused_stats().modules_compiled;
  std::mt19937_64 rng(2024);
  std::vector<double> micros;
  int mismatches = 0, refused = 0;
  std::string first_problem;
  for (int call = 0; call < 300; ++call) {
    const std::array<std::int64_t, 3> dims = {1 + static_cast<std::int64_t>(rng() % 32),
                                              1 + static_cast<std::int64_t>(rng() % 4),
                                              1 + static_cast<std::int64_t>(rng() % 2048)};
    ct::CaseData want, got;
    ct::make_case_data(c, dims, call, &want);
    ct::make_case_data(c, dims, call, &got, -777.0f);
    jit::evaluate_fused_reference(c.spec, want.args);
    const auto start = std::chrono::steady_clock::now();
    const jit::cuda::GpuRunResult r = jit::cuda::run_fused_on_gpu(c.spec, got.args);
    micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    if (!r.ok) {
      if (refused++ == 0) first_problem = r.error;
      continue;
    }
    const ct::DiffOutcome o = ct::compare_outputs(c, got, want);
    if (!o.passed() && mismatches++ == 0) first_problem = o.first_failure;
  }
  const int compiled = jit::cuda::gpu_fused_stats().modules_compiled - compiled_before;
  double mean = 0.0;
  for (double m : micros) mean += m / static_cast<double>(micros.size());
  char text[256];
  std::snprintf(text, sizeof text, "300 calls, up to 262k elems: median %.1f us, mean %.1f us/call; %d module(s) compiled; %d mismatches, %d refused",
                median(micros), mean, compiled, mismatches, refused);
  rows.push_back({"dynamic shapes", text + (first_problem.empty() ? "" : "; " + first_problem),
                  compiled == 1 && mismatches == 0 && refused == 0});
}

}  // namespace canary::gpu_check

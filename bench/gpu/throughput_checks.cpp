// The GPU check's throughput rows: fused 10-op chains over 2^24..2^26
// device-resident floats against cuMemcpyDtoD bandwidth measured in the same
// run, and launch overhead (one-element kernel, small host round trip).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "bench/gpu/check_table.h"
#include "bench/gpu/gpu_timing.h"
#include "jit/cuda/fused_launch.h"
#include "jit/cuda/fused_runner.h"
#include "tests/cuda/diff_cases.h"

namespace canary::gpu_check {
namespace {

namespace ct = jit::cuda_test;
namespace cuda = jit::cuda;

const ct::DiffCase& find_case(const std::vector<ct::DiffCase>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name == name) return c;
  std::fprintf(stderr, "gpu_check: no differential case %s\n", name.c_str());
  std::exit(3);
}

// Device buffers for one size, freed on scope exit.
struct DeviceBuffers {
  const cuda::CudaDriver& driver;
  cuda::DevicePtr in = 0, out = 0;
  ~DeviceBuffers() {
    (void)driver.release(in);
    (void)driver.release(out);
  }
};

// Checks the first `count` outputs of a device-resident chain run against the reference.
bool verify_prefix(const cuda::CudaDriver& driver, const ct::DiffCase& c, const std::vector<float>& input,
                   cuda::DevicePtr out, std::int64_t count) {
  ct::CaseData want;
  ct::make_case_data(c, {1, 1, count}, 0, &want);
  std::copy(input.begin(), input.begin() + count, want.inputs[0].begin());
  jit::evaluate_fused_reference(c.spec, want.args);
  ct::CaseData got = want;
  got.outputs[0].assign(static_cast<std::size_t>(count), -777.0f);
  if (!driver.copy_to_host(got.outputs[0].data(), out, count * sizeof(float)).ok() || !driver.synchronize().ok())
    return false;
  return ct::compare_outputs(c, got, want).passed();
}

// One row: the chain over n floats against the copy bandwidth over the same bytes.
Row measure_chain(const cuda::CudaDriver& driver, cuda::FusedKernelCache& kernels, const ct::DiffCase& c, int log2n) {
  const std::int64_t n = std::int64_t{1} << log2n;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  char label[64];
  std::snprintf(label, sizeof label, "%s 2^%d floats", c.name.c_str(), log2n);
  DeviceBuffers buf{driver};
  std::vector<float> input(static_cast<std::size_t>(n));
  std::mt19937 rng(static_cast<unsigned>(log2n));
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (float& v : input) v = dist(rng);
  const cuda::CudaModule* module = nullptr;
  cuda::CudaStatus s = driver.allocate(bytes, &buf.in);
  if (s.ok()) s = driver.allocate(bytes, &buf.out);
  if (s.ok()) s = driver.copy_to_device(buf.in, input.data(), bytes);
  if (s.ok()) s = driver.synchronize();
  if (s.ok()) s = kernels.get(c.spec, &module);
  if (!s.ok()) return {label, s.error(), false};
  cuda::DeviceFusedArgs args;
  args.inputs = {buf.in};
  args.outputs = {buf.out};
  args.strides = {n, n};
  args.dims[2] = n;
  args.row_end = 1;
  bool ok = true;
  const double copy_s = seconds_per_call(driver, [&] { return driver.copy_on_device(buf.out, buf.in, bytes).ok(); }, &ok);
  const double chain_s =
      seconds_per_call(driver, [&] { return cuda::launch_fused(driver, *module, c.spec, args).ok(); }, &ok);
  const bool correct = ok && verify_prefix(driver, c, input, buf.out, std::min<std::int64_t>(n, 1 << 20));
  const double copy_gbs = 2.0 * bytes / copy_s / 1e9, chain_gbs = 2.0 * bytes / chain_s / 1e9;
  char text[200];
  std::snprintf(text, sizeof text, "%.0f GB/s = %.2f x copy (DtoD %.0f GB/s); %.1f us/call%s%s", chain_gbs,
                chain_gbs / copy_gbs, copy_gbs, chain_s * 1e6, chain_gbs / copy_gbs < 0.8 ? " (below the 0.80 aim)" : "",
                correct ? "" : "; WRONG RESULTS");
  return {label, text, correct};
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[static_cast<std::size_t>(q * (v.size() - 1))];
}

}  // namespace

void check_bandwidth(const cuda::CudaDriver& driver, std::vector<Row>& rows) {
  const auto cases = ct::differential_cases();
  cuda::FusedKernelCache kernels(driver);
  const ct::DiffCase& arith = find_case(cases, "chain10 arith");
  for (int log2n : {24, 25, 26}) rows.push_back(measure_chain(driver, kernels, arith, log2n));
  rows.push_back(measure_chain(driver, kernels, find_case(cases, "chain10 transc"), 26));
}

void check_launch_overhead(const cuda::CudaDriver& driver, std::vector<Row>& rows) {
  const auto cases = ct::differential_cases();
  const ct::DiffCase& neg = find_case(cases, "neg");
  cuda::FusedKernelCache kernels(driver);
  const cuda::CudaModule* module = nullptr;
  DeviceBuffers buf{driver};
  cuda::CudaStatus s = kernels.get(neg.spec, &module);
  if (s.ok()) s = driver.allocate(256, &buf.in);
  if (s.ok()) s = driver.allocate(256, &buf.out);
  if (!s.ok()) {
    rows.push_back({"launch + sync", s.error(), false});
    return;
  }
  cuda::DeviceFusedArgs args;
  args.inputs = {buf.in};
  args.outputs = {buf.out};
  args.strides = {1, 1};
  args.row_end = 1;
  std::vector<double> micros;
  bool ok = true;
  for (int i = 0; i < 1000; ++i) {
    const auto start = Clock::now();
    ok = ok && cuda::launch_fused(driver, *module, neg.spec, args).ok() && driver.synchronize().ok();
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  char text[160];
  std::snprintf(text, sizeof text, "median %.1f us, p90 %.1f us (1000 launches of a 1-element kernel)",
                percentile(micros, 0.5), percentile(micros, 0.9));
  rows.push_back({"launch + sync", text, ok});

  ct::CaseData data;
  ct::make_case_data(neg, {1, 1, 4096}, 1, &data);
  micros.clear();
  for (int i = 0; i < 300; ++i) {
    const auto start = Clock::now();
    ok = cuda::run_fused_on_gpu(neg.spec, data.args).ok && ok;
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::snprintf(text, sizeof text, "median %.1f us, p90 %.1f us per call (H2D + launch + D2H + sync)",
                percentile(micros, 0.5), percentile(micros, 0.9));
  rows.push_back({"run_fused_on_gpu 4096 floats", text, ok});
}

}  // namespace canary::gpu_check

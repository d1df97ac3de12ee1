// The GPU check's matmul rows: the catalog of tests/cuda/matmul_cases.h on
// the GPU (within the fp64 reference's bound, and bit for bit against the
// host model), and the tiled kernel's throughput on device-resident square
// products against the device's f32 FMA peak (SMs x lanes x 2 x clock).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "bench/gpu/check_table.h"
#include "bench/gpu/gpu_timing.h"
#include "jit/cuda/fused_launch.h"
#include "jit/cuda/matmul_launch.h"
#include "tests/cuda/diff_cases.h"
#include "tests/cuda/matmul_cases.h"

namespace canary::gpu_check {
namespace {

namespace ct = jit::cuda_test;
namespace cuda = jit::cuda;

// A, B and C of one size on the device, freed on scope exit.
struct MatmulBuffers {
  const cuda::CudaDriver& driver;
  cuda::DevicePtr a = 0, b = 0, c = 0;
  ~MatmulBuffers() {
    for (cuda::DevicePtr p : {a, b, c}) (void)driver.release(p);
  }
};

// C[row, col] of an n x n product as the kernel computes it (one fma per k).
float model_element(const std::vector<float>& a, const std::vector<float>& b, std::int64_t n, std::int64_t row,
                    std::int64_t col) {
  float acc = 0.0f;
  for (std::int64_t k = 0; k < n; ++k)
    acc = std::fma(a[static_cast<std::size_t>(row * n + k)], b[static_cast<std::size_t>(k * n + col)], acc);
  return acc;
}

// One row: an n x n x n product resident on the device, timed, with 64
// sampled outputs compared bit for bit against the model.
Row measure_square(const cuda::CudaDriver& driver, cuda::FusedKernelCache& kernels, std::int64_t n) {
  char label[64];
  std::snprintf(label, sizeof label, "matmul %lldx%lldx%lld", static_cast<long long>(n), static_cast<long long>(n),
                static_cast<long long>(n));
  const std::size_t elems = static_cast<std::size_t>(n * n), bytes = elems * sizeof(float);
  std::vector<float> a(elems), b(elems), c(elems);
  std::mt19937 rng(static_cast<unsigned>(n));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  MatmulBuffers buf{driver};
  const cuda::MatmulSpec spec;
  const cuda::CudaModule* module = nullptr;
  cuda::CudaStatus s = driver.allocate(bytes, &buf.a);
  if (s.ok()) s = driver.allocate(bytes, &buf.b);
  if (s.ok()) s = driver.allocate(bytes, &buf.c);
  if (s.ok()) s = driver.copy_to_device(buf.a, a.data(), bytes);
  if (s.ok()) s = driver.copy_to_device(buf.b, b.data(), bytes);
  if (s.ok()) s = driver.synchronize();
  if (s.ok()) s = kernels.get(spec, &module);
  if (!s.ok()) return {label, s.error(), false};
  cuda::DeviceMatmulArgs args;
  args.a = buf.a;
  args.b = buf.b;
  args.c = buf.c;
  args.dims = cuda::MatmulDims{1, n, n, n, n * n, n * n};
  bool ok = true;
  const double seconds =
      seconds_per_call(driver, [&] { return cuda::launch_matmul(driver, *module, spec, args).ok(); }, &ok, 5);
  ok = ok && driver.copy_to_host(c.data(), buf.c, bytes).ok() && driver.synchronize().ok();
  int wrong = 0;
  std::mt19937 pick(7);
  std::uniform_int_distribution<std::int64_t> index(0, n - 1);
  for (int i = 0; ok && i < 64; ++i) {
    const std::int64_t row = index(pick), col = index(pick);
    const float want = model_element(a, b, n, row, col), got = c[static_cast<std::size_t>(row * n + col)];
    wrong += std::memcmp(&want, &got, sizeof got) != 0;
  }
  const double gflops = 2.0 * static_cast<double>(n) * n * n / seconds / 1e9;
  const double peak = driver.info().peak_fp32_gflops();
  char text[220];
  if (peak > 0)
    std::snprintf(text, sizeof text, "%.0f GFLOP/s = %.2f of the f32 FMA peak (%.0f GFLOP/s); %.2f ms/call%s", gflops,
                  gflops / peak, peak, seconds * 1e3, wrong ? "; WRONG RESULTS" : "");
  else
    std::snprintf(text, sizeof text, "%.0f GFLOP/s (peak unknown: no SM clock reported); %.2f ms/call%s", gflops,
                  seconds * 1e3, wrong ? "; WRONG RESULTS" : "");
  return {label, text, ok && wrong == 0};
}

}  // namespace

void check_matmul(const cuda::CudaDriver& driver, std::vector<Row>& rows, bool throughput) {
  int total = 0, passed = 0;
  double worst = 0.0;
  std::string failures;
  for (const ct::MatmulCase& c : ct::matmul_cases()) {
    ++total;
    ct::MatmulCaseData got, model;
    ct::make_matmul_case_data(c, 11, &got, -777.0f);
    ct::make_matmul_case_data(c, 11, &model, -777.0f);
    ct::evaluate_matmul_model(c, &model);
    const cuda::GpuRunResult r = cuda::run_matmul_on_gpu(c.spec, got.args);
    if (!r.ok) {
      if (failures.size() < 200) failures += "; " + c.name + ": " + r.error;
      continue;
    }
    const ct::MatmulOutcome o = ct::compare_matmul(c, got, ct::evaluate_matmul_reference(c, got));
    worst = std::max(worst, o.max_error);
    const bool bitwise = ct::first_bit_difference(got.c, model.c) == -1;
    passed += o.passed() && bitwise;
    if ((!o.passed() || !bitwise) && failures.size() < 200)
      failures += "; " + c.name + ": " + (o.passed() ? "bits differ from the model" : o.first_failure);
  }
  char text[300];
  std::snprintf(text, sizeof text, "%d/%d cases within the reference's bound and bit for bit the model's; worst %.3f of the bound%s",
                passed, total, worst, failures.c_str());
  rows.push_back({"matmul catalog", text, passed == total});
  if (!throughput) return;
  cuda::FusedKernelCache kernels(driver);
  for (std::int64_t n : {1024, 4096}) rows.push_back(measure_square(driver, kernels, n));
}

}  // namespace canary::gpu_check

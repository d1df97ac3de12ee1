// Accuracy of the exact device math routines, measured on the host through
// CpuMath (bit-exact with the GPU for these IEEE-only sequences) against
// double-precision libm: a sample of the whole float range plus dense sweeps
// of the interesting intervals, and the special values.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "jit/cuda/math_model_cpu.h"
#include "jit/cuda/ptx_math.h"

namespace cuda = canary::jit::cuda;
namespace pm = canary::jit::cuda::ptx_math;
using canary::jit::MathMode;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Error of got in ulps of the correctly rounded float of want (subnormal
// ulp below 2^-126); 1e9 for a NaN or infinity mismatch.
double ulp_error(float got, double want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0.0 : 1e9;
  const float rounded = static_cast<float>(want);
  if (std::isinf(rounded) || std::isinf(got)) return got == rounded ? 0.0 : 1e9;
  int exponent = 0;
  std::frexp(std::fabs(want), &exponent);
  const double ulp = std::ldexp(1.0, std::max(exponent - 24, -149));
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

using Routine = std::function<float(float)>;
using Truth = std::function<double(double)>;

// The worst error over every step-th float bit pattern and a dense sweep of [lo, hi].
double worst_error(const Routine& f, const Truth& truth, std::uint32_t step, float lo, float hi) {
  double worst = 0.0;
  for (std::uint64_t b = 0; b < 0x100000000ull; b += step) {
    const std::uint32_t u = static_cast<std::uint32_t>(b);
    float x;
    std::memcpy(&x, &u, sizeof x);
    worst = std::max(worst, ulp_error(f(x), truth(x)));
  }
  for (int i = 0; i <= 200000; ++i) {
    const float x = lo + (hi - lo) * static_cast<float>(i) / 200000.0f;
    worst = std::max(worst, ulp_error(f(x), truth(x)));
  }
  return worst;
}

cuda::CpuMath m;
constexpr MathMode kExact = MathMode::Exact;
constexpr std::uint32_t kStep = 4099;  // about a million samples per routine

}  // namespace

TEST_CASE("exact exp is within 4 ulp over the float range", "[unit][cuda]") {
  const double e = worst_error([](float x) { return pm::exp(m, x, kExact); }, [](double x) { return std::exp(x); },
                               kStep, -104.0f, 89.0f);
  INFO("max " << e << " ulp");
  CHECK(e <= 4.0);
}

TEST_CASE("exact log is within 4 ulp over the float range", "[unit][cuda]") {
  const double e = worst_error([](float x) { return pm::log(m, x, kExact); }, [](double x) { return std::log(x); },
                               kStep, 0.5f, 2.0f);
  INFO("max " << e << " ulp");
  CHECK(e <= 4.0);
}

TEST_CASE("exact tanh, erf, sigmoid and softplus are within 4 ulp", "[unit][cuda]") {
  const double t = worst_error([](float x) { return pm::tanh(m, x, kExact); }, [](double x) { return std::tanh(x); },
                               kStep, -4.0f, 4.0f);
  const double e = worst_error([](float x) { return pm::erf(m, x, kExact); }, [](double x) { return std::erf(x); },
                               kStep, -4.0f, 4.0f);
  const double s = worst_error([](float x) { return pm::sigmoid(m, x, kExact); },
                               [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, kStep, -20.0f, 20.0f);
  const double p = worst_error([](float x) { return pm::softplus(m, x, kExact); },
                               [](double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); },
                               kStep, -20.0f, 20.0f);
  INFO("tanh " << t << ", erf " << e << ", sigmoid " << s << ", softplus " << p << " ulp");
  CHECK(t <= 4.0);
  CHECK(e <= 4.0);
  CHECK(s <= 4.0);
  CHECK(p <= 4.0);
}

TEST_CASE("exact routines handle NaN, infinities, zeros and subnormals as libm", "[unit][cuda]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(pm::exp(m, nan, kExact)));
  CHECK(pm::exp(m, kInf, kExact) == kInf);
  CHECK(pm::exp(m, -kInf, kExact) == 0.0f);
  CHECK(pm::exp(m, 88.8f, kExact) == kInf);
  CHECK(pm::exp(m, -104.0f, kExact) == 0.0f);
  CHECK(pm::exp(m, -100.0f, kExact) == std::exp(-100.0f));  // subnormal result, rounded once
  CHECK(pm::exp(m, 0.0f, kExact) == 1.0f);
  CHECK(pm::log(m, 0.0f, kExact) == -kInf);
  CHECK(pm::log(m, -0.0f, kExact) == -kInf);
  CHECK(std::isnan(pm::log(m, -1.0f, kExact)));
  CHECK(pm::log(m, kInf, kExact) == kInf);
  CHECK(pm::log(m, 1.0f, kExact) == 0.0f);
  CHECK(pm::log(m, 1e-45f, kExact) == std::log(1e-45f));  // smallest subnormal
  CHECK(pm::tanh(m, kInf, kExact) == 1.0f);
  CHECK(pm::tanh(m, -30.0f, kExact) == -1.0f);
  CHECK(pm::tanh(m, 1e-40f, kExact) == 1e-40f);
  CHECK(std::isnan(pm::tanh(m, nan, kExact)));
  CHECK(pm::erf(m, -kInf, kExact) == -1.0f);
  CHECK(pm::erf(m, 5.0f, kExact) == 1.0f);
  CHECK(std::isnan(pm::erf(m, nan, kExact)));
  CHECK(pm::sigmoid(m, -kInf, kExact) == 0.0f);
  CHECK(pm::sigmoid(m, kInf, kExact) == 1.0f);
  CHECK(pm::sigmoid(m, -100.0f, kExact) > 0.0f);  // subnormal, not flushed
  CHECK(pm::softplus(m, kInf, kExact) == kInf);
  CHECK(pm::softplus(m, -kInf, kExact) == 0.0f);
  CHECK(pm::softplus(m, -100.0f, kExact) > 0.0f);
  CHECK(std::isnan(pm::softplus(m, nan, kExact)));
}

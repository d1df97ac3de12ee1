// The recurrent cells' vectorisable exp, sigmoid and tanh against libm in
// double, across the range, at the ends and for NaN and infinities.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/onednn/vector_activations.h"

namespace o = canary::kernels::onednn;

TEST_CASE("vector exp is within a few ulp of libm over the float range", "[unit][kernels]") {
  double worst = 0.0;
  for (double x = -87.0; x <= 88.0; x += 0.0137) {
    const float xf = static_cast<float>(x);
    const double want = std::exp(static_cast<double>(xf));
    worst = std::max(worst, std::abs(o::exp_approx(xf) - want) / want);
  }
  CHECK(worst < 4e-7);  // about 3 ulp
  CHECK(o::exp_approx(0.0f) == 1.0f);
  CHECK(o::exp_approx(1000.0f) > 1e38f);  // clamped at the largest finite power
  CHECK(o::exp_approx(-1000.0f) < 1e-37f);
  CHECK(o::exp_approx(-1000.0f) >= 0.0f);
  CHECK(std::isnan(o::exp_approx(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("vector sigmoid and tanh match libm within 2e-7 and keep NaN", "[unit][kernels]") {
  double worst_sigmoid = 0.0, worst_tanh = 0.0;
  for (double x = -30.0; x <= 30.0; x += 0.00731) {
    const float xf = static_cast<float>(x);
    const double xd = xf;
    worst_sigmoid = std::max(worst_sigmoid, std::abs(o::sigmoid_approx(xf) - 1.0 / (1.0 + std::exp(-xd))));
    worst_tanh = std::max(worst_tanh, std::abs(o::tanh_approx(xf) - std::tanh(xd)));
  }
  CHECK(worst_sigmoid < 2e-7);
  CHECK(worst_tanh < 2e-7);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(o::sigmoid_approx(inf) == 1.0f);
  CHECK(o::sigmoid_approx(-inf) >= 0.0f);
  CHECK(o::sigmoid_approx(-inf) < 1e-38f);  // 1 / (1 + e^88.4), the clamped end
  CHECK(o::tanh_approx(inf) == 1.0f);
  CHECK(o::tanh_approx(-inf) == -1.0f);
  CHECK(std::isnan(o::sigmoid_approx(nan)));
  CHECK(std::isnan(o::tanh_approx(nan)));
}

// BF16 precision of the oneDNN MatMul, Gemm and Conv kernels: both operands
// rounded to bf16 (ties to even) and summed in f32, with bias, C and the
// output in f32. Checked against double sums of operands rounded here, on the
// native and the emulated path, with the scope's restore, its thread
// locality and the separate cache entries of each precision.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "kernels/onednn.h"
#include "kernels/onednn/precision.h"
#include "random_tensors.h"

namespace k = canary::kernels;
using canary::DType;
using canary::Tensor;
using k::MatmulPrecision;
using k::ScopedMatmulPrecision;

namespace {

constexpr float kOffGrid = 1.0f + 0x1p-10f;  // not a bf16: rounds to 1

// The f32 value of the bf16 nearest to v, ties to even (finite normal v).
float round_to_bf16(float v) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(v);
  u += 0x7fffu + ((u >> 16) & 1u);
  return std::bit_cast<float>(u & 0xffff0000u);
}

// v itself, or rounded to bf16.
double operand(float v, bool bf16) { return bf16 ? round_to_bf16(v) : v; }

// Expected outputs and, per element, the sum of the magnitudes of its terms.
struct Expected {
  std::vector<double> value, scale;
};

// Checks each element of got within 1e-6 of its scale (f32 summation order).
void check_sums(const Expected& want, const Tensor& got) {
  REQUIRE(got.dtype() == DType::F32);
  REQUIRE(static_cast<std::size_t>(got.numel()) == want.value.size());
  int bad = 0;
  for (std::size_t i = 0; i < want.value.size(); ++i) {
    const double g = got.data<float>()[i];
    if (!(std::abs(g - want.value[i]) <= 1e-6 * want.scale[i]) && bad++ < 5) {
      INFO("element " << i << ": want " << want.value[i] << ", got " << g);
      CHECK(false);
    }
  }
  CHECK(bad == 0);
}

// Counts the elements where two expectations are further apart than 1e-4 of the scale.
int count_differing(const Expected& a, const Expected& b) {
  int n = 0;
  for (std::size_t i = 0; i < a.value.size(); ++i) n += std::abs(a.value[i] - b.value[i]) > 1e-4 * a.scale[i];
  return n;
}

// a [B, M, K] times b [K, N] in double, operands rounded to bf16 when asked.
Expected expected_matmul(const Tensor& a, const Tensor& b, bool bf16) {
  const std::int64_t batch = a.dim(0), m = a.dim(1), kk = a.dim(2), n = b.dim(1);
  Expected e;
  for (std::int64_t i = 0; i < batch * m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0, scale = 0;
      for (std::int64_t l = 0; l < kk; ++l) {
        const double t = operand(a.data<float>()[i * kk + l], bf16) * operand(b.data<float>()[l * n + j], bf16);
        sum += t;
        scale += std::abs(t);
      }
      e.value.push_back(sum);
      e.scale.push_back(scale);
    }
  return e;
}

// alpha * a^T b^T + beta * c for a [K, M], b [N, K], c [N]; only a and b rounded.
Expected expected_gemm(const k::GemmParams& p, const Tensor& a, const Tensor& b, const Tensor& c, bool bf16) {
  const std::int64_t kk = a.dim(0), m = a.dim(1), n = b.dim(0);
  Expected e;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0, scale = 0;
      for (std::int64_t l = 0; l < kk; ++l) {
        const double t = operand(a.data<float>()[l * m + i], bf16) * operand(b.data<float>()[j * kk + l], bf16);
        sum += t;
        scale += std::abs(t);
      }
      const double cj = p.beta * c.data<float>()[j];
      e.value.push_back(p.alpha * sum + cj);
      e.scale.push_back(std::abs(p.alpha) * scale + std::abs(cj));
    }
  return e;
}

// A convolution with symmetric padding; 1-D ones have h = kh = 1.
struct ConvCase {
  std::int64_t n, c, m, h, w, kh, kw, stride, pad, group;
  bool one_d;

  std::int64_t out_h() const { return one_d ? 1 : (h + 2 * pad - kh) / stride + 1; }
  std::int64_t out_w() const { return (w + 2 * pad - kw) / stride + 1; }
  canary::Shape x_shape() const { return one_d ? canary::Shape{n, c, w} : canary::Shape{n, c, h, w}; }
  canary::Shape w_shape() const {
    return one_d ? canary::Shape{m, c / group, kw} : canary::Shape{m, c / group, kh, kw};
  }
  k::ConvParams params() const {
    k::ConvParams p;
    p.group = group;
    p.strides = one_d ? std::vector<std::int64_t>{stride} : std::vector<std::int64_t>{stride, stride};
    p.pads = one_d ? std::vector<std::int64_t>{pad, pad} : std::vector<std::int64_t>{pad, pad, pad, pad};
    return p;
  }
};

// The term sum of output (n, o, oy, ox) in double: w * x over the window, padding read as zero.
void conv_terms(const ConvCase& s, const Tensor& x, const Tensor& w, bool bf16, std::int64_t n, std::int64_t o,
                std::int64_t oy, std::int64_t ox, double& sum, double& scale) {
  const std::int64_t cg = s.c / s.group, first_c = (o / (s.m / s.group)) * cg;
  const std::int64_t sh = s.one_d ? 1 : s.stride, ph = s.one_d ? 0 : s.pad;
  for (std::int64_t ci = 0; ci < cg; ++ci)
    for (std::int64_t ky = 0; ky < s.kh; ++ky)
      for (std::int64_t kx = 0; kx < s.kw; ++kx) {
        const std::int64_t iy = oy * sh - ph + ky, ix = ox * s.stride - s.pad + kx;
        if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
        const float xv = x.data<float>()[((n * s.c + first_c + ci) * s.h + iy) * s.w + ix];
        const float wv = w.data<float>()[((o * cg + ci) * s.kh + ky) * s.kw + kx];
        const double t = operand(xv, bf16) * operand(wv, bf16);
        sum += t;
        scale += std::abs(t);
      }
}

// The convolution plus f32 bias in double, x and w rounded to bf16 when asked.
Expected expected_conv(const ConvCase& s, const Tensor& x, const Tensor& w, const Tensor& b, bool bf16) {
  Expected e;
  for (std::int64_t n = 0; n < s.n; ++n)
    for (std::int64_t o = 0; o < s.m; ++o)
      for (std::int64_t oy = 0; oy < s.out_h(); ++oy)
        for (std::int64_t ox = 0; ox < s.out_w(); ++ox) {
          double sum = b.data<float>()[o], scale = std::abs(sum);
          conv_terms(s, x, w, bf16, n, o, oy, ox, sum, scale);
          e.value.push_back(sum);
          e.scale.push_back(scale);
        }
  return e;
}

// A tensor of `shape` with every element v.
Tensor filled(const canary::Shape& shape, float v) {
  Tensor t = Tensor::empty(DType::F32, shape);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = v;
  return t;
}

// onednn_matmul at `precision`; fails the test when it does not apply.
Tensor run_matmul(MatmulPrecision precision, const Tensor& a, const Tensor& b) {
  ScopedMatmulPrecision scope(precision);
  Tensor y;
  REQUIRE(k::onednn_matmul(a, b, y));
  return y;
}

// onednn_conv at `precision`; fails the test when it does not apply.
Tensor run_conv(MatmulPrecision precision, const ConvCase& s, const Tensor& x, const Tensor& w, const Tensor& b,
                bool weights_are_constant = false) {
  ScopedMatmulPrecision scope(precision);
  Tensor y;
  REQUIRE(k::onednn_conv(s.params(), x, w, &b, y, weights_are_constant));
  return y;
}

// The element values of an f32 tensor.
std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

}  // namespace

TEST_CASE("bf16 matmul rounds both operands and sums in f32", "[unit][onednn][bf16]") {
  std::mt19937 rng(71);
  const Tensor a = canary::test::random_tensor(rng, {2, 3, 24});
  const Tensor b = canary::test::random_tensor(rng, {24, 5});
  const Expected exact = expected_matmul(a, b, false), rounded = expected_matmul(a, b, true);
  CHECK(count_differing(exact, rounded) > 20);  // of 30: random operands are not bf16 values
  check_sums(rounded, run_matmul(MatmulPrecision::BF16, a, b));
  check_sums(exact, run_matmul(MatmulPrecision::F32, a, b));
  {
    k::ScopedBf16Emulation emulate;
    check_sums(rounded, run_matmul(MatmulPrecision::BF16, a, b));
  }
  // 16 * (1 + 2^-10): the activations round to 1 in bf16.
  const Tensor off = filled({1, 2, 16}, kOffGrid), ones = filled({16, 3}, 1.0f);
  CHECK(values(run_matmul(MatmulPrecision::BF16, off, ones)) == std::vector<float>(6, 16.0f));
  CHECK(values(run_matmul(MatmulPrecision::F32, off, ones)) == std::vector<float>(6, 16.015625f));
  // The weights are rounded too.
  CHECK(values(run_matmul(MatmulPrecision::BF16, filled({1, 1, 16}, 1.0f), filled({16, 2}, kOffGrid))) ==
        std::vector<float>(2, 16.0f));
}

TEST_CASE("bf16 rounding is to nearest with ties to even", "[unit][onednn][bf16]") {
  // bf16 keeps 7 fraction bits: near 1 its step is 2^-7.
  const auto product = [](float a) {
    return run_matmul(MatmulPrecision::BF16, filled({1, 1}, a), filled({1, 1}, 1.0f)).data<float>()[0];
  };
  CHECK(product(1.0f + 0x1p-8f) == 1.0f);            // tie, down to the even 1
  CHECK(product(1.0f + 0x3p-8f) == 1.0f + 0x1p-6f);  // tie, up to the even 1 + 2^-6
  CHECK(product(1.0f + 0x3p-9f) == 1.0f + 0x1p-7f);  // past the tie: up
  CHECK(product(-(1.0f + 0x1p-9f)) == -1.0f);        // below the tie: down in magnitude
  CHECK(product(1.0f + 0x1p-7f) == 1.0f + 0x1p-7f);  // a bf16 value stays
}

TEST_CASE("bf16 reads f32 denormals as zero on both paths", "[unit][onednn][bf16]") {
  // 2^-130 is an f32 denormal: times 2^100 it is 2^-30 in f32, and 0 once rounded.
  const Tensor tiny = filled({1, 1}, 0x1p-130f), big = filled({1, 1}, 0x1p100f);
  CHECK(run_matmul(MatmulPrecision::F32, tiny, big).data<float>()[0] == 0x1p-30f);
  CHECK(run_matmul(MatmulPrecision::BF16, tiny, big).data<float>()[0] == 0.0f);
  k::ScopedBf16Emulation emulate;
  CHECK(run_matmul(MatmulPrecision::BF16, tiny, big).data<float>()[0] == 0.0f);
  CHECK(std::isnan(run_matmul(MatmulPrecision::BF16, filled({1, 1}, NAN), big).data<float>()[0]));
}

TEST_CASE("bf16 gemm rounds A and B, keeps alpha, beta and C in f32", "[unit][onednn][bf16]") {
  std::mt19937 rng(73);
  k::GemmParams p;
  p.alpha = 0.5;
  p.beta = 2.0;
  p.trans_a = p.trans_b = true;
  const Tensor a = canary::test::random_tensor(rng, {20, 4});  // [K, M]
  const Tensor b = canary::test::random_tensor(rng, {6, 20});  // [N, K]
  const Tensor c = canary::test::random_tensor(rng, {6});
  const auto run = [&](MatmulPrecision precision, const Tensor& aa, const Tensor& bb, const Tensor& cc) {
    ScopedMatmulPrecision scope(precision);
    Tensor y;
    REQUIRE(k::onednn_gemm(p, aa, bb, &cc, y));
    return y;
  };
  const Expected exact = expected_gemm(p, a, b, c, false), rounded = expected_gemm(p, a, b, c, true);
  CHECK(count_differing(exact, rounded) > 16);  // of 24
  check_sums(rounded, run(MatmulPrecision::BF16, a, b, c));
  check_sums(exact, run(MatmulPrecision::F32, a, b, c));
  {
    k::ScopedBf16Emulation emulate;
    check_sums(rounded, run(MatmulPrecision::BF16, a, b, c));
  }
  // 0.5 * 16 + 2 * (1 + 2^-10): C is not rounded, A is.
  const Tensor off = filled({16, 2}, kOffGrid), ones = filled({3, 16}, 1.0f), c_off = filled({3}, kOffGrid);
  CHECK(values(run(MatmulPrecision::BF16, off, ones, c_off)) == std::vector<float>(6, 10.001953125f));
  CHECK(values(run(MatmulPrecision::F32, off, ones, c_off)) == std::vector<float>(6, 10.009765625f));
}

TEST_CASE("bf16 conv rounds x and w, keeps the bias in f32 (1-D and 2-D)", "[unit][onednn][bf16]") {
  std::mt19937 rng(79);
  const ConvCase cases[] = {
      {3, 5, 4, 1, 150, 1, 3, 1, 1, 1, true},  // tiled 1-D path
      {2, 4, 6, 1, 33, 1, 3, 2, 1, 2, true},   // plain 1-D path: stride 2, groups
      {2, 3, 4, 9, 10, 3, 3, 1, 1, 1, false},  // 2-D
      {1, 4, 4, 8, 7, 3, 2, 2, 1, 2, false},   // 2-D: stride 2, groups
  };
  for (const ConvCase& s : cases) {
    INFO("case of width " << s.w);
    const Tensor x = canary::test::random_tensor(rng, s.x_shape());
    const Tensor w = canary::test::random_tensor(rng, s.w_shape());
    const Tensor b = canary::test::random_tensor(rng, {s.m});
    const Expected exact = expected_conv(s, x, w, b, false), rounded = expected_conv(s, x, w, b, true);
    CHECK(count_differing(exact, rounded) > static_cast<int>(exact.value.size() / 2));
    check_sums(rounded, run_conv(MatmulPrecision::BF16, s, x, w, b));
    check_sums(exact, run_conv(MatmulPrecision::F32, s, x, w, b));
    k::ScopedBf16Emulation emulate;
    check_sums(rounded, run_conv(MatmulPrecision::BF16, s, x, w, b));
  }
}

TEST_CASE("bf16 conv differs from f32 by the rounding of x", "[unit][onednn][bf16]") {
  // Four channels and three taps of (1 + 2^-10) * 1, plus a bias of 1 + 2^-10.
  for (bool one_d : {true, false}) {
    const ConvCase s{1, 4, 2, one_d ? 1 : 4, 20, 1, 3, 1, 0, 1, one_d};
    const Tensor x = filled(s.x_shape(), kOffGrid), w = filled(s.w_shape(), 1.0f), b = filled({2}, kOffGrid);
    const std::size_t n = static_cast<std::size_t>(2 * s.out_h() * s.out_w());
    CHECK(values(run_conv(MatmulPrecision::BF16, s, x, w, b)) == std::vector<float>(n, 13.0f + 0x1p-10f));
    CHECK(values(run_conv(MatmulPrecision::F32, s, x, w, b)) == std::vector<float>(n, 13.0f * kOffGrid));
  }
}

TEST_CASE("tiled bf16 conv keeps its own weight copy of a constant w", "[unit][onednn][bf16]") {
  const ConvCase s{2, 4, 3, 1, 90, 1, 3, 1, 0, 1, true};
  const Tensor x = filled(s.x_shape(), 1.0f), w = filled(s.w_shape(), kOffGrid), b = filled({3}, 0.0f);
  k::onednn_clear_cache();
  const std::vector<float> f32(static_cast<std::size_t>(2 * 3 * 88), 12.0f * kOffGrid), bf16(f32.size(), 12.0f);
  CHECK(values(run_conv(MatmulPrecision::F32, s, x, w, b, true)) == f32);
  CHECK(values(run_conv(MatmulPrecision::BF16, s, x, w, b, true)) == bf16);
  CHECK(values(run_conv(MatmulPrecision::F32, s, x, w, b, true)) == f32);
  CHECK(values(run_conv(MatmulPrecision::BF16, s, x, w, b, true)) == bf16);
  const k::OnednnCacheStats stats = k::onednn_cache_stats();
  CHECK(stats.tiled_conv_calls == 4);
  CHECK(stats.tiled_conv_geometries == 2);  // one per precision
}

TEST_CASE("the precision scope restores the previous precision", "[unit][onednn][bf16]") {
  CHECK(k::current_matmul_precision() == MatmulPrecision::F32);
  {
    ScopedMatmulPrecision outer(MatmulPrecision::BF16);
    CHECK(k::current_matmul_precision() == MatmulPrecision::BF16);
    {
      ScopedMatmulPrecision inner(MatmulPrecision::F32);
      CHECK(k::current_matmul_precision() == MatmulPrecision::F32);
    }
    CHECK(k::current_matmul_precision() == MatmulPrecision::BF16);
  }
  CHECK(k::current_matmul_precision() == MatmulPrecision::F32);
  // Outside any scope the kernels compute in f32.
  Tensor y;
  REQUIRE(k::onednn_matmul(filled({1, 16}, kOffGrid), filled({16, 1}, 1.0f), y));
  CHECK(y.data<float>()[0] == 16.015625f);
}

TEST_CASE("the precision is per thread", "[unit][onednn][bf16]") {
  ScopedMatmulPrecision scope(MatmulPrecision::BF16);
  MatmulPrecision seen = MatmulPrecision::BF16;
  float other = 0.0f;
  std::thread worker([&] {
    seen = k::current_matmul_precision();
    Tensor y;
    if (k::onednn_matmul(filled({1, 16}, kOffGrid), filled({16, 1}, 1.0f), y)) other = y.data<float>()[0];
  });
  worker.join();
  CHECK(seen == MatmulPrecision::F32);
  CHECK(other == 16.015625f);
  CHECK(run_matmul(k::current_matmul_precision(), filled({1, 16}, kOffGrid), filled({16, 1}, 1.0f))
            .data<float>()[0] == 16.0f);
}

TEST_CASE("f32 and bf16 primitives of one shape are separate cache entries", "[unit][onednn][bf16]") {
  std::mt19937 rng(83);
  const Tensor a = canary::test::random_tensor(rng, {1, 4, 32}), b = canary::test::random_tensor(rng, {32, 8});
  k::onednn_clear_cache();
  const std::vector<float> f32 = values(run_matmul(MatmulPrecision::F32, a, b));
  const std::vector<float> bf16 = values(run_matmul(MatmulPrecision::BF16, a, b));
  CHECK(f32 != bf16);
  for (int round = 0; round < 2; ++round) {
    CHECK(values(run_matmul(MatmulPrecision::F32, a, b)) == f32);
    CHECK(values(run_matmul(MatmulPrecision::BF16, a, b)) == bf16);
  }
  k::OnednnCacheStats stats = k::onednn_cache_stats();
  CHECK(stats.misses == 2);
  CHECK(stats.hits == 4);
  CHECK(stats.size == 2);
  // Emulation on a native host is a third primitive with the same values (up to summation order).
  k::ScopedBf16Emulation emulate;
  check_sums(expected_matmul(a, b, true), run_matmul(MatmulPrecision::BF16, a, b));
  CHECK(k::onednn_cache_stats().size == (k::host_has_native_bf16() ? 3u : 2u));
}

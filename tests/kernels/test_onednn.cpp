// Differential tests of the oneDNN MatMul, Gemm and Conv kernels against the
// reference kernels, plus the primitive cache's hit/miss counting and bound.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/onednn/threading.h"
#include "kernels/reference.h"
#include "tests/kernels/random_tensors.h"

using canary::DType;
using canary::Shape;
using canary::Tensor;
using canary::test::check_close;
using canary::test::random_tensor;
namespace k = canary::kernels;

namespace {

// A random dim in [lo, hi].
std::int64_t random_dim(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

// Runs MatMul both ways on random operands of the given shapes and compares.
void check_matmul(std::mt19937& rng, const Shape& as, const Shape& bs) {
  INFO("matmul " << canary::shape_to_string(as) << " x " << canary::shape_to_string(bs));
  const Tensor a = random_tensor(rng, as), b = random_tensor(rng, bs);
  Tensor want, got;
  k::matmul(a, b, want);
  REQUIRE(k::onednn_matmul(a, b, got));
  check_close(want, got);
}

// Runs Gemm both ways and compares; returns whether oneDNN applied.
bool check_gemm(std::mt19937& rng, const k::GemmParams& p, std::int64_t m, std::int64_t kk, std::int64_t n,
                const Shape* c_shape) {
  INFO("gemm m " << m << " k " << kk << " n " << n << " transA " << p.trans_a << " transB " << p.trans_b
                 << " alpha " << p.alpha << " beta " << p.beta << " C "
                 << (c_shape ? canary::shape_to_string(*c_shape) : std::string("none")));
  const Tensor a = random_tensor(rng, p.trans_a ? Shape{kk, m} : Shape{m, kk});
  const Tensor b = random_tensor(rng, p.trans_b ? Shape{n, kk} : Shape{kk, n});
  const Tensor c = c_shape ? random_tensor(rng, *c_shape) : Tensor();
  Tensor want, got;
  k::gemm(p, a, b, c_shape ? &c : nullptr, want);
  const bool applied = k::onednn_gemm(p, a, b, c_shape ? &c : nullptr, got);
  if (applied) check_close(want, got);
  return applied;
}

// Runs Conv both ways on random x [x_shape], w [w_shape] (+ bias) and compares.
void check_conv(std::mt19937& rng, const k::ConvParams& p, const Shape& xs, const Shape& ws, bool bias) {
  INFO("conv x " << canary::shape_to_string(xs) << " w " << canary::shape_to_string(ws) << " group " << p.group
                 << " bias " << bias << " auto_pad " << int(p.auto_pad));
  const Tensor x = random_tensor(rng, xs), w = random_tensor(rng, ws);
  const Tensor b = bias ? random_tensor(rng, {ws[0]}) : Tensor();
  Tensor want, got;
  k::conv(p, x, w, bias ? &b : nullptr, want);
  REQUIRE(k::onednn_conv(p, x, w, bias ? &b : nullptr, got));
  check_close(want, got);
}

}  // namespace

TEST_CASE("onednn matmul matches the reference on fixed shapes", "[unit][differential][onednn]") {
  std::mt19937 rng(1);
  check_matmul(rng, {64, 64}, {64, 64});
  check_matmul(rng, {3, 5}, {5, 7});
  check_matmul(rng, {1, 1}, {1, 1});
  SECTION("1-D operands") {
    check_matmul(rng, {5}, {5, 4});
    check_matmul(rng, {4, 5}, {5});
    check_matmul(rng, {5}, {5});
    check_matmul(rng, {5}, {3, 5, 2});
    check_matmul(rng, {3, 2, 5}, {5});
  }
  SECTION("batch broadcasting") {
    check_matmul(rng, {2, 3, 4}, {2, 4, 5});
    check_matmul(rng, {2, 1, 3, 4}, {5, 4, 6});
    check_matmul(rng, {1, 3, 4}, {2, 4, 5});
    check_matmul(rng, {3, 4}, {2, 4, 5});
    check_matmul(rng, {2, 3, 3, 4}, {4, 5});
  }
  SECTION("empty batch and empty rows") {
    check_matmul(rng, {0, 3, 4}, {4, 5});
    check_matmul(rng, {2, 0, 4}, {4, 3});
    check_matmul(rng, {3, 4}, {4, 0});
  }
}

TEST_CASE("onednn matmul matches the reference on seeded random shapes", "[unit][differential][onednn]") {
  std::mt19937 rng(42);
  for (int iter = 0; iter < 60; ++iter) {
    const std::int64_t m = random_dim(rng, 1, 17), kk = random_dim(rng, 1, 33), n = random_dim(rng, 1, 19);
    const int batch_rank = static_cast<int>(random_dim(rng, 0, 3));
    Shape as, bs;
    for (int i = 0; i < batch_rank; ++i) {
      const std::int64_t d = random_dim(rng, 1, 3);
      const int which = static_cast<int>(random_dim(rng, 0, 2));  // 0: both d, 1: a is 1, 2: b is 1
      as.push_back(which == 1 ? 1 : d);
      bs.push_back(which == 2 ? 1 : d);
    }
    if (random_dim(rng, 0, 3) == 0 && !as.empty()) as.erase(as.begin());  // ranks differ
    as.insert(as.end(), {m, kk});
    bs.insert(bs.end(), {kk, n});
    if (random_dim(rng, 0, 5) == 0) as = {kk};  // 1-D a
    if (random_dim(rng, 0, 5) == 0) bs = {kk};  // 1-D b
    check_matmul(rng, as, bs);
  }
}

TEST_CASE("onednn matmul declines what it must not run", "[unit][onednn]") {
  std::mt19937 rng(3);
  Tensor y;
  SECTION("f64 stays on the reference kernel") {
    CHECK_FALSE(k::onednn_matmul(random_tensor(rng, {2, 3}, DType::F64), random_tensor(rng, {3, 2}, DType::F64), y));
  }
  SECTION("mismatched inner dims are left to the reference error") {
    CHECK_FALSE(k::onednn_matmul(random_tensor(rng, {2, 3}), random_tensor(rng, {4, 2}), y));
  }
  SECTION("incompatible batch dims") {
    CHECK_FALSE(k::onednn_matmul(random_tensor(rng, {2, 2, 3}), random_tensor(rng, {3, 3, 2}), y));
  }
  SECTION("scalars and an empty inner dim") {
    CHECK_FALSE(k::onednn_matmul(Tensor::scalar(1.0f), random_tensor(rng, {3}), y));
    CHECK_FALSE(k::onednn_matmul(random_tensor(rng, {2, 0}), random_tensor(rng, {0, 3}), y));
  }
  CHECK_FALSE(y.defined());
}

TEST_CASE("onednn gemm matches the reference for transposes, alpha, beta and C", "[unit][differential][onednn]") {
  std::mt19937 rng(7);
  const std::int64_t m = 5, kk = 7, n = 6;
  const std::vector<Shape> c_shapes{{}, {1}, {n}, {1, n}, {m, 1}, {m, n}, {1, 1}};
  int applied = 0, total = 0;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (double alpha : {1.0, 0.5})
        for (double beta : {1.0, 2.0, 0.0}) {
          k::GemmParams p{alpha, beta, ta != 0, tb != 0};
          applied += check_gemm(rng, p, m, kk, n, nullptr);
          ++total;
          for (const Shape& cs : c_shapes) {
            applied += check_gemm(rng, p, m, kk, n, &cs);
            ++total;
          }
        }
  // Every case above is expressible in oneDNN.
  CHECK(applied == total);
}

TEST_CASE("onednn gemm covers seeded random shapes and empty outputs", "[unit][differential][onednn]") {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 30; ++iter) {
    const std::int64_t m = random_dim(rng, 1, 40), kk = random_dim(rng, 1, 40), n = random_dim(rng, 1, 40);
    k::GemmParams p{0.25 + random_dim(rng, 0, 4) * 0.5, 0.5 * random_dim(rng, 0, 3), random_dim(rng, 0, 1) == 1,
                    random_dim(rng, 0, 1) == 1};
    const Shape cs{n};
    CHECK(check_gemm(rng, p, m, kk, n, &cs));
  }
  const Shape empty_c{0, 4};
  CHECK(check_gemm(rng, k::GemmParams{}, 0, 3, 4, &empty_c));
  Tensor y;
  const Tensor bad_c = random_tensor(rng, {3, 4});  // does not broadcast to [5, 4]
  CHECK_FALSE(k::onednn_gemm(k::GemmParams{}, random_tensor(rng, {5, 2}), random_tensor(rng, {2, 4}), &bad_c, y));
  CHECK_FALSE(y.defined());
}

TEST_CASE("onednn conv matches the reference in 1-D and 2-D", "[unit][differential][onednn]") {
  std::mt19937 rng(5);
  k::ConvParams p;
  SECTION("plain, with and without bias") {
    check_conv(rng, p, {2, 3, 10}, {4, 3, 3}, true);
    check_conv(rng, p, {2, 3, 7, 9}, {4, 3, 3, 2}, false);
  }
  SECTION("strides, dilations and asymmetric pads") {
    p.strides = {2};
    p.dilations = {3};
    p.pads = {2, 1};
    check_conv(rng, p, {1, 2, 17}, {3, 2, 3}, true);
    p.strides = {2, 3};
    p.dilations = {2, 1};
    p.pads = {1, 0, 0, 2};
    check_conv(rng, p, {2, 2, 11, 12}, {5, 2, 3, 3}, true);
  }
  SECTION("groups and depthwise") {
    p.group = 2;
    check_conv(rng, p, {2, 4, 9}, {6, 2, 3}, true);
    check_conv(rng, p, {1, 4, 6, 7}, {4, 2, 3, 3}, false);
    p.group = 6;
    p.pads = {1, 1, 1, 1};
    check_conv(rng, p, {2, 6, 8, 8}, {6, 1, 3, 3}, true);
    p.pads = {1, 1};
    check_conv(rng, p, {2, 6, 12}, {12, 1, 3}, true);
  }
  SECTION("SAME and VALID auto_pad") {
    for (k::AutoPad mode : {k::AutoPad::SameUpper, k::AutoPad::SameLower, k::AutoPad::Valid}) {
      p.auto_pad = mode;
      p.strides = {2};
      check_conv(rng, p, {1, 3, 10}, {2, 3, 4}, true);
      p.strides = {2, 3};
      p.dilations = {1, 2};
      check_conv(rng, p, {1, 3, 9, 10}, {2, 3, 2, 3}, true);
      p.dilations.clear();
    }
  }
  SECTION("empty batch") {
    check_conv(rng, p, {0, 3, 10}, {4, 3, 3}, true);
    check_conv(rng, p, {0, 3, 5, 5}, {4, 3, 3, 3}, false);
  }
}

TEST_CASE("onednn conv matches the reference on seeded random geometries", "[unit][differential][onednn]") {
  std::mt19937 rng(99);
  for (int iter = 0; iter < 40; ++iter) {
    const bool two_d = random_dim(rng, 0, 1) == 1;
    const std::int64_t group = random_dim(rng, 1, 3);
    const std::int64_t cpg = random_dim(rng, 1, 3), mpg = random_dim(rng, 1, 3);
    k::ConvParams p;
    p.group = group;
    p.auto_pad = static_cast<k::AutoPad>(random_dim(rng, 0, 3));
    Shape xs{random_dim(rng, 1, 2), group * cpg}, ws{group * mpg, cpg};
    for (int axis = 0; axis < (two_d ? 2 : 1); ++axis) {
      const std::int64_t kernel = random_dim(rng, 1, 3), dilation = random_dim(rng, 1, 2);
      xs.push_back(random_dim(rng, (kernel - 1) * dilation + 1, 12));
      ws.push_back(kernel);
      p.strides.push_back(random_dim(rng, 1, 3));
      p.dilations.push_back(dilation);
    }
    for (std::size_t i = 0; i < 2 * (two_d ? 2 : 1); ++i) p.pads.push_back(random_dim(rng, 0, 2));
    if (p.auto_pad != k::AutoPad::NotSet) p.pads.clear();
    check_conv(rng, p, xs, ws, random_dim(rng, 0, 1) == 1);
  }
}

TEST_CASE("onednn conv declines invalid geometry and f64", "[unit][onednn]") {
  std::mt19937 rng(13);
  Tensor y;
  k::ConvParams p;
  CHECK_FALSE(k::onednn_conv(p, random_tensor(rng, {1, 3, 5}, DType::F64), random_tensor(rng, {2, 3, 3}, DType::F64),
                             nullptr, y));
  CHECK_FALSE(k::onednn_conv(p, random_tensor(rng, {1, 3, 2}), random_tensor(rng, {2, 3, 3}), nullptr, y));
  CHECK_FALSE(k::onednn_conv(p, random_tensor(rng, {1, 4, 5}), random_tensor(rng, {2, 3, 3}), nullptr, y));
  CHECK_FALSE(k::onednn_conv(p, random_tensor(rng, {1, 3, 5, 5, 5}), random_tensor(rng, {2, 3, 1, 1, 1}), nullptr, y));
  p.pads = {1};
  CHECK_FALSE(k::onednn_conv(p, random_tensor(rng, {1, 3, 5}), random_tensor(rng, {2, 3, 3}), nullptr, y));
  // Hostile attributes whose arithmetic overflows int64 are left to the reference error.
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  p.pads = {huge, huge};
  CHECK_FALSE(k::onednn_conv(p, random_tensor(rng, {1, 3, 5}), random_tensor(rng, {2, 3, 3}), nullptr, y));
  p.pads.clear();
  p.dilations = {huge / 2};
  p.auto_pad = k::AutoPad::SameUpper;
  CHECK_FALSE(k::onednn_conv(p, random_tensor(rng, {1, 3, 5}), random_tensor(rng, {2, 3, 3}), nullptr, y));
  p.dilations.clear();
  p.auto_pad = k::AutoPad::NotSet;
  p.group = huge / 2;
  CHECK_FALSE(k::onednn_conv(p, random_tensor(rng, {1, 4, 5}), random_tensor(rng, {4, 2, 3}), nullptr, y));
  CHECK_FALSE(y.defined());
}

TEST_CASE("onednn primitive cache hits on a repeated shape and misses on a new one", "[unit][onednn]") {
  std::mt19937 rng(17);
  k::onednn_clear_cache();
  Tensor y;
  const Tensor a = random_tensor(rng, {4, 6}), b = random_tensor(rng, {6, 3});
  REQUIRE(k::onednn_matmul(a, b, y));
  CHECK(k::onednn_cache_stats().misses == 1);
  CHECK(k::onednn_cache_stats().hits == 0);
  REQUIRE(k::onednn_matmul(random_tensor(rng, {4, 6}), random_tensor(rng, {6, 3}), y));
  CHECK(k::onednn_cache_stats().hits == 1);
  // A new row count runs on the same shape-class primitive (rows bound per call).
  const Tensor a5 = random_tensor(rng, {5, 6});
  REQUIRE(k::onednn_matmul(a5, b, y));
  CHECK(k::onednn_cache_stats().misses == 1);
  CHECK(k::onednn_cache_stats().shape_class_calls == 3);
  Tensor want;
  k::matmul(a5, b, want);
  check_close(want, y);
  // Same shapes but another op kind or attribute is a different primitive.
  k::GemmParams p;
  p.alpha = 2.0;
  REQUIRE(k::onednn_gemm(p, a, b, nullptr, y));
  p.alpha = 3.0;
  REQUIRE(k::onednn_gemm(p, a, b, nullptr, y));
  CHECK(k::onednn_cache_stats().misses == 3);
  CHECK(k::onednn_cache_stats().size == 3);
  CHECK(k::onednn_cache_stats().calls == 5);
  k::onednn_clear_cache();
}

TEST_CASE("onednn primitive cache keeps at most its capacity, least recently used out first", "[unit][onednn]") {
  std::mt19937 rng(19);
  k::onednn_clear_cache();
  CHECK(k::onednn_cache_stats().capacity == k::kOnednnCacheCapacity);
  k::onednn_set_cache_capacity(4);
  Tensor y;
  // Gemm with A transposed has no shape class (A's row stride is M): one
  // LRU entry per row count.
  k::GemmParams p;
  p.trans_a = true;
  const Tensor b = random_tensor(rng, {3, 2});
  for (std::int64_t m = 1; m <= 10; ++m) REQUIRE(k::onednn_gemm(p, random_tensor(rng, {3, m}), b, nullptr, y));
  const k::OnednnCacheStats s = k::onednn_cache_stats();
  CHECK(s.size == 4);
  CHECK(s.misses == 10);
  CHECK(s.evictions == 6);
  CHECK(s.shape_class_calls == 0);
  REQUIRE(k::onednn_gemm(p, random_tensor(rng, {3, 7}), b, nullptr, y));  // m = 7..10 are kept
  CHECK(k::onednn_cache_stats().hits == 1);
  REQUIRE(k::onednn_gemm(p, random_tensor(rng, {3, 6}), b, nullptr, y));  // evicted
  CHECK(k::onednn_cache_stats().misses == 11);
  CHECK(k::onednn_cache_stats().size == 4);
  k::onednn_set_cache_capacity(k::kOnednnCacheCapacity);
  k::onednn_clear_cache();
}

TEST_CASE("onednn shape classes: one primitive serves every row count of Gemm, MatMul and MatMul + bias",
          "[unit][differential][onednn]") {
  std::mt19937 rng(23);
  k::onednn_clear_cache();
  const Tensor w = random_tensor(rng, {24, 16}), bias = random_tensor(rng, {16}), w3 = random_tensor(rng, {24, 16});
  k::GemmParams gemm;
  gemm.trans_b = true;
  const Tensor wt = random_tensor(rng, {16, 24});
  k::Epilogue relu;
  relu.append({k::EpilogueOp::Relu});
  for (std::int64_t rows : {1, 2, 7, 33, 2, 64}) {
    INFO("rows " << rows);
    const Tensor a = random_tensor(rng, {rows, 24});
    Tensor got, want;
    REQUIRE(k::onednn_gemm(gemm, a, wt, &bias, got));
    k::gemm(gemm, a, wt, &bias, want);
    check_close(want, got);
    // A rank-3 A whose rows are [2, rows]: one 2-D product.
    const Tensor a3 = random_tensor(rng, {2, rows, 24});
    REQUIRE(k::onednn_matmul(a3, w3, got));
    k::matmul(a3, w3, want);
    check_close(want, got);
    REQUIRE(k::onednn_matmul_add(a, w, bias, got, relu));
    Tensor product;
    k::matmul(a, w, product);
    k::binary(k::BinaryOp::Add, product, bias, want);
    const Tensor sum = want;
    k::unary(k::UnaryOp::Relu, sum, want);
    check_close(want, got);
  }
  // Three classes made once each, 18 calls on them, nothing in the LRU.
  const k::OnednnCacheStats s = k::onednn_cache_stats();
  CHECK(s.misses == 3);
  CHECK(s.shape_class_calls == 18);
  CHECK(s.size == 3);
  k::onednn_clear_cache();
}

TEST_CASE("onednn threads: small work runs on one thread, large work on the session's", "[unit][onednn]") {
  const k::OnednnThreadScope two_threads(2);
  REQUIRE(k::onednn::current_threads() == 2);
  {
    const k::onednn::SerialWhenSmall small(k::onednn::kParallelMinFlops / 2);
    CHECK(k::onednn::current_threads() == 1);
  }
  CHECK(k::onednn::current_threads() == 2);
  {
    const k::onednn::SerialWhenSmall large(k::onednn::kParallelMinFlops * 2);
    CHECK(k::onednn::current_threads() == 2);
  }
  {
    const k::onednn::SerialWhenSmall few(1000.0, k::onednn::kParallelMinElements);
    CHECK(k::onednn::current_threads() == 1);
  }
  CHECK(k::onednn::current_threads() == 2);
}

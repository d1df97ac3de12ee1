// Tests of the reference MatMul and Gemm kernels against hand-computed values.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "tests/kernels/tensor_checks.h"

using canary::DType;
using canary::Error;
using canary::ErrorKind;
using canary::Shape;
using canary::Tensor;
namespace k = canary::kernels;

namespace {

const std::vector<float> kA23{1, 2, 3, 4, 5, 6};     // [[1,2,3],[4,5,6]]
const std::vector<float> kB32{7, 8, 9, 10, 11, 12};  // [[7,8],[9,10],[11,12]]
const std::vector<double> kAB{58, 64, 139, 154};     // a * b by hand

}  // namespace

TEST_CASE("matmul of [2,3] and [3,2]", "[unit][matmul]") {
  Tensor y;
  k::matmul(Tensor::from_vector(kA23, {2, 3}), Tensor::from_vector(kB32, {3, 2}), y);
  CHECK(y.dtype() == DType::F32);
  canary::test::check_values(y, {2, 2}, kAB);
}

TEST_CASE("matmul in f64 gives the same exact products", "[unit][matmul]") {
  const std::vector<double> a(kA23.begin(), kA23.end()), b(kB32.begin(), kB32.end());
  Tensor y;
  k::matmul(Tensor::from_vector(a, {2, 3}), Tensor::from_vector(b, {3, 2}), y);
  CHECK(y.dtype() == DType::F64);
  canary::test::check_values(y, {2, 2}, kAB, 0.0);
}

TEST_CASE("matmul promotes and squeezes 1-D operands", "[unit][matmul]") {
  Tensor y;
  SECTION("vector times matrix") {
    k::matmul(Tensor::from_vector<float>({1, 2, 3}, {3}), Tensor::from_vector(kB32, {3, 2}), y);
    canary::test::check_values(y, {2}, {58, 64});
  }
  SECTION("matrix times vector") {
    k::matmul(Tensor::from_vector(kA23, {2, 3}), Tensor::from_vector<float>({1, 1, 1}, {3}), y);
    canary::test::check_values(y, {2}, {6, 15});
  }
  SECTION("vector times vector is a scalar") {
    k::matmul(Tensor::from_vector<float>({1, 2, 3}, {3}), Tensor::from_vector<float>({4, 5, 6}, {3}), y);
    canary::test::check_values(y, {}, {32});
  }
  SECTION("vector times a batch of matrices") {
    // b[j] = [[s, 0], [0, s], [1, 1]] with s = j + 1; [1, 2, 3] * b[j] = [s + 3, 2s + 3].
    k::matmul(Tensor::from_vector<float>({1, 2, 3}, {3}),
              Tensor::from_vector<float>({1, 0, 0, 1, 1, 1, 2, 0, 0, 2, 1, 1}, {2, 3, 2}), y);
    canary::test::check_values(y, {2, 2}, {4, 5, 5, 7});
  }
}

TEST_CASE("matmul broadcasts batch dims [2,1,2,3] x [3,3,4]", "[unit][matmul]") {
  // a[i] = (i + 1) * [[1,0,0],[0,1,0]] selects rows 0 and 1 of each b[j];
  // b[j][r][c] = 100 j + 10 r + c. So y[i][j][r][c] = (i + 1) * (100 j + 10 r + c).
  std::vector<float> a(2 * 2 * 3, 0.0f);
  for (int i = 0; i < 2; ++i) {
    a[i * 6 + 0] = float(i + 1);
    a[i * 6 + 4] = float(i + 1);
  }
  std::vector<float> b;
  for (int j = 0; j < 3; ++j)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) b.push_back(float(100 * j + 10 * r + c));
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 4; ++c) want.push_back((i + 1) * (100.0 * j + 10 * r + c));
  Tensor y;
  k::matmul(Tensor::from_vector(a, {2, 1, 2, 3}), Tensor::from_vector(b, {3, 3, 4}), y);
  canary::test::check_values(y, {2, 3, 2, 4}, want);
}

TEST_CASE("matmul with an empty inner dimension gives zeros", "[unit][matmul]") {
  Tensor y;
  k::matmul(Tensor::empty(DType::F32, {2, 0}), Tensor::empty(DType::F32, {0, 3}), y);
  canary::test::check_values(y, {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST_CASE("matmul rejects mismatched K, bad batch dims and dtypes", "[unit][matmul]") {
  Tensor y;
  canary::test::require_error(
      [&] {
        k::matmul(Tensor::empty(DType::F32, {2, 3}), Tensor::empty(DType::F32, {4, 2}), y);
      },
      ErrorKind::Shape, {"MatMul", "[2, 3]", "[4, 2]"});
  canary::test::require_error(
      [&] {
        k::matmul(Tensor::empty(DType::F32, {2, 2, 3}), Tensor::empty(DType::F32, {3, 3, 2}), y);
      },
      ErrorKind::Shape, {});
  canary::test::require_error(
      [&] {
        k::matmul(Tensor::empty(DType::I64, {2, 3}), Tensor::empty(DType::I64, {3, 2}), y);
      },
      ErrorKind::Input, {"MatMul", "i64"});
  canary::test::require_error(
      [&] {
        k::matmul(Tensor::empty(DType::F32, {2, 3}), Tensor::empty(DType::F64, {3, 2}), y);
      },
      ErrorKind::Input, {"MatMul"});
  canary::test::require_error(
      [&] {
        k::matmul(Tensor::scalar<float>(1), Tensor::empty(DType::F32, {1, 2}), y);
      },
      ErrorKind::Shape, {"MatMul"});
}

TEST_CASE("gemm with and without transposes", "[unit][gemm]") {
  const Tensor a = Tensor::from_vector(kA23, {2, 3});
  const Tensor b = Tensor::from_vector(kB32, {3, 2});
  const Tensor a_t = Tensor::from_vector<float>({1, 4, 2, 5, 3, 6}, {3, 2});
  const Tensor b_t = Tensor::from_vector<float>({7, 9, 11, 8, 10, 12}, {2, 3});
  Tensor y;
  k::GemmParams p;
  k::gemm(p, a, b, nullptr, y);
  canary::test::check_values(y, {2, 2}, kAB);
  p.trans_a = true;
  k::gemm(p, a_t, b, nullptr, y);
  canary::test::check_values(y, {2, 2}, kAB);
  p.trans_b = true;
  k::gemm(p, a_t, b_t, nullptr, y);
  canary::test::check_values(y, {2, 2}, kAB);
  p.trans_a = false;
  k::gemm(p, a, b_t, nullptr, y);
  canary::test::check_values(y, {2, 2}, kAB);
}

TEST_CASE("gemm applies alpha, beta and broadcasts c", "[unit][gemm]") {
  const Tensor a = Tensor::from_vector(kA23, {2, 3});
  const Tensor b = Tensor::from_vector(kB32, {3, 2});
  Tensor y;
  k::GemmParams p;
  p.alpha = 2.0;
  p.beta = 0.5;
  SECTION("c of shape [N]") {
    const Tensor c = Tensor::from_vector<float>({10, 20}, {2});
    k::gemm(p, a, b, &c, y);
    canary::test::check_values(y, {2, 2}, {121, 138, 283, 318});
  }
  SECTION("c of shape [M, 1]") {
    const Tensor c = Tensor::from_vector<float>({2, 4}, {2, 1});
    k::gemm(p, a, b, &c, y);
    canary::test::check_values(y, {2, 2}, {117, 129, 280, 310});
  }
  SECTION("scalar c") {
    const Tensor c = Tensor::scalar<float>(6);
    k::gemm(p, a, b, &c, y);
    canary::test::check_values(y, {2, 2}, {119, 131, 281, 311});
  }
  SECTION("c of shape [M, N] in f64") {
    const std::vector<double> av(kA23.begin(), kA23.end()), bv(kB32.begin(), kB32.end());
    const Tensor c = Tensor::from_vector<double>({1, 2, 3, 4}, {2, 2});
    k::gemm(p, Tensor::from_vector(av, {2, 3}), Tensor::from_vector(bv, {3, 2}), &c, y);
    CHECK(y.dtype() == DType::F64);
    canary::test::check_values(y, {2, 2}, {116.5, 129, 279.5, 310}, 0.0);
  }
}

TEST_CASE("gemm rejects bad ranks, K and c shapes", "[unit][gemm]") {
  const Tensor a = Tensor::from_vector(kA23, {2, 3});
  const Tensor b = Tensor::from_vector(kB32, {3, 2});
  Tensor y;
  k::GemmParams p;
  const Tensor c3 = Tensor::empty(DType::F32, {3});
  canary::test::require_error([&] { k::gemm(p, a, b, &c3, y); }, ErrorKind::Shape, {"Gemm", "'C'", "[3]", "[2, 2]"});
  const Tensor c_big = Tensor::empty(DType::F32, {1, 2, 2});
  canary::test::require_error([&] { k::gemm(p, a, b, &c_big, y); }, ErrorKind::Shape, {"Gemm"});
  canary::test::require_error([&] { k::gemm(p, Tensor::empty(DType::F32, {1, 2, 3}), b, nullptr, y); }, ErrorKind::Shape, {"Gemm"});
  p.trans_b = true;
  canary::test::require_error([&] { k::gemm(p, a, b, nullptr, y); }, ErrorKind::Shape, {"Gemm", "[2, 3]", "[3, 2]"});
  canary::test::require_error(
      [&] {
        k::gemm(k::GemmParams{}, Tensor::empty(DType::I32, {2, 3}), Tensor::empty(DType::I32, {3, 2}), nullptr, y);
      },
      ErrorKind::Input, {"Gemm", "i32"});
}

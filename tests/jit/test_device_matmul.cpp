// make_matmul_call: which MatMul and Gemm operands one device product
// covers, with which dims and strides, and which run the CPU kernel.
#include <catch2/catch.hpp>

#include "canary/tensor.h"
#include "jit/device_matmul.h"

using namespace canary;
using namespace canary::jit;

namespace {

Tensor f32(Shape shape) { return Tensor::empty(DType::F32, shape); }

vm::ContractionInfo matmul() { return vm::ContractionInfo{}; }

vm::ContractionInfo gemm(const kernels::GemmParams& p) {
  vm::ContractionInfo info;
  info.kind = vm::ContractionInfo::Kind::Gemm;
  info.gemm = &p;
  return info;
}

}  // namespace

TEST_CASE("device matmul: MatMul folds, broadcasts or batches; other batch shapes stay on the CPU",
          "[unit][jit][device]") {
  MatmulCall c;
  Shape out;
  SECTION("2-D by 2-D") {
    REQUIRE(make_matmul_call(matmul(), f32({5, 3}), f32({3, 7}), nullptr, c, out));
    CHECK(out == Shape{5, 7});
    CHECK((c.batch == 1 && c.m == 5 && c.n == 7 && c.k == 3));
    CHECK((c.stride_a == 0 && c.stride_b == 0 && !c.trans_a && !c.trans_b && c.bias == nullptr));
  }
  SECTION("a 2-D B folds A's batch dims into rows") {
    REQUIRE(make_matmul_call(matmul(), f32({2, 4, 5, 3}), f32({3, 7}), nullptr, c, out));
    CHECK(out == Shape{2, 4, 5, 7});
    CHECK((c.batch == 1 && c.m == 40 && c.n == 7 && c.k == 3));
  }
  SECTION("a 2-D A is broadcast over B's batch") {
    REQUIRE(make_matmul_call(matmul(), f32({5, 3}), f32({6, 3, 7}), nullptr, c, out));
    CHECK(out == Shape{6, 5, 7});
    CHECK((c.batch == 6 && c.m == 5 && c.stride_a == 0 && c.stride_b == 21));
  }
  SECTION("equal batch dims batch") {
    REQUIRE(make_matmul_call(matmul(), f32({2, 3, 5, 4}), f32({2, 3, 4, 7}), nullptr, c, out));
    CHECK(out == Shape{2, 3, 5, 7});
    CHECK((c.batch == 6 && c.stride_a == 20 && c.stride_b == 28));
  }
  SECTION("the CPU kernel's cases") {
    CHECK_FALSE(make_matmul_call(matmul(), f32({2, 5, 3}), f32({1, 3, 7}), nullptr, c, out));  // broadcast batch
    CHECK_FALSE(make_matmul_call(matmul(), f32({3}), f32({3, 7}), nullptr, c, out));           // 1-D
    CHECK_FALSE(make_matmul_call(matmul(), f32({5, 3}), f32({4, 7}), nullptr, c, out));        // k mismatch
    CHECK_FALSE(make_matmul_call(matmul(), f32({0, 3}), f32({3, 7}), nullptr, c, out));        // empty
    CHECK_FALSE(make_matmul_call(matmul(), f32({5, 0}), f32({0, 7}), nullptr, c, out));
    CHECK_FALSE(
        make_matmul_call(matmul(), Tensor::empty(DType::F64, Shape{5, 3}), f32({3, 7}), nullptr, c, out));  // not f32
    CHECK_FALSE(make_matmul_call(matmul(), Tensor(), f32({3, 7}), nullptr, c, out));                   // undefined
  }
}

TEST_CASE("device matmul: Gemm takes transposes, alpha and one bias row added once", "[unit][jit][device]") {
  MatmulCall c;
  Shape out;
  const Tensor a = f32({3, 5}), b = f32({7, 3});  // A stored [K, M], B stored [N, K]
  kernels::GemmParams p;
  p.alpha = 0.5;
  p.trans_a = true;
  p.trans_b = true;
  const Tensor row = f32({7}), row2 = f32({1, 7}), full = f32({5, 7}), scalar = f32({1});
  REQUIRE(make_matmul_call(gemm(p), a, b, &row, c, out));
  CHECK(out == Shape{5, 7});
  CHECK((c.m == 5 && c.n == 7 && c.k == 3 && c.trans_a && c.trans_b && c.alpha == 0.5f));
  CHECK(c.bias == row.data<float>());
  REQUIRE(make_matmul_call(gemm(p), a, b, &row2, c, out));
  CHECK(c.bias == row2.data<float>());
  REQUIRE(make_matmul_call(gemm(p), a, b, nullptr, c, out));
  CHECK(c.bias == nullptr);
  CHECK_FALSE(make_matmul_call(gemm(p), a, b, &full, c, out));    // a full C
  CHECK_FALSE(make_matmul_call(gemm(p), a, b, &scalar, c, out));  // broadcast scalar
  p.beta = 2.0;
  CHECK_FALSE(make_matmul_call(gemm(p), a, b, &row, c, out));
  p.beta = 0.0;  // the CPU's 0 * C keeps C's NaN and Inf
  CHECK_FALSE(make_matmul_call(gemm(p), a, b, &row, c, out));
  CHECK(make_matmul_call(gemm(p), a, b, nullptr, c, out));
  p.trans_b = false;  // B [7, 3] as [K, N]: K 7 against A's 3
  CHECK_FALSE(make_matmul_call(gemm(p), a, b, nullptr, c, out));
}

TEST_CASE("device matmul: a Conv is never a device product", "[unit][jit][device]") {
  vm::ContractionInfo conv;
  conv.kind = vm::ContractionInfo::Kind::Conv;
  MatmulCall c;
  Shape out;
  CHECK_FALSE(make_matmul_call(conv, f32({5, 3}), f32({3, 7}), nullptr, c, out));
}

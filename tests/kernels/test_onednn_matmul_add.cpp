// oneDNN MatMul with a bias or residual Add as a binary post-op
// (onednn_matmul_add): the same values as the product and then the add,
// with and without an epilogue after it, and the cases it refuses so the
// caller runs them apart (an addend that would grow the result, 1-D
// operands, other dtypes, a NaN before a Relu).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "tests/kernels/random_tensors.h"

using canary::DType;
using canary::Shape;
using canary::Tensor;
using canary::test::random_tensor;
namespace k = canary::kernels;

namespace {

// product + addend (NumPy broadcast of the addend into the product), then
// max(., 0) when relu: what the separate kernels compute in f32.
Tensor separately(const Tensor& a, const Tensor& b, const Tensor& addend, bool relu) {
  Tensor product;
  REQUIRE(k::onednn_matmul(a, b, product));
  Tensor out = product.clone();
  const Shape& ps = product.shape();
  const Shape& as = addend.shape();
  std::vector<std::int64_t> strides(ps.size(), 0);
  std::int64_t s = 1;
  for (std::size_t i = 0; i < as.size(); ++i) {
    const std::size_t d = ps.size() - 1 - i, ad = as.size() - 1 - i;
    strides[d] = as[ad] == 1 ? 0 : s;
    s *= as[ad];
  }
  std::vector<std::int64_t> index(ps.size(), 0);
  for (std::int64_t e = 0; e < product.numel(); ++e) {
    std::int64_t rest = e, at = 0;
    for (std::size_t d = ps.size(); d-- > 0;) {
      index[d] = rest % ps[d];
      rest /= ps[d];
      at += index[d] * strides[d];
    }
    float v = product.data<float>()[e] + addend.data<float>()[at];
    if (relu) v = v < 0.0f ? 0.0f : v;
    out.data<float>()[e] = v;
  }
  return out;
}

bool same_values(const Tensor& x, const Tensor& y) {
  if (x.shape() != y.shape()) return false;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const float p = x.data<float>()[i], q = y.data<float>()[i];
    if (std::isnan(p) != std::isnan(q)) return false;
    if (!std::isnan(p) && std::abs(p - q) > 1e-5f * std::max(1.0f, std::abs(q))) return false;
  }
  return true;
}

k::Epilogue relu() {
  k::Epilogue e;
  e.append({k::EpilogueOp::Relu});
  return e;
}

}  // namespace

TEST_CASE("onednn_matmul_add: bias, residual and batched addends match the product then the add",
          "[unit][kernels][onednn]") {
  std::mt19937 rng(5);
  struct Case {
    Shape a, b, addend;
  };
  for (const Case& c : {Case{{64, 32}, {32, 48}, {48}}, Case{{64, 32}, {32, 48}, {64, 48}},
                        Case{{3, 20, 16}, {16, 24}, {24}}, Case{{3, 20, 16}, {3, 16, 24}, {3, 20, 24}},
                        Case{{3, 20, 16}, {16, 24}, {1, 20, 1}}, Case{{8, 16}, {16, 8}, {1, 1}}}) {
    INFO(canary::shape_to_string(c.a) << " x " << canary::shape_to_string(c.b) << " + "
                                      << canary::shape_to_string(c.addend));
    const Tensor a = random_tensor(rng, c.a), b = random_tensor(rng, c.b), add = random_tensor(rng, c.addend);
    for (const bool with_relu : {false, true}) {
      Tensor y;
      REQUIRE(k::onednn_matmul_add(a, b, add, y, with_relu ? relu() : k::Epilogue{}));
      CHECK(same_values(y, separately(a, b, add, with_relu)));
    }
  }
}

TEST_CASE("onednn_matmul_add: what it leaves to the separate kernels", "[unit][kernels][onednn]") {
  std::mt19937 rng(6);
  const Tensor a = random_tensor(rng, {16, 8}), b = random_tensor(rng, {8, 4});
  Tensor y;
  // An addend that would broadcast the product bigger, or of a dim that does not match.
  CHECK_FALSE(k::onednn_matmul_add(a, b, random_tensor(rng, {2, 16, 4}), y));
  CHECK_FALSE(k::onednn_matmul_add(a, b, random_tensor(rng, {3}), y));
  // 1-D operands (the product drops a dim), and other dtypes.
  CHECK_FALSE(k::onednn_matmul_add(random_tensor(rng, {8}), b, random_tensor(rng, {4}), y));
  CHECK_FALSE(k::onednn_matmul_add(a, b, random_tensor(rng, {4}, DType::F64), y));
  // A NaN in the addend before a Relu, which oneDNN's max with 0 would turn into 0.
  Tensor nan_bias = random_tensor(rng, {4});
  nan_bias.data<float>()[1] = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(k::onednn_matmul_add(a, b, nan_bias, y, relu()));
  // Without the Relu the NaN simply flows, as in the reference.
  REQUIRE(k::onednn_matmul_add(a, b, nan_bias, y));
  CHECK(same_values(y, separately(a, b, nan_bias, false)));
}

// Channels-last convolution and pooling (Conv's and pooling's channels_last,
// set by graph/passes/channels_last.cpp) on oneDNN and on the reference
// kernels, against the channels-first reference with explicit transposes;
// and the oneDNN Transpose that moves tensors across a region's edge.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/reference.h"
#include "tests/kernels/random_tensors.h"

using canary::DType;
using canary::Shape;
using canary::Tensor;
using canary::test::check_close;
using canary::test::random_tensor;
namespace k = canary::kernels;

namespace {

const std::vector<std::int64_t> kToLast{0, 2, 3, 1}, kToFirst{0, 3, 1, 2};

Tensor transposed(const Tensor& x, const std::vector<std::int64_t>& perm) {
  Tensor y;
  k::transpose(perm, x, y);
  return y;
}

// y = conv(x) computed channels-first, returned channels-last.
Tensor conv_reference(const k::ConvParams& p, const Tensor& x_last, const Tensor& w, const Tensor* b) {
  Tensor y;
  k::conv(p, transposed(x_last, kToFirst), w, b, y);
  return transposed(y, kToLast);
}

}  // namespace

TEST_CASE("channels-last Conv on oneDNN and on the reference matches the channels-first reference",
          "[unit][differential][onednn]") {
  std::mt19937 rng(77);
  struct Case {
    std::int64_t n, c, h, w, m, k, stride, pad, group;
  };
  for (const Case& c : {Case{2, 3, 9, 7, 8, 3, 1, 1, 1}, Case{1, 16, 8, 8, 32, 1, 1, 0, 1},
                        Case{2, 12, 10, 10, 12, 3, 2, 1, 12}, Case{3, 8, 5, 6, 4, 3, 1, 0, 2}}) {
    INFO("n " << c.n << " c " << c.c << " m " << c.m << " k " << c.k << " group " << c.group);
    const Tensor x = random_tensor(rng, {c.n, c.h, c.w, c.c});
    const Tensor w = random_tensor(rng, {c.m, c.c / c.group, c.k, c.k});
    const Tensor b = random_tensor(rng, {c.m});
    k::ConvParams first;
    first.strides = {c.stride, c.stride};
    first.pads = {c.pad, c.pad, c.pad, c.pad};
    first.group = c.group;
    const Tensor want = conv_reference(first, x, w, &b);
    k::ConvParams last = first;
    last.channels_last = true;
    Tensor reference, onednn;
    k::conv(last, x, w, &b, reference);
    check_close(want, reference);
    for (bool constant : {true, false}) {
      REQUIRE(k::onednn_conv(last, x, w, &b, onednn, constant));
      CHECK(onednn.shape() == want.shape());
      check_close(want, onednn);
    }
  }
}

TEST_CASE("channels-last pooling on oneDNN and on the reference matches the channels-first reference",
          "[unit][differential][onednn]") {
  std::mt19937 rng(78);
  const Tensor x = random_tensor(rng, {2, 9, 8, 5});
  for (k::PoolOp op : {k::PoolOp::Max, k::PoolOp::Average}) {
    k::PoolParams first;
    first.op = op;
    first.kernel_shape = {3, 2};
    first.strides = {2, 2};
    first.pads = {1, 0, 1, 0};
    Tensor y;
    k::pool(first, transposed(x, kToFirst), y);
    const Tensor want = transposed(y, kToLast);
    k::PoolParams last = first;
    last.channels_last = true;
    Tensor reference, onednn;
    k::pool(last, x, reference);
    check_close(want, reference);
    REQUIRE(k::onednn_pool(last, x, onednn));
    CHECK(onednn.shape() == want.shape());
    check_close(want, onednn);
  }
}

TEST_CASE("oneDNN Transpose matches the reference for every perm of a 4-D tensor, and declines what it must",
          "[unit][differential][onednn]") {
  std::mt19937 rng(79);
  const Tensor x = random_tensor(rng, {2, 3, 4, 5});
  std::vector<std::int64_t> perm{0, 1, 2, 3};
  do {
    Tensor want, got;
    k::transpose(perm, x, want);
    REQUIRE(k::onednn_transpose(perm, x, got));
    CHECK(got.shape() == want.shape());
    check_close(want, got);
  } while (std::next_permutation(perm.begin(), perm.end()));
  Tensor y;
  const std::vector<std::int64_t> repeated{0, 0, 1, 2}, short_perm{1, 0};
  CHECK_FALSE(k::onednn_transpose(repeated, x, y));
  CHECK_FALSE(k::onednn_transpose(short_perm, x, y));
  const Tensor ints = Tensor::from_vector<std::int64_t>({1, 2, 3, 4}, {2, 2});
  CHECK_FALSE(k::onednn_transpose(std::vector<std::int64_t>{1, 0}, ints, y));
}

TEST_CASE("Transposes of any rank and shape move bit for bit with no primitive created", "[unit][differential][onednn]") {
  std::mt19937 rng(83);
  // Shapes with size-1 dims, ragged block edges and neighbours that merge.
  const std::vector<Shape> shapes{{63, 17, 5},   {17, 63, 64},  {2, 64, 24, 24}, {2, 24, 24, 64}, {1, 9, 1, 13},
                                  {3, 1, 8, 8},  {5, 7, 11, 2, 3}, {1024, 33},   {40, 1, 1}, {4, 64, 48, 48}};
  const std::uint64_t misses = k::onednn_cache_stats().misses;
  for (const Shape& shape : shapes) {
    const Tensor x = random_tensor(rng, shape);
    std::vector<std::int64_t> perm(shape.size());
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int64_t>(i);
    do {
      INFO(canary::shape_to_string(shape) << " perm " << canary::shape_to_string(perm));
      Tensor want, got;
      k::transpose(perm, x, want);
      REQUIRE(k::onednn_transpose(perm, x, got));
      REQUIRE(got.shape() == want.shape());
      CHECK(std::memcmp(got.raw(), want.raw(), want.nbytes()) == 0);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  CHECK(k::onednn_cache_stats().misses == misses);
}

// Convolutions and pooling run batch by power-of-two chunks
// (kernels/onednn/batch_chunks.h): how a batch splits, that every batch
// size matches the fp64 reference in both layouts, and that once the chunk
// sizes exist a batch size not seen before creates no primitive.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/onednn/batch_chunks.h"
#include "kernels/reference.h"

using canary::DType;
using canary::Shape;
using canary::Tensor;
namespace k = canary::kernels;
namespace o = canary::kernels::onednn;

namespace {

Tensor normal_tensor(std::mt19937& rng, const Shape& shape) {
  std::normal_distribution<double> dist(0.0, 1.0);
  Tensor t = Tensor::empty(DType::F32, shape);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(dist(rng));
  return t;
}

Tensor as_f64(const Tensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i) v[static_cast<std::size_t>(i)] = t.element_as_double(i);
  return Tensor::from_vector<double>(v, t.shape());
}

// Largest |got - want| over the largest |want|.
double error_of_scale(const Tensor& want, const Tensor& got) {
  REQUIRE(got.shape() == want.shape());
  double err = 0, scale = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    err = std::max(err, std::fabs(got.element_as_double(i) - want.element_as_double(i)));
    scale = std::max(scale, std::fabs(want.element_as_double(i)));
  }
  return err / scale;
}

std::uint64_t shapes_created() { return k::onednn_cache_stats().blocked_conv_shapes; }
std::uint64_t blocked_calls() { return k::onednn_cache_stats().blocked_conv_calls; }

}  // namespace

TEST_CASE("a batch splits into its power-of-two chunks, largest first", "[unit][onednn]") {
  const auto sizes = [](std::int64_t n) {
    std::vector<std::int64_t> first, images;
    for (const o::BatchChunk& c : o::batch_chunks(n)) {
      first.push_back(c.first);
      images.push_back(c.images);
    }
    return std::pair{first, images};
  };
  CHECK(sizes(1) == std::pair{std::vector<std::int64_t>{0}, std::vector<std::int64_t>{1}});
  CHECK(sizes(8) == std::pair{std::vector<std::int64_t>{0}, std::vector<std::int64_t>{8}});
  CHECK(sizes(13) == std::pair{std::vector<std::int64_t>{0, 8, 12}, std::vector<std::int64_t>{8, 4, 1}});
  CHECK(sizes(63).second == std::vector<std::int64_t>{32, 16, 8, 4, 2, 1});
  CHECK(o::batch_chunks(0).empty());
}

TEST_CASE("a batch runs whole when it is a power of two, already has its primitive or keeps coming back",
          "[unit][onednn]") {
  o::HotBatches hot;
  canary::kernels::onednn::PrimitiveKey key(canary::kernels::onednn::PrimitiveKind::Conv);
  key.push(7);
  CHECK(o::batch_plan(8, false, hot, key).size() == 1);
  CHECK(o::batch_plan(7, true, hot, key).size() == 1);
  for (int call = 1; call < o::HotBatches::kHotCalls; ++call) CHECK(o::batch_plan(7, false, hot, key).size() == 3);
  CHECK(o::batch_plan(7, false, hot, key).size() == 1);
  CHECK(o::batch_plan(0, false, hot, key).empty());
}

TEST_CASE("blocked convolutions match the fp64 reference at every batch size, in both layouts",
          "[unit][differential][onednn]") {
  std::mt19937 rng(404);
  // A direct 3x3 at stride 2 and a Winograd-sized 3x3, with a bias, at batches that split.
  struct Case {
    std::int64_t c, m, hw, stride;
  };
  for (const Case& t : {Case{8, 16, 12, 2}, Case{32, 64, 16, 1}})
    for (const std::int64_t n : {1, 3, 7, 13})
      for (const bool channels_last : {false, true}) {
        INFO("C " << t.c << " M " << t.m << " HW " << t.hw << " batch " << n << " channels-last " << channels_last);
        const Shape x_shape = channels_last ? Shape{n, t.hw, t.hw, t.c} : Shape{n, t.c, t.hw, t.hw};
        const Tensor x = normal_tensor(rng, x_shape);
        const Tensor w = normal_tensor(rng, {t.m, t.c, 3, 3});
        const Tensor b = normal_tensor(rng, {t.m});
        k::ConvParams p;
        p.pads = {1, 1, 1, 1};
        p.strides = {t.stride, t.stride};
        p.channels_last = channels_last;
        Tensor want;
        const Tensor b64 = as_f64(b);
        k::conv(p, as_f64(x), as_f64(w), &b64, want);
        const std::uint64_t calls = blocked_calls();
        Tensor got;
        REQUIRE(k::onednn_conv(p, x, w, &b, got, true, {}));
        CHECK(blocked_calls() == calls + 1);
        CHECK(error_of_scale(want, got) < 4e-6);
      }
}

TEST_CASE("a new batch size runs on the chunks' primitives without creating one", "[unit][onednn]") {
  std::mt19937 rng(405);
  const Tensor w = normal_tensor(rng, {24, 8, 3, 3});
  k::ConvParams p;
  p.pads = {1, 1, 1, 1};
  p.strides = {2, 2};
  Tensor y;
  for (const std::int64_t n : {1, 2, 4, 8})
    REQUIRE(k::onednn_conv(p, normal_tensor(rng, {n, 8, 20, 20}), w, nullptr, y, true, {}));
  const std::uint64_t created = shapes_created(), calls = blocked_calls();
  for (const std::int64_t n : {3, 5, 6, 7, 11, 15}) {
    INFO("batch " << n);
    const Tensor x = normal_tensor(rng, {n, 8, 20, 20});
    REQUIRE(k::onednn_conv(p, x, w, nullptr, y, true, {}));
    CHECK(y.shape() == Shape{n, 24, 10, 10});
    Tensor want;
    k::conv(p, as_f64(x), as_f64(w), nullptr, want);
    CHECK(error_of_scale(want, y) < 4e-6);
  }
  CHECK(shapes_created() == created);
  CHECK(blocked_calls() == calls + 6);
}

TEST_CASE("pooling runs new batch sizes on the chunks' primitives and matches the reference",
          "[unit][differential][onednn]") {
  std::mt19937 rng(406);
  for (const bool channels_last : {false, true})
    for (const k::PoolOp op : {k::PoolOp::Max, k::PoolOp::Average}) {
      INFO((channels_last ? "channels-last" : "channels-first") << (op == k::PoolOp::Max ? " max" : " average"));
      k::PoolParams p;
      p.op = op;
      p.kernel_shape = {3, 3};
      p.strides = {2, 2};
      p.pads = {1, 1, 1, 1};
      p.channels_last = channels_last;
      const auto input = [&](std::int64_t n) {
        return normal_tensor(rng, channels_last ? Shape{n, 9, 9, 5} : Shape{n, 5, 9, 9});
      };
      Tensor y;
      for (const std::int64_t n : {1, 2, 4}) REQUIRE(k::onednn_pool(p, input(n), y));
      const std::uint64_t misses = k::onednn_cache_stats().misses;
      for (const std::int64_t n : {3, 5, 7}) {
        INFO("batch " << n);
        const Tensor x = input(n);
        Tensor want;
        k::pool(p, x, want);
        REQUIRE(k::onednn_pool(p, x, y));
        REQUIRE(y.shape() == want.shape());
        CHECK(error_of_scale(want, y) < 1e-6);
      }
      CHECK(k::onednn_cache_stats().misses == misses);
    }
}

TEST_CASE("GlobalAveragePool is a row mean with no primitive at any batch", "[unit][differential][onednn]") {
  std::mt19937 rng(407);
  const std::uint64_t misses = k::onednn_cache_stats().misses;
  for (const std::int64_t n : {1, 3, 6}) {
    const Tensor x = normal_tensor(rng, {n, 7, 5, 6});
    Tensor want, got;
    k::global_average_pool(x, want);
    REQUIRE(k::onednn_global_average_pool(x, got));
    REQUIRE(got.shape() == Shape{n, 7, 1, 1});
    CHECK(error_of_scale(want, got) < 1e-6);
  }
  CHECK(k::onednn_cache_stats().misses == misses);
}

TEST_CASE("a batch size that keeps coming back gets a convolution primitive of its own", "[unit][onednn]") {
  std::mt19937 rng(408);
  const Tensor w = normal_tensor(rng, {16, 8, 3, 3});
  k::ConvParams p;
  p.pads = {1, 1, 1, 1};
  Tensor y;
  const Tensor x = normal_tensor(rng, {6, 8, 10, 10});
  Tensor want;
  k::conv(p, as_f64(x), as_f64(w), nullptr, want);
  const std::uint64_t created = shapes_created();
  for (int call = 1; call < o::HotBatches::kHotCalls; ++call) REQUIRE(k::onednn_conv(p, x, w, nullptr, y, true, {}));
  CHECK(shapes_created() == created + 2);  // the chunks of 4 and 2
  REQUIRE(k::onednn_conv(p, x, w, nullptr, y, true, {}));
  CHECK(shapes_created() == created + 3);  // the batch of 6 itself
  CHECK(error_of_scale(want, y) < 4e-6);
  for (int call = 0; call < 4; ++call) REQUIRE(k::onednn_conv(p, x, w, nullptr, y, true, {}));
  CHECK(shapes_created() == created + 3);
}

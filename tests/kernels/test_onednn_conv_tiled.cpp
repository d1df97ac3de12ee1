// The tiled channels-last 1-D convolution (kernels/onednn/conv_tiled.h)
// against the reference kernel: tile and group boundaries, padding,
// dilation, bias, weights that change between calls, and activations that
// are channels-last themselves (Conv's channels_last).
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "kernels/onednn.h"
#include "kernels/reference.h"
#include "random_tensors.h"

namespace k = canary::kernels;
using canary::Shape;
using canary::Tensor;
using namespace canary::test;

namespace {

// Runs x [n, c, width] * w [m, c, kernel] both ways and compares.
void check_tiled(std::mt19937& rng, std::int64_t n, std::int64_t c, std::int64_t m, std::int64_t width,
                 std::int64_t kernel, k::ConvParams p, bool bias, bool weights_are_constant) {
  const Tensor x = random_tensor(rng, {n, c, width});
  const Tensor w = random_tensor(rng, {m, c, kernel});
  const Tensor b = bias ? random_tensor(rng, {m}) : Tensor();
  Tensor want, got;
  k::conv(p, x, w, bias ? &b : nullptr, want);
  const std::uint64_t before = k::onednn_cache_stats().tiled_conv_calls;
  REQUIRE(k::onednn_conv(p, x, w, bias ? &b : nullptr, got, weights_are_constant));
  CHECK(k::onednn_cache_stats().tiled_conv_calls == before + 1);
  check_close(want, got);
}

// Runs x [n, c, width] * w [m, c, kernel] (not constant), negates w in
// place and runs again: the second result must be the reference's for the
// new contents, not the kept copy's.
void check_rewritten_weights(std::mt19937& rng, std::int64_t n, std::int64_t c, std::int64_t m, std::int64_t width,
                             std::int64_t kernel) {
  const Tensor x = random_tensor(rng, {n, c, width});
  Tensor w = random_tensor(rng, {m, c, kernel});
  Tensor first, second, want;
  k::ConvParams p;
  REQUIRE(k::onednn_conv(p, x, w, nullptr, first, false));
  float* wp = w.data<float>();
  for (std::int64_t i = 0; i < w.numel(); ++i) wp[i] = -wp[i];
  REQUIRE(k::onednn_conv(p, x, w, nullptr, second, false));
  k::conv(p, x, w, nullptr, want);
  check_close(want, second);
  CHECK(second.data<float>()[0] == Approx(-first.data<float>()[0]).epsilon(1e-4));
}

// [n, c, w] <-> [n, w, c].
Tensor swap_last_two(const Tensor& x) {
  Tensor y;
  k::transpose(std::vector<std::int64_t>{0, 2, 1}, x, y);
  return y;
}

// Runs a channels-last x [n, width, c] * w [m, c, kernel] on the tiled path
// and compares it with the channels-first reference through transposes.
void check_tiled_channels_last(std::mt19937& rng, std::int64_t n, std::int64_t c, std::int64_t m, std::int64_t width,
                               std::int64_t kernel, k::ConvParams p, bool weights_are_constant) {
  const Tensor x = random_tensor(rng, {n, width, c});
  const Tensor w = random_tensor(rng, {m, c, kernel});
  const Tensor b = random_tensor(rng, {m});
  Tensor first;
  k::conv(p, swap_last_two(x), w, &b, first);
  const Tensor want = swap_last_two(first);
  p.channels_last = true;
  Tensor got;
  const std::uint64_t before = k::onednn_cache_stats().tiled_conv_calls;
  REQUIRE(k::onednn_conv(p, x, w, &b, got, weights_are_constant));
  CHECK(k::onednn_cache_stats().tiled_conv_calls == before + 1);
  REQUIRE(got.shape() == want.shape());
  check_close(want, got);
}

}  // namespace

TEST_CASE("tiled conv: channels-last activations, written in place where whole tiles meet and scattered elsewhere",
          "[unit][differential][onednn]") {
  std::mt19937 rng(61);
  // Widths whose outputs fill whole tiles (64, 128: every group writes into
  // y) and ones that end in a partial tile (5, 100, 200), across groups of 8.
  for (std::int64_t n : {1, 3, 9})
    for (std::int64_t width : {5, 64, 100, 128, 200}) check_tiled_channels_last(rng, n, 6, 16, width, 1, {}, true);
  k::ConvParams causal;  // a TCN block: dilated, padded at the start only
  causal.pads = {8, 0};
  causal.dilations = {4};
  check_tiled_channels_last(rng, 5, 16, 16, 128, 3, causal, false);
  const k::OnednnThreadScope two_threads(2);
  check_tiled_channels_last(rng, 33, 32, 32, 256, 3, causal, true);  // 132 whole tiles split over two threads
  check_tiled_channels_last(rng, 33, 32, 32, 200, 3, causal, true);
}

TEST_CASE("tiled conv: batch and width across tile and group boundaries", "[unit][differential][onednn]") {
  std::mt19937 rng(41);
  k::onednn_clear_cache();
  // kTileOut = 64 outputs per tile, kGroupTiles = 8 tiles per group execution.
  for (std::int64_t n : {1, 7, 8, 9, 17})
    for (std::int64_t width : {5, 67, 68, 69, 200}) check_tiled(rng, n, 7, 32, width, 5, {}, true, true);
  // One geometry (channels, kernel, dilation, bias): one set of primitives for every shape.
  CHECK(k::onednn_cache_stats().tiled_conv_geometries == 1);
}

TEST_CASE("tiled conv: padding, dilation and no bias", "[unit][differential][onednn]") {
  std::mt19937 rng(43);
  k::ConvParams p;
  p.pads = {2, 3};
  check_tiled(rng, 3, 4, 6, 130, 3, p, false, false);
  p.pads = {0, 0};
  p.dilations = {3};
  check_tiled(rng, 9, 32, 16, 150, 5, p, true, false);
  p.auto_pad = k::AutoPad::SameUpper;
  p.dilations = {2};
  p.pads.clear();
  check_tiled(rng, 2, 5, 3, 64, 4, p, true, true);
}

TEST_CASE("tiled conv: weights that are not constant are read on every call", "[unit][onednn]") {
  std::mt19937 rng(47);
  // Same buffer, new contents: a caller's input tensor rewritten in place.
  check_rewritten_weights(rng, 2, 3, 4, 40, 3);
}

TEST_CASE("tiled conv: a new constant weight buffer replaces the kept copy", "[unit][onednn]") {
  std::mt19937 rng(53);
  const Tensor x = random_tensor(rng, {2, 3, 40});
  const Tensor w1 = random_tensor(rng, {4, 3, 3}), w2 = random_tensor(rng, {4, 3, 3});
  k::ConvParams p;
  for (const Tensor* w : {&w1, &w2, &w1}) {
    Tensor got, want;
    REQUIRE(k::onednn_conv(p, x, *w, nullptr, got, true));
    k::conv(p, x, *w, nullptr, want);
    check_close(want, got);
  }
}

TEST_CASE("tiled conv: two threads split the tiles and agree with the reference", "[unit][differential][onednn]") {
  std::mt19937 rng(59);
  const k::OnednnThreadScope two_threads(2);
  // 33 sequences of 200 outputs: 132 tiles, 16 whole groups and 4 single
  // tiles, about 86 Mflop, so the tiles are split over both threads.
  check_tiled(rng, 33, 32, 32, 200, 5, {}, true, true);
  check_tiled(rng, 33, 32, 32, 200, 5, {}, true, false);
  // Too few groups to split: the calling thread runs them all.
  check_tiled(rng, 2, 32, 32, 130, 5, {}, false, true);
  // Weights rewritten in place between parallel calls are read again by every thread.
  check_rewritten_weights(rng, 33, 32, 32, 200, 5);
}

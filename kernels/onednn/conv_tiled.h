// 1-D convolutions on oneDNN's channels-last kernels through one primitive
// per convolution that serves every batch size and width.
//
// oneDNN's fast convolution kernels (brgconv) want channels-last activations
// and blocked weights, and creating one costs 0.3-1 ms per shape: a stream of
// changing batch sizes and windows would pay that on almost every call, and
// the plain-layout path Canary used before (gemm) runs 3-4x slower. So the
// input is cut into tiles of kTileOut output positions (plus the kernel's
// halo), gathered channels-last into a buffer of kGroupTiles tiles, and run
// through a primitive whose shape never changes; the outputs are scattered
// back to the plain [N, M, W] layout (an epilogue runs inside the primitive,
// before the scatter). Channels-last activations ([N, W, C] in, [N, W, M]
// out: Conv's channels_last) make the gather and the scatter row copies.
// Creation is paid once per convolution and thread; the cost is the last
// partial tile of each sequence. Under BF16 precision the tiles are gathered rounded (as bf16 for native bf16
// primitives, as bf16 values in f32 otherwise) and the weights are rounded
// before their blocked copy is made; each encoding has its own primitives and
// weight copy.
#pragma once

#include <cstdint>

#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/onednn/bf16_operands.h"

namespace canary::kernels::onednn {

// Output positions per tile, and tiles per execution of the group primitive.
inline constexpr std::int64_t kTileOut = 64;
inline constexpr std::int64_t kGroupTiles = 8;

// A resolved 1-D convolution with stride 1 and one group.
struct TiledConvShape {
  std::int64_t batch = 0, channels = 0, out_channels = 0;
  // The end padding is implied by `out`: tiles read zeros past the width.
  std::int64_t width = 0, kernel = 0, dilation = 1, pad_begin = 0, out = 0;
  bool has_bias = false;
  bool channels_last = false;  // x is [N, W, C] and y [N, out, M] instead of [N, C, W] and [N, M, out]
  OperandEncoding encoding = OperandEncoding::F32;  // of x and w; b and y stay f32
  Epilogue epilogue;  // post-ops of the tile primitives (each epilogue has its own)
};

// Runs x [N, C, W] * w [M, C, k] (+ b [M]) into y [N, M, out] (channels-last:
// x [N, W, C] into y [N, out, M]). False when
// oneDNN offers no channels-last kernel better than the plain path here (the
// caller then runs that); y is untouched in that case. weights_are_constant:
// w is never written while a tensor shares its buffer, so its blocked copy is
// kept between calls (see onednn_lstm); b is read in place on every call.
bool tiled_conv1d(const TiledConvShape& s, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                  bool weights_are_constant);

// The calling thread's tiled-convolution counters, added to `stats`.
void add_tiled_conv_stats(OnednnCacheStats& stats);
// Drops the calling thread's tiled convolutions and zeroes their counters.
void clear_tiled_convs();

}  // namespace canary::kernels::onednn

// 2-D convolutions on small output maps as one matrix product of gathered
// input patches (im2col) with a kept copy of the weights.
//
// oneDNN 2.6's direct kernel (brgconv) streams a large weight tensor once per
// few output points, and on maps of 4x4 points or fewer per image it runs at
// a third to a half of the machine's FLOP rate: the last stage of a ResNet
// at 96x96 input (3x3 maps, 512 channels, 9.4 MB of weights) took 1.2 ms
// per convolution. The same products as [N*OH*OW, C*kh*kw] x [C*kh*kw, M]
// run near peak on oneDNN's gemm. Measured here with one thread, alone,
// brgconv against this path's product (3x3 kernels, pad 1): 2x512x3x3 ->
// 512, 858 vs 522 us; 8x512x3x3, 3491 vs 1753; 2x512x4x4, 1238 vs 782;
// 256 -> 512 at stride 2 onto 3x3, 272 vs 239. It does not pay where the
// weights fit the caches or the maps are larger: 2x256x4x4 (2.4 MB), 172
// vs 172; 2x128x3x3, 17 vs 27; 2x512x5x5, 1080 vs 1224; 2x512x7x7, 2028
// vs 2520. So it runs maps of at most 16 points per image with at least
// 4 MiB of weights.
//
// The product's row count (N*OH*OW) is bound per call (rows_class.h): a new
// batch size creates no primitive. Padding enters the patches as zeros, so
// a weight's Inf would meet them as NaN where the direct kernel skips the
// tap: this path runs on finite operands only.
#pragma once

#include "canary/tensor.h"
#include "kernels/onednn/conv_blocked.h"

namespace canary::kernels::onednn {

// True for an ungrouped 2-D f32 convolution with at most 16 output points
// per image and at least 4 MiB of weights.
bool patch_product_suits(const BlockedConvShape& shape);

// Runs x * w (+ b) into y as a product of gathered patches (y is reset to
// shape.dst, channels-last where shape.channels_last). False when the path
// does not apply: the shape does not suit it, an operand may be non-finite
// (shape.operands_finite unset) or the weights are not a constant (their
// transposed copy is kept between calls), and y is untouched; or when oneDNN
// has no kernel for the product (y has been reset; the caller's path writes
// it). Throws dnnl::error.
bool patch_product_conv(const BlockedConvShape& shape, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                        bool weights_are_constant);

}  // namespace canary::kernels::onednn

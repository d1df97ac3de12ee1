// Convolutions on oneDNN's blocked-layout kernels, reordered at the op's edges.
//
// On plain NCHW buffers oneDNN 2.6 runs a 2-D convolution as im2col + gemm
// (`gemm:jit`), and a depthwise one no better; asked for `format_tag::any` it
// picks its direct blocked kernels (`brgconv`, `jit:avx512_core`,
// `brdgmm_dw`), 2.5-25x faster on the same convolution. This path creates
// the primitive that way and, per call, reorders the plain input into the
// layout the primitive chose, runs it (the epilogue as post-ops) and
// reorders the result back. Constant weights are reordered once per thread
// and kept while their tensor lives; the blocked activations live in two
// scratch buffers per thread that only grow, so the hot path touches no new
// pages. A batch runs in chunks of power-of-two sizes, so a stream of new
// batch sizes soon creates no primitive. Where oneDNN offers only a gemm or
// reference kernel anyway, the caller's plain path runs instead.
#pragma once

#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/onednn/primitive_cache.h"

namespace canary::kernels::onednn {

// A convolution in oneDNN's terms on plain row-major f32 buffers.
struct BlockedConvShape {
  dnnl::memory::dims src, weights, dst;  // weights [g, M/g, C/g, k...] when grouped
  dnnl::memory::dims strides, dilations, pad_l, pad_r;  // dilations as oneDNN counts them (d - 1)
  bool has_bias = false;
  // src and dst buffers are [N, spatial..., C] (Conv's channels_last); the
  // dims above stay channels-first, as oneDNN counts them.
  bool channels_last = false;
  Epilogue epilogue;
  // The caller found every operand finite and the sums bounded
  // (contraction_stays_finite), so the convolution may run as Winograd
  // where winograd_suits(*this) (see below).
  bool operands_finite = false;
};

// A 2-D, ungrouped, 3x3, stride-1, undilated convolution with an output of
// at least 6x6 points per image and 256 over the batch, 16 or more input and
// 32 or more output channels and at least 1024 channel pairs: oneDNN's
// Winograd kernels (F(4x4, 3x3), or F(2x2, 3x3) where it prefers that) run
// it in about half the multiplies. The tile transforms cost per channel and
// the products per channel pair, so few channels lose; the transformed
// weights are 4x the plain ones (6x6 against 3x3 per channel pair) and are
// read once per call, so few output points per weight lose too. Measured
// with one thread against oneDNN's direct brgconv kernel: alone, 2.0x
// (batch 8, 32->64 channels, 32x32), 1.2x at 32->32 and at 16->128, but
// 0.85x at 16->32, 0.18x at 3->32 (a first layer), a tie at 64->16; inside
// ResNet-18 at batch 2 (weights cold), 1.5x at 64 channels 24x24, 1.2x at
// 128 channels 12x12, but 0.7x at 256 channels 6x6 (72 points). The transforms mix the inputs of a whole tile, so an Inf would turn
// neighbouring outputs into NaN: Winograd runs only on finite operands
// (BlockedConvShape::operands_finite). Its error against the fp64 reference
// stays within 2x of the direct kernel's (1.4e-6 against 8.8e-7 of the
// output's scale over 64 input channels, tests/kernels/test_onednn_winograd.cpp).
bool winograd_suits(const BlockedConvShape& shape);

// Runs x * w (+ b) into y (y is reset to shape.dst), chunk by chunk of the
// batch (batch_chunks.h). False when oneDNN has no blocked kernel for this
// convolution (the caller runs its plain path; y is untouched).
// weights_are_constant: w is never written while a tensor shares its
// buffer, so its reordered copy is kept between calls. Throws dnnl::error.
bool blocked_conv(const BlockedConvShape& shape, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                  bool weights_are_constant);

// The calling thread's blocked-convolution counters, added to `stats`.
void add_blocked_conv_stats(OnednnCacheStats& stats);
// Drops the calling thread's blocked convolutions, weights and scratch.
void clear_blocked_convs();

}  // namespace canary::kernels::onednn

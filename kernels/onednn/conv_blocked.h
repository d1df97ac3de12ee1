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
// pages. Where oneDNN offers only a gemm or reference kernel anyway, the
// caller's plain path runs instead.
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
};

// Runs x * w (+ b) into y (y is reset to shape.dst). False when oneDNN has
// no blocked kernel for this convolution (the caller runs its plain path; y
// is untouched). `key` identifies the shape (conv.cpp's cache key).
// weights_are_constant: w is never written while a tensor shares its buffer,
// so its reordered copy is kept between calls. Throws dnnl::error.
bool blocked_conv(const BlockedConvShape& shape, const PrimitiveKey& key, const Tensor& x, const Tensor& w,
                  const Tensor* b, Tensor& y, bool weights_are_constant);

// The calling thread's blocked-convolution counters, added to `stats`.
void add_blocked_conv_stats(OnednnCacheStats& stats);
// Drops the calling thread's blocked convolutions, weights and scratch.
void clear_blocked_convs();

}  // namespace canary::kernels::onednn

// ConvTranspose's geometry, resolved once from the attributes and the input
// shapes and shared by the reference kernel and the oneDNN one, so both
// compute the same output shape and padding and reject the same input.
//
// Per spatial axis ONNX defines
//   natural = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1
//   out     = natural - pad_begin - pad_end
// and output position o receives input i through kernel tap k when
//   o = i * stride + k * dilation - pad_begin.
// With output_shape given (or auto_pad SAME_*, whose output_shape is
// in * stride) the pads are derived from it: total = natural - out, split
// with floor division (the extra at the end for SAME_UPPER, at the start
// otherwise), as ONNX's reference computes it. A derived pad may be
// negative: the output then reaches past the natural extent, and those
// positions hold only the bias.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "canary/tensor.h"
#include "kernels/reference.h"

namespace canary::kernels {

// One spatial axis after attributes and auto_pad are resolved.
struct ConvTransposeAxis {
  std::int64_t in = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 1;
};

inline constexpr std::size_t kMaxConvTransposeSpatial = 3;

struct ConvTransposeGeometry {
  std::size_t spatial = 0;
  std::array<ConvTransposeAxis, kMaxConvTransposeSpatial> axes{};
  std::int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  Shape out_shape;  // [N, M, out...]
};

// Checks x [N, C, spatial...] (1 to 3 spatial axes), w [C, M/group, k...]
// and b [M] against each other and the attributes, and resolves every axis;
// throws Error(Shape) for shapes that do not fit (naming them) and
// Error(Model) for attributes that are malformed.
ConvTransposeGeometry plan_conv_transpose(const ConvTransposeParams& p, const Shape& x, const Shape& w,
                                          const Tensor* b);

}  // namespace canary::kernels

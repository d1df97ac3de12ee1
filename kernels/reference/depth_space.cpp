// Reference DepthToSpace and SpaceToDepth (opset 13): move blocks of b x b
// pixels between the channel axis and the two spatial axes of [N, C, H, W].
// Both are pure data movement, so they copy elements as raw bits of any
// dtype. With C' = C / (b*b), DepthToSpace's output pixel (n, c, h*b + i,
// w*b + j) comes from channel (i*b + j)*C' + c in DCR mode and from
// c*b*b + i*b + j in CRD mode; SpaceToDepth is the exact inverse of DCR.
#include <string>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/element_dispatch.h"

namespace canary::kernels {
namespace {

// The largest blocksize whose square fits an i64.
constexpr std::int64_t kLargestBlocksize = 3037000499;

// Throws Error(Shape) unless x is rank 4 and 1 <= blocksize <= kLargestBlocksize.
void check_input(const char* op, std::int64_t blocksize, const Tensor& x) {
  if (x.rank() != 4)
    throw Error(ErrorKind::Shape, std::string(op) + ": input must be [N, C, H, W] (rank 4), got " + x.type_string());
  if (blocksize < 1 || blocksize > kLargestBlocksize)
    throw Error(ErrorKind::Shape, std::string(op) + ": blocksize " + std::to_string(blocksize) +
                                      " must be positive and at most " + std::to_string(kLargestBlocksize));
}

// d * b, or Error(Shape) naming the op when it overflows an i64.
std::int64_t scaled(const char* op, std::int64_t d, std::int64_t b, const Tensor& x) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(d, b, &out))
    throw Error(ErrorKind::Shape, std::string(op) + ": dims of " + x.type_string() + " times blocksize " +
                                      std::to_string(b) + " overflow");
  return out;
}

// The dims of the space side [N, C', H*b, W*b] (the output of DepthToSpace, the
// input of SpaceToDepth) with the channel index of the depth side each of
// its elements maps to; `visit(space_index, depth_index)` is called for all.
template <typename Visit>
void for_each_pair(std::int64_t n, std::int64_t c_out, std::int64_t h, std::int64_t w, std::int64_t b, bool crd,
                   Visit&& visit) {
  const std::int64_t c_in = c_out * b * b, hb = h * b, wb = w * b;
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t c = 0; c < c_out; ++c)
      for (std::int64_t y = 0; y < hb; ++y)
        for (std::int64_t x = 0; x < wb; ++x) {
          const std::int64_t i = y % b, j = x % b;
          const std::int64_t channel = crd ? (c * b + i) * b + j : (i * b + j) * c_out + c;
          const std::int64_t space = ((in * c_out + c) * hb + y) * wb + x;
          const std::int64_t depth = ((in * c_in + channel) * h + y / b) * w + x / b;
          visit(space, depth);
        }
}

}  // namespace

void depth_to_space(std::int64_t blocksize, bool crd, const Tensor& x, Tensor& y) {
  const char* op = "DepthToSpace";
  check_input(op, blocksize, x);
  const std::int64_t b = blocksize, c = x.dim(1);
  if (c % (b * b) != 0)
    throw Error(ErrorKind::Shape, std::string(op) + ": channels of " + x.type_string() +
                                      " are not a multiple of blocksize^2 = " + std::to_string(b * b));
  const std::int64_t n = x.dim(0), c_out = c / (b * b), h = x.dim(2), w = x.dim(3);
  const std::int64_t shape[4] = {n, c_out, scaled(op, h, b, x), scaled(op, w, b, x)};
  const Tensor src = x;  // keeps x's buffer alive when y is x
  y.reset(src.dtype(), shape);
  detail::dispatch_bits(src.dtype(), [&](auto tag) {
    using U = decltype(tag);
    const U* px = static_cast<const U*>(src.raw());
    U* py = static_cast<U*>(y.raw());
    for_each_pair(n, c_out, h, w, b, crd, [&](std::int64_t space, std::int64_t depth) { py[space] = px[depth]; });
  });
}

void space_to_depth(std::int64_t blocksize, const Tensor& x, Tensor& y) {
  const char* op = "SpaceToDepth";
  check_input(op, blocksize, x);
  const std::int64_t b = blocksize;
  if (x.dim(2) % b != 0 || x.dim(3) % b != 0)
    throw Error(ErrorKind::Shape, std::string(op) + ": H and W of " + x.type_string() +
                                      " are not multiples of blocksize " + std::to_string(b));
  const std::int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2) / b, w = x.dim(3) / b;
  const std::int64_t shape[4] = {n, scaled(op, scaled(op, c, b, x), b, x), h, w};
  const Tensor src = x;
  y.reset(src.dtype(), shape);
  detail::dispatch_bits(src.dtype(), [&](auto tag) {
    using U = decltype(tag);
    const U* px = static_cast<const U*>(src.raw());
    U* py = static_cast<U*>(y.raw());
    for_each_pair(n, c, h, w, b, false, [&](std::int64_t space, std::int64_t depth) { py[depth] = px[space]; });
  });
}

}  // namespace canary::kernels

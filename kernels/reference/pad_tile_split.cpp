// Reference kernels that copy a tensor into a differently sized layout: Pad
// (constant, reflect, edge; negative pads crop), Tile and Split. They move raw
// element bits, so every dtype is supported.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "canary/error.h"
#include "kernels/reference.h"
#include "kernels/reference/axis.h"
#include "kernels/reference/broadcast_index.h"
#include "kernels/reference/element_dispatch.h"

namespace canary::kernels {
namespace {

// Where each output index of one padded dim reads from: an input index, or
// -1 for the constant.
std::vector<std::int64_t> pad_source_indices(PadMode mode, std::int64_t dim, std::int64_t begin, std::int64_t out) {
  std::vector<std::int64_t> src(static_cast<std::size_t>(out));
  for (std::int64_t o = 0; o < out; ++o) {
    std::int64_t i = o - begin;
    if (i < 0 || i >= dim) {
      if (mode == PadMode::Constant) i = -1;
      else if (mode == PadMode::Edge) i = i < 0 ? 0 : dim - 1;
      else i = i < 0 ? -i : 2 * (dim - 1) - i;
    }
    src[static_cast<std::size_t>(o)] = i;
  }
  return src;
}

// Checks one dim's pads for its mode; returns the padded length.
std::int64_t padded_dim(PadMode mode, const Tensor& x, std::size_t k, std::int64_t begin, std::int64_t end,
                        const std::vector<std::int64_t>& pads) {
  const std::int64_t dim = x.shape()[k];
  const std::string where = "Pad: pads " + shape_to_string(pads) + " on input " + x.type_string() + ", dim " +
                            std::to_string(k);
  std::int64_t out = 0, first = 0, last = 0;
  if (__builtin_add_overflow(dim, begin, &out) || __builtin_add_overflow(out, end, &out)) {
    throw Error(ErrorKind::Shape, where + ": the padded length overflows int64");
  }
  if (out < 0) throw Error(ErrorKind::Shape, where + " crops more than the dim holds");
  // Source indices run from -begin to out - 1 - begin; both must fit in int64.
  if (__builtin_sub_overflow(std::int64_t{0}, begin, &first) || __builtin_sub_overflow(out - 1, begin, &last)) {
    throw Error(ErrorKind::Shape, where + ": the source index overflows int64");
  }
  const std::int64_t widest = std::max(begin, end);
  if (widest > 0 && mode == PadMode::Edge && dim == 0) {
    throw Error(ErrorKind::Shape, where + ": edge-pads an empty dim");
  }
  const bool crop_too_wide = begin <= -dim || end <= -dim;  // with a positive other side, reflects past the edge
  if (widest > 0 && mode == PadMode::Reflect && (widest >= dim || crop_too_wide)) {
    throw Error(ErrorKind::Shape, where + ": reflect pads must be smaller than the dim (" + std::to_string(dim) +
                                      ") in both directions");
  }
  return out;
}

// Copies the constant (one element of x's dtype, or zero) into `bits`.
void read_pad_value(const Tensor& x, const Tensor* value, std::uint64_t& bits) {
  bits = 0;
  if (value == nullptr || !value->defined()) return;
  if (value->dtype() != x.dtype() || value->numel() != 1) {
    throw Error(ErrorKind::Input, "Pad: constant_value must be a one-element " + std::string(dtype_name(x.dtype())) +
                                      " tensor, got " + value->type_string());
  }
  std::memcpy(&bits, value->raw(), dtype_size(x.dtype()));
}

// The run [lo, hi) of one dim's output indices whose sources are consecutive
// input indices (the unpadded middle), so a row copies it in one piece.
std::pair<std::int64_t, std::int64_t> consecutive_run(const std::vector<std::int64_t>& src) {
  const auto n = static_cast<std::int64_t>(src.size());
  std::int64_t lo = 0;
  while (lo < n && src[static_cast<std::size_t>(lo)] < 0) ++lo;
  std::int64_t hi = lo;
  while (hi < n && src[static_cast<std::size_t>(hi)] == src[static_cast<std::size_t>(lo)] + (hi - lo)) ++hi;
  return {lo, hi};
}

// Fills y (already reset) from x through per-dim source indices, one
// innermost row at a time: the row's consecutive middle is one copy, its
// padded ends go element by element.
template <typename U>
void gather_padded(const Tensor& x, const std::vector<std::vector<std::int64_t>>& src, U fill, Tensor& y) {
  const Shape& out = y.shape();
  const std::size_t rank = out.size();
  if (y.numel() == 0) return;
  const U* px = static_cast<const U*>(x.raw());
  U* py = static_cast<U*>(y.raw());
  if (rank == 0) {
    py[0] = px[0];
    return;
  }
  const Shape strides = detail::contiguous_strides(x.shape());
  const std::vector<std::int64_t>& inner = src[rank - 1];
  const std::int64_t width = out[rank - 1];
  const auto [lo, hi] = consecutive_run(inner);
  std::vector<std::int64_t> counter(rank - 1, 0);
  for (std::int64_t row = 0; row < y.numel() / width; ++row) {
    std::int64_t base = 0;
    bool constant = false;
    for (std::size_t k = 0; k + 1 < rank; ++k) {
      const std::int64_t i = src[k][static_cast<std::size_t>(counter[k])];
      constant = constant || i < 0;
      base += i * strides[k];
    }
    U* dst = py + row * width;
    if (constant) {
      std::fill(dst, dst + width, fill);
    } else {
      const auto one = [&](std::int64_t o) {
        const std::int64_t i = inner[static_cast<std::size_t>(o)];
        dst[o] = i < 0 ? fill : px[base + i];
      };
      for (std::int64_t o = 0; o < lo; ++o) one(o);
      if (hi > lo) std::memcpy(dst + lo, px + base + inner[static_cast<std::size_t>(lo)], (hi - lo) * sizeof(U));
      for (std::int64_t o = hi; o < width; ++o) one(o);
    }
    for (std::size_t k = rank - 1; k-- > 0;) {
      if (++counter[k] < out[k]) break;
      counter[k] = 0;
    }
  }
}

// Split sizes: from the split input, or equal parts that divide the dim.
std::vector<std::int64_t> split_sizes(const Tensor& x, std::int64_t axis, const Tensor* split, std::size_t parts) {
  const std::int64_t dim = x.shape()[static_cast<std::size_t>(axis)];
  const auto n = static_cast<std::int64_t>(parts);
  const std::string where = "Split: input " + x.type_string() + " along axis " + std::to_string(axis);
  if (split == nullptr || !split->defined()) {
    if (n == 0 || dim % n != 0) {
      throw Error(ErrorKind::Shape, where + ": dim " + std::to_string(dim) + " does not divide into " +
                                        std::to_string(n) + " equal parts");
    }
    return std::vector<std::int64_t>(parts, dim / n);
  }
  std::vector<std::int64_t> sizes = read_int_values(*split, "Split sizes");
  std::int64_t total = 0;
  bool overflow = false;
  for (std::int64_t s : sizes) {
    if (s < 0) throw Error(ErrorKind::Input, where + ": split " + shape_to_string(sizes) + " has a negative size");
    overflow = overflow || __builtin_add_overflow(total, s, &total);
  }
  if (sizes.size() != parts || overflow || total != dim) {
    throw Error(ErrorKind::Shape, where + ": split " + shape_to_string(sizes) + " must have " + std::to_string(n) +
                                      " entries summing to " + std::to_string(dim));
  }
  return sizes;
}

}  // namespace

void tile(const Tensor& x_in, const Tensor& repeats, Tensor& y) {
  const Tensor x = x_in;  // shared, so y's reset() never overwrites it
  const std::vector<std::int64_t> reps = read_int_values(repeats, "Tile repeats");
  if (reps.size() != static_cast<std::size_t>(x.rank())) {
    throw Error(ErrorKind::Shape, "Tile: repeats " + shape_to_string(reps) + " must have one entry per dim of " +
                                      x.type_string());
  }
  // The output, viewed as [r0, d0, r1, d1, ...], reads x with strides [0, s0, 0, s1, ...].
  const Shape own = detail::contiguous_strides(x.shape());
  Shape out, view, strides;
  for (std::size_t k = 0; k < reps.size(); ++k) {
    if (reps[k] < 0) throw Error(ErrorKind::Input, "Tile: repeats " + shape_to_string(reps) + " has a negative entry");
    std::int64_t tiled = 0;
    if (__builtin_mul_overflow(x.shape()[k], reps[k], &tiled)) {
      throw Error(ErrorKind::Resource, "Tile: input " + x.type_string() + " repeated " + shape_to_string(reps) +
                                           " overflows int64 in dim " + std::to_string(k));
    }
    out.push_back(tiled);
    view.insert(view.end(), {reps[k], x.shape()[k]});
    strides.insert(strides.end(), {0, own[k]});
  }
  if (checked_numel(out) == 0) {
    // Walking the [r0, d0, r1, d1, ...] view would multiply repeats that an
    // empty dim cancels (x [1, 0] by [2^62, 4]) and overflow; nothing to copy.
    y.reset(x.dtype(), out);
    return;
  }
  detail::dispatch_bits(x.dtype(), [&](auto tag) {
    using U = decltype(tag);
    y.reset(x.dtype(), out);
    const U* px = static_cast<const U*>(x.raw());
    U* py = static_cast<U*>(y.raw());
    detail::for_each_strided<1>(view, std::array<Shape, 1>{strides}, {0},
                                [&](std::int64_t o, const std::array<std::int64_t, 1>& at) { py[o] = px[at[0]]; });
  });
}

void pad(PadMode mode, const Tensor& x_in, const Tensor& pads_in, const Tensor* value, Tensor& y) {
  const Tensor x = x_in;  // shared, so y's reset() never overwrites it
  const std::vector<std::int64_t> pads = read_int_values(pads_in, "Pad pads");
  const auto rank = static_cast<std::size_t>(x.rank());
  if (pads.size() != 2 * rank) {
    throw Error(ErrorKind::Shape, "Pad: pads " + shape_to_string(pads) + " must have 2 * rank = " +
                                      std::to_string(2 * rank) + " entries for input " + x.type_string());
  }
  std::uint64_t fill_bits = 0;
  read_pad_value(x, value, fill_bits);
  Shape out(rank);
  for (std::size_t k = 0; k < rank; ++k) out[k] = padded_dim(mode, x, k, pads[k], pads[k + rank], pads);
  y.reset(x.dtype(), out);  // enforces the allocation limit before any index table exists
  if (y.numel() == 0) return;
  // Every out[k] is now at most y.numel(), so the tables are no larger than y.
  std::vector<std::vector<std::int64_t>> src(rank);
  for (std::size_t k = 0; k < rank; ++k) src[k] = pad_source_indices(mode, x.shape()[k], pads[k], out[k]);
  detail::dispatch_bits(x.dtype(), [&](auto tag) {
    using U = decltype(tag);
    U fill{};
    std::memcpy(&fill, &fill_bits, sizeof(U));
    gather_padded<U>(x, src, fill, y);
  });
}

void split(std::int64_t axis, const Tensor& x_in, const Tensor* split, std::span<Tensor* const> outputs) {
  const Tensor x = x_in;  // shared, so an output's reset() never overwrites it
  if (x.rank() == 0) throw Error(ErrorKind::Shape, "Split: cannot split a scalar " + x.type_string());
  const std::int64_t a = detail::normalize_axis("Split", axis, x.rank(), x.shape());
  const std::vector<std::int64_t> sizes = split_sizes(x, a, split, outputs.size());
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t k = 0; k < a; ++k) outer *= x.shape()[static_cast<std::size_t>(k)];
  for (std::int64_t k = a + 1; k < x.rank(); ++k) inner *= x.shape()[static_cast<std::size_t>(k)];
  const std::size_t elem = dtype_size(x.dtype());
  const std::int64_t dim = x.shape()[static_cast<std::size_t>(a)];
  const auto* px = static_cast<const unsigned char*>(x.raw());
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    Shape shape = x.shape();
    shape[static_cast<std::size_t>(a)] = sizes[i];
    outputs[i]->reset(x.dtype(), shape);
    auto* py = static_cast<unsigned char*>(outputs[i]->raw());
    const std::size_t chunk = static_cast<std::size_t>(sizes[i] * inner) * elem;
    for (std::int64_t o = 0; o < outer && chunk > 0; ++o) {
      std::memcpy(py + o * chunk, px + static_cast<std::size_t>((o * dim + offset) * inner) * elem, chunk);
    }
    offset += sizes[i];
  }
}

}  // namespace canary::kernels

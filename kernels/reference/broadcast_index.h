// Strided index iteration shared by the reference kernels: broadcasting,
// transposes, slices and expands all walk an output shape in row-major order
// while each input advances by its own per-dim stride.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "canary/tensor.h"

namespace canary::kernels::detail {

// Element strides of a contiguous row-major tensor of this shape.
inline Shape contiguous_strides(std::span<const std::int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

// Strides for reading a contiguous input of shape `in` as if broadcast to a
// shape of rank `out_rank`: right-aligned, 0 on missing and size-1 dims.
inline Shape broadcast_strides(std::span<const std::int64_t> in, std::size_t out_rank) {
  Shape strides(out_rank, 0);
  const Shape own = contiguous_strides(in);
  const std::size_t lead = out_rank - in.size();
  for (std::size_t i = 0; i < in.size(); ++i) strides[lead + i] = in[i] == 1 ? 0 : own[i];
  return strides;
}

// Calls f(out_index, offsets) for the first element of every innermost row
// of out_shape in row-major order (out_shape.back() elements from there),
// where offsets[k] = base[k] + sum over d of index_d * strides[k][d]; along
// the row, input k advances by strides[k].back(). Each strides[k] has
// out_shape.size() entries (they may be 0 or negative). A rank-0 shape is
// one row of one element.
template <std::size_t N, typename F>
void for_each_row(std::span<const std::int64_t> out_shape, const std::array<Shape, N>& strides,
                  std::array<std::int64_t, N> base, F&& f) {
  std::int64_t total = 1;
  for (std::int64_t d : out_shape) total *= d;
  if (total == 0) return;
  const std::size_t rank = out_shape.size();
  if (rank == 0) {
    f(std::int64_t{0}, base);
    return;
  }
  const std::int64_t inner = out_shape[rank - 1];
  std::vector<std::int64_t> counter(rank, 0);
  for (std::int64_t o = 0; o < total; o += inner) {
    f(o, base);
    // Advance the odometer over the outer dims, carrying into higher dims.
    for (std::size_t d = rank - 1; d-- > 0;) {
      for (std::size_t k = 0; k < N; ++k) base[k] += strides[k][d];
      if (++counter[d] < out_shape[d]) break;
      for (std::size_t k = 0; k < N; ++k) base[k] -= strides[k][d] * out_shape[d];
      counter[d] = 0;
    }
  }
}

// Calls f(out_index, offsets) for every element of out_shape in row-major
// order, where offsets[k] = base[k] + sum over d of index_d * strides[k][d].
// Each strides[k] has out_shape.size() entries (they may be 0 or negative).
template <std::size_t N, typename F>
void for_each_strided(std::span<const std::int64_t> out_shape, const std::array<Shape, N>& strides,
                      std::array<std::int64_t, N> base, F&& f) {
  const std::size_t rank = out_shape.size();
  const std::int64_t inner = rank == 0 ? 1 : out_shape[rank - 1];
  for_each_row<N>(out_shape, strides, base, [&](std::int64_t o, std::array<std::int64_t, N> at) {
    for (std::int64_t i = 0; i < inner; ++i) {
      f(o + i, at);
      if (rank > 0)
        for (std::size_t k = 0; k < N; ++k) at[k] += strides[k][rank - 1];
    }
  });
}

}  // namespace canary::kernels::detail

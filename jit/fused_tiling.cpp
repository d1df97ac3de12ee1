// Short rows as long tiles (see fused_tiling.h).
#include "jit/fused_tiling.h"

#include <algorithm>
#include <numeric>

namespace canary::jit {
namespace {

constexpr std::int64_t kWidestVector = 16;  // floats in an AVX-512 vector

// Bit i set for inputs that span every dim of extent > 1 among d0 and d1.
std::uint32_t spanning_outer(const CollapsedLayout& layout, std::uint32_t all) {
  std::uint32_t spans = all;
  for (int d = 0; d < 2; ++d)
    if (layout.dims[d] > 1) spans &= layout.full[d];
  return spans;
}

// Bit i set for inputs that span no dim of extent > 1 among d0 and d1.
std::uint32_t spanning_no_outer(const CollapsedLayout& layout, std::uint32_t all) {
  std::uint32_t none = all;
  for (int d = 0; d < 2; ++d)
    if (layout.dims[d] > 1) none &= ~layout.full[d];
  return none;
}

}  // namespace

std::optional<RowTiling> plan_row_tiling(const CollapsedLayout& layout, std::size_t num_inputs) {
  const std::int64_t row = layout.dims[2];
  if (row < 1 || row >= kMaxTiledRow || row % kWidestVector == 0) return std::nullopt;
  if (layout.inner_broadcast != 0 || num_inputs > kMaxFusedInputs) return std::nullopt;
  const std::uint32_t all = (1u << num_inputs) - 1;
  const std::uint32_t dense = spanning_outer(layout, all), repeating = spanning_no_outer(layout, all);
  if ((dense | repeating) != all) return std::nullopt;
  RowTiling t;
  t.row = row;
  const std::int64_t unit = std::lcm(row, kWidestVector);
  t.tile = unit * std::max<std::int64_t>(1, (kMinTileFloats + unit - 1) / unit);
  const std::int64_t rows = layout.dims[0] * layout.dims[1], rows_per_tile = t.tile / row;
  t.tiles = rows / rows_per_tile;
  if (t.tiles < 2) return std::nullopt;
  t.rows_tiled = t.tiles * rows_per_tile;
  t.repeating = repeating;  // disjoint from dense: two tiles need an outer dim
  t.repeating_count = __builtin_popcount(t.repeating);
  return t;
}

CollapsedLayout tiled_layout(const CollapsedLayout& layout, const RowTiling& tiling, std::size_t num_inputs) {
  CollapsedLayout tiled = layout;
  tiled.dims[0] = 1;
  tiled.dims[1] = tiling.tiles;
  tiled.dims[2] = tiling.tile;
  for (std::size_t i = 0; i < num_inputs; ++i) {
    const bool repeats = (tiling.repeating >> i) & 1u;
    tiled.strides[2 * i] = 0;
    tiled.strides[2 * i + 1] = repeats ? 0 : tiling.tile;
  }
  return tiled;
}

void fill_tile_buffers(const RowTiling& tiling, std::size_t num_inputs, const float** inputs,
                       std::vector<float>& buffer) {
  buffer.resize(static_cast<std::size_t>(tiling.repeating_count * tiling.tile));
  float* at = buffer.data();
  for (std::size_t i = 0; i < num_inputs; ++i) {
    if (!((tiling.repeating >> i) & 1u)) continue;
    for (std::int64_t k = 0; k < tiling.tile; k += tiling.row) std::copy_n(inputs[i], tiling.row, at + k);
    inputs[i] = at;
    at += tiling.tile;
  }
}

}  // namespace canary::jit

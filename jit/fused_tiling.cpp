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

std::int64_t max_row_with_per_row_inputs(const FusedElementwiseSpec& spec) {
  for (const EwNode& n : spec.nodes)
    if (ew_is_transcendental(n.op)) return kMaxPerRowTiledRowTranscendental;
  return kMaxPerRowTiledRow;
}

std::optional<RowTiling> plan_row_tiling(const CollapsedLayout& layout, std::size_t num_inputs,
                                         std::int64_t per_row_max_row, std::int64_t min_tiles) {
  const std::int64_t row = layout.dims[2];
  if (row < 1 || row >= kMaxTiledRow || row % kWidestVector == 0) return std::nullopt;
  if (num_inputs > kMaxFusedInputs || (layout.inner_broadcast != 0 && row > per_row_max_row)) return std::nullopt;
  const std::uint32_t all = (1u << num_inputs) - 1;
  const std::uint32_t dense = spanning_outer(layout, all), repeating = spanning_no_outer(layout, all);
  if ((dense | repeating) != all) return std::nullopt;
  // One value per row: spans the outer dims (its value index is the row).
  const std::uint32_t per_row = layout.inner_broadcast;
  if ((per_row & ~dense) != 0) return std::nullopt;
  RowTiling t;
  t.row = row;
  const std::int64_t unit = std::lcm(row, kWidestVector);
  t.tile = unit * std::max<std::int64_t>(1, (kMinTileFloats + unit - 1) / unit);
  const std::int64_t rows = layout.dims[0] * layout.dims[1], rows_per_tile = t.tile / row;
  t.tiles = rows / rows_per_tile;
  if (t.tiles < min_tiles) return std::nullopt;
  t.rows_tiled = t.tiles * rows_per_tile;
  t.repeating = repeating & ~per_row;  // disjoint from dense: two tiles need an outer dim
  t.repeating_count = __builtin_popcount(t.repeating);
  t.per_row = per_row;
  t.per_row_count = __builtin_popcount(per_row);
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

// Writes `n` rows of `row` copies of values[r] from out, four floats per
// store: a row's last store may run into the next row, which the next
// row's stores then overwrite, and past the end by up to 3 floats (the
// buffer's slack, kExpansionSlack).
void expand_rows(const float* values, std::int64_t n, std::int64_t row, float* out) {
  using Quad = float __attribute__((vector_size(16)));
  for (std::int64_t r = 0; r < n; ++r) {
    const Quad q = {values[r], values[r], values[r], values[r]};
    float* at = out + r * row;
    for (std::int64_t k = 0; k < row; k += 4) __builtin_memcpy(at + k, &q, sizeof q);
  }
}

void expand_per_row_inputs(const RowTiling& tiling, std::size_t num_inputs, const float* const* rows,
                           std::int64_t first, std::int64_t count, const float** inputs, float* out) {
  const std::int64_t rows_per_tile = tiling.tile / tiling.row;
  const std::int64_t first_row = first * rows_per_tile, n = count * rows_per_tile;
  for (std::size_t i = 0; i < num_inputs; ++i) {
    if (!((tiling.per_row >> i) & 1u)) continue;
    expand_rows(rows[i] + first_row, n, tiling.row, out);
    inputs[i] = out;
    out += count * tiling.tile + kExpansionSlack;
  }
}

}  // namespace canary::jit

// Short rows as long tiles. A fused elementwise kernel runs its collapsed
// space row by row: per row it sets up each input's pointer and finishes
// with a masked tail. When rows are a few floats long (x f32[R, 5] with a
// per-channel bias f32[5]), that set-up costs more than the elements:
// bench/jit/short_rows.cpp measures 2.6x the time per element at 5 floats a
// row against long rows on AVX-512, 2.2x on AVX2.
//
// When every input either runs densely over the whole space or repeats with
// the row (stride 0 along d0 and d1, such as the bias), the same space can be
// cut into rows of L floats, L a multiple of both the row length and the
// widest vector (16 floats): dense inputs and outputs are contiguous across
// rows anyway, and each repeating input is read from a buffer holding L / d2
// copies of its row. The kernel is the same (it reads its dims from its
// arguments); the rows that do not fill a whole tile run in the original
// layout. Whether a call tiles is a cheap predicate on its run-time layout,
// so a new shape costs a branch, not a compile.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "jit/plan_fusion.h"

namespace canary::jit {

// Rows of at least this many floats, or a multiple of 16, are not tiled
// (their set-up is a small share of the row; see bench/jit/short_rows.cpp).
inline constexpr std::int64_t kMaxTiledRow = 128;
// A tiled row holds at least this many floats.
inline constexpr std::int64_t kMinTileFloats = 256;

struct RowTiling {
  std::int64_t row = 0;         // floats in an original row (the layout's d2)
  std::int64_t tile = 0;        // floats in a tiled row (L)
  std::int64_t tiles = 0;       // tiled rows
  std::int64_t rows_tiled = 0;  // original rows the tiles cover (tiles * L / row)
  std::uint32_t repeating = 0;  // bit i: input i repeats with the row (read from a tile buffer)
  int repeating_count = 0;
};

// The tiling of a collapsed layout of `num_inputs` inputs, or nullopt when
// it does not apply: rows long enough, fewer than two tiles, an input holding
// one value per row (inner broadcast) or spanning some but not all of the
// outer dims.
std::optional<RowTiling> plan_row_tiling(const CollapsedLayout& layout, std::size_t num_inputs);

// The layout of the tiled call: dims (1, tiles, L); dense inputs advance by L
// per row, repeating ones not at all.
CollapsedLayout tiled_layout(const CollapsedLayout& layout, const RowTiling& tiling, std::size_t num_inputs);

// Fills `buffer` with L / row copies of each repeating input's row (in input
// order) and points those inputs at their copy.
void fill_tile_buffers(const RowTiling& tiling, std::size_t num_inputs, const float** inputs,
                       std::vector<float>& buffer);

}  // namespace canary::jit

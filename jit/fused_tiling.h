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
//
// An input holding one value per row (x f32[R, 5] * r f32[R, 1]) changes
// within a tile, and the kernel reads it as one broadcast value per row. A
// group recorded with such inputs on short rows therefore also gets a
// second kernel reading every input per element; a call that tiles runs it
// on chunks of tiles, each per-row input expanded for the chunk into a
// buffer that stays in cache (a row's vector otherwise does 5 lanes of work
// in 16).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "jit/fused_kernel.h"
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
  std::uint32_t per_row = 0;    // bit i: input i holds one value per row (expanded per chunk)
  int per_row_count = 0;
};

// Tiles per chunk of a call with per-row inputs: their expansion (a chunk's
// floats per such input) stays in the L2 cache.
inline constexpr std::int64_t kTilesPerChunk = 16;

// Expanding a per-row input costs about a quarter store per element, which
// pays on rows of up to 8 floats whatever the group computes, and on rows
// under 32 when the group computes a transcendental (a wasted lane there
// costs far more); on longer rows the tail wastes too few lanes
// (bench/jit/short_rows.cpp).
inline constexpr std::int64_t kMaxPerRowTiledRow = 8;
inline constexpr std::int64_t kMaxPerRowTiledRowTranscendental = 31;
// The longest row whose per-row inputs a group expands:
// kMaxPerRowTiledRowTranscendental with a transcendental, else kMaxPerRowTiledRow.
std::int64_t max_row_with_per_row_inputs(const FusedElementwiseSpec& spec);

// The tiling of a collapsed layout of `num_inputs` inputs, or nullopt when
// it does not apply: rows long enough, fewer than two tiles, an input
// spanning some but not all of the outer dims, or one holding one value per
// row (inner broadcast) on rows longer than `per_row_max_row` (0: none; the
// caller has the kernel that reads every input per element otherwise).
// min_tiles: the fewest tiles worth it (0 asks whether the layout's row
// and inputs would tile given rows enough, as a planner does for a
// symbolic group recorded with few rows).
std::optional<RowTiling> plan_row_tiling(const CollapsedLayout& layout, std::size_t num_inputs,
                                         std::int64_t per_row_max_row = 0, std::int64_t min_tiles = 2);

// The layout of the tiled call: dims (1, tiles, L); dense and per-row
// (expanded) inputs advance by L per row, repeating ones not at all.
CollapsedLayout tiled_layout(const CollapsedLayout& layout, const RowTiling& tiling, std::size_t num_inputs);

// Fills `buffer` with L / row copies of each repeating input's row (in input
// order) and points those inputs at their copy.
void fill_tile_buffers(const RowTiling& tiling, std::size_t num_inputs, const float** inputs,
                       std::vector<float>& buffer);

// Per-row inputs for the tiles [first, first + count): each expanded into
// `out` (count * L + kExpansionSlack floats per input, in input order) with
// every original row's value repeated `row` times; `rows` holds each
// input's per-row base pointer, `inputs` is pointed at the expansions.
inline constexpr std::int64_t kExpansionSlack = 4;
void expand_per_row_inputs(const RowTiling& tiling, std::size_t num_inputs, const float* const* rows,
                           std::int64_t first, std::int64_t count, const float** inputs, float* out);

}  // namespace canary::jit

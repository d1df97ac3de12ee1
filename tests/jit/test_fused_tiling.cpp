// Short rows as long tiles (jit/fused_tiling.h): which collapsed layouts
// tile, the tiled layout's dims and strides, and the repeated copies the
// repeating inputs are read from.
#include <catch2/catch.hpp>

#include <optional>
#include <span>
#include <vector>

#include "jit/fused_tiling.h"

using namespace canary;
using namespace canary::jit;

namespace {

// The collapsed layout of `out` and `inputs` (NumPy broadcasting).
CollapsedLayout collapse(const std::vector<std::int64_t>& out, const std::vector<std::vector<std::int64_t>>& inputs) {
  std::vector<std::span<const std::int64_t>> spans;
  for (const auto& s : inputs) spans.emplace_back(s);
  CollapsedLayout layout;
  REQUIRE(collapse_layout(out, spans, layout));
  return layout;
}

std::optional<RowTiling> tiling_of(const std::vector<std::int64_t>& out,
                                   const std::vector<std::vector<std::int64_t>>& inputs) {
  return plan_row_tiling(collapse(out, inputs), inputs.size());
}

}  // namespace

TEST_CASE("short rows with a per-row bias tile into rows of a multiple of 16 floats", "[unit][jit][tiling]") {
  const std::optional<RowTiling> t = tiling_of({1000, 5}, {{1000, 5}, {5}});
  REQUIRE(t);
  CHECK(t->row == 5);
  CHECK(t->tile == 320);  // lcm(5, 16) = 80, four of them to reach 256 floats
  CHECK(t->tile % 16 == 0);
  CHECK(t->tiles == 1000 / 64);
  CHECK(t->rows_tiled == t->tiles * 64);
  CHECK(t->repeating == 0b10u);
  CHECK(t->repeating_count == 1);

  // A row whose lcm with 16 already exceeds the minimum is one unit long.
  const std::optional<RowTiling> wide = tiling_of({4000, 100}, {{4000, 100}, {100}, {4000, 100}});
  REQUIRE(wide);
  CHECK(wide->tile == 400);
  CHECK(wide->repeating == 0b010u);
  // Several leading dims collapse into the rows.
  const std::optional<RowTiling> rank3 = tiling_of({8, 50, 7}, {{8, 50, 7}, {7}, {1, 1, 7}});
  REQUIRE(rank3);
  CHECK(rank3->repeating == 0b110u);
  CHECK(rank3->tile == 336);  // lcm(7, 16) = 112, three of them
  CHECK(rank3->tiles == 8);   // 400 rows, 48 a tile
  CHECK(rank3->rows_tiled == 384);
  // The longest row that tiles.
  const std::optional<RowTiling> longest = tiling_of({1000, 127}, {{1000, 127}, {127}});
  REQUIRE(longest);
  CHECK(longest->tile == 127 * 16);
}

TEST_CASE("layouts that do not tile", "[unit][jit][tiling]") {
  SECTION("rows already a multiple of the vector width") { CHECK_FALSE(tiling_of({1000, 32}, {{1000, 32}, {32}})); }
  SECTION("rows long enough") { CHECK_FALSE(tiling_of({1000, 129}, {{1000, 129}, {129}})); }
  SECTION("fewer than two tiles of rows") {
    CHECK_FALSE(tiling_of({100, 5}, {{100, 5}, {5}}));
    // ...which a planner may still ask about, for a symbolic group's later calls.
    const std::optional<RowTiling> later = plan_row_tiling(collapse({9, 5}, {{9, 5}, {9, 1}}), 2, kMaxTiledRow, 0);
    REQUIRE(later);
    CHECK(later->tiles == 0);
    CHECK(later->per_row == 0b10u);
    CHECK_FALSE(plan_row_tiling(collapse({9, 32}, {{9, 32}, {9, 1}}), 2, kMaxTiledRow, 0));  // rows of 32 never tile
  }
  SECTION("one value per row (inner broadcast) without a per-element kernel") {
    CHECK_FALSE(tiling_of({1000, 5}, {{1000, 5}, {1000, 1}}));
  }
  SECTION("one value for the whole space, even with a per-element kernel") {
    CHECK_FALSE(plan_row_tiling(collapse({1000, 5}, {{1000, 5}, {1}}), 2, kMaxTiledRow));
  }
  SECTION("an input spanning some outer dims only") {
    CHECK_FALSE(tiling_of({40, 30, 5}, {{40, 30, 5}, {40, 1, 5}}));
  }
  // Inputs that all span the whole space collapse into one long row.
  SECTION("dense inputs only") { CHECK_FALSE(tiling_of({1000, 5}, {{1000, 5}, {1000, 5}})); }
}

TEST_CASE("the tiled layout reads dense inputs across rows and repeating ones from their copy", "[unit][jit][tiling]") {
  // Inputs: x (dense), bias (repeating), z (dense), scale (repeating, rank 3).
  const CollapsedLayout layout = collapse({4, 250, 7}, {{4, 250, 7}, {7}, {4, 250, 7}, {1, 1, 7}});
  CHECK(layout.dims[0] == 1);  // the outer dims merge: every input spans both or neither
  const std::optional<RowTiling> t = plan_row_tiling(layout, 4);
  REQUIRE(t);
  CHECK(t->repeating == 0b1010u);
  CHECK(t->repeating_count == 2);
  const CollapsedLayout tiled = tiled_layout(layout, *t, 4);
  CHECK(tiled.dims[0] == 1);
  CHECK(tiled.dims[1] == t->tiles);
  CHECK(tiled.dims[2] == t->tile);
  for (int i = 0; i < 4; ++i) {
    INFO("input " << i);
    CHECK(tiled.strides[2 * i] == 0);
    CHECK(tiled.strides[2 * i + 1] == (i % 2 == 0 ? t->tile : 0));  // dense: a tile per row
  }
  CHECK(tiled.inner_broadcast == 0);

  const std::vector<float> x(7000, 1.0f), z(7000, 2.0f);
  const std::vector<float> bias{0, 1, 2, 3, 4, 5, 6}, scale{10, 11, 12, 13, 14, 15, 16};
  const float* inputs[4] = {x.data(), bias.data(), z.data(), scale.data()};
  std::vector<float> buffer;
  fill_tile_buffers(*t, 4, inputs, buffer);
  CHECK(inputs[0] == x.data());
  CHECK(inputs[2] == z.data());
  REQUIRE(buffer.size() == static_cast<std::size_t>(2 * t->tile));
  REQUIRE(inputs[1] == buffer.data());
  REQUIRE(inputs[3] == buffer.data() + t->tile);
  for (std::int64_t i = 0; i < t->tile; ++i) {
    INFO("element " << i);
    CHECK(inputs[1][i] == bias[static_cast<std::size_t>(i % 7)]);
    CHECK(inputs[3][i] == scale[static_cast<std::size_t>(i % 7)]);
  }
}

TEST_CASE("per-row inputs tile with a per-element kernel and expand chunk by chunk", "[unit][jit][tiling]") {
  // x (dense), r (one value per row), b (repeating).
  const CollapsedLayout layout = collapse({1000, 5}, {{1000, 5}, {1000, 1}, {5}});
  REQUIRE(layout.inner_broadcast == 0b010u);
  const std::optional<RowTiling> t = plan_row_tiling(layout, 3, kMaxPerRowTiledRow);
  REQUIRE(t);
  CHECK(t->per_row == 0b010u);
  CHECK(t->per_row_count == 1);
  CHECK(t->repeating == 0b100u);
  CHECK(t->tile == 320);
  const CollapsedLayout tiled = tiled_layout(layout, *t, 3);
  CHECK(tiled.strides[3] == t->tile);  // the expansion is dense in the tiled space
  CHECK(tiled.strides[5] == 0);

  std::vector<float> r(1000);
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<float>(i);
  const float* rows[3] = {nullptr, r.data(), nullptr};
  const float* inputs[3] = {nullptr, nullptr, nullptr};
  std::vector<float> out(static_cast<std::size_t>(2 * t->tile + kExpansionSlack));
  expand_per_row_inputs(*t, 3, rows, 3, 2, inputs, out.data());  // tiles 3 and 4: rows 192 .. 319
  REQUIRE(inputs[1] == out.data());
  CHECK(inputs[0] == nullptr);
  for (std::int64_t i = 0; i < 2 * t->tile; ++i) {
    INFO("element " << i);
    CHECK(out[static_cast<std::size_t>(i)] == static_cast<float>(192 + i / 5));
  }
}

TEST_CASE("per-row inputs tile on rows up to the group's limit", "[unit][jit][tiling]") {
  const CollapsedLayout rows12 = collapse({1000, 12}, {{1000, 12}, {1000, 1}});
  CHECK_FALSE(plan_row_tiling(rows12, 2, kMaxPerRowTiledRow));  // 12 > 8: arithmetic does not pay
  CHECK(plan_row_tiling(rows12, 2, kMaxPerRowTiledRowTranscendental));  // a transcendental does
  CHECK_FALSE(plan_row_tiling(collapse({1000, 33}, {{1000, 33}, {1000, 1}}), 2, kMaxPerRowTiledRowTranscendental));
  CHECK(plan_row_tiling(collapse({1000, 8}, {{1000, 8}, {1000, 1}}), 2, kMaxPerRowTiledRow));
  FusedElementwiseSpec arithmetic;
  arithmetic.nodes = {EwNode{EwOp::Input}, EwNode{EwOp::Input, 0, 0, 1}, EwNode{EwOp::Mul, 0, 1}};
  CHECK(max_row_with_per_row_inputs(arithmetic) == kMaxPerRowTiledRow);
  arithmetic.nodes.push_back(EwNode{EwOp::Tanh, 2});
  CHECK(max_row_with_per_row_inputs(arithmetic) == kMaxPerRowTiledRowTranscendental);
}

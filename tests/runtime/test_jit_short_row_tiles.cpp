// Short rows as long tiles through the public API: a fused group over
// x f32[R, C] with per-channel inputs f32[C] runs its rows as tiles of a few
// hundred floats (JitOptions::short_row_tiles). The outputs must hold the
// interpreter's bits whether a call tiles or not, with rows left over after
// the last tile, on several threads, with NaN in either part, and with the
// option off; JitStats::tiled_fused_calls says which calls tiled.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "jit_test_models.h"

using canary::NamedTensors;
using canary::Options;
using canary::Runtime;
using canary::Session;
using canary::Tensor;
using namespace canary::test;

namespace {

// A per-channel normalisation with a residual: every input either spans
// the whole tensor (x) or repeats with the row (m, s).
const char* kNormalise = R"(canary v1
graph main(x: f32[R, C], m: f32[C], s: f32[C]) -> (y) {
  const half: f32[] = [0.5]
  a = Sub(x, m)
  b = Mul(a, s)
  c = Relu(b)
  d = Mul(c, half)
  y = Add(d, x)
}
)";

// The same channels, scaled per row: r holds one value per row, which the
// tiled call reads expanded through the group's per-element kernel.
const char* kPerRowScale = R"(canary v1
graph main(x: f32[R, C], m: f32[C], r: f32[R, 1]) -> (y) {
  a = Sub(x, m)
  y = Mul(a, r)
}
)";

NamedTensors normalise_inputs(std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
  return {{"x", random_tensor({rows, cols}, seed)},
          {"m", random_tensor({cols}, seed + 1, -0.5f, 0.5f)},
          {"s", random_tensor({cols}, seed + 2, 0.5f, 2.0f)}};
}

Options tiles_options(bool tiles, int threads = 1) {
  Options o = jit_options(2);
  o.jit.short_row_tiles = tiles;
  o.jit.value_canaries = true;
  o.intra_op_threads = threads;
  return o;
}

// Runs `in` on both sessions and checks the outputs hold the same bits.
void check_bits(Session& jit, Session& ref, const NamedTensors& in) {
  const Tensor got = jit.run(in).at("y"), want = ref.run(in).at("y");
  CHECK(bit_identical(got, want));
}

}  // namespace

TEST_CASE("jit: short rows run as long tiles with the interpreter's bits", "[unit][jit][api][tiling]") {
  Runtime jit_rt(tiles_options(true)), ref_rt(interpreter_options());
  const canary::Model model = jit_rt.load_text(kNormalise);
  Session s = model.session(), ref = ref_rt.load_text(kNormalise).session();
  // 1000 rows of 5 floats: 15 tiles of 64 rows, then 40 rows row by row.
  const NamedTensors in = normalise_inputs(1000, 5, 1);
  for (int i = 0; i < 3; ++i) check_bits(s, ref, in);
  CHECK(s.stats().jit.compiled_entries >= 1);
  CHECK(s.stats().jit.tiled_fused_calls == s.stats().jit.compiled_entries);
  CHECK(listings(model).find("(rows of 5 floats run as long tiles)") != std::string::npos);

  // Other row and channel counts make R and C symbolic; each call then
  // decides for itself.
  const std::int64_t warm_up[][2] = {{1001, 5}, {640, 5}, {2049, 5}, {777, 7}, {1200, 9}, {900, 6}, {1300, 11}};
  for (const auto& [rows, cols] : warm_up) check_bits(s, ref, normalise_inputs(rows, cols, 7));
  REQUIRE(s.stats().jit.compiles >= 3);
  const std::uint64_t tiled = s.stats().jit.tiled_fused_calls, entries = s.stats().jit.compiled_entries;
  check_bits(s, ref, normalise_inputs(3001, 5, 11));  // tiles, 57 rows left over
  check_bits(s, ref, normalise_inputs(100, 5, 12));   // under two tiles: row by row
  check_bits(s, ref, normalise_inputs(3000, 7, 13));  // another channel count tiles too
  check_bits(s, ref, normalise_inputs(500, 32, 14));  // rows of a whole number of vectors do not
  REQUIRE(s.stats().jit.compiled_entries - entries == 4);
  CHECK(s.stats().jit.tiled_fused_calls - tiled == 2);
}

TEST_CASE("jit: tiled and untiled fused calls agree bit for bit, also on two threads", "[unit][jit][api][tiling]") {
  const int threads = GENERATE(1, 2);
  Runtime on_rt(tiles_options(true, threads)), off_rt(tiles_options(false, threads)), ref_rt(interpreter_options());
  Session on = on_rt.load_text(kNormalise).session(), off = off_rt.load_text(kNormalise).session();
  Session ref = ref_rt.load_text(kNormalise).session();
  // 2^18 floats and more split across threads; 60001 rows leave some over.
  for (std::int64_t rows : {60001, 60001, 60001, 70000}) {
    const NamedTensors in = normalise_inputs(rows, 5, static_cast<std::uint32_t>(rows));
    const Tensor a = on.run(in).at("y"), b = off.run(in).at("y"), want = ref.run(in).at("y");
    CHECK(bit_identical(a, want));
    CHECK(bit_identical(b, want));
  }
  CHECK(on.stats().jit.compiled_entries >= 1);
  CHECK(on.stats().jit.tiled_fused_calls == on.stats().jit.compiled_entries);
  CHECK(off.stats().jit.tiled_fused_calls == 0);
  CHECK(off.stats().jit.compiled_entries == on.stats().jit.compiled_entries);
}

TEST_CASE("jit: value canaries see NaN in tiled rows, left-over rows and the repeated inputs", "[unit][jit][api][tiling]") {
  Runtime jit_rt(tiles_options(true)), ref_rt(interpreter_options());
  Session s = jit_rt.load_text(kNormalise).session(), ref = ref_rt.load_text(kNormalise).session();
  const NamedTensors clean = normalise_inputs(1000, 5, 3);
  for (int i = 0; i < 3; ++i) check_bits(s, ref, clean);
  REQUIRE(s.stats().jit.tiled_fused_calls >= 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    const char* input;
    std::int64_t element;
  };
  // x element 17 is in the first tile; 4990 in the 40 rows after the tiles.
  for (const Case& c : {Case{"x", 17}, Case{"x", 4990}, Case{"m", 3}, Case{"s", 0}}) {
    INFO(c.input << "[" << c.element << "] is NaN");
    NamedTensors in = normalise_inputs(1000, 5, 3);
    in.at(c.input).data<float>()[c.element] = nan;
    const std::uint64_t canaries = s.stats().jit.value_canaries, tiled = s.stats().jit.tiled_fused_calls;
    check_bits(s, ref, in);
    CHECK(s.stats().jit.value_canaries == canaries + 1);
    CHECK(s.stats().jit.tiled_fused_calls == tiled + 1);
  }
}

TEST_CASE("jit: one value per row tiles through the per-element kernel", "[unit][jit][api][tiling]") {
  Runtime jit_rt(tiles_options(true)), ref_rt(interpreter_options());
  const canary::Model model = jit_rt.load_text(kPerRowScale);
  Session s = model.session(), ref = ref_rt.load_text(kPerRowScale).session();
  const auto inputs = [](std::int64_t rows, std::uint32_t seed) {
    return NamedTensors{{"x", random_tensor({rows, 5}, seed)},
                        {"m", random_tensor({5}, seed + 1)},
                        {"r", random_tensor({rows, 1}, seed + 2)}};
  };
  // 5000 rows of 5: 78 tiles of 64 rows in 5 chunks, then 8 rows row by row.
  for (int i = 0; i < 3; ++i) check_bits(s, ref, inputs(5000, 4));
  CHECK(s.stats().jit.compiled_entries >= 1);
  CHECK(s.stats().jit.tiled_fused_calls == s.stats().jit.compiled_entries);
  CHECK(listings(model).find("per-element kernel") != std::string::npos);
  CHECK(listings(model).find("(rows of 5 floats run as long tiles when the call stays on one thread)") !=
        std::string::npos);
  // Other row counts (R symbolic), one chunk or several, rows left over or not.
  for (std::int64_t rows : {4999, 640, 1024 + 63, 64 * 16 * 2, 300}) check_bits(s, ref, inputs(rows, 9));
  REQUIRE(s.stats().jit.compiles >= 2);
  // A NaN in a per-row value, in a tile and in the rows left over.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::int64_t row : {std::int64_t{100}, std::int64_t{4995}}) {
    INFO("r[" << row << "] is NaN");
    NamedTensors in = inputs(5000, 12);
    in.at("r").data<float>()[row] = nan;
    const std::uint64_t canaries = s.stats().jit.value_canaries, tiled = s.stats().jit.tiled_fused_calls;
    check_bits(s, ref, in);
    CHECK(s.stats().jit.value_canaries == canaries + 1);
    CHECK(s.stats().jit.tiled_fused_calls == tiled + 1);
  }
}

TEST_CASE("jit: a symbolic group recorded on too few rows still tiles later calls of its per-row inputs",
          "[unit][jit][api][tiling]") {
  Runtime jit_rt(tiles_options(true)), ref_rt(interpreter_options());
  const canary::Model model = jit_rt.load_text(kPerRowScale);
  Session s = model.session(), ref = ref_rt.load_text(kPerRowScale).session();
  const auto inputs = [](std::int64_t rows, std::uint32_t seed) {
    return NamedTensors{{"x", random_tensor({rows, 5}, seed)},
                        {"m", random_tensor({5}, seed + 1)},
                        {"r", random_tensor({rows, 1}, seed + 2)}};
  };
  // 8 and then 9 rows: the retrace makes R symbolic, recorded at 9 rows (one tile needs 64).
  for (std::int64_t rows : {8, 8, 9, 9, 9}) check_bits(s, ref, inputs(rows, 20));
  REQUIRE(s.stats().jit.compiles >= 2);
  CHECK(s.stats().jit.tiled_fused_calls == 0);
  CHECK(listings(model).find("per-element kernel") != std::string::npos);
  const std::uint64_t compiles = s.stats().jit.compiles;
  check_bits(s, ref, inputs(5000, 21));
  CHECK(s.stats().jit.compiles == compiles);  // the symbolic variant took it
  CHECK(s.stats().jit.tiled_fused_calls == 1);
}

TEST_CASE("jit: a symbolic group recorded on long rows tiles the short rows seen before it", "[unit][jit][api][tiling]") {
  Runtime jit_rt(tiles_options(true)), ref_rt(interpreter_options());
  const canary::Model model = jit_rt.load_text(kPerRowScale);
  Session s = model.session(), ref = ref_rt.load_text(kPerRowScale).session();
  const auto inputs = [](std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
    return NamedTensors{{"x", random_tensor({rows, cols}, seed)},
                        {"m", random_tensor({cols}, seed + 1)},
                        {"r", random_tensor({rows, 1}, seed + 2)}};
  };
  // Compiled on rows of 200 floats; a call of rows of 5 and one of rows of
  // 300 fail its guards and make R and C symbolic (C seen 5..300); the
  // retrace records the second of them, rows of 300, which never tile.
  const std::int64_t stream[][2] = {{700, 200}, {700, 200}, {700, 200}, {640, 5}, {900, 300}, {800, 200}};
  for (const auto& [rows, cols] : stream) check_bits(s, ref, inputs(rows, cols, 30));
  REQUIRE(s.stats().jit.compiles == 2);
  INFO(listings(model));
  CHECK(listings(model).find("= x.dim1: 5..300") != std::string::npos);
  CHECK(listings(model).find("per-element kernel") != std::string::npos);
  // Rows of 5 (and 7, never seen) now tile in that compile: a branch, not a compile.
  const std::uint64_t tiled = s.stats().jit.tiled_fused_calls;
  check_bits(s, ref, inputs(5000, 5, 31));
  check_bits(s, ref, inputs(3000, 7, 32));
  CHECK(s.stats().jit.compiles == 2);
  CHECK(s.stats().jit.tiled_fused_calls == tiled + 2);
}

TEST_CASE("jit: per-row inputs on a call split across threads run row by row", "[unit][jit][api][tiling]") {
  Runtime jit_rt(tiles_options(true, 2)), ref_rt(interpreter_options());
  Session s = jit_rt.load_text(kPerRowScale).session(), ref = ref_rt.load_text(kPerRowScale).session();
  // 60001 x 5 floats: over the threads' threshold, so the expansion (on the
  // calling thread) would cost the split.
  const NamedTensors in{{"x", random_tensor({60001, 5}, 4)},
                        {"m", random_tensor({5}, 5)},
                        {"r", random_tensor({60001, 1}, 6)}};
  for (int i = 0; i < 4; ++i) check_bits(s, ref, in);
  CHECK(s.stats().jit.compiled_entries >= 1);
  CHECK(s.stats().jit.tiled_fused_calls == 0);
}

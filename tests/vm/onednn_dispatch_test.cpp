// The interpreter runs f32 MatMul and Conv through the oneDNN kernels, and the
// fp64 reference mode never touches them.
#include <catch2/catch.hpp>

#include "kernels/onednn.h"
#include "vm_graph_builders.h"

using namespace vmtest;
namespace k = canary::kernels;

namespace {

// y = x · w with w [[1,0],[0,1],[1,1]], and z = conv(s, [1,0,-1]) with pads 1, 1.
Graph matmul_and_conv() {
  Graph g;
  ValueId x = g.add_input("x", type_of(DType::F32, {2, 3}));
  ValueId s = g.add_input("s", type_of(DType::F32, {1, 1, 5}));
  ValueId w = g.add_constant("w", f32({1, 0, 0, 1, 1, 1}, {3, 2}));
  ValueId kernel = g.add_constant("kernel", f32({1, 0, -1}, {1, 1, 3}));
  g.add_output(op(g, OpKind::MatMul, "mm", {x, w}));
  g.add_output(op(g, OpKind::Conv, "conv", {s, kernel}, {{"pads", std::vector<std::int64_t>{1, 1}}}));
  return g;
}

std::vector<Tensor> inputs() { return {f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({1, 2, 3, 4, 5}, {1, 1, 5})}; }

}  // namespace

TEST_CASE("f32 MatMul and Conv dispatch to oneDNN; fp64 mode stays on the reference", "[unit][onednn]") {
  SECTION("f32 program") {
    k::onednn_clear_cache();
    Graph g = matmul_and_conv();
    auto out = run_once(g, inputs());
    // [1,2,3]·w = [4,5], [4,5,6]·w = [10,11]; padded s = [0,1,2,3,4,5,0], z[o] = p[o] - p[o+2].
    CHECK(values(out[0]) == std::vector<double>{4, 5, 10, 11});
    CHECK(values(out[1]) == std::vector<double>{-2, -2, -2, -2, 4});
    CHECK(k::onednn_cache_stats().calls == 2);
    CHECK(k::onednn_cache_stats().misses == 1);             // the MatMul's primitive
    CHECK(k::onednn_cache_stats().tiled_conv_calls == 1);   // the 1-D Conv runs tiled
    CHECK(k::onednn_cache_stats().tiled_conv_geometries == 1);
  }
  SECTION("fp64 reference program") {
    k::onednn_clear_cache();
    Graph g = matmul_and_conv();
    canary::vm::CompileOptions opts;
    opts.promote_f32_to_f64 = true;
    auto out = run_once(g, inputs(), opts);
    CHECK(out[0].dtype() == DType::F64);
    CHECK(values(out[0]) == std::vector<double>{4, 5, 10, 11});
    CHECK(values(out[1]) == std::vector<double>{-2, -2, -2, -2, 4});
    CHECK(k::onednn_cache_stats().calls == 0);
  }
  k::onednn_clear_cache();
}

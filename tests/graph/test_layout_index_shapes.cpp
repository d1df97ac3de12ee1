// Shape inference of DepthToSpace, SpaceToDepth, EyeLike, OneHot and TopK:
// symbolic dims scaled and divided by the block size, depth and K from
// constant inputs (fresh symbols otherwise), output dtypes, and the errors
// that name the node.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "canary/error.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "tests/graph/graph_test_support.h"

using namespace canary;
using namespace canary::graph;
using namespace canary::test;

namespace {

const Dim N = Dim::symbol("N");
const Dim H = Dim::symbol("H");

Attributes block(std::int64_t b) { return {{"blocksize", b}}; }

// A TopK node named `name` with outputs `name` and `name`_i.
void add_top_k(Graph& g, const std::string& name, ValueId x, ValueId k, Attributes attrs = {}) {
  g.add_node(OpKind::TopK, name, {x, k}, {name, name + "_i"}, std::move(attrs));
}

}  // namespace

TEST_CASE("DepthToSpace and SpaceToDepth: block-scaled dims", "[unit][shape_inference]") {
  Graph g;
  const ValueId x = g.add_input("x", f32({N, 8, H, 6}));
  add(g, OpKind::DepthToSpace, "d2s", {x}, block(2));
  add(g, OpKind::DepthToSpace, "crd", {x}, {{"blocksize", std::int64_t{2}}, {"mode", std::string("CRD")}});
  add(g, OpKind::SpaceToDepth, "s2d", {g.add_input("y", f32({N, 3, H * Dim(2), 6}))}, block(2));
  add(g, OpKind::SpaceToDepth, "odd", {g.add_input("z", f32({N, 3, H, 6}))}, block(3));
  infer_shapes(g);
  check_dims(type_of(g, "d2s").shape, {N, 2, H * Dim(2), 12});
  check_dims(type_of(g, "crd").shape, {N, 2, H * Dim(2), 12});
  check_dims(type_of(g, "s2d").shape, {N, 12, H, 3});
  const DimVector odd = type_of(g, "odd").shape;
  REQUIRE(odd.size() == 4);
  CHECK(odd[2].is_symbol());  // H / 3 is not known to be whole: a fresh symbol
  CHECK(!(odd[2] == H));
  CHECK(odd[3] == Dim(2));
}

TEST_CASE("DepthToSpace and SpaceToDepth: errors name the node", "[unit][shape_inference]") {
  SECTION("channels not a multiple of blocksize^2") {
    Graph g;
    add(g, OpKind::DepthToSpace, "d", {g.add_input("x", f32({1, 6, 2, 2}))}, block(2));
    expect_error(g, ErrorKind::Shape, {"d", "channel count 6", "multiple of 4"});
  }
  SECTION("a blocksize that is not positive") {
    Graph g;
    add(g, OpKind::SpaceToDepth, "s", {g.add_input("x", f32({1, 1, 2, 2}))}, block(0));
    expect_error(g, ErrorKind::Model, {"s", "blocksize 0"});
  }
  SECTION("no blocksize") {
    Graph g;
    add(g, OpKind::DepthToSpace, "d", {g.add_input("x", f32({1, 4, 2, 2}))});
    expect_error(g, ErrorKind::Model, {"blocksize"});
  }
  SECTION("an unknown mode") {
    Graph g;
    add(g, OpKind::DepthToSpace, "d", {g.add_input("x", f32({1, 4, 2, 2}))},
        {{"blocksize", std::int64_t{2}}, {"mode", std::string("RCD")}});
    expect_error(g, ErrorKind::Model, {"d", "mode \"RCD\""});
  }
  SECTION("a rank other than 4") {
    Graph g;
    add(g, OpKind::SpaceToDepth, "s", {g.add_input("x", f32({4, 2, 2}))}, block(2));
    expect_error(g, ErrorKind::Shape, {"s", "rank 4"});
  }
  SECTION("a width not a multiple of blocksize") {
    Graph g;
    add(g, OpKind::SpaceToDepth, "s", {g.add_input("x", f32({1, 1, 4, 5}))}, block(2));
    expect_error(g, ErrorKind::Shape, {"s", "width 5"});
  }
}

TEST_CASE("EyeLike: the input's shape, of dtype when given", "[unit][shape_inference]") {
  Graph g;
  const ValueId x = g.add_input("x", f32({N, 5}));
  add(g, OpKind::EyeLike, "same", {x});
  add(g, OpKind::EyeLike, "i64", {x}, {{"dtype", std::string("i64")}, {"k", std::int64_t{-2}}});
  infer_shapes(g);
  CHECK(type_of(g, "same").dtype == DType::F32);
  check_dims(type_of(g, "same").shape, {N, 5});
  CHECK(type_of(g, "i64").dtype == DType::I64);
  SECTION("not 2-D") {
    Graph h;
    add(h, OpKind::EyeLike, "e", {h.add_input("x", f32({2, 2, 2}))});
    expect_error(h, ErrorKind::Shape, {"e", "2-D"});
  }
  SECTION("an unknown dtype") {
    Graph h;
    add(h, OpKind::EyeLike, "e", {h.add_input("x", f32({2, 2}))}, {{"dtype", std::string("f16")}});
    expect_error(h, ErrorKind::Model, {"e", "'f16'"});
  }
}

TEST_CASE("OneHot: depth inserted at axis, values' dtype", "[unit][shape_inference]") {
  Graph g;
  const ValueId idx = g.add_input("idx", ValueType{DType::I64, {N, 3}});
  const ValueId depth = g.add_constant("depth", Tensor::scalar<std::int64_t>(10));
  const ValueId values = g.add_constant("values", Tensor::from_vector<double>({0, 1}, {2}));
  add(g, OpKind::OneHot, "last", {idx, depth, values});
  add(g, OpKind::OneHot, "first", {idx, depth, values}, {{"axis", std::int64_t{0}}});
  add(g, OpKind::OneHot, "mid", {idx, depth, values}, {{"axis", std::int64_t{-2}}});
  add(g, OpKind::OneHot, "unknown", {idx, g.add_input("d", ValueType{DType::I64, {}}), values});
  infer_shapes(g);
  CHECK(type_of(g, "last").dtype == DType::F64);
  check_dims(type_of(g, "last").shape, {N, 3, 10});
  check_dims(type_of(g, "first").shape, {10, N, 3});
  check_dims(type_of(g, "mid").shape, {N, 10, 3});
  const DimVector unknown = type_of(g, "unknown").shape;
  REQUIRE(unknown.size() == 3);
  CHECK(unknown[2].is_symbol());
  SECTION("depth below 1") {
    Graph h;
    add(h, OpKind::OneHot, "o",
        {h.add_input("i", ValueType{DType::I64, {3}}), h.add_constant("z", Tensor::scalar<std::int64_t>(0)),
         h.add_constant("v", Tensor::from_vector<float>({0, 1}, {2}))});
    expect_error(h, ErrorKind::Input, {"o", "depth 0"});
  }
  SECTION("values of three elements") {
    Graph h;
    add(h, OpKind::OneHot, "o",
        {h.add_input("i", ValueType{DType::I64, {3}}), h.add_constant("z", Tensor::scalar<std::int64_t>(4)),
         h.add_constant("v", Tensor::from_vector<float>({0, 1, 2}, {3}))});
    expect_error(h, ErrorKind::Shape, {"o", "[off, on]"});
  }
  SECTION("an axis out of range") {
    Graph h;
    add(h, OpKind::OneHot, "o",
        {h.add_input("i", ValueType{DType::I64, {3}}), h.add_constant("z", Tensor::scalar<std::int64_t>(4)),
         h.add_constant("v", Tensor::from_vector<float>({0, 1}, {2}))},
        {{"axis", std::int64_t{2}}});
    expect_error(h, ErrorKind::Shape, {"o", "axis 2"});
  }
}

TEST_CASE("TopK: K along the axis, Values of X's dtype and i64 Indices", "[unit][shape_inference]") {
  Graph g;
  const ValueId x = g.add_input("x", f32({N, 7}));
  add_top_k(g, "last", x, ints(g, "k3", {3}));
  add_top_k(g, "first", x, ints(g, "k1", {1}), {{"axis", std::int64_t{0}}});
  add_top_k(g, "unknown", x, g.add_input("k", ValueType{DType::I64, {1}}));
  infer_shapes(g);
  check_dims(type_of(g, "last").shape, {N, 3});
  CHECK(type_of(g, "last").dtype == DType::F32);
  CHECK(type_of(g, "last_i").dtype == DType::I64);
  check_dims(type_of(g, "last_i").shape, {N, 3});
  check_dims(type_of(g, "first").shape, {1, 7});
  CHECK(type_of(g, "unknown").shape[1].is_symbol());
  SECTION("K beyond the axis") {
    Graph h;
    add_top_k(h, "t", h.add_input("x", f32({2, 4})), ints(h, "k", {5}));
    expect_error(h, ErrorKind::Shape, {"t", "K 5", "[0, 4]"});
  }
  SECTION("K of two elements") {
    Graph h;
    add_top_k(h, "t", h.add_input("x", f32({2, 4})), ints(h, "k", {1, 2}));
    expect_error(h, ErrorKind::Shape, {"t", "one element"});
  }
  SECTION("a bool X") {
    Graph h;
    add_top_k(h, "t", h.add_input("x", ValueType{DType::Bool, {2, 4}}), ints(h, "k", {1}));
    expect_error(h, ErrorKind::Model, {"t", "bool"});
  }
}

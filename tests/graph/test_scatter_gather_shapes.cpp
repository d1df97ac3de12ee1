// Shape inference of GatherND, ScatterND and ScatterElements: GatherND's
// output from the tuple length and batch_dims over symbolic dims, the
// scatters keeping data's type, the dims they record equal, and the errors
// that name the node.
#include <catch2/catch.hpp>

#include <string>

#include "canary/error.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "tests/graph/graph_test_support.h"

using namespace canary;
using namespace canary::graph;
using namespace canary::test;

namespace {

const Dim N = Dim::symbol("N");
const Dim M = Dim::symbol("M");
const Dim K = Dim::symbol("K");

ValueType i64(DimVector dims) { return ValueType{DType::I64, std::move(dims)}; }

Attributes reduction(const char* r) { return {{"reduction", std::string(r)}}; }

}  // namespace

TEST_CASE("GatherND: indices.shape[:-1] + data.shape[batch_dims + k:]", "[unit][shape_inference]") {
  Graph g;
  const ValueId x = g.add_input("x", f32({N, 4, 5, 6}));
  add(g, OpKind::GatherND, "pairs", {x, g.add_input("i", i64({M, 3, 2}))});
  add(g, OpKind::GatherND, "whole", {x, g.add_input("j", i64({M, 4}))});
  add(g, OpKind::GatherND, "batched", {x, g.add_input("b", i64({N, M, 2}))}, {{"batch_dims", std::int64_t{1}}});
  add(g, OpKind::GatherND, "two_batch", {x, g.add_input("c", i64({N, 4, 1}))}, {{"batch_dims", std::int64_t{2}}});
  infer_shapes(g);
  check_dims(type_of(g, "pairs").shape, {M, 3, 5, 6});
  CHECK(type_of(g, "pairs").dtype == DType::F32);
  check_dims(type_of(g, "whole").shape, {M});
  check_dims(type_of(g, "batched").shape, {N, M, 6});
  check_dims(type_of(g, "two_batch").shape, {N, 4, 6});
}

TEST_CASE("GatherND: a symbolic batch dim is recorded equal", "[unit][shape_inference]") {
  Graph g;
  const ValueId x = g.add_input("x", f32({N, 5}));
  add(g, OpKind::GatherND, "g", {x, g.add_input("i", i64({M, 1}))}, {{"batch_dims", std::int64_t{1}}});
  infer_shapes(g);
  check_dims(type_of(g, "g").shape, {M});
  SECTION("a contradicting constant batch dim") {
    Graph h;
    add(h, OpKind::GatherND, "g", {h.add_input("x", f32({2, 5})), h.add_input("i", i64({3, 1}))},
        {{"batch_dims", std::int64_t{1}}});
    expect_error(h, ErrorKind::Shape, {"g", "batch dim 0"});
  }
}

TEST_CASE("GatherND: errors name the node", "[unit][shape_inference]") {
  SECTION("the tuple length is symbolic") {
    Graph g;
    add(g, OpKind::GatherND, "g", {g.add_input("x", f32({2, 5})), g.add_input("i", i64({3, K}))});
    expect_error(g, ErrorKind::Shape, {"g", "last dim", "must be known"});
  }
  SECTION("tuples longer than data's rank after batch_dims") {
    Graph g;
    add(g, OpKind::GatherND, "g", {g.add_input("x", f32({2, 5})), g.add_input("i", i64({2, 2}))},
        {{"batch_dims", std::int64_t{1}}});
    expect_error(g, ErrorKind::Shape, {"g", "[1, 1]"});
  }
  SECTION("empty tuples") {
    Graph g;
    add(g, OpKind::GatherND, "g", {g.add_input("x", f32({2, 5})), g.add_input("i", i64({3, 0}))});
    expect_error(g, ErrorKind::Shape, {"g", "[1, 2]"});
  }
  SECTION("batch_dims not below both ranks") {
    Graph g;
    add(g, OpKind::GatherND, "g", {g.add_input("x", f32({2, 5, 3})), g.add_input("i", i64({2, 1}))},
        {{"batch_dims", std::int64_t{2}}});
    expect_error(g, ErrorKind::Shape, {"g", "batch_dims 2", "of indices (2)"});
  }
  SECTION("negative batch_dims") {
    Graph g;
    add(g, OpKind::GatherND, "g", {g.add_input("x", f32({2, 5})), g.add_input("i", i64({2, 1}))},
        {{"batch_dims", std::int64_t{-1}}});
    expect_error(g, ErrorKind::Model, {"g", "batch_dims -1", "negative"});
  }
  SECTION("scalar data") {
    Graph g;
    add(g, OpKind::GatherND, "g", {g.add_input("x", f32({})), g.add_input("i", i64({1}))});
    expect_error(g, ErrorKind::Shape, {"g", "scalar"});
  }
  SECTION("i32 indices (ONNX allows only int64)") {
    Graph g;
    add(g, OpKind::GatherND, "g", {g.add_input("x", f32({2, 5})), g.add_input("i", ValueType{DType::I32, {1, 1}})});
    expect_error(g, ErrorKind::Model, {"g", "i32"});
  }
}

TEST_CASE("ScatterND: data's type; updates' dims recorded equal", "[unit][shape_inference]") {
  Graph g;
  const ValueId x = g.add_input("x", f32({N, 4, 5}));
  add(g, OpKind::ScatterND, "rows", {x, g.add_input("i", i64({M, 1})), g.add_input("u", f32({M, 4, 5}))});
  add(g, OpKind::ScatterND, "points", {x, g.add_input("j", i64({2, 3, 3})), g.add_input("v", f32({2, 3}))},
      reduction("add"));
  // The ranks fix a symbolic tuple length: 2 - 1 + 3 - 2 = 2.
  add(g, OpKind::ScatterND, "symbolic", {x, g.add_input("k", i64({7, K})), g.add_input("w", f32({7, 5}))},
      reduction("max"));
  infer_shapes(g);
  for (const char* name : {"rows", "points", "symbolic"}) {
    check_dims(type_of(g, name).shape, {N, 4, 5});
    CHECK(type_of(g, name).dtype == DType::F32);
  }
}

TEST_CASE("ScatterND: errors name the node", "[unit][shape_inference]") {
  SECTION("updates of the wrong rank") {
    Graph g;
    add(g, OpKind::ScatterND, "s",
        {g.add_input("x", f32({4, 5})), g.add_input("i", i64({3, 1})), g.add_input("u", f32({3}))});
    expect_error(g, ErrorKind::Shape, {"s", "must have rank 2", "after its first 1 dims"});
  }
  SECTION("updates of the wrong dims") {
    Graph g;
    add(g, OpKind::ScatterND, "s",
        {g.add_input("x", f32({4, 5})), g.add_input("i", i64({3, 1})), g.add_input("u", f32({3, 6}))});
    expect_error(g, ErrorKind::Shape, {"s", "dim 1 of updates and dim 1 of data"});
  }
  SECTION("tuples longer than data's rank") {
    Graph g;
    add(g, OpKind::ScatterND, "s",
        {g.add_input("x", f32({4, 5})), g.add_input("i", i64({3, 3})), g.add_input("u", f32({3}))});
    expect_error(g, ErrorKind::Shape, {"s", "is 3", "outside [1, 2]"});
  }
  SECTION("updates of another dtype") {
    Graph g;
    add(g, OpKind::ScatterND, "s",
        {g.add_input("x", f32({4, 5})), g.add_input("i", i64({3, 2})), g.add_input("u", i64({3}))});
    expect_error(g, ErrorKind::Model, {"s", "input 2", "i64", "expected f32"});
  }
  SECTION("an unknown reduction") {
    Graph g;
    add(g, OpKind::ScatterND, "s",
        {g.add_input("x", f32({4, 5})), g.add_input("i", i64({3, 2})), g.add_input("u", f32({3}))},
        reduction("sum"));
    expect_error(g, ErrorKind::Model, {"s", "reduction \"sum\""});
  }
}

TEST_CASE("ScatterElements: data's type; updates shaped like indices", "[unit][shape_inference]") {
  Graph g;
  const ValueId x = g.add_input("x", f32({N, 5}));
  add(g, OpKind::ScatterElements, "s", {x, g.add_input("i", i64({M, 2})), g.add_input("u", f32({M, 2}))});
  add(g, OpKind::ScatterElements, "longer",
      {x, g.add_input("j", ValueType{DType::I32, {N, 9}}), g.add_input("v", f32({N, 9}))},
      {{"axis", std::int64_t{-1}}, {"reduction", std::string("mul")}});
  infer_shapes(g);
  check_dims(type_of(g, "s").shape, {N, 5});
  check_dims(type_of(g, "longer").shape, {N, 5});
}

TEST_CASE("ScatterElements: errors name the node", "[unit][shape_inference]") {
  SECTION("updates not shaped like indices") {
    Graph g;
    add(g, OpKind::ScatterElements, "s",
        {g.add_input("x", f32({4, 5})), g.add_input("i", i64({2, 2})), g.add_input("u", f32({2, 3}))});
    expect_error(g, ErrorKind::Shape, {"s", "dim 1 of updates and indices"});
  }
  SECTION("indices of another rank") {
    Graph g;
    add(g, OpKind::ScatterElements, "s",
        {g.add_input("x", f32({4, 5})), g.add_input("i", i64({2})), g.add_input("u", f32({2}))});
    expect_error(g, ErrorKind::Shape, {"s", "input 1", "rank"});
  }
  SECTION("indices exceed data off the axis") {
    Graph g;
    add(g, OpKind::ScatterElements, "s",
        {g.add_input("x", f32({4, 5})), g.add_input("i", i64({5, 1})), g.add_input("u", f32({5, 1}))},
        {{"axis", std::int64_t{1}}});
    expect_error(g, ErrorKind::Shape, {"s", "exceeds", "dim 0"});
  }
  SECTION("axis out of range") {
    Graph g;
    add(g, OpKind::ScatterElements, "s",
        {g.add_input("x", f32({4, 5})), g.add_input("i", i64({1, 1})), g.add_input("u", f32({1, 1}))},
        {{"axis", std::int64_t{2}}});
    expect_error(g, ErrorKind::Shape, {"s", "axis"});
  }
  SECTION("an unknown reduction") {
    Graph g;
    add(g, OpKind::ScatterElements, "s",
        {g.add_input("x", f32({4, 5})), g.add_input("i", i64({1, 1})), g.add_input("u", f32({1, 1}))},
        reduction("avg"));
    expect_error(g, ErrorKind::Model, {"s", "reduction \"avg\"", "none, add, mul, max, min"});
  }
}

// ImportLimits (graph/import_limits.h): the ONNX importer and the text parser
// refuse a model with more nodes or deeper subgraph nesting than allowed,
// with an Error(Resource) naming the source, the graph and the limit.
#include <catch2/catch.hpp>

#include <string>

#include "canary/error.h"
#include "graph/import_limits.h"
#include "graph/onnx_import.h"
#include "graph/text_format.h"
#include "tests/graph/onnx_fixtures.h"

using namespace onnx_fixtures;
using canary::Error;
using canary::ErrorKind;
using canary::graph::ImportLimits;
using canary::graph::import_onnx;
using canary::graph::kMaxImportDepthCeiling;
using canary::graph::parse_graph;

namespace {

// The message (without the kind's prefix) of the Error(Resource) `f` throws.
template <typename F>
std::string resource_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Resource);
    return e.detail();
  }
  FAIL("expected a canary::Error(Resource)");
  return "";
}

// An ONNX graph of `n` Relu nodes in a chain over x: f32[2].
onnx::ModelProto relu_chain(int n) {
  std::vector<onnx::NodeProto> nodes;
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string out = "r" + std::to_string(i);
    nodes.push_back(node("Relu", {prev}, {out}));
    prev = out;
  }
  return model(graph("chain", nodes, {value("x", kFloat, {2})}, {value(prev, kFloat, {2})}));
}

// A text model whose Loop bodies nest `depth` levels deep.
std::string nested_loop_text(int depth) {
  std::string text = "canary v1\ngraph main(x: f32[2], n: i64[]) -> (y) {\n";
  std::string close;
  for (int level = 0; level < depth; ++level) {
    const std::string out = level == 0 ? "y" : "h_next";
    text += out + " = Loop(n, _, x) {body = graph b" + std::to_string(level) +
            "(i: i64[], c: bool[], h: f32[2]) -> (c, h_next) {\n";
    close = "}}\n" + close;
  }
  return text + "h_next = Relu(h)\n" + close + "}\n";
}

}  // namespace

TEST_CASE("import limits: the ONNX importer counts nodes and initializers against max_nodes", "[unit][onnx][limits]") {
  const std::string chain = bytes(relu_chain(20));
  CHECK_NOTHROW(import_onnx(chain, "chain.onnx", ImportLimits{.max_nodes = 20}));
  const std::string message = resource_error([&] { import_onnx(chain, "chain.onnx", ImportLimits{.max_nodes = 19}); });
  CHECK_THAT(message, Catch::StartsWith("chain.onnx: graph 'chain'") && Catch::Contains("more than 19 nodes") &&
                          Catch::Contains("Options::max_graph_nodes"));
  // Nodes inside subgraphs count too: nested_if_model(5) has two nodes per level.
  const std::string nested = bytes(nested_if_model(5));
  CHECK_NOTHROW(import_onnx(nested, "nested.onnx", ImportLimits{.max_nodes = 11}));
  CHECK_THAT(resource_error([&] { import_onnx(nested, "nested.onnx", ImportLimits{.max_nodes = 10}); }),
             Catch::Contains("more than 10 nodes"));
}

TEST_CASE("import limits: the ONNX importer holds subgraph nesting to max_depth", "[unit][onnx][limits]") {
  const std::string five = bytes(nested_if_model(5));
  CHECK_NOTHROW(import_onnx(five, "five.onnx", ImportLimits{.max_depth = 5}));
  CHECK_THAT(resource_error([&] { import_onnx(five, "five.onnx", ImportLimits{.max_depth = 4}); }),
             Catch::StartsWith("five.onnx: graph '") && Catch::Contains("deeper than 4 levels") &&
                 Catch::Contains("Options::max_graph_depth"));
  // Above the default of 64 when asked, and never above the ceiling.
  CHECK_NOTHROW(import_onnx(bytes(nested_if_model(100)), "deep.onnx", ImportLimits{.max_depth = 100}));
  const std::string past_ceiling = bytes(nested_if_model(kMaxImportDepthCeiling + 1));
  CHECK_THAT(resource_error([&] { import_onnx(past_ceiling, "ceiling.onnx", ImportLimits{.max_depth = 100000}); }),
             Catch::Contains("deeper than " + std::to_string(kMaxImportDepthCeiling) + " levels"));
}

TEST_CASE("import limits: the text parser counts nodes and constants against max_nodes", "[unit][text_format][limits]") {
  const std::string text =
      "canary v1\ngraph main(x: f32[2]) -> (z) {\n  const k: f32[] = [2]\n  y = Mul(x, k)\n  z = Relu(y)\n}\n";
  CHECK_NOTHROW(parse_graph(text, "m.cnr", ImportLimits{.max_nodes = 3}));
  CHECK_THAT(resource_error([&] { parse_graph(text, "m.cnr", ImportLimits{.max_nodes = 2}); }),
             Catch::StartsWith("m.cnr:5:3: ") && Catch::Contains("more than 2 nodes"));
}

TEST_CASE("import limits: the text parser holds subgraph nesting to max_depth", "[unit][text_format][limits]") {
  CHECK_NOTHROW(parse_graph(nested_loop_text(3), "loops.cnr", ImportLimits{.max_depth = 3}));
  CHECK_THAT(resource_error([&] { parse_graph(nested_loop_text(3), "loops.cnr", ImportLimits{.max_depth = 2}); }),
             Catch::StartsWith("loops.cnr:5:") && Catch::Contains("deeper than 2 levels"));
  CHECK_THAT(resource_error([&] { parse_graph(nested_loop_text(kMaxImportDepthCeiling + 1), "deep.cnr",
                                              ImportLimits{.max_depth = 1 << 30}); }),
             Catch::Contains("deeper than " + std::to_string(kMaxImportDepthCeiling) + " levels"));
}

// Test support for graph tests: building one-output nodes and constants,
// reading inferred types, comparing dims and asserting inference errors.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "canary/error.h"
#include "canary/tensor.h"
#include "graph/graph.h"
#include "graph/op_registry.h"

namespace canary::test {

// An f32 value type with the given dims.
inline graph::ValueType f32(graph::DimVector dims) { return graph::ValueType{DType::F32, std::move(dims)}; }

// Adds a one-output node whose node and output share a name.
inline graph::ValueId add(graph::Graph& g, graph::OpKind op, const std::string& name, std::vector<graph::ValueId> in,
                          graph::Attributes attrs = {}) {
  graph::NodeId n = g.add_node(op, name, std::move(in), {name}, std::move(attrs));
  return g.node(n).outputs[0];
}

// A 1-D i64 constant.
inline graph::ValueId ints(graph::Graph& g, const std::string& name, const std::vector<std::int64_t>& v) {
  return g.add_constant(name, Tensor::from_vector<std::int64_t>(v, {static_cast<std::int64_t>(v.size())}));
}

// The type of the value called `name`.
inline const graph::ValueType& type_of(const graph::Graph& g, const std::string& name) {
  return g.value(*g.find_value(name)).type;
}

// Asserts dims are structurally equal, element by element.
inline void check_dims(const graph::DimVector& got, const graph::DimVector& want) {
  INFO("got " << graph::dims_to_string(got) << ", want " << graph::dims_to_string(want));
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) CHECK(got[k] == want[k]);
}

// Evaluates a dim with one symbol bound.
inline std::int64_t eval(const graph::Dim& d, const char* name, std::int64_t value) {
  std::optional<std::int64_t> v = d.evaluate(graph::Bindings{{name, value}});
  REQUIRE(v.has_value());
  return *v;
}

// Runs infer_shapes and checks the error's kind and that its message (without
// the kind prefix) contains every fragment.
inline void expect_error(graph::Graph& g, ErrorKind kind, const std::vector<std::string>& fragments) {
  try {
    graph::infer_shapes(g);
  } catch (const Error& e) {
    INFO("message: " << e.what());
    CHECK(e.kind() == kind);
    for (const std::string& f : fragments) CHECK_THAT(e.detail(), Catch::Matchers::Contains(f));
    return;
  }
  FAIL("infer_shapes accepted the graph");
}

}  // namespace canary::test

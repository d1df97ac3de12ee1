// Test support for ONNX import tests: the type text of an imported value and
// the message of the model error an import throws.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "canary/error.h"
#include "graph/graph.h"
#include "graph/onnx_import.h"

namespace canary::test {

// The type text of a named value of a graph.
inline std::string type_text(const graph::Graph& g, const std::string& name) {
  auto v = g.find_value(name);
  REQUIRE(v);
  return g.value(*v).type.to_string();
}

// The message of the Error(Model) importing the bytes throws.
inline std::string import_error(const std::string& data, const std::string& source = "bad.onnx") {
  try {
    graph::import_onnx(data, source);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Model);
    return e.what();
  }
  FAIL("expected a canary::Error");
  return "";
}

}  // namespace canary::test

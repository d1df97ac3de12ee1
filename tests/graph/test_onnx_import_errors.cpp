// ONNX import of bad files: each gives Error(Model) naming the source and the
// node, tensor or input at fault, never a crash or a huge allocation.
#include <catch2/catch.hpp>

#include "canary/error.h"
#include "graph/onnx_import.h"
#include "tests/graph/onnx_fixtures.h"
#include "tests/graph/onnx_import_checks.h"

using namespace onnx_fixtures;
using canary::Error;
using canary::ErrorKind;
using canary::graph::import_onnx;
using canary::test::import_error;

namespace {

// A model with one input x and the given initializers feeding Add(x, w).
onnx::ModelProto add_initializer_model(const onnx::TensorProto& w) {
  return model(
      graph("g", {node("Add", {"x", w.name()}, {"y"})}, {value("x", kFloat, {2})}, {unshaped("y", kFloat)}, {w}));
}

}  // namespace

TEST_CASE("onnx errors: truncated and garbage bytes", "[unit][onnx]") {
  std::string good = bytes(mlp_model());
  std::string cut = import_error(good.substr(0, good.size() / 2), "cut.onnx");
  CHECK_THAT(cut, Catch::Contains("cut.onnx") && Catch::Contains("protobuf"));
  std::string garbage(64, '\xff');
  CHECK_THAT(import_error(garbage, "garbage.onnx"), Catch::Contains("garbage.onnx"));
  CHECK_THAT(import_error("", "empty.onnx"), Catch::Contains("no graph"));
  // Every prefix either imports or throws canary::Error (no crash).
  for (std::size_t n = 0; n < good.size(); n += 7) {
    try {
      import_onnx(good.substr(0, n), "prefix.onnx");
    } catch (const Error&) {
    }
  }
}

TEST_CASE("onnx errors: opsets outside 7 to 17", "[unit][onnx]") {
  for (std::int64_t opset : {6, 18}) {
    onnx::ModelProto m = mlp_model();
    m.mutable_opset_import(0)->set_version(opset);
    CHECK_THAT(import_error(bytes(m)), Catch::Contains("unsupported opset " + std::to_string(opset) +
                                                       " for domain '' (supported 7 to 17; 7 to 12 upgraded to 13"));
  }
}

TEST_CASE("onnx errors: an old-opset model the converter cannot take is refused with the checker's reason",
          "[unit][onnx]") {
  // Opset 9: a node reads a value nothing defines.
  onnx::ModelProto m = model(graph("g", {node("Relu", {"nowhere"}, {"y"}, {}, "r")}, {value("x", kFloat, {2})},
                                   {unshaped("y", kFloat)}),
                             9);
  CHECK_THAT(import_error(bytes(m)), Catch::Contains("cannot upgrade the model from opset 9 to 13") &&
                                         Catch::Contains("not a valid ONNX model"));
  // An output nothing defines (the converter's own import would dereference it).
  onnx::ModelProto lost = model(graph("g", {node("Relu", {"x"}, {"y"}, {}, "r")}, {value("x", kFloat, {2})},
                                      {unshaped("nowhere", kFloat)}),
                                11);
  CHECK_THAT(import_error(bytes(lost)), Catch::Contains("cannot upgrade the model from opset 11 to 13: graph 'g': "
                                                        "output 'nowhere' is not defined in the graph"));
  // A node of another domain named like an ONNX op (the converter finds
  // adapters by name alone; Softmax's would read an input it lacks).
  onnx::NodeProto foreign = node("Softmax", {}, {"y"}, {}, "sm");
  foreign.set_domain("x");
  onnx::ModelProto other = model(graph("g", {foreign}, {value("x", kFloat, {2})}, {unshaped("y", kFloat)}), 12);
  other.add_opset_import()->set_domain("x");
  CHECK_THAT(import_error(bytes(other)), Catch::Contains("node 'sm' (Softmax): domain 'x' is not supported"));
  // An experimental op (the converter would loop on it forever).
  onnx::ModelProto fill = model(graph("g", {node("ConstantFill", {}, {"y"}, {}, "cf")}, {value("x", kFloat, {2})},
                                      {unshaped("y", kFloat)}),
                                9);
  CHECK_THAT(import_error(bytes(fill)), Catch::Contains("node 'cf' (ConstantFill): unknown op in opset 9"));
  // The default domain imported twice.
  onnx::ModelProto twice = mlp_model();
  twice.add_opset_import()->set_version(11);
  CHECK_THAT(import_error(bytes(twice)), Catch::Contains("imports the default domain twice"));
}

TEST_CASE("onnx errors: unknown op, other domains and ops outside the opset", "[unit][onnx]") {
  auto one = [](onnx::NodeProto n) {
    return model(graph("g", {n}, {value("x", kFloat, {2})}, {unshaped("y", kFloat)}));
  };
  CHECK_THAT(import_error(bytes(one(node("Foo", {"x"}, {"y"}, {}, "foo1")))),
             Catch::Contains("node 'foo1' (Foo): unknown op"));
  onnx::NodeProto ms = node("Relu", {"x"}, {"y"}, {}, "fused");
  ms.set_domain("com.microsoft");
  CHECK_THAT(import_error(bytes(one(ms))), Catch::Contains("node 'fused' (Relu)") && Catch::Contains("com.microsoft"));
  CHECK_THAT(import_error(bytes(one(node("Gelu", {"x"}, {"y"}, {}, "g1")))),
             Catch::Contains("node 'g1' (Gelu): unknown op in opset 13"));
  CHECK_THAT(import_error(bytes(one(node("Trilu", {"x"}, {"y"}, {}, "t1")))),
             Catch::Contains("node 't1' (Trilu): unknown op in opset 13 (it exists from opset 14)"));
}

TEST_CASE("onnx errors: float16 input, initializer and Cast target", "[unit][onnx]") {
  auto in16 = model(graph("g", {node("Relu", {"h"}, {"y"})}, {value("h", kFloat16, {2})}, {unshaped("y", kFloat)}));
  CHECK_THAT(import_error(bytes(in16)), Catch::Contains("input 'h'") && Catch::Contains("FLOAT16"));
  std::uint16_t halfs[2] = {0x3c00, 0x4000};
  CHECK_THAT(import_error(bytes(add_initializer_model(raw_tensor("w16", kFloat16, {2}, halfs, sizeof halfs)))),
             Catch::Contains("initializer 'w16'") && Catch::Contains("FLOAT16"));
  auto cast = model(graph("g", {node("Cast", {"x"}, {"y"}, {attr_int("to", kFloat16)}, "to_half")},
                          {value("x", kFloat, {2})}, {unshaped("y", kFloat)}));
  CHECK_THAT(import_error(bytes(cast)), Catch::Contains("node 'to_half' (Cast)") && Catch::Contains("FLOAT16"));
}

TEST_CASE("onnx errors: external data, count mismatch and huge dims", "[unit][onnx]") {
  onnx::TensorProto ext = f32_tensor("w_ext", {2}, {});
  ext.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = ext.add_external_data();
  entry->set_key("location");
  entry->set_value("weights.bin");
  CHECK_THAT(import_error(bytes(add_initializer_model(ext))),
             Catch::Contains("initializer 'w_ext'") && Catch::Contains("EXTERNAL"));
  CHECK_THAT(import_error(bytes(add_initializer_model(f32_tensor("w3", {2}, {1, 2, 3})))),
             Catch::Contains("initializer 'w3'") && Catch::Contains("2 elements") && Catch::Contains("holds 3"));
  // 2^40 elements and no data: an error, not an allocation.
  CHECK_THAT(import_error(bytes(add_initializer_model(f32_tensor("huge", {std::int64_t{1} << 40}, {})))),
             Catch::Contains("initializer 'huge'"));
  float two[2] = {1, 2};
  CHECK_THAT(import_error(bytes(
                 add_initializer_model(raw_tensor("huge_raw", kFloat, {std::int64_t{1} << 40}, two, sizeof two)))),
             Catch::Contains("initializer 'huge_raw'") && Catch::Contains("raw_data"));
  CHECK_THAT(import_error(
                 bytes(add_initializer_model(f32_tensor("over", {std::int64_t{1} << 32, std::int64_t{1} << 32}, {})))),
             Catch::Contains("initializer 'over'") && Catch::Contains("overflows"));
  CHECK_THAT(import_error(bytes(add_initializer_model(f32_tensor("neg", {-2}, {})))),
             Catch::Contains("initializer 'neg'") && Catch::Contains("negative"));
}

TEST_CASE("onnx errors: a cycle and duplicate outputs", "[unit][onnx]") {
  auto cyc = model(graph("g",
                         {node("Relu", {"b"}, {"a"}, {}, "ra"), node("Relu", {"a"}, {"b"}, {}, "rb"),
                          node("Add", {"x", "a"}, {"y"}, {}, "out")},
                         {value("x", kFloat, {2})}, {unshaped("y", kFloat)}));
  std::string msg = import_error(bytes(cyc));
  CHECK_THAT(msg, Catch::Contains("cycle"));
  CHECK((msg.find("node 'ra'") != std::string::npos || msg.find("node 'rb'") != std::string::npos));
  CHECK(msg.find("node 'out'") == std::string::npos);
  auto dup = model(graph("g", {node("Relu", {"x"}, {"y"}, {}, "r1"), node("Neg", {"x"}, {"y"}, {}, "r2")},
                         {value("x", kFloat, {2})}, {unshaped("y", kFloat)}));
  CHECK_THAT(import_error(bytes(dup)), Catch::Contains("node 'r2' (Neg)") && Catch::Contains("'y' is already defined"));
}

TEST_CASE("onnx errors: an input without a shape", "[unit][onnx]") {
  auto m = model(graph("g", {node("Relu", {"x"}, {"y"})}, {unshaped("x", kFloat)}, {unshaped("y", kFloat)}));
  CHECK_THAT(import_error(bytes(m)), Catch::Contains("input 'x'") && Catch::Contains("no shape"));
}

TEST_CASE("onnx errors: subgraphs nested deeper than 64", "[unit][onnx]") {
  // Over the default ImportLimits::max_depth: a resource limit, not a malformed model.
  for (int depth : {65, 70}) {
    try {
      import_onnx(bytes(nested_if_model(depth)), "bad.onnx");
      FAIL("subgraphs nested " << depth << " deep imported");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Resource);
      CHECK_THAT(std::string(e.what()), Catch::Contains("deeper than 64"));
    }
  }
}

TEST_CASE("onnx errors: attributes the IR does not have", "[unit][onnx]") {
  auto relu = model(graph("g", {node("Relu", {"x"}, {"y"}, {attr_int("bogus", 1)}, "r")}, {value("x", kFloat, {2})},
                          {unshaped("y", kFloat)}));
  CHECK_THAT(import_error(bytes(relu)), Catch::Contains("node 'r' (Relu): unknown attribute 'bogus'"));
  // Attributes only graph passes set are not part of any ONNX op.
  auto pool = model(graph("g", {node("MaxPool", {"x"}, {"y"}, {attr_ints("kernel_shape", {2, 2}),
                                                                attr_int("channels_last", 1)}, "p")},
                          {value("x", kFloat, {1, 2, 4, 4})}, {unshaped("y", kFloat)}));
  CHECK_THAT(import_error(bytes(pool)), Catch::Contains("node 'p' (MaxPool): unknown attribute 'channels_last'"));
  onnx::ModelProto lstm = lstm_model();
  *lstm.mutable_graph()->mutable_node(0)->add_attribute() = attr_floats("activation_alpha", {0.5f});
  CHECK_THAT(import_error(bytes(lstm)), Catch::Contains("node 'lstm' (LSTM): attribute 'activation_alpha'"));
  auto wrong = model(graph("g", {node("Concat", {"x", "x"}, {"y"}, {attr_float("axis", 0)}, "cat")},
                           {value("x", kFloat, {2})}, {unshaped("y", kFloat)}));
  CHECK_THAT(import_error(bytes(wrong)), Catch::Contains("node 'cat' (Concat): attribute 'axis' has type FLOAT"));
}

TEST_CASE("onnx errors: an undefined input and an unreadable file", "[unit][onnx]") {
  auto m = model(graph("g", {node("Add", {"x", "nowhere"}, {"y"}, {}, "add")}, {value("x", kFloat, {2})},
                       {unshaped("y", kFloat)}));
  CHECK_THAT(import_error(bytes(m)), Catch::Contains("node 'add' (Add)") && Catch::Contains("'nowhere'"));
  try {
    canary::graph::import_onnx_file("/nonexistent/dir/model.onnx");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Model);
    CHECK_THAT(e.what(), Catch::Contains("/nonexistent/dir/model.onnx"));
  }
}

TEST_CASE("onnx errors: an unshaped Loop body input whose outer type is unknown before inference", "[unit][onnx]") {
  // The carried value comes from a node without value_info, so the body's
  // unshaped input `s` has no type to take.
  onnx::ModelProto m = loop_model();
  auto* g = m.mutable_graph();
  *g->add_node() = node("Neg", {"s0"}, {"s0_neg"});
  g->mutable_node(0)->set_input(2, "s0_neg");
  CHECK_THAT(import_error(bytes(m)), Catch::Contains("input 's'") && Catch::Contains("no shape"));
  // With value_info for the carried value it imports.
  *g->add_value_info() = value("s0_neg", kFloat, {2});
  CHECK_NOTHROW(import_onnx(bytes(m), "typed.onnx"));
}

TEST_CASE("onnx errors: an old-opset model past the import limits is refused before the upgrade", "[unit][onnx]") {
  onnx::ModelProto m = model(graph("g",
                                   {node("Relu", {"x"}, {"a"}), node("Relu", {"a"}, {"b"}), node("Relu", {"b"}, {"y"})},
                                   {value("x", kFloat, {2})}, {unshaped("y", kFloat)}),
                             11);
  canary::graph::ImportLimits limits;
  limits.max_nodes = 2;
  try {
    canary::graph::import_onnx(bytes(m), "big.onnx", limits);
    FAIL("expected an error");
  } catch (const canary::Error& e) {
    CHECK(e.kind() == canary::ErrorKind::Resource);
  }
}

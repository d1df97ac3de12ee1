// Models of older opsets (7 to 12) upgraded to opset 13 on load through
// libonnx's version converter: its per-op adapters are the standard's own
// account of what changed between versions (Split's and Squeeze's
// attributes becoming inputs, BatchNormalization's spatial attribute,
// Clip's bounds, ...), so the importer and every kernel stay written for
// one opset. The graph is checked first (onnx::checker: every node against
// its schema, values defined before use and once): the converter expects a
// well-formed graph, and a malformed one is refused with the checker's
// message instead of reaching it. It is checked as the checker checks a
// subgraph, which lets graph inputs and outputs go without a shape as
// Canary's importer does.
#include <onnx/checker.h>
#include <onnx/version_converter/convert.h>

#include <exception>
#include <set>
#include <unordered_map>

#include "graph/onnx_import_internal.h"

namespace canary::graph::onnx_import {
namespace {

// What the converter needs and neither libonnx's checker nor its own import
// verifies, in every graph (subgraphs too): the importer's node-count and
// nesting limits (the converter copies the model and walks it per adapter);
// nodes of the default domain only (the converter finds adapters by op name
// alone, so a node of another domain named like an ONNX op would meet an
// adapter that indexes inputs it lacks); ops with a non-experimental schema
// at `from` (the converter loops forever on an experimental one); no
// opset-8 Scan (its adapter drops the inputs of unknown size); and every
// graph output defined (the converter's import dereferences it unchecked).
struct UpgradeCheck {
  const std::string& what;
  const ImportLimits& limits;
  std::int64_t from;
  std::size_t nodes = 0;

  void graph(const onnx::GraphProto& g, std::set<std::string> defined, int depth) {
    check_nesting_depth(limits, depth, "graph '" + g.name() + "'");
    nodes += static_cast<std::size_t>(g.node_size() + g.initializer_size());
    check_node_count(limits, nodes, "graph '" + g.name() + "'");
    for (const onnx::ValueInfoProto& v : g.input()) defined.insert(v.name());
    for (const onnx::TensorProto& t : g.initializer()) defined.insert(t.name());
    for (const onnx::NodeProto& n : g.node()) {
      node(n);
      for (const std::string& out : n.output()) defined.insert(out);
    }
    for (const onnx::ValueInfoProto& v : g.output())
      if (defined.count(v.name()) == 0)
        fail(what + ": graph '" + g.name() + "': output '" + v.name() + "' is not defined in the graph");
    for (const onnx::NodeProto& n : g.node())
      for (const onnx::AttributeProto& a : n.attribute()) {
        if (a.has_g()) graph(a.g(), defined, depth + 1);
        for (const onnx::GraphProto& sub : a.graphs()) graph(sub, defined, depth + 1);
      }
  }

  void node(const onnx::NodeProto& n) {
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      fail(what + ": " + describe_node(n) + ": domain '" + n.domain() +
           "' is not supported (only the default ONNX domain is)");
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(from), "");
    if (schema == nullptr || schema->support_level() == onnx::OpSchema::SupportType::EXPERIMENTAL)
      fail(what + ": " + describe_node(n) + ": unknown op in opset " + std::to_string(from));
    if (n.op_type() == "Scan" && from <= 8)
      fail(what + ": " + describe_node(n) + ": the batched Scan of opset 8 is not supported");
  }
};

void check_graph(const onnx::ModelProto& model) {
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(model.ir_version()));
  std::unordered_map<std::string, int> opsets;
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    const int version = static_cast<int>(id.version());
    if (id.domain().empty() || id.domain() == "ai.onnx") opsets[""] = opsets["ai.onnx"] = version;
    else opsets[id.domain()] = version;
  }
  ctx.set_opset_imports(std::move(opsets));
  ctx.set_is_main_graph(false);
  onnx::checker::LexicalScopeContext scope;
  onnx::checker::check_graph(model.graph(), ctx, scope);
}

}  // namespace

onnx::ModelProto upgrade_opset(const onnx::ModelProto& model, std::int64_t from, const ImportLimits& limits) {
  const std::string what = "cannot upgrade the model from opset " + std::to_string(from) + " to " +
                           std::to_string(kMinOpset);
  UpgradeCheck{what, limits, from}.graph(model.graph(), {}, 0);
  try {
    check_graph(model);
  } catch (const std::exception& e) {
    fail(what + ": it is not a valid ONNX model (" + first_line(e.what()) + ")");
  }
  try {
    return onnx::version_conversion::ConvertVersion(model, static_cast<int>(kMinOpset));
  } catch (const std::exception& e) {
    fail(what + " (" + first_line(e.what()) + ")");
  }
}

}  // namespace canary::graph::onnx_import

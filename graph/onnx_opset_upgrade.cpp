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

// Every graph output (of subgraphs too) names a value its graph or an
// enclosing one defines: the checker leaves this to the importer, and the
// converter's own import dereferences the definition unchecked.
void check_outputs_defined(const onnx::GraphProto& graph, std::set<std::string> defined, const std::string& what) {
  for (const onnx::ValueInfoProto& v : graph.input()) defined.insert(v.name());
  for (const onnx::TensorProto& t : graph.initializer()) defined.insert(t.name());
  for (const onnx::NodeProto& n : graph.node())
    for (const std::string& out : n.output()) defined.insert(out);
  for (const onnx::ValueInfoProto& v : graph.output())
    if (defined.count(v.name()) == 0)
      fail(what + ": graph '" + graph.name() + "': output '" + v.name() + "' is not defined in the graph");
  for (const onnx::NodeProto& n : graph.node())
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) check_outputs_defined(a.g(), defined, what);
      for (const onnx::GraphProto& g : a.graphs()) check_outputs_defined(g, defined, what);
    }
}

void check_graph(const onnx::ModelProto& model) {
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(model.ir_version()));
  std::unordered_map<std::string, int> opsets;
  for (const onnx::OperatorSetIdProto& id : model.opset_import())
    opsets[id.domain() == "ai.onnx" ? "" : id.domain()] = static_cast<int>(id.version());
  ctx.set_opset_imports(std::move(opsets));
  ctx.set_is_main_graph(false);
  onnx::checker::LexicalScopeContext scope;
  onnx::checker::check_graph(model.graph(), ctx, scope);
}

}  // namespace

onnx::ModelProto upgrade_opset(const onnx::ModelProto& model, std::int64_t from) {
  const std::string what = "cannot upgrade the model from opset " + std::to_string(from) + " to " +
                           std::to_string(kMinOpset);
  check_outputs_defined(model.graph(), {}, what);
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

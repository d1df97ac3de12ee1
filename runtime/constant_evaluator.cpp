// evaluate_constant_node: a one-node graph of constants, compiled and run.
#include "runtime/constant_evaluator.h"

#include "canary/error.h"
#include "graph/op_registry.h"
#include "vm/compiler.h"
#include "vm/interpreter.h"

namespace canary {

std::optional<std::vector<Tensor>> evaluate_constant_node(const graph::Node& node,
                                                          const std::vector<const Tensor*>& inputs) {
  try {
    graph::Graph g("constant_folding");
    std::vector<graph::ValueId> ids;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      ids.push_back(inputs[i] ? g.add_constant("in" + std::to_string(i), *inputs[i]) : graph::ValueId::none());
    std::vector<std::string> names;
    for (std::size_t i = 0; i < node.outputs.size(); ++i)
      names.push_back(node.outputs[i].valid() ? "out" + std::to_string(i) : std::string());
    const graph::NodeId n = g.add_node(node.op, node.name, ids, names, node.attrs);
    for (graph::ValueId v : g.node(n).outputs)
      if (v.valid()) g.add_output(v);
    graph::infer_shapes(g);
    vm::Interpreter interpreter(vm::compile(g), vm::RunLimits{});
    return interpreter.run({});
  } catch (const Error&) {
    return std::nullopt;  // the node keeps computing at run time, where its error belongs
  }
}

}  // namespace canary

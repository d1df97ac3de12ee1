// Small builders shared by the VM tests: typed values, one-output nodes, tensors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "canary/tensor.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "vm/compiler.h"
#include "vm/interpreter.h"

namespace vmtest {

using canary::DType;
using canary::Tensor;
using canary::graph::Attributes;
using canary::graph::Dim;
using canary::graph::Graph;
using canary::graph::OpKind;
using canary::graph::ValueId;
using canary::graph::ValueType;

inline ValueType type_of(DType dt, std::vector<Dim> dims) { return ValueType{dt, std::move(dims)}; }

// Adds a node with one output named like the node; returns the output.
inline ValueId op(Graph& g, OpKind kind, const std::string& name, std::vector<ValueId> inputs, Attributes attrs = {}) {
  auto id = g.add_node(kind, name, std::move(inputs), {name}, std::move(attrs));
  return g.node(id).outputs[0];
}

inline Tensor f32(const std::vector<float>& v, std::vector<std::int64_t> shape) {
  return Tensor::from_vector<float>(v, std::span<const std::int64_t>(shape));
}
inline Tensor i64(std::int64_t v) { return Tensor::scalar<std::int64_t>(v); }
inline Tensor i64s(const std::vector<std::int64_t>& v) {
  std::vector<std::int64_t> shape{static_cast<std::int64_t>(v.size())};
  return Tensor::from_vector<std::int64_t>(v, std::span<const std::int64_t>(shape));
}
inline Tensor boolean(bool v) { return Tensor::scalar<bool>(v); }

// Every element as double.
inline std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < t.numel(); ++i) out.push_back(t.element_as_double(i));
  return out;
}

// Compiles an inferred graph and runs it once.
inline std::vector<Tensor> run_once(Graph& g, std::vector<Tensor> inputs, canary::vm::CompileOptions opts = {}) {
  canary::graph::infer_shapes(g);
  canary::vm::Interpreter interp(canary::vm::compile(g, opts));
  return interp.run(inputs);
}

// The pc of the first kernel instruction of the named node.
inline canary::vm::Pc pc_of(const canary::vm::Program& p, const std::string& node) {
  for (canary::vm::Pc pc = 0; pc < p.instruction_count(); ++pc) {
    const auto* n = p.node_of(p.at(pc));
    if (n && n->name == node && p.at(pc).op == canary::vm::Opcode::Kernel) return pc;
  }
  return canary::vm::kNoPc;
}

// A subgraph sharing the parent's symbols.
inline std::shared_ptr<Graph> subgraph(const Graph& parent, const std::string& name) {
  return std::make_shared<Graph>(name, parent.shared_symbols());
}

}  // namespace vmtest

// ModelBuilder: records a graph described in code and replays it into the IR.
#include <functional>

#include "graph/op_registry.h"
#include "runtime/model_impl.h"

namespace canary {

struct ModelBuilder::Step {
  std::function<void(graph::Graph&)> apply;
};

namespace {

// The graph value named `name`, or Error(Model) naming the node that wanted it.
graph::ValueId lookup(const graph::Graph& g, const std::string& name, const std::string& user) {
  if (auto v = g.find_value(name)) return *v;
  throw Error(ErrorKind::Model, user + ": value '" + name + "' is not defined before its use");
}

// A public dim (constant or expression text) as an IR Dim.
graph::Dim to_dim(graph::SymbolTable& symbols, const ModelBuilder::Dim& d) {
  if (const auto* c = std::get_if<std::int64_t>(&d)) return graph::Dim(*c);
  graph::Dim parsed = graph::parse_dim(std::get<std::string>(d));
  for (const std::string& s : parsed.symbols()) symbols.declare(s);
  return parsed;
}

// A public attribute value as an IR attribute value.
graph::AttrValue to_attr(const ModelBuilder::AttrValue& v) {
  return std::visit([](const auto& x) -> graph::AttrValue { return x; }, v);
}

}  // namespace

ModelBuilder::ModelBuilder(std::string graph_name) : graph_name_(std::move(graph_name)) {}

ModelBuilder& ModelBuilder::input(std::string name, DType dtype, std::vector<Dim> dims) {
  steps_.push_back(std::make_shared<Step>(Step{[=](graph::Graph& g) {
    graph::ValueType type{dtype, {}};
    for (const Dim& d : dims) type.shape.push_back(to_dim(g.symbols(), d));
    g.add_input(name, std::move(type));
  }}));
  return *this;
}

ModelBuilder& ModelBuilder::constant(std::string name, Tensor value) {
  steps_.push_back(std::make_shared<Step>(Step{[=](graph::Graph& g) { g.add_constant(name, value.clone()); }}));
  return *this;
}

ModelBuilder& ModelBuilder::node(std::string op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                                 std::vector<Attr> attrs, std::string node_name) {
  steps_.push_back(std::make_shared<Step>(Step{[=](graph::Graph& g) {
    const std::string user = "node '" + (node_name.empty() ? (outputs.empty() ? op : outputs[0]) : node_name) + "' (" + op + ")";
    auto kind = graph::find_op(op);
    if (!kind) throw Error(ErrorKind::Model, user + ": unknown op '" + op + "'");
    std::vector<graph::ValueId> ins;
    for (const std::string& in : inputs) ins.push_back(in.empty() ? graph::ValueId::none() : lookup(g, in, user));
    graph::Attributes ir_attrs;
    for (const Attr& a : attrs) ir_attrs.emplace(a.name, to_attr(a.value));
    g.add_node(*kind, node_name, std::move(ins), outputs, std::move(ir_attrs));
  }}));
  return *this;
}

ModelBuilder& ModelBuilder::output(std::string name) {
  steps_.push_back(std::make_shared<Step>(Step{[=](graph::Graph& g) { g.add_output(lookup(g, name, "graph output")); }}));
  return *this;
}

ModelBuilder& ModelBuilder::symbol_range(std::string symbol, std::int64_t lo, std::int64_t hi) {
  steps_.push_back(std::make_shared<Step>(Step{[=](graph::Graph& g) {
    g.symbols().declare(symbol);
    g.symbols().set_range(symbol, lo, hi);
  }}));
  return *this;
}

Model Runtime::build(const ModelBuilder& builder) const {
  auto g = std::make_shared<graph::Graph>(builder.graph_name_);
  for (const auto& step : builder.steps_) step->apply(*g);
  graph::infer_shapes(*g);
  return make_model(std::move(g), options_);
}

}  // namespace canary

// generate_random_graph: chooses the inputs, a sequence of random steps
// (with at most one If and one Loop in the main graph), the outputs (values
// nothing else uses), and assembles the model text.
#include "tests/jit_differential/random_graph.h"

#include <utility>

#include "tests/jit_differential/graph_writer.h"

namespace canary::differential {

// Declares a graph input with values in [-kInputRange, kInputRange].
Val GraphWriter::add_input(Scope& main, const std::string& name, const Dims& dims) {
  std::string decl = name + ": f32[";
  for (std::size_t i = 0; i < dims.size(); ++i) decl += (i ? ", " : "") + dims[i];
  input_decls_.push_back(decl + "]");
  graph_.inputs.push_back(InputSpec{name, DType::F32, dims});
  Val v{name, dims, exact_bound(-kInputRange, kInputRange), true};
  main.values.push_back(v);
  return v;
}

// Picks C symbolic or constant, a 2-D family ([N, C] with [C], [1], [N, 1]),
// a 3-D family ([N, C, T] with [C, 1], [T], [N, 1, T]) or both.
void GraphWriter::choose_inputs(Scope& main) {
  graph_.symbolic_c = rng_.chance(0.5);
  cdim_ = graph_.symbolic_c ? "C" : std::to_string(rng_.range(2, 5));
  double f = rng_.uniform(0.0, 1.0);
  bool two = f < 0.7, three = f >= 0.45;
  if (two) {
    add_input(main, "x", {"N", cdim_});
    if (rng_.chance(0.5)) add_input(main, "b", {cdim_});
    if (rng_.chance(0.4)) add_input(main, "s", {"1"});
    if (rng_.chance(0.4)) add_input(main, "m", {"N", "1"});
    if (rng_.chance(0.3)) add_input(main, "y", {"N", cdim_});
  }
  if (three) {
    uses_t_ = true;
    add_input(main, "x3", {"N", cdim_, "T"});
    if (rng_.chance(0.5)) add_input(main, "w", {cdim_, "1"});
    if (rng_.chance(0.3)) add_input(main, "t", {"T"});
    if (rng_.chance(0.3)) add_input(main, "z", {"N", "1", "T"});
  }
}

// One random main-graph step; falls back to a unary op when the chosen kind does not apply.
Val GraphWriter::random_step(Scope& scope) {
  double r = rng_.uniform(0.0, 1.0);
  std::optional<Val> out;
  if (r < 0.30) {
    // unary, below
  } else if (r < 0.60) {
    Val a = *pick(scope, [](const Val&) { return true; });
    std::optional<Val> b = rng_.chance(0.65) ? partner(scope, a, false) : std::nullopt;
    return binary(scope, a, b ? *b : constant_like(scope, a, false));
  } else if (r < 0.68) {
    out = reduction(scope);
  } else if (r < 0.73) {
    out = softmax(scope);
  } else if (r < 0.78) {
    out = layer_norm(scope);
  } else if (r < 0.87) {
    out = matmul(scope);
  } else if (r < 0.93) {
    out = data_movement(scope);
  } else if (r < 0.965) {
    out = if_node(scope);
  } else {
    out = loop_node(scope);
  }
  if (out) return *out;
  return unary(scope, *pick(scope, [](const Val&) { return true; }));
}

// Outputs: up to four of the latest values nothing uses (at least the last value).
void GraphWriter::choose_outputs(Scope& main) {
  std::vector<const Val*> sinks;
  for (auto it = main.values.rbegin(); it != main.values.rend() && sinks.size() < 4; ++it)
    if (!it->is_input && uses_[it->name] == 0) sinks.push_back(&*it);
  if (sinks.empty()) sinks.push_back(&main.values.back());
  for (auto it = sinks.rbegin(); it != sinks.rend(); ++it) {
    const Val& v = **it;
    graph_.outputs.push_back(OutputBound{v.name, max_abs(v.bound), v.bound.g, v.bound.depth});
  }
}

// The whole model: version line, symbol ranges, the main graph.
std::string GraphWriter::model_text(const Scope& main) const {
  std::string s = "canary v1\nsymbols {\n  N in [0, " + std::to_string(kMaxN) + "]\n";
  if (graph_.symbolic_c) s += "  C in [1, " + std::to_string(kMaxC) + "]\n";
  if (uses_t_) s += "  T in [1, " + std::to_string(kMaxT) + "]\n";
  s += "}\ngraph main(";
  for (std::size_t i = 0; i < input_decls_.size(); ++i) s += (i ? ", " : "") + input_decls_[i];
  s += ") -> (";
  for (std::size_t i = 0; i < graph_.outputs.size(); ++i) s += (i ? ", " : "") + graph_.outputs[i].name;
  return s + ") {\n" + main.text + "}\n";
}

// Writes the model: inputs, 3 to 10 steps (an If and a Loop each planted in
// about a quarter of the graphs, besides random picks), outputs.
void GraphWriter::write() {
  Scope main;
  choose_inputs(main);
  std::int64_t steps = rng_.range(3, 10);
  std::int64_t if_at = rng_.chance(0.25) ? rng_.range(0, steps - 1) : -1;
  std::int64_t loop_at = rng_.chance(0.25) ? rng_.range(0, steps - 1) : -1;
  for (std::int64_t i = 0; i < steps; ++i) {
    std::optional<Val> planted;
    if (i == if_at) planted = if_node(main);
    if (i == loop_at) planted = loop_node(main);
    if (!planted) random_step(main);
  }
  choose_outputs(main);
  graph_.text = model_text(main);
}

// The graph for a seed.
RandomGraph generate_random_graph(std::uint64_t seed) {
  RandomGraph graph;
  GraphWriter(seed, graph).write();
  RandomGraph twin;
  GraphWriter(seed, twin, GraphWriter::ClipBounds::Unsaturated).write();
  graph.unsaturated_text = std::move(twin.text);
  return graph;
}

}  // namespace canary::differential

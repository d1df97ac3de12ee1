// The writer behind generate_random_graph: scopes of values with tracked dims
// and bounds, and emitters that append well-conditioned nodes in the text
// format. Dims are tracked as tags ("N", "C", "T", digits, or a derived tag)
// so every binary op is broadcast-compatible by construction.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/jit_differential/random_graph.h"
#include "tests/jit_differential/seeded_rng.h"
#include "tests/jit_differential/value_bounds.h"

namespace canary::differential {

using Dims = std::vector<std::string>;

// A generated f32 value visible in a scope.
struct Val {
  std::string name;
  Dims dims;
  Bound bound;
  bool is_input = false;
};

// One graph body being written (main, a branch or a loop body).
struct Scope {
  Scope* parent = nullptr;
  std::vector<Val> values;
  std::string text;   // statements, already indented
  int indent = 1;     // indentation level of the statements
  std::string iteration;  // inside a Loop body: the iteration number's name
};

class GraphWriter {
 public:
  // Unsaturated: every Clip bound the graph leaves absent is written as an
  // explicit -inf/+inf constant instead (the twin in RandomGraph::unsaturated_text).
  enum class ClipBounds : std::uint8_t { AsGenerated, Unsaturated };
  GraphWriter(std::uint64_t seed, RandomGraph& graph, ClipBounds clip_bounds = ClipBounds::AsGenerated);
  // Writes the whole model into graph.text and fills the rest of graph.
  void write();

 private:
  // --- graph_writer.cpp: naming, dims, emission, operand choice ---
  std::string fresh(const std::string& prefix);
  std::int64_t dim_min(const std::string& tag) const;
  std::int64_t dim_max(const std::string& tag) const;
  bool reducible(const std::string& tag) const;
  static bool is_basic(const Dims& dims);
  static std::optional<Dims> broadcast(const Dims& a, const Dims& b);
  void line(Scope& scope, const std::string& text);
  Val emit(Scope& scope, const std::string& op, const std::vector<std::string>& args, const std::string& attrs,
           const Dims& dims, const Bound& bound, const std::string& node_name = "");
  void note_use(const std::string& name);
  std::string const_f32(Scope& scope, const std::vector<std::int64_t>& shape, const std::vector<float>& values);
  std::string const_i64(Scope& scope, const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& values);
  std::string const_scalar(Scope& scope, float value);
  std::string absent_clip_bound(Scope& scope, bool upper);
  float random_constant(double lo, double hi);
  std::vector<Val> visible(const Scope& scope) const;
  template <typename Pred>
  std::optional<Val> pick(const Scope& scope, Pred pred);

  // --- elementwise_writer.cpp ---
  Val unary(Scope& scope, const Val& a);
  Val transcendental(Scope& scope, const Val& a, int which);
  Val parameterised_unary(Scope& scope, const Val& a, int which);
  Val positive(Scope& scope, const Val& a, double offset);
  Val squash(Scope& scope, const Val& a, double limit);
  Val binary(Scope& scope, const Val& a, const Val& b);
  Val divide(Scope& scope, const Val& a, const Val& b);
  std::optional<Val> partner(Scope& scope, const Val& a, bool keep_dims);
  Val constant_like(Scope& scope, const Val& a, bool keep_dims);

  // --- structure_writer.cpp: reductions, normalisations, matmul, data movement ---
  std::optional<Val> reduction(Scope& scope);
  std::optional<Val> softmax(Scope& scope);
  std::optional<Val> layer_norm(Scope& scope);
  std::optional<Val> matmul(Scope& scope);
  std::optional<Val> data_movement(Scope& scope);
  std::optional<Val> transpose(Scope& scope);
  std::optional<Val> reshape(Scope& scope);
  std::optional<Val> concat(Scope& scope);
  std::string axis_text(int axis, int rank);

  // --- control_flow_writer.cpp ---
  std::optional<Val> if_node(Scope& scope);
  std::string if_condition(Scope& scope);
  std::vector<Val> if_on(Scope& scope, const std::string& cond, const std::vector<Val>& targets);
  std::string branch(Scope& scope, const std::string& graph_name, const std::vector<Val>& targets,
                     std::vector<Val>* results);
  Val preserving_step(Scope& scope, const Val& a);
  std::string raw_node(Scope& scope, const std::string& op, const std::vector<std::string>& args,
                       const std::string& attrs);
  std::optional<Val> loop_node(Scope& scope);
  std::optional<Val> loop_over_t(Scope& scope, const Val& seq);
  std::optional<Val> loop_with_trip(Scope& scope, const Val& init);
  Val cell(Scope& body, const Val& start);
  Val add_input(Scope& main, const std::string& name, const Dims& dims);
  std::optional<Val> finish_loop(Scope& scope, Scope& body, const std::string& trip, const Val& h0, const Val& h,
                                 const Val& hn, const Val& scan, std::int64_t trips, const std::string& scan_dim);

  // --- random_graph.cpp: the model as a whole ---
  void choose_inputs(Scope& main);
  Val random_step(Scope& scope);
  void choose_outputs(Scope& main);
  std::string model_text(const Scope& main) const;

  SeededRng rng_;
  RandomGraph& graph_;
  ClipBounds clip_bounds_;
  int counter_ = 0;
  int unbounded_counter_ = 0;  // names of the twin's infinite Clip bounds (apart, so other names stay equal)
  std::string cdim_ = "C";
  bool uses_t_ = false;
  bool loop_done_ = false;
  bool if_done_ = false;
  std::map<std::string, std::int64_t> derived_min_;
  std::map<std::string, std::int64_t> derived_max_;
  std::map<std::string, int> uses_;
  std::vector<std::string> input_decls_;
};

// Picks a visible value satisfying pred, preferring recent ones; nullopt if none.
template <typename Pred>
std::optional<Val> GraphWriter::pick(const Scope& scope, Pred pred) {
  std::vector<Val> all = visible(scope);
  std::vector<Val> ok;
  for (const Val& v : all)
    if (pred(v)) ok.push_back(v);
  if (ok.empty()) return std::nullopt;
  if (ok.size() > 3 && rng_.chance(0.5)) return ok[ok.size() - 1 - rng_.index(3)];
  return rng_.pick(ok);
}

}  // namespace canary::differential

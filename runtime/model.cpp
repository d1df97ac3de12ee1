// Model: loading and compiling a graph, its signature, text and bytecode views.
#include <mutex>

#include "graph/onnx_import.h"
#include "graph/op_registry.h"
#include "graph/passes/optimizer.h"
#include "graph/text_format.h"
#include "runtime/constant_evaluator.h"
#include "runtime/fault_options.h"
#include "runtime/fused_device_lookup.h"
#include "runtime/model_impl.h"
#include "runtime/options_check.h"
#include "vm/compiler.h"

namespace canary {

std::string TensorSpec::to_string() const {
  std::string s = name + ": " + std::string(dtype_name(dtype)) + "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i];
  return s + "]";
}

// The public signature of one graph value.
static TensorSpec spec_of(const graph::Graph& g, graph::ValueId v) {
  const graph::ValueInfo& info = g.value(v);
  TensorSpec spec{info.name, info.type.dtype, {}};
  for (const graph::Dim& d : info.type.shape) spec.dims.push_back(d.to_string());
  return spec;
}

// The graph optimizer's level for these options.
static graph::OptimizationLevel optimization_level(GraphOptimization g) {
  switch (g) {
    case GraphOptimization::Off: return graph::OptimizationLevel::Off;
    case GraphOptimization::Basic: return graph::OptimizationLevel::Basic;
    case GraphOptimization::All: return graph::OptimizationLevel::All;
  }
  return graph::OptimizationLevel::All;
}

// Runs the graph optimizer on an imported graph; the pass records go to `reports`.
static std::shared_ptr<graph::Graph> optimize(std::shared_ptr<graph::Graph> graph, const Options& options,
                                              std::vector<GraphPassReport>& reports) {
  if (options.graph_optimization == GraphOptimization::Off) return graph;
  graph::OptimizerOptions opt;
  opt.level = optimization_level(options.graph_optimization);
  opt.evaluate = evaluate_constant_node;
  graph::OptimizeResult result = graph::optimize_graph(*graph, opt);
  for (graph::PassRecord& r : result.passes)
    reports.push_back(GraphPassReport{r.pass, r.changes, r.nodes_before, r.nodes_after, std::move(r.details)});
  return result.graph;
}

Model make_model(std::shared_ptr<graph::Graph> graph, const Options& options) {
  auto impl = std::make_shared<Model::Impl>();
  impl->options = options;
  // The fp64 reference runs the graph as imported: it is the yardstick the
  // passes are measured against too.
  impl->reference_program = vm::compile(*graph, vm::CompileOptions{.promote_f32_to_f64 = true});
  graph = optimize(std::move(graph), options, impl->graph_passes);
  impl->program = vm::compile(*graph);
  for (graph::ValueId v : graph->inputs()) impl->inputs.push_back(spec_of(*graph, v));
  for (graph::ValueId v : graph->outputs()) impl->outputs.push_back(spec_of(*graph, v));
  check_options(options, impl->inputs, impl->outputs);
  impl->batch_split = graph::analyse_batch_split(*graph);
  impl->graph = std::move(graph);
  if (options.jit.enabled)
    impl->engine =
        std::make_shared<jit::Engine>(impl->program, options.jit, options.cost, open_fused_device(options.jit));
  return Model(std::move(impl));
}

const std::vector<TensorSpec>& Model::inputs() const { return impl_->inputs; }
const std::vector<TensorSpec>& Model::outputs() const { return impl_->outputs; }
std::string Model::to_text() const { return graph::print_graph(*impl_->graph); }
const std::vector<GraphPassReport>& Model::graph_passes() const { return impl_->graph_passes; }
std::string Model::batch_split_obstacle() const {
  return impl_->batch_split.separable ? std::string() : impl_->batch_split.reason;
}
std::string Model::disassemble() const { return impl_->program->disassemble(); }

Session Model::session() const { return Session(std::make_unique<Session::Impl>(impl_, impl_->program, true)); }
Session Model::reference_session() const {
  return Session(std::make_unique<Session::Impl>(impl_, impl_->reference_program, false));
}

std::vector<Event> Model::events(std::uint64_t since) const {
  if (!impl_->engine) return {};
  return impl_->engine->events().since(since);
}

JitReport Model::jit_report() const {
  if (!impl_->engine) return {};
  return impl_->engine->report();
}

void Model::wait_for_compiles() const {
  if (impl_->engine) impl_->engine->wait_idle();
}

// Checks the limits, keeps the options and applies their fault-injection
// spec (process-wide).
Runtime::Runtime(Options options) : options_(options) {
  check_limit_options(options_);
  apply_fault_options(options_);
}

// The import limits of these options.
static graph::ImportLimits import_limits(const Options& o) {
  return graph::ImportLimits{.max_nodes = o.max_graph_nodes, .max_depth = o.max_graph_depth};
}

// A path ending in ".onnx" is an ONNX model; anything else is the text format.
Model Runtime::load(const std::string& path) const {
  bool is_onnx = path.size() >= 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
  const graph::ImportLimits limits = import_limits(options_);
  return make_model(is_onnx ? graph::import_onnx_file(path, limits) : graph::load_graph_file(path, limits), options_);
}

Model Runtime::load_text(std::string_view text, std::string_view source_name) const {
  return make_model(graph::parse_graph(text, source_name, import_limits(options_)), options_);
}

}  // namespace canary

// The public API: Runtime → Model → Session → run(named inputs) → named outputs.
//
//   canary::Runtime rt;
//   canary::Model model = rt.load("flow.cnr");
//   canary::Session s = model.session();          // one per thread
//   auto out = s.run({{"x", x}});                 // std::map<std::string, Tensor>
//
// Every entry point reports bad input with canary::Error (see error.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "canary/dtype.h"
#include "canary/error.h"
#include "canary/events.h"
#include "canary/inspect.h"
#include "canary/options.h"
#include "canary/stats.h"
#include "canary/tensor.h"

namespace canary {

using NamedTensors = std::map<std::string, Tensor, std::less<>>;

// The declared signature of one model input or output. Dims are printed
// symbolically: "N", "128", "(T - 1) // 2 + 1".
struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::string> dims;
  std::string to_string() const;  // "x: f32[N, 128]"
};

class Session;
class ModelBuilder;

// An immutable, loaded model; cheap to copy (shared), safe to share between threads.
class Model {
 public:
  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  // The model in the text format (docs/text-format.md), as it runs: after
  // the graph optimizer (Options::graph_optimization).
  std::string to_text() const;
  // What each graph-optimizer pass changed when the model loaded, in order
  // (empty when Options::graph_optimization is Off).
  const std::vector<GraphPassReport>& graph_passes() const;
  // Whether calls can run as slices of their batch (Options::split_batch):
  // empty when every sample's outputs depend only on that sample's inputs,
  // else what prevents it, naming the node ("node 'm' (ReduceMean) reduces
  // over the batch axis").
  std::string batch_split_obstacle() const;
  // The compiled bytecode, one instruction per line.
  std::string disassemble() const;
  // A new session running in the model's precision.
  Session session() const;
  // A session that runs every f32 value in f64: the yardstick other tiers are
  // measured against. Its float outputs are f64. It never uses the JIT.
  Session reference_session() const;
  // The JIT's event log (all sessions of this model), from sequence `since` on.
  std::vector<Event> events(std::uint64_t since = 0) const;
  // What the JIT holds for this model now (anchors, variants, guards).
  JitReport jit_report() const;
  // Graphviz DOT of the graph; nodes fused by an installed variant are drawn
  // in clusters, nodes whose values are guarded are marked.
  std::string to_dot() const;
  // Waits until the background compile queue has nothing queued or running
  // for this model (tests and benchmarks use it to reach a steady state).
  void wait_for_compiles() const;

  struct Impl;
  explicit Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

// Runs one model; one per thread. Keeps its buffers between calls.
class Session {
 public:
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  // Runs the model. Every model input must be given exactly once; the result
  // holds every model output by name. Throws canary::Error naming the input,
  // the node and the expected versus actual shape when something is wrong; the
  // session stays usable afterwards.
  NamedTensors run(const NamedTensors& inputs);
  const Stats& stats() const;

  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// Owns options and (later) the JIT's shared state; creates models.
// Construction applies a non-empty Options::fault_injection (or CANARY_FAULT)
// to the whole process.
class Runtime {
 public:
  explicit Runtime(Options options = {});
  const Options& options() const { return options_; }

  // Loads a model file: a path ending in ".onnx" is imported as ONNX (default
  // domain, opsets 13 to 17, and 7 to 12 upgraded to 13 on load); any other
  // path is read in the text format
  // (.cnr). Error(Model) names the file and, for ONNX, the node, tensor or
  // input at fault; for text syntax errors, line and column.
  Model load(const std::string& path) const;
  // Parses a model from text in the text format.
  Model load_text(std::string_view text, std::string_view source_name = "<text>") const;
  // Builds a model from a graph described in code.
  Model build(const ModelBuilder& builder) const;

 private:
  Options options_;
};

// Describes a graph in code, op by op, with the op names and attributes of
// docs/text-format.md. Control flow (Loop/If/Scan) needs subgraphs: write
// those models in the text format.
class ModelBuilder {
 public:
  using Dim = std::variant<std::int64_t, std::string>;  // a constant or a dim expression ("N", "T // 2")
  using AttrValue = std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>,
                                 std::vector<double>, Tensor>;
  struct Attr {
    std::string name;
    AttrValue value;
  };

  explicit ModelBuilder(std::string graph_name = "main");
  ModelBuilder& input(std::string name, DType dtype, std::vector<Dim> dims);
  ModelBuilder& constant(std::string name, Tensor value);
  // Adds `op` reading `inputs` (an empty name is an omitted optional input)
  // and defining `outputs`.
  ModelBuilder& node(std::string op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                     std::vector<Attr> attrs = {}, std::string node_name = "");
  ModelBuilder& output(std::string name);
  // Constrains a symbol to [lo, hi].
  ModelBuilder& symbol_range(std::string symbol, std::int64_t lo, std::int64_t hi);

  struct Step;  // one recorded call, replayed by Runtime::build

 private:
  friend class Runtime;
  std::string graph_name_;
  std::vector<std::shared_ptr<const Step>> steps_;
};

}  // namespace canary

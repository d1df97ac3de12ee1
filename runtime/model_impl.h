// Model::Impl and Session::Impl: what the public handles point at.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "canary/canary.h"
#include "graph/batch_split.h"
#include "graph/graph.h"
#include "jit/engine.h"
#include "jit/session_hooks.h"
#include "runtime/shadow_runner.h"
#include "vm/interpreter.h"
#include "vm/program.h"

namespace canary {

struct Model::Impl {
  Options options;
  std::shared_ptr<const graph::Graph> graph;             // as it runs (after the graph passes)
  std::vector<GraphPassReport> graph_passes;
  std::shared_ptr<const vm::Program> program;            // model precision
  std::shared_ptr<const vm::Program> reference_program;  // every f32 promoted to f64
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  // The JIT's shared state (variants, policy, compile queue, events); null
  // when Options::jit.enabled is false. Internally synchronised.
  std::shared_ptr<jit::Engine> engine;
  // Whether calls may run as slices of their batch (graph/batch_split.h), and why not.
  graph::BatchSplit batch_split;
};

// Sums of the per-session counters and timers of a session and its batch
// slices (session.cpp).
void add_call_counters(JitStats& into, const JitStats& from);
void add_timers(vm::TierTimers& into, const vm::TierTimers& from);

struct Session::Impl {
  std::shared_ptr<const Model::Impl> model;
  vm::Interpreter interpreter;
  std::unique_ptr<jit::SessionHooks> hooks;  // null: interpreter only
  std::unique_ptr<vm::TierTimers> timers;    // null unless Options::collect_timings
  std::unique_ptr<ShadowRunner> shadow;      // null unless the cost model is on
  double last_shadow_us = 0.0;               // the budget's estimate of the next shadow run
  double last_call_us = 0.0;
  Stats stats;

  // Batch slices (session_batch_split.cpp): an interpreter per thread, made
  // on the first call that splits, and what the policy learnt from earlier
  // calls, per sample of their batch.
  struct Lane {
    Lane(std::shared_ptr<const vm::Program> program, const vm::RunLimits& limits) : interpreter(std::move(program), limits) {}
    vm::Interpreter interpreter;
    std::unique_ptr<jit::SessionHooks> hooks;  // null: interpreter only
    std::unique_ptr<vm::TierTimers> timers;    // null: Options::collect_timings off
  };
  std::vector<std::unique_ptr<Lane>> lanes;
  double serial_us_per_sample = 0.0;  // the last call's time on one thread
  double output_bytes_per_sample = 0.0;
  bool split_disabled = false;  // a split call's outputs did not join (never expected)
  // What retired lanes counted (instructions; their JIT call counters),
  // kept so that the session's Stats never go back; their timers are added
  // to `timers` when they retire.
  std::uint64_t retired_instructions = 0;
  JitStats retired_counters;
  // Drops the lanes (and the buffers they keep, charged to the session's
  // budget) after adding what they counted to the session's totals.
  void retire_lanes();
  // Whether calls of this session may ever split (the options, the model,
  // the thread count): when not, the per-call policy is skipped altogether.
  bool splittable() const;
  // How many slices this call should run as; 0 or 1: unsplit.
  int split_lanes(const std::vector<Tensor>& inputs) const;
  // Runs the call as `lanes` batch slices and joins the outputs; nullopt when
  // a slice failed (the caller runs the call unsplit, which reports the
  // error as an unsplit call would).
  std::optional<std::vector<Tensor>> run_split(const std::vector<Tensor>& inputs, int lanes, std::uint64_t call);
  // Records a finished call's time (split: on `lanes` threads) for split_lanes.
  void learn_call_cost(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs, double us, int lanes);

  // Runs the interpreter; with the cost model on, under the engine's ticket,
  // timing the call and shadowing it when asked and within budget (session_cost.cpp).
  std::vector<Tensor> run_call(const std::vector<Tensor>& inputs, bool new_shape, std::uint64_t call);
  bool shadow_fits(double call_us) const;
  std::vector<std::pair<jit::cost::Ticket, jit::cost::TrialSample>> shadow_call(const jit::cost::Ticket& ticket,
                                                                                const std::vector<Tensor>& inputs,
                                                                                const std::vector<Tensor>& outputs,
                                                                                jit::cost::TrialSample& sample) noexcept;

  // use_jit: attach the model's engine (never for the fp64 reference session).
  Impl(std::shared_ptr<const Model::Impl> m, std::shared_ptr<const vm::Program> program, bool use_jit);
};

// The interpreter's limits for a session (or a shadow run) under these
// options. The fp64 reference program holds every f32 value in twice the
// bytes, so its arena is twice Options::max_arena_bytes (saturating): a
// session that fits its arena can be shadowed. max_tensor_bytes stays as it
// is (it bounds hostile shapes; a reference run refused by it measures
// nothing and the call is unaffected).
vm::RunLimits limits_of(const Options& options, bool fp64_reference = false);

// Builds a Model from a shape-inferred graph: compiles it and records its signature.
Model make_model(std::shared_ptr<graph::Graph> graph, const Options& options);

}  // namespace canary

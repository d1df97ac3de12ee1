// Session: maps named inputs onto the interpreter, checks them, keeps stats.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "runtime/model_impl.h"

namespace canary {

namespace {

// "x, h0" for error messages.
std::string list_names(const std::vector<TensorSpec>& specs) {
  std::string s;
  for (const TensorSpec& spec : specs) s += (s.empty() ? "" : ", ") + spec.name;
  return s;
}

// Throws Error(Input) for a named input the model does not declare. Models
// have a handful of inputs, so a scan beats building a set on every call.
void reject_unknown_inputs(const NamedTensors& given, const std::vector<TensorSpec>& specs) {
  for (const auto& entry : given) {
    // A named reference, not a structured binding: clang 14 (the fuzz build)
    // cannot capture bindings in a lambda.
    const std::string& name = entry.first;
    const bool known = std::any_of(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == name; });
    if (!known)
      throw Error(ErrorKind::Input, "unknown input '" + name + "'; the model's inputs are: " + list_names(specs));
  }
}

// Throws Error(Input) naming the first NaN or Inf element of a float input.
template <typename T>
void reject_non_finite(const std::string& name, const Tensor& t) {
  const T* p = t.data<T>();
  for (std::int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(p[i]))
      throw Error(ErrorKind::Input, "input '" + name + "' " + t.type_string() + " has a non-finite value (" +
                                        std::to_string(p[i]) + ") at flat index " + std::to_string(i));
}

// True when no earlier call brought this input with this shape.
bool is_new_shape(const InputShapes& entry, const Shape& shape) {
  return std::none_of(entry.shapes.begin(), entry.shapes.end(), [&](const ShapeCount& sc) { return sc.shape == shape; });
}

// Remembers the shape an input arrived with.
void record_input_shape(InputShapes& entry, const Shape& shape) {
  constexpr std::size_t kTracked = 64;
  for (ShapeCount& sc : entry.shapes)
    if (sc.shape == shape) {
      ++sc.count;
      return;
    }
  if (entry.shapes.size() < kTracked)
    entry.shapes.push_back({shape, 1});
  else
    ++entry.other;
}

// The timers' non-empty buckets as rows, largest first.
std::vector<TierTime> tier_rows(const vm::TierTimers& timers) {
  std::vector<TierTime> rows;
  for (std::size_t t = 0; t < vm::kTimedTierCount; ++t) {
    const auto tier = static_cast<vm::TimedTier>(t);
    const bool per_op = tier == vm::TimedTier::Interpreted || tier == vm::TimedTier::KernelCall;
    for (std::size_t op = 0; op < timers.buckets[t].size(); ++op) {
      const vm::TierTimers::Bucket& b = timers.buckets[t][op];
      if (b.count == 0) continue;
      rows.push_back({vm::timed_tier_name(tier), per_op ? std::string(graph::op_name(static_cast<graph::OpKind>(op))) : "",
                      static_cast<double>(b.ns) / 1e3, b.count});
    }
  }
  std::sort(rows.begin(), rows.end(), [](const TierTime& a, const TierTime& b) { return a.total_us > b.total_us; });
  return rows;
}

}  // namespace

// Adds the per-session counters of `from` (a batch slice's hooks) to `into`;
// the model-wide ones come from the engine.
void add_call_counters(JitStats& into, const JitStats& from) {
  into.compiled_entries += from.compiled_entries;
  into.guard_failures += from.guard_failures;
  into.deopts += from.deopts;
  into.side_trace_entries += from.side_trace_entries;
  into.value_canaries += from.value_canaries;
  into.range_canaries += from.range_canaries;
  into.tiled_fused_calls += from.tiled_fused_calls;
  into.device_fused_calls += from.device_fused_calls;
  into.device_bytes += from.device_bytes;
  into.device_chain_calls += from.device_chain_calls;
}

void add_timers(vm::TierTimers& into, const vm::TierTimers& from) {
  for (std::size_t t = 0; t < into.buckets.size(); ++t) {
    for (std::size_t op = 0; op < into.buckets[t].size(); ++op) {
      into.buckets[t][op].ns += from.buckets[t][op].ns;
      into.buckets[t][op].count += from.buckets[t][op].count;
    }
  }
}

vm::RunLimits limits_of(const Options& o, bool fp64_reference) {
  const auto scaled = [&](std::size_t bytes) {
    return fp64_reference && bytes <= std::numeric_limits<std::size_t>::max() / 2 ? 2 * bytes : bytes;
  };
  vm::RunLimits limits;
  limits.max_tensor_bytes = o.max_tensor_bytes;
  limits.max_arena_bytes = scaled(o.max_arena_bytes);
  limits.max_loop_iterations = o.max_loop_iterations;
  limits.intra_op_threads = o.intra_op_threads;
  limits.use_onednn = o.use_onednn;
  return limits;
}

Session::Impl::Impl(std::shared_ptr<const Model::Impl> m, std::shared_ptr<const vm::Program> program, bool use_jit)
    : model(std::move(m)),
      interpreter(program, limits_of(model->options, program == model->reference_program)) {
  if (use_jit && model->engine && model->engine->active()) {
    const Options& o = model->options;
    hooks = std::make_unique<jit::SessionHooks>(model->engine, o.max_loop_iterations, o.max_tensor_bytes,
                                                o.intra_op_threads);
    interpreter.set_hooks(hooks.get());
  }
  if (model->options.collect_timings) {
    timers = std::make_unique<vm::TierTimers>();
    interpreter.set_timers(timers.get());
    if (hooks) hooks->set_timers(timers.get());
  }
  for (const TensorSpec& spec : model->inputs) stats.input_shapes.push_back({spec.name, {}, 0});
  if (hooks && model->engine->cost_enabled())
    shadow = std::make_unique<ShadowRunner>(model->reference_program, model->options, model->inputs, model->outputs);
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

NamedTensors Session::run(const NamedTensors& inputs) {
  const auto& specs = impl_->model->inputs;
  const vm::ScopedTierTimer clock(impl_->timers ? &impl_->timers->calls : nullptr);
  try {
    reject_unknown_inputs(inputs, specs);
    std::vector<Tensor> ordered;
    ordered.reserve(specs.size());
    for (const TensorSpec& spec : specs) {
      auto it = inputs.find(spec.name);
      if (it == inputs.end()) throw Error(ErrorKind::Input, "missing input '" + spec.to_string() + "'");
      if (!it->second.defined()) throw Error(ErrorKind::Input, "input '" + spec.name + "' is an undefined tensor");
      if (impl_->model->options.reject_non_finite_inputs) {
        if (it->second.dtype() == DType::F32) reject_non_finite<float>(spec.name, it->second);
        if (it->second.dtype() == DType::F64) reject_non_finite<double>(spec.name, it->second);
      }
      ordered.push_back(it->second);
    }
    const std::uint64_t call = impl_->stats.calls + impl_->stats.failed_calls + 1;
    if (impl_->hooks) impl_->hooks->begin_call(call);
    bool new_shape = false;  // only the cost model's monitoring needs it
    for (std::size_t i = 0; impl_->shadow && i < specs.size() && !new_shape; ++i)
      new_shape = impl_->stats.calls > 0 && is_new_shape(impl_->stats.input_shapes[i], ordered[i].shape());
    // Batch slices (session_batch_split.cpp): timed and decided only where the session may ever split.
    const bool splittable = impl_->splittable();
    const int lanes = splittable ? impl_->split_lanes(ordered) : 0;
    const auto t0 = splittable ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    std::optional<std::vector<Tensor>> split;
    if (lanes >= 2) split = impl_->run_split(ordered, lanes, call);
    std::vector<Tensor> results = split ? std::move(*split) : impl_->run_call(ordered, new_shape, call);
    if (splittable) {
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      impl_->learn_call_cost(ordered, results, us, split ? lanes : 1);
    }
    NamedTensors out;
    const auto& out_specs = impl_->model->outputs;
    for (std::size_t i = 0; i < out_specs.size(); ++i) out.emplace(out_specs[i].name, std::move(results[i]));
    for (std::size_t i = 0; i < specs.size(); ++i) record_input_shape(impl_->stats.input_shapes[i], ordered[i].shape());
    ++impl_->stats.calls;
    return out;
  } catch (const Error&) {
    ++impl_->stats.failed_calls;
    throw;
  }
}

const Stats& Session::stats() const {
  impl_->stats.distinct_shapes = impl_->interpreter.profile().distinct_shape_count();
  impl_->stats.arena_bytes = impl_->interpreter.arena_bytes();
  impl_->stats.peak_arena_bytes = impl_->interpreter.peak_arena_bytes();
  // A split call's work is counted by its slices' interpreters and hooks.
  impl_->stats.instructions_executed = impl_->interpreter.instructions_executed() + impl_->retired_instructions;
  for (const auto& lane : impl_->lanes) impl_->stats.instructions_executed += lane->interpreter.instructions_executed();
  if (impl_->hooks) {
    impl_->stats.jit = impl_->hooks->counters();
    add_call_counters(impl_->stats.jit, impl_->retired_counters);
    for (const auto& lane : impl_->lanes)
      if (lane->hooks) add_call_counters(impl_->stats.jit, lane->hooks->counters());
    impl_->model->engine->fill_stats(impl_->stats.jit);
  }
  if (impl_->timers) {
    vm::TierTimers all = *impl_->timers;
    for (const auto& lane : impl_->lanes)
      if (lane->timers) add_timers(all, *lane->timers);
    impl_->stats.time.collected = true;
    impl_->stats.time.calls_us = static_cast<double>(impl_->timers->calls.ns) / 1e3;
    impl_->stats.time.tiers = tier_rows(all);
  }
  return impl_->stats;
}

}  // namespace canary

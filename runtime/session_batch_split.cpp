// Batch slices: a call of a model whose samples never meet, run as
// contiguous slices of its batch on the session's intra-op threads at once
// (Options::split_batch).
//
// Per-op threading cannot make a CNN or a TCN at a small batch faster: most
// of its convolutions and elementwise groups take 5-50 us, and splitting
// each one over two threads costs about as much as it saves (measured: a
// MobileNet-V2 at batch 2 ran 12% slower with every op split). Half a batch
// takes half the time on these models (MobileNet-V2 905 against 1776 us,
// ResNet-18 4.8 against 9.9 ms, a TCN 566 against 1144 us), so one parallel
// region for the whole call, each thread running every op of its slice
// alone, is what scales. Each slice runs on an interpreter (and JIT hooks)
// of its own with one intra-op thread; the compiled variants are the
// model's, shared with every session.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>

#include <omp.h>

#include "runtime/model_impl.h"

namespace canary {

namespace {

// A call shorter than this on one thread is left whole: a parallel region
// and the joins cost a few microseconds, and short calls are the ones whose
// ops do not even fill one thread.
constexpr double kMinSplitCallUs = 200.0;
// Joining the outputs copies them once; at about 10 GB/s (bytes per us) that
// copy must stay under this share of the call.
constexpr double kJoinBytesPerUs = 1e4;
constexpr double kMaxJoinShare = 0.05;

int session_threads(const Options& o) { return o.intra_op_threads > 0 ? o.intra_op_threads : omp_get_max_threads(); }

// The batch of a call: dim 0 shared by every input, or 0 when they disagree
// (the interpreter then reports the mismatch).
std::int64_t batch_of(const std::vector<Tensor>& inputs) {
  if (inputs.empty() || inputs[0].rank() == 0) return 0;
  const std::int64_t n = inputs[0].dim(0);
  for (const Tensor& t : inputs)
    if (t.rank() == 0 || t.dim(0) != n) return 0;
  return n;
}

// Rows [begin, end) of t along dim 0, sharing t's buffer (the interpreter
// never writes a wrapped tensor).
Tensor rows_of(const Tensor& t, std::int64_t begin, std::int64_t end) {
  Shape shape = t.shape();
  const std::size_t row_bytes = shape[0] > 0 ? t.nbytes() / static_cast<std::size_t>(shape[0]) : 0;
  shape[0] = end - begin;
  auto* base = static_cast<std::byte*>(const_cast<void*>(t.raw()));
  return Tensor::wrap(base + static_cast<std::size_t>(begin) * row_bytes, t.dtype(), shape);
}

// The outputs of the slices joined along dim 0, or nullopt when their
// dtypes or trailing dims disagree.
std::optional<Tensor> join_rows(const std::vector<std::vector<Tensor>>& parts, std::size_t output) {
  const Tensor& first = parts[0][output];
  if (first.rank() == 0) return std::nullopt;
  Shape shape = first.shape();
  shape[0] = 0;
  for (const std::vector<Tensor>& p : parts) {
    const Tensor& t = p[output];
    if (t.dtype() != first.dtype() || t.rank() != first.rank() ||
        !std::equal(t.shape().begin() + 1, t.shape().end(), first.shape().begin() + 1))
      return std::nullopt;
    shape[0] += t.dim(0);
  }
  Tensor joined;
  joined.reset(first.dtype(), shape);
  auto* out = static_cast<std::byte*>(joined.raw());
  for (const std::vector<Tensor>& p : parts) {
    if (p[output].nbytes() > 0) std::memcpy(out, p[output].raw(), p[output].nbytes());
    out += p[output].nbytes();
  }
  return joined;
}

}  // namespace

bool Session::Impl::splittable() const {
  const Options& o = model->options;
  return o.split_batch && !split_disabled && model->batch_split.separable && session_threads(o) >= 2;
}

int Session::Impl::split_lanes(const std::vector<Tensor>& inputs) const {
  if (omp_in_parallel()) return 0;
  // A cost-model trial measures whole calls under its tickets: while one is
  // open, calls stay whole so that it gets them.
  if (shadow && model->engine->trials_open()) return 0;
  const int threads = session_threads(model->options);
  const std::int64_t batch = batch_of(inputs);
  if (batch < 2) return 0;
  const double serial_us = serial_us_per_sample * static_cast<double>(batch);
  const double join_us = output_bytes_per_sample * static_cast<double>(batch) / kJoinBytesPerUs;
  if (serial_us < kMinSplitCallUs || join_us > kMaxJoinShare * serial_us) return 0;
  return static_cast<int>(std::min<std::int64_t>(threads, batch));
}

void Session::Impl::learn_call_cost(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs, double us,
                                    int lanes_used) {
  const std::int64_t batch = batch_of(inputs);
  if (batch <= 0) return;
  std::size_t bytes = 0;
  for (const Tensor& t : outputs) bytes += t.nbytes();
  serial_us_per_sample = us * std::max(1, lanes_used) / static_cast<double>(batch);
  output_bytes_per_sample = static_cast<double>(bytes) / static_cast<double>(batch);
}

void Session::Impl::retire_lanes() {
  for (const auto& lane : lanes) {
    retired_instructions += lane->interpreter.instructions_executed();
    if (lane->hooks) add_call_counters(retired_counters, lane->hooks->counters());
    if (lane->timers && timers) add_timers(*timers, *lane->timers);
  }
  lanes.clear();
}

std::optional<std::vector<Tensor>> Session::Impl::run_split(const std::vector<Tensor>& inputs, int count,
                                                            std::uint64_t call) {
  vm::RunLimits limits = interpreter.limits();
  limits.intra_op_threads = 1;
  // The session runs the model's program, or its fp64 reference.
  const std::shared_ptr<const vm::Program>& own_program =
      &interpreter.program() == model->program.get() ? model->program : model->reference_program;
  const Options& o = model->options;
  while (lanes.size() < static_cast<std::size_t>(count)) {
    auto lane = std::make_unique<Lane>(own_program, limits);
    // The slices' tensors count against the session's one budget.
    lane->interpreter.share_arena_budget(interpreter.arena_budget());
    if (hooks) {
      lane->hooks = std::make_unique<jit::SessionHooks>(model->engine, o.max_loop_iterations, o.max_tensor_bytes, 1);
      lane->interpreter.set_hooks(lane->hooks.get());
    }
    if (timers) {
      lane->timers = std::make_unique<vm::TierTimers>();
      lane->interpreter.set_timers(lane->timers.get());
      if (lane->hooks) lane->hooks->set_timers(lane->timers.get());
    }
    lanes.push_back(std::move(lane));
  }
  const std::int64_t batch = batch_of(inputs);
  std::vector<std::vector<Tensor>> slices(static_cast<std::size_t>(count)), results(slices.size());
  for (int t = 0; t < count; ++t)
    for (const Tensor& x : inputs) slices[t].push_back(rows_of(x, batch * t / count, batch * (t + 1) / count));
  std::vector<std::exception_ptr> failures(slices.size());
#pragma omp parallel for num_threads(count) schedule(static, 1)
  for (int t = 0; t < count; ++t) {
    try {
      Lane& lane = *lanes[static_cast<std::size_t>(t)];
      if (lane.hooks) lane.hooks->begin_call(call);
      results[t] = lane.interpreter.run(slices[t]);
    } catch (...) {
      failures[t] = std::current_exception();
    }
  }
  if (std::any_of(failures.begin(), failures.end(), [](const std::exception_ptr& f) { return f != nullptr; })) {
    // The unsplit call that follows gets the whole budget: the slices' kept
    // buffers go (their counters first, into the session's).
    retire_lanes();
    return std::nullopt;
  }
  std::vector<Tensor> joined;
  for (std::size_t i = 0; i < results[0].size(); ++i) {
    std::optional<Tensor> out = join_rows(results, i);
    if (!out) {
      split_disabled = true;
      retire_lanes();
      return std::nullopt;
    }
    joined.push_back(std::move(*out));
  }
  ++stats.split_calls;
  return joined;
}

}  // namespace canary

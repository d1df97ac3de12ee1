// A session's part in the cost model: each call asks the engine for a
// ticket, runs under it, and reports what it measured; shadow runs against
// the fp64 reference stay within Options::cost.max_shadow_overhead.
#include <algorithm>
#include <chrono>
#include <optional>

#include "runtime/model_impl.h"

namespace canary {

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// NVML's GPU energy counter, read around every candidate's calls while a GPU
// is in use: the board draws (idle) power whichever candidate runs, so every
// measured figure includes it and they compare.
struct DeviceEnergyRead {
  std::optional<std::uint64_t> millijoules;
};
DeviceEnergyRead read_device_energy(const jit::Engine& engine) {
  const jit::cost::NvmlEnergy* nvml = engine.nvml();
  if (nvml == nullptr || !nvml->readable()) return {};
  return {nvml->read_mj()};
}

}  // namespace

// Whether one more shadow run keeps shadow time within the budget (plus the
// burst allowance). The next
// shadow is estimated to cost what the last did; before the first, the
// reference and the noise copies at 64x the call's time (the fp64 reference
// interpreter and the trial's other candidates share one shadowed call).
bool Session::Impl::shadow_fits(double call_us) const {
  const CostModelOptions& o = model->options.cost;
  const double call = call_us > 0 ? call_us : last_call_us;
  const double estimate = last_shadow_us > 0 ? last_shadow_us : call * 64.0 * (1 + std::max(0, o.noise_copies));
  const double allowed = o.max_shadow_overhead * (stats.cost.calls_us + (call_us > 0 ? 0 : call)) +
                         std::max(0.0, o.shadow_burst_ms) * 1e3;
  return o.max_shadow_overhead > 0 && stats.cost.shadow_us + estimate <= allowed;
}

// Deep copies of a run's outputs: the interpreter keeps its buffers between
// runs, so outputs the caller gets must not share storage with a later run
// of the same call (a candidate's, a shadow's).
std::vector<Tensor> owned(std::vector<Tensor> outputs) {
  for (Tensor& t : outputs) t = t.clone();
  return outputs;
}

// Clears the hooks' ticket however the call leaves, so the next call never
// runs a stale candidate.
class TicketScope {
 public:
  TicketScope(jit::SessionHooks& hooks, const jit::cost::Ticket& ticket) : hooks_(hooks) { hooks_.set_ticket(ticket); }
  ~TicketScope() { hooks_.set_ticket(std::nullopt); }
  TicketScope(const TicketScope&) = delete;
  TicketScope& operator=(const TicketScope&) = delete;

 private:
  jit::SessionHooks& hooks_;
};

// Compares the call's candidate with the fp64 reference and, on the same
// reference outputs, every other candidate of the trial that still needs a
// shadowed call (each run once more on these inputs, untimed): one reference
// run serves them all. Never throws: a shadow that fails (the reference
// running out of a limit, memory) leaves the call unshadowed, and the user's
// call has already succeeded.
std::vector<std::pair<jit::cost::Ticket, jit::cost::TrialSample>> Session::Impl::shadow_call(
    const jit::cost::Ticket& ticket, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
    jit::cost::TrialSample& sample) noexcept {
  std::vector<std::pair<jit::cost::Ticket, jit::cost::TrialSample>> others;
  const auto run = [&](const std::vector<Tensor>& x) { return interpreter.run(x); };
  try {
    const ShadowRunner::Reference ref = shadow->reference(inputs);
    if (ref.batched) ++stats.cost.batched_noise_calls;
    shadow->compare(ref, outputs, run, sample);
    if (ticket.monitor) return others;
    for (std::uint32_t k : model->engine->shadow_candidates(ticket)) {
      jit::cost::Ticket t = ticket;
      t.candidate = k;
      hooks->set_ticket(t, false);
      const std::vector<Tensor> out = interpreter.run(inputs);
      jit::cost::TrialSample s;
      s.timed = false;
      s.candidate_ran = hooks->ticket_ran();
      if (!s.candidate_ran) continue;
      shadow->compare(ref, out, run, s);
      others.emplace_back(t, s);
    }
  } catch (...) {
    jit::cost::TrialSample unshadowed;
    unshadowed.call_us = sample.call_us;
    unshadowed.candidate_ran = sample.candidate_ran;
    sample = std::move(unshadowed);
    others.clear();
  }
  return others;
}

std::vector<Tensor> Session::Impl::run_call(const std::vector<Tensor>& inputs, bool new_shape, std::uint64_t call) {
  if (!shadow) return interpreter.run(inputs);
  jit::Engine& engine = *model->engine;
  const std::optional<jit::cost::Ticket> ticket = engine.ticket(shadow_fits(0.0), new_shape);
  if (!ticket) {
    const Clock::time_point t0 = Clock::now();
    std::vector<Tensor> out = interpreter.run(inputs);
    last_call_us = us_since(t0);
    stats.cost.calls_us += last_call_us;
    return out;
  }
  jit::cost::TrialSample sample;
  std::vector<Tensor> out;
  // A candidate not yet verified against the reference never answers the
  // caller: the installed variants do, and the candidate runs once more on
  // the same inputs (its timed run; that extra time counts as shadow time).
  std::vector<Tensor> served;
  if (!ticket->serve) {
    const Clock::time_point t0 = Clock::now();
    try {
      served = owned(interpreter.run(inputs));
    } catch (...) {
      engine.abandon_ticket(*ticket);  // a call the model rejects measures no candidate
      throw;
    }
    last_call_us = us_since(t0);
    stats.cost.calls_us += last_call_us;
  }
  const Clock::time_point extra0 = Clock::now();
  double shadow_this_call = 0.0;
  std::vector<std::pair<jit::cost::Ticket, jit::cost::TrialSample>> others;
  {
    const TicketScope scope(*hooks, *ticket);
    const jit::cost::RaplSample e0 = engine.rapl().readable() ? engine.rapl().read() : jit::cost::RaplSample{};
    const DeviceEnergyRead gpu0 = read_device_energy(engine);
    const Clock::time_point t0 = Clock::now();
    try {
      out = interpreter.run(inputs);
    } catch (...) {
      engine.abandon_ticket(*ticket);  // the trial hands the turn to a later call
      if (ticket->serve) throw;
      return served;                   // the caller's call already succeeded
    }
    sample.call_us = us_since(t0);
    if (ticket->serve) last_call_us = sample.call_us;
    if (e0.ok) {
      sample.energy_joules = engine.rapl().joules_between(e0, engine.rapl().read());
      sample.energy_measured = true;
    }
    if (gpu0.millijoules) {
      const DeviceEnergyRead gpu1 = read_device_energy(engine);
      // The counter only grows; a failed or backward read measures nothing.
      if (gpu1.millijoules && *gpu1.millijoules >= *gpu0.millijoules) {
        sample.device_energy_joules = static_cast<double>(*gpu1.millijoules - *gpu0.millijoules) * 1e-3;
        sample.device_energy_read = true;
      }
    }
    sample.candidate_ran = hooks->ticket_ran();
    if (ticket->serve) stats.cost.calls_us += sample.call_us;
    if (!ticket->monitor) ++stats.cost.trial_calls;
    if (ticket->shadow && (!sample.candidate_ran || !shadow_fits(sample.call_us))) {
      ++stats.cost.shadow_skipped;
    } else if (ticket->shadow) {
      if (ticket->serve) out = owned(std::move(out));  // the shadow runs the interpreter again
      const Clock::time_point s0 = Clock::now();
      others = shadow_call(*ticket, inputs, out, sample);
      last_shadow_us = shadow_this_call = us_since(s0);
      stats.cost.shadow_us += last_shadow_us;
      stats.cost.max_shadow_us = std::max(stats.cost.max_shadow_us, last_shadow_us);
      stats.cost.shadow_calls += sample.shadowed ? 1 : 0;
    }
  }
  if (!ticket->serve) {
    // The candidate's own run and its shadow were overhead, not the call.
    const double extra = us_since(extra0);
    stats.cost.shadow_us += std::max(0.0, extra - shadow_this_call);
  }
  engine.report_trial(*ticket, sample, call);
  for (const auto& [t, s] : others) engine.report_trial(t, s, call);
  return ticket->serve ? std::move(out) : std::move(served);
}

}  // namespace canary

// The engine's side of the cost model: building a trace's candidates,
// handing out trial and monitoring tickets, folding in what sessions
// measured, deciding, installing the choice and logging the decision table.
#include <algorithm>
#include <thread>

#include "jit/engine.h"
#include "jit/engine_anchor.h"
#include "jit/plan.h"
#include "jit/trace_compiler.h"

namespace canary::jit {

namespace {

constexpr std::size_t kMaxHistogramShapes = 256;

std::string profile_label(const CostModelOptions& o) {
  if (o.weights || o.limits) return "custom (" + cost_profile_name(o.profile) + " base)";
  return cost_profile_name(o.profile);
}

// True when the decided candidate now fails a gate the trial's numbers passed.
bool fails_gate(const CostDecision& d) { return !d.candidates[d.chosen].passed; }

}  // namespace

// Compiles every candidate of the trace (outside the lock). A candidate that
// fails to compile is left out; the primary and the interpreter always stay.
std::shared_ptr<cost::Trial> Engine::build_trial(const Task& task, const std::shared_ptr<const CompiledTrace>& primary) {
  cost::CandidateSpec first;
  {
    std::lock_guard lock(mu_);
    first.knowledge = anchors_[task.anchor.index]->knowledge;
  }
  first.plan = configured_plan_options();
  first.plan.tier = primary->plan().tier;
  first.plan.math = primary->plan().math;
  first.plan.fused_on_device = !primary->device_name().empty();  // where placement put its groups
  first.isa = *isa_;
  first.name = cost::candidate_name(first.plan, first.isa, false);
  const cost::TraceTraits traits = cost::trace_traits(*program_, task.trace, first.knowledge);
  auto trial = std::make_shared<cost::Trial>();
  trial->trace = task.trace.id;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (cost::CandidateSpec& spec :
       cost::candidate_specs(first, traits, task.trace, cost_options_, cores, device_ != nullptr)) {
    cost::TrialCandidate c;
    c.measured.name = spec.name;
    if (spec.interpreter) {
      c.measured.is_reference_path = true;
      c.work = cost::estimate_interpreter_work(task.trace, *program_);
    } else if (trial->candidates.empty()) {
      c.trace = primary;
    } else {
      std::string error;
      Plan plan = plan_trace(*program_, task.trace, spec.knowledge, spec.plan);
      c.trace = compile_variant(task.trace.id, std::move(plan), spec.plan, spec.isa, error);
      if (!c.trace) continue;
      if (spec.plan.fused_on_device && c.trace->device_name().empty()) {
        // Nothing went to the device (an unfused candidate without products
        // has no steps to place, or the device refused them all): it is the
        // CPU candidate of its axis,
        // kept under that name unless the list already has it.
        spec.plan.fused_on_device = false;
        if (spec.name.ends_with(cost::kOnGpuSuffix)) spec.name.resize(spec.name.size() - cost::kOnGpuSuffix.size());
        const bool duplicate = std::any_of(trial->candidates.begin(), trial->candidates.end(),
                                           [&](const cost::TrialCandidate& o) { return o.spec.name == spec.name; });
        if (duplicate) continue;
      }
    }
    if (c.trace) {
      c.work = cost::estimate_work(c.trace->plan(), task.trace, *program_);
      c.measured.compile_ms = c.trace->compile_ms();
      c.measured.transfer_bytes = c.work.device_bytes;
    }
    c.spec = std::move(spec);
    trial->candidates.push_back(std::move(c));
  }
  return trial;
}

void Engine::set_trial(Anchor& a, std::shared_ptr<cost::Trial> trial) {
  if (a.trial && !a.trial->decided) open_trials_.fetch_sub(1, std::memory_order_relaxed);
  // What the anchor saw stays evidence for the next trial.
  if (trial && a.trial) trial->shapes = std::move(a.trial->shapes);
  if (trial && !trial->decided) open_trials_.fetch_add(1, std::memory_order_relaxed);
  a.trial = std::move(trial);
}

void Engine::start_trial(Anchor& a, vm::AnchorId anchor, std::uint64_t call) {
  cost::Trial& trial = *a.trial;
  trial.epoch = next_trial_epoch_++;
  std::string names;
  for (const cost::TrialCandidate& c : trial.candidates) names += (names.empty() ? "" : ", ") + c.spec.name;
  Event e = event(EventKind::Decision, anchor, call);
  e.trace = trial.trace;
  e.decision = "trial";
  e.message = "cost model (" + profile_label(cost_options_) + "): trial of trace " + std::to_string(trial.trace) +
              " at '" + a.name + "' with " + std::to_string(trial.candidates.size()) + " candidates: " + names;
  events_.add(std::move(e));
}

std::optional<cost::Ticket> Engine::ticket(bool may_shadow, bool new_shape) noexcept {
  if (!cost_enabled()) return std::nullopt;
  // Lock-free when nothing is on trial and no monitoring sample is due.
  const bool open = open_trials_.load(std::memory_order_relaxed) > 0;
  bool monitor_due = false;
  if (any_decided_.load(std::memory_order_relaxed) && may_shadow) {
    const std::uint64_t n = monitor_calls_.fetch_add(1, std::memory_order_relaxed) + 1;
    monitor_due = new_shape || (cost_options_.monitor_every > 0 &&
                                n % static_cast<std::uint64_t>(cost_options_.monitor_every) == 0);
  }
  if (!open && !monitor_due) return std::nullopt;
  try {
    std::lock_guard lock(mu_);
    if (open)
      if (std::optional<cost::Ticket> t = ticket_locked(may_shadow)) return t;
    return monitor_due ? monitor_ticket_locked() : std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

// A trial ticket: the first undecided trial with a candidate this call can serve.
std::optional<cost::Ticket> Engine::ticket_locked(bool may_shadow) {
  for (std::uint32_t i = 0; i < anchors_.size(); ++i) {
    Anchor& a = *anchors_[i];
    if (!a.trial || a.trial->decided) continue;
    const std::optional<std::uint32_t> c = cost::next_candidate(*a.trial, cost_options_, may_shadow);
    if (!c) continue;
    cost::TrialCandidate& cand = a.trial->candidates[*c];
    ++cand.issued;
    ++a.trial->tickets;
    cost::Ticket t{i, a.trial->epoch, *c, may_shadow && cost::wants_shadow(cand, cost_options_), false};
    t.serve = cost::servable(*a.trial, *c, cost_limits_.max_relative_error);
    return t;
  }
  return std::nullopt;
}

// A monitoring ticket: the first decided anchor's installed choice, shadowed.
std::optional<cost::Ticket> Engine::monitor_ticket_locked() {
  for (std::uint32_t i = 0; i < anchors_.size(); ++i) {
    const Anchor& a = *anchors_[i];
    if (a.trial && a.trial->decided)
      return cost::Ticket{i, a.trial->epoch, static_cast<std::uint32_t>(a.trial->chosen), true, true};
  }
  return std::nullopt;
}

void Engine::abandon_ticket(const cost::Ticket& t) noexcept {
  std::lock_guard lock(mu_);
  Anchor& a = *anchors_[t.anchor];
  if (!a.trial || a.trial->epoch != t.epoch || t.monitor || t.candidate >= a.trial->candidates.size()) return;
  cost::TrialCandidate& c = a.trial->candidates[t.candidate];
  if (c.issued > 0) --c.issued;
  if (a.trial->tickets > 0) --a.trial->tickets;
}

std::shared_ptr<const CompiledTrace> Engine::ticket_trace(const cost::Ticket& t) const {
  std::lock_guard lock(mu_);
  const Anchor& a = *anchors_[t.anchor];
  if (!a.trial || a.trial->epoch != t.epoch || t.candidate >= a.trial->candidates.size()) return nullptr;
  return a.trial->candidates[t.candidate].trace;
}

std::vector<std::uint32_t> Engine::shadow_candidates(const cost::Ticket& t) const {
  std::lock_guard lock(mu_);
  const Anchor& a = *anchors_[t.anchor];
  std::vector<std::uint32_t> out;
  if (!a.trial || a.trial->epoch != t.epoch || a.trial->decided) return out;
  for (std::uint32_t i = 0; i < a.trial->candidates.size(); ++i)
    if (i != t.candidate && cost::wants_shadow(a.trial->candidates[i], cost_options_)) out.push_back(i);
  return out;
}

void Engine::note_shapes_locked(Anchor& a, const std::vector<TensorHeader>& headers) {
  std::vector<std::int64_t> key = cost::shape_key(headers);
  auto it = a.trial->shapes.find(key);
  if (it != a.trial->shapes.end()) ++it->second;
  else if (a.trial->shapes.size() < kMaxHistogramShapes) a.trial->shapes.emplace(std::move(key), 1);
}

void Engine::note_entry_shapes(vm::AnchorId anchor, const vm::FrameView& frame) {
  std::lock_guard lock(mu_);
  Anchor& a = *anchors_[anchor.index];
  if (!a.trial || a.trial->candidates.empty() || !a.trial->candidates.front().trace) return;
  std::vector<TensorHeader> headers;
  for (vm::RegId r : a.trial->candidates.front().trace->plan().entry_regs)
    headers.push_back(header_of(frame.registers[r.index]));
  note_shapes_locked(a, headers);
}

void Engine::report_trial(const cost::Ticket& t, const cost::TrialSample& sample, std::uint64_t call) noexcept {
  try {
    std::lock_guard lock(mu_);
    report_locked(t, sample, call);
  } catch (...) {
    // Out of memory while deciding: the trial stays open and decides on a later sample.
  }
}

void Engine::report_locked(const cost::Ticket& t, const cost::TrialSample& sample, std::uint64_t call) {
  Anchor& a = *anchors_[t.anchor];
  if (!a.trial || a.trial->epoch != t.epoch || t.candidate >= a.trial->candidates.size()) return;
  cost::Trial& trial = *a.trial;
  cost::add_sample(trial.candidates[t.candidate], sample);
  const vm::AnchorId anchor{t.anchor};
  if (!trial.decided) {
    if (cost::trial_complete(trial, cost_options_)) finish_trial(a, anchor, call, "");
    return;
  }
  // Monitoring: the installed choice is re-judged with every shadowed sample.
  if (t.monitor && sample.shadowed && t.candidate == trial.chosen)
    finish_trial(a, anchor, call, "monitoring found the installed choice failing a gate");
}

// Decides from everything measured, installs the choice and logs the table.
// With `why` (monitoring), only a changed choice is logged.
void Engine::finish_trial(Anchor& a, vm::AnchorId anchor, std::uint64_t call, const std::string& why) {
  cost::Trial& trial = *a.trial;
  cost::fill_expected_deopt(trial);
  cost::fill_energy_and_memory(trial, *isa_);
  for (cost::TrialCandidate& c : trial.candidates)
    if (c.trace) c.measured.device_failure = c.trace->device_error();
  std::vector<cost::CandidateMeasurements> measured;
  for (const cost::TrialCandidate& c : trial.candidates) measured.push_back(c.measured);
  // A trial whose compiled candidates all had their guards refuse the
  // traffic (a rare shape's sibling trace) has measured nothing to choose
  // from: it ends without a decision and the ladder's variant stays.
  const bool nothing_measured = std::all_of(trial.candidates.begin(), trial.candidates.end(), [](const auto& c) {
    return !c.trace || (c.measured.latency_us.empty() && c.measured.shadow_calls == 0);
  });
  if (nothing_measured && why.empty()) {
    Event e = event(EventKind::Decision, anchor, call);
    e.trace = trial.trace;
    e.decision = "trial cancelled";
    e.message = "cost model: trial of trace " + std::to_string(trial.trace) + " at '" + a.name +
                "' cancelled: its candidates' guards refused the calls that came; the ladder's variant stays";
    events_.add(std::move(e));
    set_trial(a, nullptr);
    return;
  }
  auto decision = std::make_shared<CostDecision>(
      cost::decide(measured, cost_weights_, cost_limits_, profile_label(cost_options_)));
  if (!why.empty()) {
    // Re-judge the installed choice; keep it unless it now fails a gate and
    // something else would be chosen (the reference path failing stays).
    CostDecision current = *decision;
    current.chosen = trial.chosen;
    if (!fails_gate(current) || decision->chosen == trial.chosen) return;
    decision->reason = why + " (" + trial.candidates[trial.chosen].spec.name + "); " + decision->reason;
  }
  decision->anchor = a.name;
  decision->trace = trial.trace;
  decision->call = call;
  if (!trial.decided) open_trials_.fetch_sub(1, std::memory_order_relaxed);
  trial.decided = true;
  any_decided_.store(true, std::memory_order_relaxed);
  trial.chosen = decision->chosen;
  apply_choice(a, trial);
  Event e = event(EventKind::Decision, anchor, call);
  e.trace = trial.trace;
  e.decision = decision->candidates[decision->chosen].name;
  e.message = "cost model (" + decision->profile + ") chose '" + e.decision + "' for trace " +
              std::to_string(trial.trace) + " at '" + a.name + "': " + decision->reason;
  e.cost = std::move(decision);
  events_.add(std::move(e));
}

// Puts the chosen candidate where the trace's variant was; the interpreter
// choice removes the variant and leaves the region interpreted.
void Engine::apply_choice(Anchor& a, const cost::Trial& trial) {
  const cost::TrialCandidate& chosen = trial.candidates[trial.chosen];
  auto list = std::make_shared<VariantList>();
  bool placed = false;
  for (const auto& v : *a.list) {
    if (v->id() != trial.trace) {
      list->push_back(v);
    } else if (chosen.trace && !placed) {
      list->push_back(chosen.trace);
      placed = true;
    }
  }
  if (chosen.trace && !placed) list->insert(list->begin(), chosen.trace);
  a.list = std::move(list);
  a.version.fetch_add(1, std::memory_order_release);
  if (chosen.trace) enforce_trace_limit(chosen.trace.get(), 0);
}

}  // namespace canary::jit

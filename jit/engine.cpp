// The engine: anchors' variants and learned shapes, the retrace policy, the
// compile queue and the ladder exact fused -> symbolic fused -> unfused ->
// interpreter, with a per-anchor compile budget and a penalty that doubles on
// failure and halves on success (never a permanent blacklist).
#include "jit/engine.h"
#include "jit/engine_anchor.h"

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include "jit/device_placement.h"
#include "jit/plan.h"
#include "jit/profile_store.h"
#include "jit/trace_compiler.h"
#include "kernels/onednn.h"
#include "runtime/core/fault_injection.h"

namespace canary::jit {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kMaxPenaltyMs = 60'000.0;
constexpr auto kRefillPeriod = std::chrono::seconds(30);
// Guard failures and deopts logged per guard: the first few, then powers of two.
constexpr std::uint64_t kLoggedRepeats = 8;

bool worth_logging(std::uint64_t count) { return count <= kLoggedRepeats || (count & (count - 1)) == 0; }

std::int64_t to_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
constexpr std::uint64_t kRetraceAfterFailures = 2;

// "x.dim0 made symbolic (seen 8..16, divisible by 8)"; with several dims,
// "x.dim0, y.dim0 made symbolic (x.dim0 seen 8..9; y.dim0 seen 8..9)".
std::string describe_made_symbolic(const std::vector<std::pair<std::string, const DimFacts*>>& dims) {
  std::string names, facts;
  for (const auto& [name, f] : dims) {
    names += (names.empty() ? "" : ", ") + name;
    facts += (facts.empty() ? "" : "; ") + (dims.size() > 1 ? name + " seen " : "seen ") + f->describe();
  }
  return names + " made symbolic (" + facts + ")";
}
constexpr std::uint64_t kRetraceAfterExits = 2;

std::optional<x86::Isa> choose_isa(const JitOptions& o) {
  if (!o.enabled) return std::nullopt;
  const std::optional<x86::Isa> host = x86::detect_host_isa();
  if (!host) return std::nullopt;
  x86::Isa wanted = *host;
  if (o.isa == "avx512") wanted = x86::Isa::Avx512;
  else if (o.isa == "avx2") wanted = x86::Isa::Avx2;
  else if (o.isa == "scalar") wanted = x86::Isa::Scalar;
  return x86::host_supports(wanted) ? wanted : *host;
}

// "compile" -> every compile fails (-1), "compile:N" -> the first N.
int parse_fault(const std::string& option) {
  std::string spec = option;
  if (spec.empty())
    if (const char* env = std::getenv("CANARY_JIT_FAULT")) spec = env;
  if (spec == "compile") return -1;
  if (spec.rfind("compile:", 0) == 0) return std::max(0, std::atoi(spec.c_str() + 8));
  return 0;
}

// True when every value recorded for `old` passes `candidate`'s guards
// (shapes only: data pointers are taken as aligned).
bool subsumes(const CompiledTrace& candidate, const CompiledTrace& old) {
  const Plan& np = candidate.plan();
  const Plan& op = old.plan();
  if (np.entry_regs != op.entry_regs || np.start_pc != op.start_pc || np.end_pc != op.end_pc) return false;
  static const std::int64_t aligned_storage[16] = {};
  std::vector<TensorHeader> headers(op.entry.size());
  for (std::size_t i = 0; i < op.entry.size(); ++i) {
    const TraceValue& v = op.entry[i];
    if (!v.defined) continue;
    headers[i].data = aligned_storage;
    headers[i].dims = v.shape.data();
    headers[i].rank = static_cast<std::int64_t>(v.shape.size());
    headers[i].dtype = static_cast<std::int64_t>(v.dtype);
  }
  std::vector<std::int64_t> symbols(np.guards.num_symbols + 1);
  return evaluate_guards(np.guards, headers.data(), symbols.data()) == 0;
}

// Eviction order: the least recently used variant goes first (the fewer
// entries on a tie). Lifetime counts would make every fresh variant the
// victim and keep one that traffic stopped using.
bool evicts_before(const CompiledTrace& x, const CompiledTrace& y) {
  const std::uint64_t ux = x.last_used(), uy = y.last_used();
  if (ux != uy) return ux < uy;
  return x.entries() < y.entries();
}

// True when the plan computes something before the step at pc.
bool work_before(const Plan& plan, vm::Pc pc) {
  for (const Step& s : plan.steps) {
    if (s.pc == pc) return false;
    if (s.kind == StepKind::Kernel || s.kind == StepKind::Fused || s.kind == StepKind::Row ||
        s.kind == StepKind::Contraction)
      return true;
  }
  return false;
}

}  // namespace

Engine::Engine(std::shared_ptr<const vm::Program> program, const JitOptions& options,
               const CostModelOptions& cost_options, DeviceChoice device)
    : program_(std::move(program)), options_(options), cost_options_(cost_options),
      cost_weights_(cost_options.weights.value_or(cost::profile_weights(cost_options.profile))),
      cost_limits_(cost_options.limits.value_or(cost::profile_limits(cost_options.profile))),
      rapl_(cost_options.enabled ? cost_options.powercap_root : std::string()),
      device_(options.device == "cpu" ? nullptr : std::move(device.device)), isa_(choose_isa(options)),
      cache_(options.code_cache_bytes), injected_faults_left_(parse_fault(options.fault_injection)) {
  for (const vm::Anchor& a : program_->anchors()) {
    anchors_.push_back(std::make_unique<Anchor>());
    anchors_.back()->name = a.name;
  }
  if (options_.device != "cpu" && !device_ && active()) {
    device_absent_ = device.absent_reason.empty() ? std::string("no device was opened") : device.absent_reason;
    Event e;
    e.kind = EventKind::Fallback;
    e.message = "JitOptions::device is '" + options_.device + "' but no GPU is usable (" + device_absent_ +
                "): fused groups run on the CPU";
    events_.add(std::move(e));
  }
  if (cost_options_.enabled && device_) nvml_ = std::make_unique<cost::NvmlEnergy>();
  if (!options_.profile_path.empty()) load_learned_profile();
}

Engine::~Engine() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (!options_.profile_path.empty()) save_learned_profile();
}

// Applies a saved profile: each anchor starts at the tier and with the
// symbolic dims it had learned. A bad file is reported and ignored.
void Engine::load_learned_profile() {
  std::vector<AnchorProfile> profiles;
  std::string error;
  Event e;
  e.kind = EventKind::Profile;
  if (!load_profile(options_.profile_path, *program_, profiles, error)) {
    e.message = error + "; starting without it";
    events_.add(std::move(e));
    return;
  }
  std::size_t applied = 0;
  for (const AnchorProfile& p : profiles)
    for (auto& a : anchors_)
      if (a->name == p.anchor) {
        a->tier = p.tier;
        a->knowledge = p.knowledge;
        ++applied;
      }
  if (applied == 0) return;
  e.message = "profile '" + options_.profile_path + "' loaded: " + std::to_string(applied) + " anchors start warm";
  events_.add(std::move(e));
}

// Saves what every anchor learned (on model destruction).
void Engine::save_learned_profile() {
  std::vector<AnchorProfile> profiles;
  for (const auto& a : anchors_)
    if (!a->knowledge.symbolic.empty() || (a->tier == Tier::Unfused && !a->demoted))
      profiles.push_back({a->name, a->demoted ? a->learned_tier() : a->tier, a->knowledge});
  std::string error;
  if (!save_profile(options_.profile_path, *program_, profiles, error)) {
    Event e;
    e.kind = EventKind::Profile;
    e.message = error;
    events_.add(std::move(e));
  }
}

std::uint64_t Engine::version(vm::AnchorId anchor) const {
  return anchors_[anchor.index]->version.load(std::memory_order_acquire);
}

bool Engine::recording_wanted(vm::AnchorId anchor) const {
  const Anchor& a = *anchors_[anchor.index];
  if (!a.wants_recording.load(std::memory_order_relaxed)) return false;
  return to_ns(Clock::now()) >= a.penalty_until_ns.load(std::memory_order_relaxed);
}

void Engine::set_penalty(Anchor& a, Clock::time_point now) {
  a.penalty_until = now + std::chrono::microseconds(static_cast<std::int64_t>(a.penalty_ms * 1000));
  a.penalty_until_ns.store(to_ns(a.penalty_until), std::memory_order_relaxed);
  a.penalty_ms = std::min(kMaxPenaltyMs, a.penalty_ms * 2);
}

// Gives back one compile and halves the penalty per refill period elapsed;
// a tier lowered by a failure is tried again.
void Engine::refill(Anchor& a, Clock::time_point now) {
  if (a.last_refill == Clock::time_point{}) a.last_refill = now;
  while (now - a.last_refill >= kRefillPeriod) {
    a.last_refill += kRefillPeriod;
    a.compiles_in_window = std::max(0, a.compiles_in_window - 1);
    a.penalty_ms = std::max(kBasePenaltyMs, a.penalty_ms / 2);
    a.no_side.clear();
    if (a.demoted) {
      a.tier = a.learned_tier();
      a.demoted = false;
    }
  }
}

InstalledVariants Engine::variants(vm::AnchorId anchor) const {
  std::lock_guard lock(mu_);
  const Anchor& a = *anchors_[anchor.index];
  return {a.list, a.sides, a.version.load(std::memory_order_relaxed)};
}

Event Engine::event(EventKind kind, vm::AnchorId anchor, std::uint64_t call) const {
  Event e;
  e.kind = kind;
  e.call = call;
  e.anchor = anchors_[anchor.index]->name;
  return e;
}

void Engine::on_hot(vm::AnchorId anchor, std::uint64_t call, std::uint64_t visits) {
  if (!active()) return;
  std::lock_guard lock(mu_);
  Anchor& a = *anchors_[anchor.index];
  // Every session's interpreter finds the anchor hot once; only the first
  // report (nothing installed or under way) starts a recording.
  if (!a.list->empty() || a.recording || a.compiling || a.wants_recording) return;
  if (a.trial && a.trial->decided) return;  // the cost model chose the interpreter here
  a.wants_recording = true;
  Event e = event(EventKind::Hot, anchor, call);
  const bool by_time = visits < options_.hot_threshold;
  e.message = "anchor '" + a.name + "' is hot (" + std::to_string(visits) + (visits == 1 ? " visit" : " visits") +
              (by_time ? ", interpreted for " + std::to_string(options_.hot_time_us) + " us or more" : std::string()) +
              "): recording a trace";
  events_.add(std::move(e));
}

bool Engine::can_compile(const Anchor& a, Clock::time_point now) const {
  return !a.recording && !a.compiling && now >= a.penalty_until;
}

RecordingTicket Engine::claim_recording(vm::AnchorId anchor) {
  if (!active()) return {};
  std::lock_guard lock(mu_);
  Anchor& a = *anchors_[anchor.index];
  const Clock::time_point now = Clock::now();
  if (!a.wants_recording || !can_compile(a, now) || !budget_allows(a, anchor, now)) return {};
  a.recording = true;
  a.wants_recording = false;
  const vm::Pc cut = a.cut_at;
  a.cut_at = vm::kNoPc;  // a cut applies to the one retrace that asked for it
  return {true, cut};
}

// Refills the anchor's budget; false (with a penalty) when it is spent.
// Caller holds mu_.
bool Engine::budget_allows(Anchor& a, vm::AnchorId anchor, Clock::time_point now) {
  refill(a, now);
  if (a.compiles_in_window < options_.max_compiles_per_anchor) return true;
  // Budget spent: wait out a penalty (doubling each time), then allow one more attempt.
  Event e = event(EventKind::Penalty, anchor, 0);
  e.message = "anchor '" + a.name + "' used its " + std::to_string(options_.max_compiles_per_anchor) +
              " compiles: interpreting for " + std::to_string(static_cast<int>(a.penalty_ms)) + " ms";
  events_.add(std::move(e));
  set_penalty(a, now);
  a.compiles_in_window = options_.max_compiles_per_anchor - 1;
  return false;
}

bool Engine::side_recording_wanted(vm::AnchorId anchor, vm::Pc pc) const {
  const Anchor& a = *anchors_[anchor.index];
  if (!a.side_requested(pc)) return false;
  return to_ns(Clock::now()) >= a.penalty_until_ns.load(std::memory_order_relaxed);
}

bool Engine::claim_side_recording(vm::AnchorId anchor, vm::Pc pc) {
  if (!active()) return false;
  std::lock_guard lock(mu_);
  Anchor& a = *anchors_[anchor.index];
  const Clock::time_point now = Clock::now();
  if (!a.side_requested(pc) || !can_compile(a, now) || !budget_allows(a, anchor, now)) return false;
  a.recording = true;
  a.withdraw_side(pc);
  return true;
}

void Engine::submit(vm::AnchorId anchor, std::optional<Trace> trace, std::uint64_t call, vm::Pc side_pc) {
  std::unique_lock lock(mu_);
  Anchor& a = *anchors_[anchor.index];
  a.recording = false;
  if (!trace) {
    // The run failed before the region ended: try another call.
    if (side_pc != vm::kNoPc) a.request_side(side_pc);
    else a.wants_recording = true;
    return;
  }
  trace->id = next_trace_id_++;
  ++totals_.traces_recorded;
  Event e = event(EventKind::TraceRecorded, anchor, call);
  e.trace = trace->id;
  e.pc = trace->end_pc;
  e.message = std::string(trace->side ? "side trace " : "trace ") + std::to_string(trace->id) + " recorded at '" +
              a.name + "'" + (trace->side ? " from pc " + std::to_string(trace->start_pc) : std::string()) + ": " +
              std::to_string(trace->ops.size()) + " instructions, " + std::to_string(trace->entry.size()) +
              " entry values, ends at pc " + std::to_string(trace->end_pc) + " (" +
              std::string(trace_end_name(trace->end)) + ")";
  events_.add(std::move(e));
  if (trace->ops.empty() && trace->side) {
    a.no_side.insert(trace->start_pc);  // nothing to compile there: its exits cut instead
    return;
  }
  if (trace->ops.empty()) {
    // Nothing compiled code could run here (e.g. the region starts with a
    // loop set-up): stay interpreted, look again much later.
    a.penalty_until = Clock::now() + std::chrono::milliseconds(static_cast<std::int64_t>(kMaxPenaltyMs));
    a.penalty_until_ns.store(to_ns(a.penalty_until), std::memory_order_relaxed);
    return;
  }
  const bool on_this_thread = options_.synchronous || !start_worker(anchor, call);
  if (!on_this_thread && queue_.size() >= static_cast<std::size_t>(std::max(1, options_.max_compile_queue))) {
    drop_trace(a, anchor, *trace, call);
    return;
  }
  a.compiling = true;
  ++a.compiles_in_window;
  ++a.compiles_total;
  Task task{anchor, std::move(*trace), call};
  if (on_this_thread) {
    ++busy_;
    lock.unlock();
    compile(task);
    return;
  }
  queue_.push_back(std::move(task));
  work_cv_.notify_one();
}

// The compile queue is full: the trace is not compiled (it costs no compile
// of the anchor's budget), the region stays interpreted, and the anchor is
// recorded again (with the same cut, if the trace was cut) after the base
// penalty, when the queue has likely drained. A full queue is not the
// anchor's failure, so its penalty does not grow. Caller holds mu_.
void Engine::drop_trace(Anchor& a, vm::AnchorId anchor, const Trace& trace, std::uint64_t call) {
  ++totals_.compiles_dropped;
  Event e = event(EventKind::Fallback, anchor, call);
  e.trace = trace.id;
  e.message = "compile queue full (JitOptions::max_compile_queue = " + std::to_string(options_.max_compile_queue) +
              "): trace " + std::to_string(trace.id) + " dropped; '" + a.name +
              "' stays interpreted and is recorded again in " + std::to_string(static_cast<int>(kBasePenaltyMs)) +
              " ms";
  events_.add(std::move(e));
  a.penalty_until = Clock::now() + std::chrono::milliseconds(static_cast<std::int64_t>(kBasePenaltyMs));
  a.penalty_until_ns.store(to_ns(a.penalty_until), std::memory_order_relaxed);
  if (trace.side) {
    a.request_side(trace.start_pc);
    return;
  }
  if (trace.end == TraceEnd::Cut) a.cut_at = trace.end_pc;
  a.wants_recording = true;
}

// Starts the compile thread unless it runs; false (with a Fallback event)
// when it cannot start, and the caller compiles on its own thread. Caller holds mu_.
bool Engine::start_worker(vm::AnchorId anchor, std::uint64_t call) {
  if (worker_.joinable()) return true;
  try {
    if (take_fault(FaultPoint::CompileThread))
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "injected fault (fault injection point 'compile-thread')");
    worker_ = std::thread([this] { worker_loop(); });
    return true;
  } catch (const std::system_error& ex) {
    Event e = event(EventKind::Fallback, anchor, call);
    e.message = std::string("the background compile thread did not start (") + ex.what() +
                "): compiling on the calling thread";
    events_.add(std::move(e));
    return false;
  }
}

void Engine::worker_loop() {
  mark_compile_thread();
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || (!held_ && !queue_.empty()); });
    if (stopping_) return;
    Task task = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    lock.unlock();
    compile(task);
    lock.lock();
    // Once the first compiles are done and nothing waits, this otherwise idle
    // thread generates oneDNN's gemm kernels, which the first call at a new
    // batch size would pay for (once per process; later calls return at once).
    if (queue_.empty()) {
      lock.unlock();
      kernels::onednn_warm_up_shape_classes();
      lock.lock();
    }
  }
}

// Whether this compile must fail: the process-wide registry's "compile"
// point, or this model's legacy JitOptions::fault_injection counter.
bool Engine::injected_fault() {
  if (take_fault(FaultPoint::Compile)) return true;
  std::lock_guard lock(mu_);
  if (injected_faults_left_ == 0) return false;
  if (injected_faults_left_ > 0) --injected_faults_left_;
  return true;
}

// The plan options JitOptions sets (tier and math are the caller's).
PlanOptions Engine::configured_plan_options() const {
  PlanOptions po;
  po.value_canaries = options_.value_canaries;
  po.range_canaries = options_.range_canaries;
  po.range_margin = options_.range_margin;
  po.contraction_epilogues = options_.contraction_epilogues;
  po.epilogue_min_elements = options_.epilogue_min_elements;
  po.hoist_invariants = options_.hoist_loop_invariants;
  po.nonadjacent_fusion = options_.nonadjacent_fusion;
  po.short_row_tiles = options_.short_row_tiles;
  po.fused_on_device = options_.device == "gpu" && device_ != nullptr;
  return po;
}

// Plans and compiles one trace (outside the lock); `tier` reports the rung tried.
std::shared_ptr<const CompiledTrace> Engine::build_variant(const Task& task, Tier& tier, std::string& error) {
  PlanOptions po = configured_plan_options();
  ShapeKnowledge knowledge;
  {
    std::lock_guard lock(mu_);
    Anchor& a = *anchors_[task.anchor.index];
    po.tier = a.tier;
    // The recorded shapes are values seen too.
    for (const TraceValue& v : task.trace.entry)
      if (v.defined) a.knowledge.note_values(v.reg.index, v.shape);
    knowledge = a.knowledge;
  }
  tier = po.tier;
  po.math = options_.fast_math ? MathMode::Fast : MathMode::Exact;
  if (injected_fault()) {
    error = "injected fault (fault injection point 'compile')";
    return nullptr;
  }
  return compile_variant(task.trace.id, plan_trace(*program_, task.trace, knowledge, po), po, *isa_, error);
}

std::shared_ptr<const CompiledTrace> Engine::compile_variant(std::uint32_t id, Plan plan, const PlanOptions& options,
                                                             x86::Isa isa, std::string& error) {
  const bool placed = options.fused_on_device && device_ && place_fused_groups(plan, *program_, *device_) > 0;
  return compile_plan(id, program_, std::move(plan), isa, cache_, error, placed ? device_ : nullptr);
}

// Compiles one trace and installs it, or walks down the ladder. With the
// cost model on, the installed variant serves calls while the other
// candidates compile, then the trial starts. Whatever throws, the anchor
// leaves the compiling state and wait_idle() wakes up.
void Engine::compile(const Task& task) {
  std::string error;
  Tier tier = Tier::ExactFused;
  std::shared_ptr<const CompiledTrace> compiled;
  try {
    compiled = build_variant(task, tier, error);
  } catch (const std::exception& ex) {
    error = ex.what();
  } catch (...) {
    error = "unknown exception";
  }
  bool trial_wanted = false;
  {
    std::lock_guard lock(mu_);
    Anchor& a = *anchors_[task.anchor.index];
    try {
      if (compiled && task.trace.side) {
        // Side traces are not trialled: they serve exits of the anchor's
        // traces, whichever the cost model chose.
        install_side(a, compiled, task.call);
      } else if (compiled) {
        install(a, compiled, task.call);
        // One trial per anchor at a time: a sibling trace (another rank or a
        // 0/1 dim) compiled while the main trace's trial runs keeps the
        // ladder's variant instead of cutting that trial short.
        const bool open_trial_installed =
            a.trial && !a.trial->decided &&
            std::any_of(a.list->begin(), a.list->end(), [&](const auto& v) { return v->id() == a.trial->trace; });
        trial_wanted = cost_enabled() && !open_trial_installed;
      } else {
        ++totals_.compile_failures;
        Event e = event(EventKind::CompileFailed, task.anchor, task.call);
        e.trace = task.trace.id;
        e.message = "trace " + std::to_string(task.trace.id) + " (" + std::string(tier_name(tier)) +
                    ") failed to compile: " + error + "; the interpreter keeps running the region";
        events_.add(std::move(e));
        if (task.trace.side) a.no_side.insert(task.trace.start_pc);  // its exits cut the trace instead
        else note_compile_failure(a, task.anchor, task.call);
      }
    } catch (...) {
      // Out of memory while publishing: the region stays interpreted.
      trial_wanted = false;
    }
    if (!trial_wanted) {
      a.compiling = false;
      --busy_;
      idle_cv_.notify_all();
      return;
    }
  }
  std::shared_ptr<cost::Trial> trial;
  try {
    trial = build_trial(task, compiled);
  } catch (...) {
    // No trial: the installed variant stays, as with the cost model off.
  }
  std::lock_guard lock(mu_);
  Anchor& a = *anchors_[task.anchor.index];
  a.compiling = false;
  try {
    const bool still_installed =
        std::any_of(a.list->begin(), a.list->end(), [&](const auto& v) { return v == compiled; });
    set_trial(a, trial && still_installed ? std::move(trial) : nullptr);
    if (a.trial) start_trial(a, task.anchor, task.call);
  } catch (...) {
    set_trial(a, nullptr);
  }
  --busy_;
  idle_cv_.notify_all();
}

// After a failed compile: the next rung of the ladder, or a penalty.
void Engine::note_compile_failure(Anchor& a, vm::AnchorId anchor, std::uint64_t call) {
  a.wants_recording = true;
  if (a.tier != Tier::Unfused) {
    a.tier = Tier::Unfused;
    a.demoted = true;
    return;
  }
  Event e = event(EventKind::Penalty, anchor, call);
  e.message = "anchor '" + a.name + "' interpreted for " + std::to_string(static_cast<int>(a.penalty_ms)) +
              " ms after a failed unfused compile";
  events_.add(std::move(e));
  set_penalty(a, Clock::now());
}

// `installed` with `trace` first, minus the traces it replaces (id
// `replace`) or subsumes, capped at `limit` (the least recently used goes);
// what it dropped, and why, goes to `dropped`.
std::shared_ptr<VariantList> Engine::with_new_trace(const VariantList& installed,
                                                    const std::shared_ptr<const CompiledTrace>& trace,
                                                    std::uint32_t replace, int limit, Dropped& dropped) const {
  trace->mark_used(use_clock_.load(std::memory_order_relaxed));
  const std::string by = (trace->plan().side ? " by side trace " : " by trace ") + std::to_string(trace->id());
  auto list = std::make_shared<VariantList>();
  list->push_back(trace);
  for (const auto& old : installed) {
    if (old->id() == replace) dropped.emplace_back(old, "replaced" + by);
    else if (subsumes(*trace, *old)) dropped.emplace_back(old, "subsumed" + by);
    else list->push_back(old);
  }
  while (list->size() > static_cast<std::size_t>(std::max(1, limit))) {
    auto least = std::min_element(list->begin() + 1, list->end(),
                                  [](const auto& x, const auto& y) { return evicts_before(*x, *y); });
    dropped.emplace_back(*least, std::string(trace->plan().side ? "side trace" : "variant") +
                                     " limit reached (least recently used)");
    list->erase(least);
  }
  return list;
}

// Publishes a new variant list (with_new_trace, max_variants_per_anchor).
void Engine::install(Anchor& a, std::shared_ptr<const CompiledTrace> trace, std::uint64_t call) {
  Dropped dropped;
  a.list = with_new_trace(*a.list, trace, a.replace_trace, options_.max_variants_per_anchor, dropped);
  a.replace_trace = 0;
  a.version.fetch_add(1, std::memory_order_release);
  enforce_trace_limit(trace.get(), call);
  a.failures_since_install = 0;
  log_compiled(a, *trace, call);
  for (const auto& [old, why] : dropped) log_removed(a, *old, why, call);
}

// Publishes a new side-trace list (with_new_trace, max_side_traces_per_anchor).
// Caller holds mu_.
void Engine::install_side(Anchor& a, std::shared_ptr<const CompiledTrace> trace, std::uint64_t call) {
  Dropped dropped;
  a.sides = with_new_trace(*a.sides, trace, 0, options_.max_side_traces_per_anchor, dropped);
  a.version.fetch_add(1, std::memory_order_release);
  log_compiled(a, *trace, call);
  for (const auto& [old, why] : dropped) log_removed(a, *old, why, call);
}

// The Compiled event of an installed trace (and the totals). Caller holds mu_.
void Engine::log_compiled(const Anchor& a, const CompiledTrace& trace, std::uint64_t call) {
  ++totals_.compiles;
  totals_.compile_ms += trace.compile_ms();
  const Plan& p = trace.plan();
  Event e;
  e.kind = EventKind::Compiled;
  e.call = call;
  e.anchor = a.name;
  e.trace = trace.id();
  if (p.side) e.pc = p.start_pc;
  e.duration_ms = trace.compile_ms();
  e.code_bytes = trace.code_bytes();
  e.decision = std::string(tier_name(p.tier)) + ", " + (p.math == MathMode::Fast ? "fast" : "exact") + " math";
  const std::string what = p.side ? "side trace " + std::to_string(trace.id()) + " from pc " + std::to_string(p.start_pc)
                                  : "trace " + std::to_string(trace.id());
  e.message = what + " compiled (" + e.decision + "): " +
              std::to_string(p.steps.size()) + " steps, " + std::to_string(p.fused.size()) + " fused groups covering " +
              std::to_string(p.fused_ops) + " ops, " +
              (p.hoisted_outputs.empty() ? std::string()
                                         : std::to_string(p.hoisted_outputs.size()) + " loop-invariant steps hoisted, ") +
              (p.sunk_ops == 0 ? std::string() : std::to_string(p.sunk_ops) + " ops sunk into later groups, ") +
              std::to_string(p.guards.guards.size()) + " guards, " +
              std::to_string(trace.code_bytes()) + " bytes in " + std::to_string(trace.compile_ms()) + " ms";
  events_.add(std::move(e));
}

void Engine::log_removed(const Anchor& a, const CompiledTrace& trace, const std::string& why, std::uint64_t call) {
  Event e;
  e.kind = EventKind::Evicted;
  e.call = call;
  e.anchor = a.name;
  e.trace = trace.id();
  e.message = std::string(trace.plan().side ? "side trace " : "trace ") + std::to_string(trace.id()) +
              " removed: " + why;
  events_.add(std::move(e));
}

// Keeps the model within JitOptions::max_traces installed variants: while
// over, the least recently used variant goes, never `keep` (the one just installed or
// chosen). A cost-model trial of an evicted trace is dropped with it. An
// anchor that loses its last variant is not re-recorded (that would only
// evict another): running sessions interpret its region, and a new session
// that finds it hot records it again. Caller holds mu_.
void Engine::enforce_trace_limit(const CompiledTrace* keep, std::uint64_t call) {
  const std::size_t limit = static_cast<std::size_t>(std::max(1, options_.max_traces));
  std::size_t installed = 0;
  for (const auto& a : anchors_) installed += a->list->size();
  while (installed > limit) {
    Anchor* owner = nullptr;
    std::size_t index = 0;
    for (const auto& a : anchors_)
      for (std::size_t i = 0; i < a->list->size(); ++i) {
        if ((*a->list)[i].get() == keep) continue;
        if (!owner || evicts_before(*(*a->list)[i], *(*owner->list)[index])) {
          owner = a.get();
          index = i;
        }
      }
    if (!owner) return;
    auto list = std::make_shared<VariantList>(*owner->list);
    const std::shared_ptr<const CompiledTrace> evicted = (*list)[index];
    list->erase(list->begin() + static_cast<std::ptrdiff_t>(index));
    owner->list = std::move(list);
    owner->version.fetch_add(1, std::memory_order_release);
    if (owner->trial && owner->trial->trace == evicted->id()) set_trial(*owner, nullptr);
    --installed;
    ++totals_.traces_evicted;
    Event ev;
    ev.kind = EventKind::Evicted;
    ev.call = call;
    ev.anchor = owner->name;
    ev.trace = evicted->id();
    ev.message = "trace " + std::to_string(evicted->id()) + " removed: the model holds its limit of " +
                 std::to_string(limit) + " compiled traces (JitOptions::max_traces, least recently used)";
    events_.add(std::move(ev));
  }
}

void Engine::request_retrace(Anchor& a, vm::AnchorId anchor, std::string decision, std::uint64_t call) {
  a.wants_recording = true;
  ++totals_.retraces;
  Event e = event(EventKind::Retrace, anchor, call);
  e.decision = decision;
  e.message = "retrace of '" + a.name + "' queued: " + decision;
  events_.add(std::move(e));
}

std::vector<TensorHeader> Engine::entry_headers(const Plan& plan, const vm::FrameView& frame) {
  std::vector<TensorHeader> headers;
  for (vm::RegId r : plan.entry_regs) headers.push_back(header_of(frame.registers[r.index]));
  return headers;
}

// Counts a refused entry; its event for the first few and then powers of two
// (built before taking the lock).
std::optional<Event> Engine::count_guard_failure(vm::AnchorId anchor, const CompiledTrace& failed,
                                                 std::uint32_t guard, const std::vector<TensorHeader>& headers,
                                                 std::uint64_t call) const {
  failed.count_exit(guard);
  if (!worth_logging(failed.exit_count(guard))) return std::nullopt;
  const Plan& plan = failed.plan();
  Event e = event(EventKind::GuardFailed, anchor, call);
  e.trace = failed.id();
  e.pc = plan.start_pc;
  e.guard = plan.exits[guard].description;
  e.observed = describe_observed(plan.guards.guards[guard], headers.data());
  e.message = "guard " + e.guard + " of " + (plan.side ? "side trace " : "trace ") + std::to_string(failed.id()) +
              " failed (" + e.observed + "): interpreting from pc " + std::to_string(plan.start_pc) + " (failure " +
              std::to_string(failed.exit_count(guard)) + ")";
  return e;
}

void Engine::on_guard_failure(vm::AnchorId anchor, const CompiledTrace& failed, std::uint32_t guard,
                              const vm::FrameView& frame, std::uint64_t call) {
  const Plan& plan = failed.plan();
  const std::vector<TensorHeader> headers = entry_headers(plan, frame);
  std::optional<Event> e = count_guard_failure(anchor, failed, guard, headers, call);
  std::lock_guard lock(mu_);
  Anchor& a = *anchors_[anchor.index];
  if (e) events_.add(std::move(*e));
  note_refused_values(a, plan, headers);
  ++a.failures_since_install;
  if (a.recording || a.compiling || a.wants_recording || a.failures_since_install < kRetraceAfterFailures) return;
  request_retrace(a, anchor, learn_from_refusal(a, plan, guard, headers), call);
}

// Keeps the values of the entry dims a refused call brought (above 1 and
// not the recorded one), for the facts of the dims the policy makes
// symbolic when the failures add up. Caller holds mu_.
void Engine::note_refused_values(Anchor& a, const Plan& plan, const std::vector<TensorHeader>& headers) {
  for (std::uint32_t i = 0; i < plan.entry.size(); ++i) {
    const TraceValue& v = plan.entry[i];
    if (!v.defined || headers[i].rank != static_cast<std::int64_t>(v.shape.size())) continue;
    for (std::uint32_t axis = 0; axis < v.shape.size(); ++axis)
      if (headers[i].dims[axis] > 1 && headers[i].dims[axis] != v.shape[axis])
        a.refused_values[RegDim{v.reg.index, axis}].note(headers[i].dims[axis]);
  }
}

// Learns from the difference between what was recorded and what came: a dim
// seen with a second value (both > 1) becomes symbolic; every symbolic dim's
// facts take in the values refused since the policy last learned; dims once
// equal and now not stop sharing a symbol; rank, dtype and 0/1 changes ask
// for a sibling. Caller holds mu_.
std::string Engine::learn_from_refusal(Anchor& a, const Plan& plan, std::uint32_t guard,
                                       const std::vector<TensorHeader>& headers) {
  const Guard& g = plan.guards.guards[guard];
  std::vector<std::pair<std::string, const DimFacts*>> made_symbolic;
  std::string sibling;
  for (std::uint32_t i = 0; i < plan.entry.size(); ++i) {
    const TraceValue& v = plan.entry[i];
    const TensorHeader& h = headers[i];
    const std::string& name = plan.entry_names[i];
    if (!v.defined || h.rank != static_cast<std::int64_t>(v.shape.size()) ||
        h.dtype != static_cast<std::int64_t>(v.dtype)) {
      sibling += (sibling.empty() ? "" : ", ") + name + " changed rank or dtype";
      continue;
    }
    a.knowledge.note_values(v.reg.index, std::span(h.dims, v.shape.size()));
    for (std::uint32_t axis = 0; axis < v.shape.size(); ++axis) {
      const std::int64_t was = v.shape[axis], now = h.dims[axis];
      if (was == now) continue;
      if (was > 1 && now > 1) {
        const RegDim dim{v.reg.index, axis};
        const auto [it, added] = a.knowledge.symbolic.try_emplace(dim);
        if (!added) continue;
        it->second.note(was);
        it->second.note(now);
        made_symbolic.emplace_back(name + ".dim" + std::to_string(axis), &it->second);
      } else {
        sibling += (sibling.empty() ? "" : ", ") + name + ".dim" + std::to_string(axis) + " is " +
                   std::to_string(now) + " (stays exact)";
      }
    }
  }
  // Every value refused since the policy last learned goes to the facts of
  // the dims made symbolic now and of those already symbolic: a call a
  // guard of another dim refused, or one the trace compiled before a dim
  // became symbolic refused, still brought a value of that dim.
  for (const auto& [dim, refused] : a.refused_values)
    if (const auto it = a.knowledge.symbolic.find(dim); it != a.knowledge.symbolic.end()) it->second.merge(refused);
  a.refused_values.clear();
  if (g.kind == GuardKind::DimsEqual)
    a.knowledge.unequal.insert({RegDim{plan.entry_regs[g.tensor].index, g.axis},
                                RegDim{plan.entry_regs[g.tensor2].index, g.axis2}});
  std::string decision;
  if (!made_symbolic.empty()) {
    a.tier = std::max(a.tier, Tier::SymbolicFused);
    decision = describe_made_symbolic(made_symbolic);
  }
  if (!sibling.empty()) decision += (decision.empty() ? "sibling trace: " : "; sibling trace: ") + sibling;
  if (decision.empty()) decision = "sibling trace (" + describe_guard(g, plan.entry_names) + ")";
  return decision;
}

// Whether a branch exit at pc should get a side trace. Caller holds mu_.
bool Engine::wants_side_trace(const Anchor& a, vm::Pc pc) const {
  return options_.side_traces && options_.max_side_traces_per_anchor > 0 && !a.no_side.count(pc);
}

bool Engine::has_side_trace_at(const Anchor& a, vm::Pc pc) {
  return std::any_of(a.sides->begin(), a.sides->end(), [&](const auto& t) { return t->plan().start_pc == pc; });
}

// Removes one side trace from the anchor's list. Caller holds mu_.
void Engine::drop_side(Anchor& a, const CompiledTrace& trace, const std::string& why, std::uint64_t call) {
  auto sides = std::make_shared<VariantList>();
  for (const auto& t : *a.sides)
    if (t.get() != &trace) sides->push_back(t);
  if (sides->size() == a.sides->size()) return;
  a.sides = std::move(sides);
  a.version.fetch_add(1, std::memory_order_release);
  log_removed(a, trace, why, call);
}

void Engine::request_side_trace(Anchor& a, vm::AnchorId anchor, vm::Pc pc, std::string decision, std::uint64_t call) {
  if (!a.request_side(pc)) return;  // every slot holds a live request: a later exit asks again
  ++totals_.retraces;
  Event e = event(EventKind::Retrace, anchor, call);
  e.pc = pc;
  e.decision = decision;
  e.message = "side trace of '" + a.name + "' from pc " + std::to_string(pc) + " queued: " + decision;
  events_.add(std::move(e));
}

void Engine::on_side_refused(vm::AnchorId anchor, const CompiledTrace& refused, std::uint32_t guard,
                             const vm::FrameView& frame, std::uint64_t call) {
  const Plan& plan = refused.plan();
  const std::vector<TensorHeader> headers = entry_headers(plan, frame);
  std::optional<Event> e = count_guard_failure(anchor, refused, guard, headers, call);
  std::lock_guard lock(mu_);
  Anchor& a = *anchors_[anchor.index];
  if (e) events_.add(std::move(*e));
  note_refused_values(a, plan, headers);
  if (a.recording || a.compiling || a.side_requested(plan.start_pc) ||
      refused.exit_count(guard) < kRetraceAfterFailures || !wants_side_trace(a, plan.start_pc))
    return;
  request_side_trace(a, anchor, plan.start_pc,
                     "guard " + plan.exits[guard].description + " of side trace " + std::to_string(refused.id()) +
                         " keeps failing: " + learn_from_refusal(a, plan, guard, headers),
                     call);
}

void Engine::on_exit(vm::AnchorId anchor, const CompiledTrace& trace, std::uint32_t exit, vm::Pc resume_pc,
                     std::uint64_t call) {
  const Plan& plan = trace.plan();
  trace.count_exit(exit);
  const bool kernel_error = exit >= plan.exits.size();
  std::optional<Event> e;
  if (worth_logging(trace.exit_count(exit))) {
    e = event(EventKind::Deopt, anchor, call);
    e->trace = trace.id();
    e->pc = resume_pc;
    e->guard = kernel_error ? "kernel error" : plan.exits[exit].description;
    e->message = "trace " + std::to_string(trace.id()) + " left at " + e->guard +
                 " -> deopt, interpreter resumes at pc " + std::to_string(resume_pc);
  }
  std::lock_guard lock(mu_);
  Anchor& a = *anchors_[anchor.index];
  if (e) events_.add(std::move(*e));
  if (kernel_error || a.recording || a.compiling || a.wants_recording) return;
  const ExitRecord& x = plan.exits[exit];
  if (trace.exit_count(exit) < kRetraceAfterExits) return;
  switch (x.kind) {
    case ExitKind::Branch:
      // Asked for already, or side traces start here and refused this exit
      // (on_side_refused learns from that).
      if (a.side_requested(x.pc) || has_side_trace_at(a, x.pc)) break;
      if (wants_side_trace(a, x.pc)) {
        request_side_trace(a, anchor, x.pc,
                           "branch at pc " + std::to_string(x.pc) + " of trace " + std::to_string(trace.id()) +
                               " keeps deoptimising: side trace from it",
                           call);
        break;
      }
      // A side trace's own trace is the anchor's main one: cutting it is not
      // this trace's to ask. Cutting before a branch that opens the region
      // would leave nothing to compile: keep the variant (it exits at the
      // branch, no worse than interpreting) rather than retrace.
      if (plan.side || !work_before(plan, x.pc)) break;
      a.cut_at = x.pc;
      a.replace_trace = trace.id();
      request_retrace(a, anchor, "branch at pc " + std::to_string(x.pc) + " keeps deoptimising: trace cut before it",
                      call);
      break;
    case ExitKind::Layout:
      a.tier = Tier::Unfused;
      a.demoted = true;
      if (plan.side) {
        // Dropped now: while installed it would take every exit at its pc,
        // and the unfused side trace could never be recorded there.
        drop_side(a, trace, "its fused group layout changed", call);
        request_side_trace(a, anchor, plan.start_pc, "fused group layout changed: unfused compiled ops", call);
        break;
      }
      a.replace_trace = trace.id();
      request_retrace(a, anchor, "fused group layout changed: unfused compiled ops", call);
      break;
    case ExitKind::EntryGuard: break;  // learned in on_guard_failure
  }
}

void Engine::on_value_canary(vm::AnchorId anchor, const CompiledTrace& trace, std::uint64_t call) {
  Event e = event(EventKind::ValueCanary, anchor, call);
  e.trace = trace.id();
  e.message = "trace " + std::to_string(trace.id()) + ": a fused kernel produced NaN or Inf";
  events_.add(std::move(e));
}

void Engine::on_device_failure(vm::AnchorId anchor, const CompiledTrace& trace, std::uint64_t call) {
  Event e = event(EventKind::Fallback, anchor, call);
  e.trace = trace.id();
  e.message = "trace " + std::to_string(trace.id()) + ": a step failed on " + trace.device_name() + " (" +
              trace.device_error() + "); the CPU kernels finish the call and run the trace's device steps from now on";
  events_.add(std::move(e));
  std::lock_guard lock(mu_);
  ++totals_.device_fallbacks;
}

// Logged for the first few reports of a variant, then at powers of two (the
// counter keeps every one).
void Engine::on_range_canary(vm::AnchorId anchor, const CompiledTrace& trace, std::uint32_t group,
                             std::uint64_t call) {
  const std::uint64_t count = trace.count_range_canary();
  if (!worth_logging(count)) return;
  const FusedStep& fs = trace.plan().fused[group];
  std::string ranges;
  for (std::size_t k = 0; k < fs.spec.output_ranges.size(); ++k)
    if (const auto& r = fs.spec.output_ranges[k])
      ranges += (ranges.empty() ? "" : ", ") + std::string("r") + std::to_string(fs.outputs[k].index) + " in " +
                describe_range(*r);
  Event e = event(EventKind::ValueCanary, anchor, call);
  e.trace = trace.id();
  e.message = "trace " + std::to_string(trace.id()) + ": fused group " + std::to_string(group) +
              " wrote values outside the ranges recorded for its outputs (" + ranges + "); report " +
              std::to_string(count);
  events_.add(std::move(e));
}

void Engine::wait_idle() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && busy_ == 0; });
}

void Engine::hold_compiles(bool held) {
  {
    std::lock_guard lock(mu_);
    held_ = held;
  }
  work_cv_.notify_all();
}

void Engine::fill_stats(JitStats& stats) const {
  std::lock_guard lock(mu_);
  stats.traces_recorded = totals_.traces_recorded;
  stats.compiles = totals_.compiles;
  stats.compile_failures = totals_.compile_failures;
  stats.retraces = totals_.retraces;
  stats.compiles_dropped = totals_.compiles_dropped;
  stats.traces_evicted = totals_.traces_evicted;
  stats.device_fallbacks = totals_.device_fallbacks;
  stats.compile_ms = totals_.compile_ms;
  stats.variants_installed = 0;
  stats.side_traces_installed = 0;
  stats.code_bytes = 0;
  for (const auto& a : anchors_) {
    stats.variants_installed += a->list->size();
    stats.side_traces_installed += a->sides->size();
    for (const auto& t : *a->list) stats.code_bytes += t->code_bytes();
    for (const auto& t : *a->sides) stats.code_bytes += t->code_bytes();
  }
}

}  // namespace canary::jit

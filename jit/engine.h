// Engine: the JIT's shared state for one model — per-anchor variants, what
// the policy has learned, the compile queue and the event log. Thread-safe;
// sessions reach it through their SessionHooks.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "canary/inspect.h"
#include "canary/options.h"
#include "canary/stats.h"
#include "jit/compiled_trace.h"
#include "jit/cost/nvml_energy.h"
#include "jit/cost/trial.h"
#include "jit/event_log.h"
#include "jit/fused_device.h"
#include "jit/trace.h"
#include "jit/x86/code_cache.h"
#include "jit/x86/isa.h"

namespace canary::jit {

using VariantList = std::vector<std::shared_ptr<const CompiledTrace>>;

// The installed variants of one anchor and a version that changes with them,
// so sessions reload the list only when it changed.
struct InstalledVariants {
  std::shared_ptr<const VariantList> list;
  std::shared_ptr<const VariantList> sides;  // side traces (JitOptions::side_traces)
  std::uint64_t version = 0;
};

// What a session should do at an anchor with no variant that passed.
struct RecordingTicket {
  bool record = false;
  vm::Pc cut_at = vm::kNoPc;
};

// The device fused groups may run on (JitOptions::device), as the runtime
// opened it (runtime/fused_device_lookup.h).
struct DeviceChoice {
  std::shared_ptr<const FusedDevice> device;  // null: none usable (or none asked for)
  std::string absent_reason;                  // why none, when one was asked for
};

class Engine {
 public:
  Engine(std::shared_ptr<const vm::Program> program, const JitOptions& options,
         const CostModelOptions& cost_options = {}, DeviceChoice device = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const JitOptions& options() const { return options_; }
  // False when the CPU cannot run the backend (no AVX2+FMA) or the JIT is off.
  bool active() const { return isa_.has_value(); }

  // Hot path: the version of an anchor's variant list (relaxed read).
  std::uint64_t version(vm::AnchorId anchor) const;
  InstalledVariants variants(vm::AnchorId anchor) const;

  // The interpreter found the anchor hot.
  // visits: the anchor's visits so far in the reporting session (fewer than
  // hot_threshold when its interpreted time made it hot).
  void on_hot(vm::AnchorId anchor, std::uint64_t call, std::uint64_t visits);
  // Cheap hint (no lock): the engine wants a new recording at this anchor.
  bool recording_wanted(vm::AnchorId anchor) const;
  // Whether this session should record the anchor's region now (claims the
  // recording when it says yes).
  RecordingTicket claim_recording(vm::AnchorId anchor);
  // A recording ended (trace or nullopt when the run failed first). Plans and
  // compiles it, on the calling thread when synchronous, else queued.
  // side_pc: the recording was a side trace's, from that pc.
  void submit(vm::AnchorId anchor, std::optional<Trace> trace, std::uint64_t call, vm::Pc side_pc = vm::kNoPc);

  // Side traces. Cheap hint (no lock): a side trace is wanted from this pc.
  bool side_recording_wanted(vm::AnchorId anchor, vm::Pc pc) const;
  // Whether this session should record the side trace from pc now (claims
  // the recording, and a compile of the anchor's budget, when it says yes).
  bool claim_side_recording(vm::AnchorId anchor, vm::Pc pc);
  // Every side trace from an exit's pc refused the exit's state: `refused`
  // is the one reported, `guard` its failing guard. Learns from the shapes
  // and decides whether to record another side trace there.
  void on_side_refused(vm::AnchorId anchor, const CompiledTrace& refused, std::uint32_t guard,
                       const vm::FrameView& frame, std::uint64_t call);

  // No installed variant accepted the frame: `failed` is the variant whose
  // guard is reported, `guard` the failing one. Decides whether to retrace.
  void on_guard_failure(vm::AnchorId anchor, const CompiledTrace& failed, std::uint32_t guard,
                        const vm::FrameView& frame, std::uint64_t call);
  // Compiled code left through a side exit (or its value canary fired).
  void on_exit(vm::AnchorId anchor, const CompiledTrace& trace, std::uint32_t exit, vm::Pc resume_pc,
               std::uint64_t call);
  void on_value_canary(vm::AnchorId anchor, const CompiledTrace& trace, std::uint64_t call);
  // A fused group of the trace wrote values outside the ranges recorded for it.
  void on_range_canary(vm::AnchorId anchor, const CompiledTrace& trace, std::uint32_t group, std::uint64_t call);
  // A run of the trace's groups on the device failed (the first one: the
  // trace's groups run on the CPU from now on; CompiledTrace::device_error).
  void on_device_failure(vm::AnchorId anchor, const CompiledTrace& trace, std::uint64_t call);

  // Cost model (engine_trial.cpp). A session asks at the start of each call
  // whether the call should run a candidate under trial (or be a monitoring
  // sample of a decided one); may_shadow says whether its shadow budget
  // allows a reference run, new_shape whether an input shape is new.
  bool cost_enabled() const { return cost_options_.enabled && active(); }
  const CostModelOptions& cost_options() const { return cost_options_; }
  const cost::RaplReader& rapl() const { return rapl_; }
  // GPU energy for candidates with groups on the GPU; null unless the cost
  // model is on and a GPU is in use (readable() may still be false).
  const cost::NvmlEnergy* nvml() const { return nvml_.get(); }
  std::optional<cost::Ticket> ticket(bool may_shadow, bool new_shape) noexcept;
  // True while a trial waits for calls to run its candidates.
  bool trials_open() const noexcept { return open_trials_.load(std::memory_order_relaxed) > 0; }
  // The candidate a ticket names; null for the interpreter (or a trial that ended).
  std::shared_ptr<const CompiledTrace> ticket_trace(const cost::Ticket& ticket) const;
  // The other candidates of the ticket's trial that still need a shadowed call.
  std::vector<std::uint32_t> shadow_candidates(const cost::Ticket& ticket) const;
  // The entry shapes a ticketed call brought (for the expected-deopt term).
  void note_entry_shapes(vm::AnchorId anchor, const vm::FrameView& frame);
  // What the ticketed call measured; completes the trial when it has enough.
  // Never throws: the cost model's bookkeeping never fails a user's call.
  void report_trial(const cost::Ticket& ticket, const cost::TrialSample& sample, std::uint64_t call) noexcept;
  // The ticketed call failed (the error reaches the user): the turn goes back.
  void abandon_ticket(const cost::Ticket& ticket) noexcept;

  // Blocks until nothing is queued or compiling (never call it while held).
  void wait_idle();
  // Holds the background compile thread before its next task while `held`;
  // traces still queue (up to JitOptions::max_compile_queue). For tests that
  // need a queue that does not drain.
  void hold_compiles(bool held);
  // A snapshot of anchors, variants, groups and guards (engine_report.cpp).
  JitReport report() const;
  // Model-wide counters (compiles, code) merged into a session's JitStats.
  void fill_stats(JitStats& stats) const;
  EventLog& events() { return events_; }
  const EventLog& events() const { return events_; }
  // Advances the model's use clock (once per call of any session) and returns
  // the new time; variants entered in the call are stamped with it.
  std::uint64_t next_tick() { return use_clock_.fetch_add(1, std::memory_order_relaxed) + 1; }

 private:
  struct Anchor;
  struct Task {
    vm::AnchorId anchor;
    Trace trace;
    std::uint64_t call = 0;
  };

  void load_learned_profile();
  void save_learned_profile();
  void compile(const Task& task);
  PlanOptions configured_plan_options() const;
  using Dropped = std::vector<std::pair<std::shared_ptr<const CompiledTrace>, std::string>>;
  std::shared_ptr<VariantList> with_new_trace(const VariantList& installed,
                                              const std::shared_ptr<const CompiledTrace>& trace, std::uint32_t replace,
                                              int limit, Dropped& dropped) const;
  void install(Anchor& a, std::shared_ptr<const CompiledTrace> trace, std::uint64_t call);
  void install_side(Anchor& a, std::shared_ptr<const CompiledTrace> trace, std::uint64_t call);
  void log_compiled(const Anchor& a, const CompiledTrace& trace, std::uint64_t call);
  void log_removed(const Anchor& a, const CompiledTrace& trace, const std::string& why, std::uint64_t call);
  bool budget_allows(Anchor& a, vm::AnchorId anchor, std::chrono::steady_clock::time_point now);
  // The dims' values a refused entry brought, kept for the facts of dims
  // made symbolic later.
  void note_refused_values(Anchor& a, const Plan& plan, const std::vector<TensorHeader>& headers);
  // What a refused entry teaches (dims made symbolic, sibling reasons), as
  // the decision text of the retrace it asks for.
  std::string learn_from_refusal(Anchor& a, const Plan& plan, std::uint32_t guard,
                                 const std::vector<TensorHeader>& headers);
  bool wants_side_trace(const Anchor& a, vm::Pc pc) const;
  static bool has_side_trace_at(const Anchor& a, vm::Pc pc);
  void drop_side(Anchor& a, const CompiledTrace& trace, const std::string& why, std::uint64_t call);
  static std::vector<TensorHeader> entry_headers(const Plan& plan, const vm::FrameView& frame);
  std::optional<Event> count_guard_failure(vm::AnchorId anchor, const CompiledTrace& failed, std::uint32_t guard,
                                           const std::vector<TensorHeader>& headers, std::uint64_t call) const;
  void request_side_trace(Anchor& a, vm::AnchorId anchor, vm::Pc pc, std::string decision, std::uint64_t call);
  void enforce_trace_limit(const CompiledTrace* keep, std::uint64_t call);
  void drop_trace(Anchor& a, vm::AnchorId anchor, const Trace& trace, std::uint64_t call);
  void worker_loop();
  bool start_worker(vm::AnchorId anchor, std::uint64_t call);
  bool can_compile(const Anchor& a, std::chrono::steady_clock::time_point now) const;
  void set_penalty(Anchor& a, std::chrono::steady_clock::time_point now);
  void refill(Anchor& a, std::chrono::steady_clock::time_point now);
  std::shared_ptr<const CompiledTrace> build_variant(const Task& task, Tier& tier, std::string& error);
  // Places the plan's groups on the device when `options` ask (and there is
  // one), then compiles it.
  std::shared_ptr<const CompiledTrace> compile_variant(std::uint32_t id, Plan plan, const PlanOptions& options,
                                                       x86::Isa isa, std::string& error);
  void note_compile_failure(Anchor& a, vm::AnchorId anchor, std::uint64_t call);
  void request_retrace(Anchor& a, vm::AnchorId anchor, std::string decision, std::uint64_t call);
  bool injected_fault();
  std::shared_ptr<cost::Trial> build_trial(const Task& task, const std::shared_ptr<const CompiledTrace>& primary);
  // Replaces the anchor's trial (keeping the open/decided counts of the fast path).
  void set_trial(Anchor& a, std::shared_ptr<cost::Trial> trial);
  void start_trial(Anchor& a, vm::AnchorId anchor, std::uint64_t call);
  void finish_trial(Anchor& a, vm::AnchorId anchor, std::uint64_t call, const std::string& why);
  void apply_choice(Anchor& a, const cost::Trial& trial);
  std::optional<cost::Ticket> ticket_locked(bool may_shadow);
  std::optional<cost::Ticket> monitor_ticket_locked();
  void report_locked(const cost::Ticket& ticket, const cost::TrialSample& sample, std::uint64_t call);
  void note_shapes_locked(Anchor& a, const std::vector<TensorHeader>& headers);
  Event event(EventKind kind, vm::AnchorId anchor, std::uint64_t call) const;

  std::shared_ptr<const vm::Program> program_;
  JitOptions options_;
  CostModelOptions cost_options_;
  CostWeights cost_weights_;
  CostLimits cost_limits_;
  cost::RaplReader rapl_;
  std::uint64_t next_trial_epoch_ = 1;
  // Lock-free fast path of ticket(): trials not yet decided, decided ones
  // (monitored), and the model-wide call count that paces monitoring.
  std::atomic<std::uint32_t> open_trials_{0};
  std::atomic<bool> any_decided_{false};
  std::atomic<std::uint64_t> monitor_calls_{0};
  std::atomic<std::uint64_t> use_clock_{0};  // Engine::next_tick
  std::shared_ptr<const FusedDevice> device_;  // JitOptions::device
  std::unique_ptr<cost::NvmlEnergy> nvml_;
  std::string device_absent_;                  // why none, when one was asked for
  std::optional<x86::Isa> isa_;
  x86::CodeCache cache_;
  EventLog events_;
  std::vector<std::unique_ptr<Anchor>> anchors_;

  mutable std::mutex mu_;  // anchors' policy state, the queue, counters
  std::condition_variable work_cv_, idle_cv_;
  std::deque<Task> queue_;
  int busy_ = 0;
  bool stopping_ = false;
  bool held_ = false;  // hold_compiles
  std::thread worker_;
  std::uint32_t next_trace_id_ = 1;
  int injected_faults_left_ = 0;  // -1: every compile fails
  JitStats totals_;
};

}  // namespace canary::jit

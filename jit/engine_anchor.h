// Engine::Anchor: the engine's per-anchor policy state (internal to jit/;
// shared by engine.cpp and engine_report.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <set>

#include "jit/engine.h"
#include "jit/plan.h"

namespace canary::jit {

inline constexpr double kBasePenaltyMs = 50.0;

struct Engine::Anchor {
  std::atomic<std::uint64_t> version{0};
  std::shared_ptr<const VariantList> list = std::make_shared<const VariantList>();
  std::string name;
  std::atomic<bool> wants_recording{false};  // read without the lock by sessions
  bool recording = false, compiling = false;
  int compiles_in_window = 0;
  std::uint64_t compiles_total = 0;  // attempts ever (for reports)
  Tier tier = Tier::ExactFused;
  ShapeKnowledge knowledge;
  // Values of entry dims that guards refused since the policy last learned
  // (one entry per dim): the facts a dim made symbolic starts with.
  std::map<RegDim, DimFacts> refused_values;
  vm::Pc cut_at = vm::kNoPc;
  std::uint32_t replace_trace = 0;  // the variant the next install replaces
  // Side traces (JitOptions::side_traces), most recently installed first:
  // an exit of any trace of the anchor that resumes at a side trace's start
  // pc may continue in it. Published like `list`, under the same version.
  std::shared_ptr<const VariantList> sides = std::make_shared<const VariantList>();
  // Pcs side traces should be recorded from (kNoPc: a free slot); read
  // without the lock by sessions at their exits, written under it. Several
  // at once, so exits at branches that take turns do not displace each
  // other's requests (each would find another's pc and never record). When
  // every slot is taken, a new request waits for a free one (the next exit
  // asks again) rather than displace a live request, which would starve
  // every branch once more than kSideRequests take turns; only a request
  // that kStaleSideRequests others have found waiting goes, so one that no
  // exit takes up blocks nothing for long.
  static constexpr std::size_t kSideRequests = 4;
  static constexpr std::uint64_t kStaleSideRequests = 64;
  std::atomic<vm::Pc> side_wanted[kSideRequests] = {vm::kNoPc, vm::kNoPc, vm::kNoPc, vm::kNoPc};
  std::uint64_t side_requested_at[kSideRequests] = {};  // side_request_clock when each slot was filled
  std::uint64_t side_request_clock = 0;                 // request_side calls
  bool side_requested(vm::Pc pc) const {
    for (const auto& w : side_wanted)
      if (w.load(std::memory_order_relaxed) == pc) return true;
    return false;
  }
  // Whether pc is requested now (already, or by this call).
  bool request_side(vm::Pc pc) {
    ++side_request_clock;
    if (side_requested(pc)) return true;
    std::size_t oldest = 0;
    for (std::size_t i = 0; i < kSideRequests; ++i) {
      if (side_wanted[i].load(std::memory_order_relaxed) == vm::kNoPc) {
        oldest = i;
        break;
      }
      if (side_requested_at[i] < side_requested_at[oldest]) oldest = i;
    }
    const bool free = side_wanted[oldest].load(std::memory_order_relaxed) == vm::kNoPc;
    if (!free && side_request_clock - side_requested_at[oldest] < kStaleSideRequests) return false;
    side_wanted[oldest].store(pc, std::memory_order_relaxed);
    side_requested_at[oldest] = side_request_clock;
    return true;
  }
  void withdraw_side(vm::Pc pc) {
    for (auto& w : side_wanted)
      if (w.load(std::memory_order_relaxed) == pc) w.store(vm::kNoPc, std::memory_order_relaxed);
  }
  // Pcs where a side trace could not be built (nothing compilable there, or
  // its compile failed): their exits cut the trace instead. Cleared by each
  // refill period, so a side trace is tried again later.
  std::set<vm::Pc> no_side;
  std::chrono::steady_clock::time_point penalty_until{};
  // penalty_until in steady-clock nanoseconds, read without the lock.
  std::atomic<std::int64_t> penalty_until_ns{0};
  double penalty_ms = kBasePenaltyMs;
  // Every refill period the budget gets one compile back, the penalty
  // halves, and a tier lowered by a failure is tried again.
  std::chrono::steady_clock::time_point last_refill{};
  bool demoted = false;  // tier lowered to Unfused by a failure, not by learning
  std::uint64_t failures_since_install = 0;
  // The cost model's trial of the latest trace (null: none; decided: its
  // choice is installed and monitored).
  std::shared_ptr<cost::Trial> trial;

  // The tier shape learning alone reached (what a profile keeps).
  Tier learned_tier() const { return knowledge.symbolic.empty() ? Tier::ExactFused : Tier::SymbolicFused; }
};

}  // namespace canary::jit

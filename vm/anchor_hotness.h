// Cost-weighted hotness of anchors: an anchor is hot after hot_threshold
// visits, or as soon as the time interpreted from its visits reaches a
// budget (JitHooks::hot_time_ns), so a region that takes milliseconds per
// call tiers up after one call instead of paying for eight. The time of an
// interpreted region runs from an anchor visit to the next anchor visit or
// the end of the call; compiled code's time is never charged, nor is the
// first visit's (a first call pays one-time costs: primitive creation,
// first-touch pages, which say nothing about the calls to come).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "vm/bytecode.h"

namespace canary::vm {

class AnchorHotness {
 public:
  using Clock = std::chrono::steady_clock;

  void reset(std::size_t anchors, std::uint64_t visit_threshold, std::uint64_t time_budget_ns) {
    fired_.assign(anchors, false);
    charged_ns_.assign(anchors, 0);
    visit_threshold_ = visit_threshold;
    time_budget_ns_ = time_budget_ns;
    open_ = false;
  }

  // True once per anchor: at its visit_threshold-th visit, or at the first
  // visit after its charged time reached the budget.
  bool becomes_hot(AnchorId a, std::uint64_t visits) {
    if (a.index >= fired_.size() || fired_[a.index]) return false;
    const bool by_time = time_budget_ns_ > 0 && charged_ns_[a.index] >= time_budget_ns_;
    const bool by_visits = visit_threshold_ > 0 && visits >= visit_threshold_;  // 0: never by visits
    if (!by_visits && !by_time) return false;
    fired_[a.index] = true;
    return true;
  }

  // Starts charging interpreted time to `a` (only while it is not hot yet,
  // and not on its first visit).
  void open(AnchorId a, std::uint64_t visits) {
    if (time_budget_ns_ == 0 || visits < 2 || a.index >= fired_.size() || fired_[a.index]) return;
    open_ = true;
    anchor_ = a;
    since_ = Clock::now();
  }

  // Charges the open region's time to its anchor.
  void close() {
    if (!open_) return;
    open_ = false;
    charged_ns_[anchor_.index] +=
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - since_).count());
  }

 private:
  std::vector<bool> fired_;
  std::vector<std::uint64_t> charged_ns_;
  std::uint64_t visit_threshold_ = 0, time_budget_ns_ = 0;
  bool open_ = false;
  AnchorId anchor_;
  Clock::time_point since_;
};

}  // namespace canary::vm

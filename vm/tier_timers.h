// TierTimers: opt-in wall-clock accounting of where a session's calls spend
// their time, by tier (interpreted op, compiled kernel call, fused group, row
// kernel, guards) and op kind. Options::collect_timings turns it on; it costs
// two clock reads per timed step, so it is off by default.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

#include "graph/op_kind.h"
#include "vm/program.h"

namespace canary::vm {

enum class TimedTier : std::uint8_t {
  Interpreted,  // an instruction's kernel run by the interpreter
  KernelCall,   // the same adapter called directly from compiled code
  FusedGroup,   // an emitted elementwise kernel
  RowKernel,    // an emitted row (last-axis reduction) kernel
  Guards,       // a compiled trace's entry guards
};
inline constexpr std::size_t kTimedTierCount = 5;

const char* timed_tier_name(TimedTier tier);

struct TierTimers {
  struct Bucket {
    std::uint64_t ns = 0;
    std::uint64_t count = 0;
  };
  // [tier][op kind]; tiers without an op kind use slot 0.
  std::array<std::array<Bucket, graph::kOpKindCount>, kTimedTierCount> buckets{};
  Bucket calls;  // whole Session::run calls

  Bucket& bucket(TimedTier tier, std::size_t op = 0) { return buckets[static_cast<std::size_t>(tier)][op]; }
};

// The op-kind slot of a kernel instruction (Identity when it has no node).
inline std::size_t timed_op_of(const Program& program, const Instruction& in) {
  const NodeInfo* node = program.node_of(in);
  return static_cast<std::size_t>(node ? node->op : graph::OpKind::Identity);
}

// Adds the lifetime of the scope to a bucket; does nothing (not even read the
// clock) when `bucket` is null, which is how callers keep timing off the hot
// path: they pass null unless timers are on.
class ScopedTierTimer {
 public:
  explicit ScopedTierTimer(TierTimers::Bucket* bucket) : bucket_(bucket) {
    if (bucket_) start_ = std::chrono::steady_clock::now();
  }
  ~ScopedTierTimer() {
    if (!bucket_) return;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_);
    bucket_->ns += static_cast<std::uint64_t>(ns.count());
    ++bucket_->count;
  }
  ScopedTierTimer(const ScopedTierTimer&) = delete;
  ScopedTierTimer& operator=(const ScopedTierTimer&) = delete;

 private:
  TierTimers::Bucket* bucket_;
  std::chrono::steady_clock::time_point start_{};
};

}  // namespace canary::vm

// Names of the timed tiers, as Stats::time reports them.
#include "vm/tier_timers.h"

namespace canary::vm {

const char* timed_tier_name(TimedTier tier) {
  switch (tier) {
    case TimedTier::Interpreted: return "interpreted";
    case TimedTier::KernelCall: return "compiled: kernel call";
    case TimedTier::FusedGroup: return "compiled: fused group";
    case TimedTier::RowKernel: return "compiled: row kernel";
    case TimedTier::Guards: return "compiled: guards";
  }
  return "?";
}

}  // namespace canary::vm

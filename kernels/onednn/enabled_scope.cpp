// Whether the calling thread uses the oneDNN kernels (Options::use_onednn):
// a thread-local switch, so sessions with different options never interfere.
#include "kernels/onednn.h"

namespace canary::kernels {

namespace {
thread_local bool onednn_on = true;
}  // namespace

OnednnEnabledScope::OnednnEnabledScope(bool enabled) : previous_(onednn_on) { onednn_on = enabled; }

OnednnEnabledScope::~OnednnEnabledScope() { onednn_on = previous_; }

bool onednn_enabled() { return onednn_on; }

}  // namespace canary::kernels

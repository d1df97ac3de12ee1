// place_fused_groups: the device decides per spec (FusedDevice::unsupported, unsupported_row).
#include "jit/device_placement.h"

namespace canary::jit {

std::size_t place_fused_groups(Plan& plan, const FusedDevice& device) {
  std::size_t placed = 0;
  for (FusedStep& f : plan.fused) {
    f.device_refusal = device.unsupported(f.spec);
    f.on_device = f.device_refusal.empty();
    if (f.on_device) ++placed;
  }
  for (RowStep& r : plan.rows) {
    r.device_refusal = device.unsupported_row(r.spec);
    r.on_device = r.device_refusal.empty();
    if (r.on_device) ++placed;
  }
  plan.device = placed > 0 ? device.name() : std::string();
  return placed;
}

}  // namespace canary::jit

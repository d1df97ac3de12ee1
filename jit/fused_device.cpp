// The process-wide device override (fused_device.h).
#include "jit/fused_device.h"

#include <mutex>
#include <utility>

namespace canary::jit {

namespace {

std::mutex& override_mutex() {
  static std::mutex m;
  return m;
}

std::shared_ptr<const FusedDevice>& override_slot() {
  static std::shared_ptr<const FusedDevice> slot;
  return slot;
}

}  // namespace

ScopedDeviceOverride::ScopedDeviceOverride(std::shared_ptr<const FusedDevice> device) {
  std::lock_guard lock(override_mutex());
  previous_ = std::exchange(override_slot(), std::move(device));
}

ScopedDeviceOverride::~ScopedDeviceOverride() {
  std::lock_guard lock(override_mutex());
  override_slot() = std::move(previous_);
}

std::shared_ptr<const FusedDevice> device_override() {
  std::lock_guard lock(override_mutex());
  return override_slot();
}

}  // namespace canary::jit

// The process-wide device override and the defaults for row kernels, chains and
// matrix products (fused_device.h).
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

std::string FusedDevice::unsupported_row(const FusedRowSpec&) const {
  return "this device runs fused elementwise groups only";
}

DeviceRun FusedDevice::run_row(const FusedRowSpec&, const RowArgs&) const {
  DeviceRun r;
  r.declined = true;  // never placed (unsupported_row refuses), so never a failure
  r.error = "this device runs fused elementwise groups only";
  return r;
}

DeviceRun FusedDevice::run_chain(const ChainStep*, std::size_t) const {
  DeviceRun r;
  r.declined = true;  // not a failure: the steps run one at a time
  r.error = "this device runs one step per call";
  return r;
}

std::string FusedDevice::unsupported_matmul() const { return "this device runs no matrix products"; }

DeviceRun FusedDevice::run_matmul(const MatmulCall&) const {
  DeviceRun r;
  r.declined = true;  // never placed (unsupported_matmul refuses), so never a failure
  r.error = "this device runs no matrix products";
  return r;
}

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

// FusedDevice: a device outside the x86 backend that runs fused elementwise
// groups and row kernels of compiled traces, in practice the CUDA backend's GPU
// (jit/cuda/cuda_fused_device.h). The JIT places groups on it when
// JitOptions::device asks (device_placement.h); a run that fails leaves the
// outputs untouched and returns why, and the trace finishes the call, and
// every later one, with its x86 kernels.
//
// canary_jit cannot depend on the CUDA backend (that library depends on this
// one), so the runtime opens the device and hands it to the Engine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "jit/fused_kernel.h"
#include "jit/fused_row.h"

namespace canary::jit {

struct DeviceRun {
  bool ok = false;
  std::string error;           // why the device did not run it (ok == false)
  std::uint32_t canaries = 0;  // kNonFiniteCanary when the value canary saw NaN/Inf
  std::uint64_t bytes_moved = 0;  // host <-> device, both ways
  // Not run because of this call's shapes (e.g. more elements than one
  // launch covers): the CPU runs this call and the group stays placed.
  bool declined = false;
};

class FusedDevice {
 public:
  virtual ~FusedDevice() = default;
  // "cuda:0 NVIDIA H200": what events, reports and listings call it.
  virtual std::string name() const = 0;
  // Why this device cannot run spec ("" when it can). Asked at placement,
  // before anything is compiled for the device.
  virtual std::string unsupported(const FusedElementwiseSpec& spec) const = 0;
  // Runs rows [args.row_begin, args.row_end) of spec on host pointers, as
  // evaluate_fused_reference does; on failure (or a decline) the outputs
  // are untouched. Thread-safe; never throws.
  virtual DeviceRun run(const FusedElementwiseSpec& spec, const FusedArgs& args) const = 0;

  // Row kernels (an elementwise prologue, then a reduction, Softmax or
  // LayerNorm along the last axis), with the same contract as above. A
  // device that runs elementwise groups only keeps these defaults, which
  // refuse every row kernel.
  virtual std::string unsupported_row(const FusedRowSpec& spec) const;
  virtual DeviceRun run_row(const FusedRowSpec& spec, const RowArgs& args) const;
};

// A device installed in place of the GPU for the models loaded while it is
// alive (tests, or an embedder that models its own accelerator): the
// runtime's device lookup returns it instead of opening the CUDA backend.
class ScopedDeviceOverride {
 public:
  explicit ScopedDeviceOverride(std::shared_ptr<const FusedDevice> device);
  ~ScopedDeviceOverride();
  ScopedDeviceOverride(const ScopedDeviceOverride&) = delete;
  ScopedDeviceOverride& operator=(const ScopedDeviceOverride&) = delete;

 private:
  std::shared_ptr<const FusedDevice> previous_;
};
// The installed override, or null.
std::shared_ptr<const FusedDevice> device_override();

}  // namespace canary::jit

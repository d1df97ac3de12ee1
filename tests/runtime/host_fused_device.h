// A FusedDevice for tests: runs fused groups on the host through the
// reference evaluator (evaluate_fused_reference), so the JIT's device path
// (placement, runs, canaries, failures and the fall back to the x86 kernels)
// is exercised end to end on machines without a GPU. A script makes chosen
// runs fail the way a GPU's do and makes it refuse groups by op.
#pragma once

#include <atomic>
#include <string>

#include "jit/fused_device.h"

namespace canary::test {

class HostFusedDevice final : public jit::FusedDevice {
 public:
  struct Script {
    int fail_from_run = -1;  // runs numbered from 1; this one and every later one fail (-1: none)
    std::string failure = "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED (719)";
    std::string refuse_op;   // a group whose spec key has this op name is refused
    std::int64_t decline_above = -1;  // calls of more elements are declined (-1: none)
  };

  HostFusedDevice() = default;
  explicit HostFusedDevice(Script script) : script_(std::move(script)) {}

  std::string name() const override { return "host:0 test device"; }

  std::string unsupported(const jit::FusedElementwiseSpec& spec) const override {
    for (const auto& range : spec.output_ranges)
      if (range) return "range canaries are not emitted for this device";
    if (!script_.refuse_op.empty() && spec.key().find(script_.refuse_op) != std::string::npos)
      return "this device has no " + script_.refuse_op;
    return {};
  }

  jit::DeviceRun run(const jit::FusedElementwiseSpec& spec, const jit::FusedArgs& args) const override {
    jit::DeviceRun r;
    const std::int64_t d2 = spec.exact_dims ? (*spec.exact_dims)[2] : args.dims[2];
    if (script_.decline_above >= 0 && (args.row_end - args.row_begin) * d2 > script_.decline_above) {
      r.declined = true;
      r.error = "more elements than this device takes in one call";
      ++declines_;
      return r;
    }
    const int n = runs_.fetch_add(1) + 1;
    if (script_.fail_from_run > 0 && n >= script_.fail_from_run) {
      r.error = script_.failure;
      return r;
    }
    r.canaries = jit::evaluate_fused_reference(spec, args) & jit::kNonFiniteCanary;
    const auto elements = static_cast<std::uint64_t>((args.row_end - args.row_begin) * d2);
    r.bytes_moved = 4 * elements * (spec.num_inputs + spec.outputs.size());
    r.ok = true;
    return r;
  }

  int runs() const { return runs_.load(); }
  int declines() const { return declines_.load(); }

 private:
  Script script_;
  mutable std::atomic<int> runs_{0};
  mutable std::atomic<int> declines_{0};
};

}  // namespace canary::test

// A FusedDevice for tests: runs fused groups and row kernels on the host
// through the reference evaluators (evaluate_fused_reference,
// evaluate_row_reference), so the JIT's device path
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
    bool rows = true;        // runs row kernels too (false: refuses them, as an elementwise-only device)
  };

  HostFusedDevice() = default;
  explicit HostFusedDevice(Script script) : script_(std::move(script)) {}

  std::string name() const override { return "host:0 test device"; }

  std::string unsupported(const jit::FusedElementwiseSpec& spec) const override {
    for (const auto& range : spec.output_ranges)
      if (range) return "range canaries are not emitted for this device";
    return refused(spec.key());
  }

  jit::DeviceRun run(const jit::FusedElementwiseSpec& spec, const jit::FusedArgs& args) const override {
    const std::int64_t d2 = spec.exact_dims ? (*spec.exact_dims)[2] : args.dims[2];
    const auto elements = static_cast<std::uint64_t>((args.row_end - args.row_begin) * d2);
    jit::DeviceRun r = scripted(elements);
    if (!r.ok) return r;
    r.canaries = jit::evaluate_fused_reference(spec, args) & jit::kNonFiniteCanary;
    r.bytes_moved = 4 * elements * (spec.num_inputs + spec.outputs.size());
    return r;
  }

  std::string unsupported_row(const jit::FusedRowSpec& spec) const override {
    if (!script_.rows) return "this device runs fused elementwise groups only";
    return refused(spec.key());
  }

  jit::DeviceRun run_row(const jit::FusedRowSpec& spec, const jit::RowArgs& args) const override {
    const std::int64_t d2 = spec.prologue.exact_dims ? (*spec.prologue.exact_dims)[2] : args.dims[2];
    const auto elements = static_cast<std::uint64_t>((args.row_end - args.row_begin) * d2);
    jit::DeviceRun r = scripted(elements);
    if (!r.ok) return r;
    r.canaries = jit::evaluate_row_reference(spec, args) != 0 ? jit::kNonFiniteCanary : 0u;
    r.bytes_moved = 4 * elements * (spec.prologue.num_inputs + 1);
    ++row_runs_;
    return r;
  }

  int runs() const { return runs_.load(); }  // elementwise and row runs
  int row_runs() const { return row_runs_.load(); }
  int declines() const { return declines_.load(); }

 private:
  std::string refused(const std::string& key) const {
    if (!script_.refuse_op.empty() && key.find(script_.refuse_op) != std::string::npos)
      return "this device has no " + script_.refuse_op;
    return {};
  }

  // The script's verdict on one run of `elements` elements: a decline, a
  // failure, or ok (the caller then computes it).
  jit::DeviceRun scripted(std::uint64_t elements) const {
    jit::DeviceRun r;
    if (script_.decline_above >= 0 && static_cast<std::int64_t>(elements) > script_.decline_above) {
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
    r.ok = true;
    return r;
  }

  Script script_;
  mutable std::atomic<int> runs_{0};
  mutable std::atomic<int> row_runs_{0};
  mutable std::atomic<int> declines_{0};
};

}  // namespace canary::test

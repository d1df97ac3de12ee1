// A FusedDevice for tests: runs fused groups and row kernels on the host
// through the reference evaluators (evaluate_fused_reference,
// evaluate_row_reference), device chains included, and, when the script
// asks, MatMul/Gemm products in the GPU kernel's order of operations, so
// the JIT's device path (placement, runs, canaries, failures and the fall
// back to the x86 kernels) is exercised end to end on machines without a
// GPU. A script makes chosen runs fail the way a GPU's do and makes it
// refuse groups by op.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "jit/fused_device.h"
#include "jit/plan_fusion.h"

namespace canary::test {

class HostFusedDevice final : public jit::FusedDevice {
 public:
  struct Script {
    int fail_from_run = -1;  // runs numbered from 1; this one and every later one fail (-1: none)
    std::string failure = "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED (719)";
    std::string refuse_op;   // a group whose spec key has this op name is refused ("MatMul": products)
    std::int64_t decline_above = -1;  // calls of more elements are declined (-1: none)
    bool rows = true;        // runs row kernels too (false: refuses them, as an elementwise-only device)
    bool chains = true;      // runs device chains as one call (false: declines them, as the default does)
    bool matmuls = false;    // runs MatMul/Gemm products (false: refuses them, as the default does)
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
    jit::DeviceRun r = scripted(elements, 1);
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
    jit::DeviceRun r = scripted(elements, 1);
    if (!r.ok) return r;
    r.canaries = jit::evaluate_row_reference(spec, args) != 0 ? jit::kNonFiniteCanary : 0u;
    r.bytes_moved = 4 * elements * (spec.prologue.num_inputs + 1);
    ++row_runs_;
    return r;
  }

  // A chain as the GPU runs it: each step reads a chained input from the
  // "device" copy an earlier step made (never from the host buffer, which
  // is filled with NaN for every output left on the device, so a reader of
  // the host copy would show), and only the host outputs are copied back,
  // after every step ran. Bytes count each host buffer read once and each
  // host output, as the GPU moves them.
  jit::DeviceRun run_chain(const jit::ChainStep* steps, std::size_t count) const override {
    if (!script_.chains) return FusedDevice::run_chain(steps, count);
    std::uint64_t elements = 0;
    for (std::size_t k = 0; k < count; ++k) elements += step_elements(steps[k]);
    jit::DeviceRun r = scripted(elements, static_cast<int>(count));
    if (!r.ok) return r;
    std::vector<std::vector<std::vector<float>>> results(count);  // [step][output]
    std::set<const float*> uploaded;
    for (std::size_t k = 0; k < count; ++k) {
      const jit::ChainStep& step = steps[k];
      const float* inputs[jit::kMaxFusedInputs];
      const float* chained[jit::kMaxFusedInputs + 2];
      for (std::size_t i = 0; i < step.num_sources; ++i) {
        const jit::ChainInput& src = step.sources[i];
        chained[i] = src.on_host() ? step.host_input(i) : results[src.step][src.output].data();
        if (src.on_host() && uploaded.insert(chained[i]).second) r.bytes_moved += 4 * input_elements(step, i);
      }
      float* device_outputs[jit::kMaxFusedInputs];
      for (std::size_t o = 0; o < step.num_outputs(); ++o) {
        results[k].emplace_back(output_elements(step));
        device_outputs[o] = results[k][o].data();
      }
      if (step.fused) {
        std::copy_n(chained, step.num_sources, inputs);
        jit::FusedArgs args = step.fused_args;
        args.inputs = inputs;
        args.outputs = device_outputs;
        r.canaries |= jit::evaluate_fused_reference(*step.fused, args) & jit::kNonFiniteCanary;
      } else {
        const int n = step.row->prologue.num_inputs;
        std::copy_n(chained, n, inputs);
        jit::RowArgs args = step.row_args;
        args.inputs = inputs;
        args.output = device_outputs[0];
        if (step.row->has_scale) args.scale = chained[n];
        if (step.row->has_bias) args.bias = chained[n + (step.row->has_scale ? 1 : 0)];
        if (jit::evaluate_row_reference(*step.row, args) != 0) r.canaries |= jit::kNonFiniteCanary;
      }
    }
    for (std::size_t k = 0; k < count; ++k)
      for (std::size_t o = 0; o < results[k].size(); ++o)
        if (!((steps[k].host_outputs >> o) & 1u))
          std::fill_n(steps[k].host_output(o), results[k][o].size(), std::numeric_limits<float>::quiet_NaN());
    for (std::size_t k = 0; k < count; ++k)
      for (std::size_t o = 0; o < results[k].size(); ++o)
        if ((steps[k].host_outputs >> o) & 1u) {
          std::copy(results[k][o].begin(), results[k][o].end(), steps[k].host_output(o));
          r.bytes_moved += 4 * results[k][o].size();
        }
    ++chain_runs_;
    for (std::size_t k = 0; k < count; ++k) row_runs_ += steps[k].row ? 1 : 0;
    return r;
  }

  std::string unsupported_matmul() const override {
    if (!script_.matmuls) return FusedDevice::unsupported_matmul();
    return script_.refuse_op == "MatMul" ? "this device has no MatMul" : "";
  }

  // The product as the GPU's kernel computes it: one fma per k in
  // increasing k from +0, then alpha, then the bias.
  jit::DeviceRun run_matmul(const jit::MatmulCall& c) const override {
    const auto elements = static_cast<std::uint64_t>(c.batch * c.m * c.n);
    jit::DeviceRun r = scripted(elements, 1);
    if (!r.ok) return r;
    for (std::int64_t b = 0; b < c.batch; ++b)
      for (std::int64_t i = 0; i < c.m; ++i)
        for (std::int64_t j = 0; j < c.n; ++j) {
          float acc = 0.0f;
          for (std::int64_t k = 0; k < c.k; ++k) {
            const float a = c.a[b * c.stride_a + (c.trans_a ? k * c.m + i : i * c.k + k)];
            const float w = c.b[b * c.stride_b + (c.trans_b ? j * c.k + k : k * c.n + j)];
            acc = std::fma(a, w, acc);
          }
          if (c.alpha != 1.0f) acc *= c.alpha;
          if (c.bias) acc += c.bias[j];
          c.c[(b * c.m + i) * c.n + j] = acc;
        }
    // A and B as far as the batch strides reach, the bias row, C.
    const std::int64_t a = (c.batch - 1) * c.stride_a + c.m * c.k, b = (c.batch - 1) * c.stride_b + c.k * c.n;
    r.bytes_moved = 4 * static_cast<std::uint64_t>(a + b + (c.bias ? c.n : 0) + c.batch * c.m * c.n);
    ++matmul_runs_;
    return r;
  }

  int runs() const { return runs_.load(); }  // elementwise and row runs, a chain's steps each one
  int row_runs() const { return row_runs_.load(); }  // of which row kernels that ran
  int declines() const { return declines_.load(); }
  int chain_runs() const { return chain_runs_.load(); }
  int matmul_runs() const { return matmul_runs_.load(); }  // of which products that ran

 private:
  static std::uint64_t step_elements(const jit::ChainStep& step) {
    const jit::FusedElementwiseSpec& spec = step.fused ? *step.fused : step.row->prologue;
    const std::int64_t* dims = step.fused ? step.fused_args.dims : step.row_args.dims;
    const std::int64_t d2 = spec.exact_dims ? (*spec.exact_dims)[2] : dims[2];
    return static_cast<std::uint64_t>(dims[0] * dims[1] * d2);
  }
  // A reduction writes one value per row; the other steps one per element.
  static std::size_t output_elements(const jit::ChainStep& step) {
    if (step.fused) return static_cast<std::size_t>(step_elements(step));
    const jit::RowOp op = step.row->op;
    const bool reduces = op == jit::RowOp::Sum || op == jit::RowOp::Mean || op == jit::RowOp::Max;
    return reduces ? static_cast<std::size_t>(step.row_args.dims[0] * step.row_args.dims[1])
                   : static_cast<std::size_t>(step_elements(step));
  }
  // A LayerNorm's scale and bias hold one row; every other input is read as the whole call.
  static std::uint64_t input_elements(const jit::ChainStep& step, std::size_t i) {
    if (step.fused || i < static_cast<std::size_t>(step.row->prologue.num_inputs)) return step_elements(step);
    return static_cast<std::uint64_t>(step.row_args.dims[2]);
  }

  std::string refused(const std::string& key) const {
    if (!script_.refuse_op.empty() && key.find(script_.refuse_op) != std::string::npos)
      return "this device has no " + script_.refuse_op;
    return {};
  }

  // The script's verdict on one run of `elements` elements: a decline, a
  // failure, or ok (the caller then computes it).
  jit::DeviceRun scripted(std::uint64_t elements, int steps) const {
    jit::DeviceRun r;
    if (script_.decline_above >= 0 && static_cast<std::int64_t>(elements) > script_.decline_above) {
      r.declined = true;
      r.error = "more elements than this device takes in one call";
      ++declines_;
      return r;
    }
    const int last = runs_.fetch_add(steps) + steps;  // this call's steps are runs last - steps + 1 .. last
    if (script_.fail_from_run > 0 && last >= script_.fail_from_run) {
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
  mutable std::atomic<int> chain_runs_{0};
  mutable std::atomic<int> matmul_runs_{0};
};

}  // namespace canary::test

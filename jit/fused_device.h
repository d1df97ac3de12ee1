// FusedDevice: a device outside the x86 backend that runs fused elementwise
// groups, row kernels and matrix products of compiled traces, in practice the
// CUDA backend's GPU
// (jit/cuda/cuda_fused_device.h). The JIT places groups on it when
// JitOptions::device asks (device_placement.h); a run that fails leaves the
// outputs untouched and returns why, and the trace finishes the call, and
// every later one, with its x86 kernels.
//
// canary_jit cannot depend on the CUDA backend (that library depends on this
// one), so the runtime opens the device and hands it to the Engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "jit/device_chain.h"
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

// One step of a chain run (FusedDevice::run_chain): a fused group or a row
// kernel on host pointers over all its rows, where each input listed in
// `sources` as an earlier step's output is read from the device's own copy of
// that result (its host pointer may hold anything), and only the outputs in
// host_outputs are copied back.
struct ChainStep {
  const FusedElementwiseSpec* fused = nullptr;  // exactly one of fused and row is set
  const FusedRowSpec* row = nullptr;
  FusedArgs fused_args;
  RowArgs row_args;
  const ChainInput* sources = nullptr;  // DeviceChain::sources of this step
  std::size_t num_sources = 0;
  std::uint32_t host_outputs = 0;       // DeviceChain::host_outputs of this step

  std::size_t num_outputs() const { return fused ? fused->outputs.size() : 1; }
  // The host pointer of source i (ChainInput order) and of output o.
  const float* host_input(std::size_t i) const {
    if (fused) return fused_args.inputs[i];
    const auto n = static_cast<std::size_t>(row->prologue.num_inputs);
    if (i < n) return row_args.inputs[i];
    return i == n && row->has_scale ? row_args.scale : row_args.bias;
  }
  float* host_output(std::size_t o) const { return fused ? fused_args.outputs[o] : row_args.output; }
};

// A matrix product a trace's MatMul or Gemm step asks the device for, on
// dense row-major host buffers:
//   C[b] = alpha * op(A[b]) op(B[b]) (+ bias), for b < batch
// with op(A) [m, k] (A stored [k, m] when trans_a), op(B) [k, n] (B stored
// [n, k] when trans_b), C [batch, m, n], and bias, when given, a row of n
// floats added to every row. A and B advance by their batch strides
// (elements; 0 broadcasts one matrix over the batch). device_matmul.h
// builds it from a step's tensors.
struct MatmulCall {
  const float* a = nullptr;
  const float* b = nullptr;
  const float* bias = nullptr;  // or null
  float* c = nullptr;
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  std::int64_t stride_a = 0, stride_b = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f;
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

  // Runs the steps of a device chain in order as one call: host inputs go
  // over once, chained values stay on the device, host outputs come back
  // once everything has run. On failure (or a decline) no host output has
  // been written, so the caller can run the steps one by one. canaries
  // merges every step's. The default declines: the trace then runs each
  // step through run / run_row.
  virtual DeviceRun run_chain(const ChainStep* steps, std::size_t count) const;

  // Matrix products (the MatMul and Gemm steps of a trace), with the same
  // contract as run: on failure or a decline, C is untouched and the
  // trace's CPU kernel computes it. A device without them keeps these
  // defaults: placement leaves every product on the CPU.
  virtual std::string unsupported_matmul() const;
  virtual DeviceRun run_matmul(const MatmulCall& call) const;
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

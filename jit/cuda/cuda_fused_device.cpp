// CudaFusedDevice: placement asks the launch checks that depend on the spec
// alone; runs go through run_fused_on_gpu, run_row_on_gpu, run_chain_on_gpu
// and run_matmul_on_gpu, which stage, launch and copy back, and leave the
// outputs untouched on any failure.
#include "jit/cuda/cuda_fused_device.h"

#include <vector>

#include "jit/cuda/driver.h"
#include "jit/cuda/fused_launch.h"
#include "jit/cuda/fused_runner.h"
#include "jit/cuda/row_launch.h"

namespace canary::jit::cuda {

namespace {

class CudaFusedDevice final : public FusedDevice {
 public:
  explicit CudaFusedDevice(const CudaDriver& driver) : name_("cuda:0 " + driver.info().name) {}

  std::string name() const override { return name_; }

  std::string unsupported(const FusedElementwiseSpec& spec) const override { return gpu_unsupported(spec); }

  DeviceRun run(const FusedElementwiseSpec& spec, const FusedArgs& args) const override {
    // What placement could not know: this call's extent against the launch limits.
    if (std::string why = check_gpu_launch(spec, args.dims, args.row_begin, args.row_end, args.strides);
        !why.empty())
      return declined(why);
    return taken(run_fused_on_gpu(spec, args));
  }

  std::string unsupported_row(const FusedRowSpec& spec) const override { return gpu_unsupported_row(spec); }

  DeviceRun run_row(const FusedRowSpec& spec, const RowArgs& args) const override {
    if (std::string why = check_gpu_row_launch(spec, args.dims, args.row_begin, args.row_end, args.strides);
        !why.empty())
      return declined(why);
    return taken(run_row_on_gpu(spec, args));
  }

  DeviceRun run_chain(const ChainStep* steps, std::size_t count) const override {
    for (std::size_t k = 0; k < count; ++k) {
      const ChainStep& s = steps[k];
      const std::string why =
          s.fused ? check_gpu_launch(*s.fused, s.fused_args.dims, s.fused_args.row_begin, s.fused_args.row_end,
                                     s.fused_args.strides)
                  : check_gpu_row_launch(*s.row, s.row_args.dims, s.row_args.row_begin, s.row_args.row_end,
                                         s.row_args.strides);
      if (!why.empty()) return declined(why);
    }
    return taken(run_chain_on_gpu(steps, count));
  }

  // The tiled kernel takes every MatMul and Gemm the trace hands over
  // (device_matmul.h); the dims are checked per call.
  std::string unsupported_matmul() const override { return {}; }

  DeviceRun run_matmul(const MatmulCall& call) const override {
    MatmulSpec spec;
    spec.trans_a = call.trans_a;
    spec.trans_b = call.trans_b;
    spec.has_bias = call.bias != nullptr;
    spec.alpha = call.alpha;
    MatmulArgs args;
    args.a = call.a;
    args.b = call.b;
    args.bias = call.bias;
    args.c = call.c;
    args.dims = MatmulDims{call.batch, call.m, call.n, call.k, call.stride_a, call.stride_b};
    if (std::string why = check_gpu_matmul_launch(args.dims); !why.empty()) return declined(why);
    return taken(run_matmul_on_gpu(spec, args));
  }

 private:
  static DeviceRun declined(std::string why) {
    DeviceRun out;
    out.declined = true;
    out.error = std::move(why);
    return out;
  }

  static DeviceRun taken(const GpuRunResult& r) {
    DeviceRun out;
    out.ok = r.ok;
    out.error = r.error;
    out.canaries = r.flag != 0 ? kNonFiniteCanary : 0u;
    out.bytes_moved = r.bytes_moved;
    return out;
  }

  std::string name_;
};

}  // namespace

// The launch checks asked over an empty space, which no shape can fail.
std::string gpu_unsupported(const FusedElementwiseSpec& spec) {
  const std::int64_t dims[3] = {0, 0, 0};
  FusedElementwiseSpec shapeless = spec;
  shapeless.exact_dims.reset();
  const std::vector<std::int64_t> strides(2 * spec.num_inputs, 0);
  return check_gpu_launch(shapeless, dims, 0, 0, strides.data());
}

std::string gpu_unsupported_row(const FusedRowSpec& spec) {
  const std::int64_t dims[3] = {0, 0, 0};
  FusedRowSpec shapeless = spec;
  shapeless.prologue.exact_dims.reset();
  const std::vector<std::int64_t> strides(2 * spec.prologue.num_inputs, 0);
  return check_gpu_row_launch(shapeless, dims, 0, 0, strides.data());
}

std::shared_ptr<const FusedDevice> open_cuda_fused_device(std::string& why) {
  const CudaDriver* driver = CudaDriver::get();
  if (driver == nullptr) {
    why = CudaDriver::absent_reason();
    return nullptr;
  }
  why.clear();
  return std::make_shared<CudaFusedDevice>(*driver);
}

}  // namespace canary::jit::cuda

// Row kernel launches: argument checks, the parameter block and the grid.
#include "jit/cuda/row_launch.h"

#include <algorithm>

#include "jit/cuda/fused_launch.h"
#include "jit/cuda/ptx_elementwise.h"
#include "jit/cuda/ptx_row.h"

namespace canary::jit::cuda {
namespace {

// Threads one SM keeps resident; the grid aims to fill every SM once.
constexpr unsigned kThreadsPerSm = 2048;

std::size_t param_bytes(const FusedRowSpec& spec) {
  return 8 * (spec.prologue.num_inputs + 3) + 16 * spec.prologue.num_inputs + 4 * 6 + 8;
}

}  // namespace

std::string check_gpu_row_launch(const FusedRowSpec& spec, const std::int64_t dims[3], std::int64_t row_begin,
                                 std::int64_t row_end, const std::int64_t* strides) {
  if (std::string why = check_row_spec(spec); !why.empty()) return "malformed row spec: " + why;
  if (param_bytes(spec) > kKernelParamBytesLimit)
    return "too many inputs for one kernel's parameter space (" + std::to_string(param_bytes(spec)) + " bytes, limit " +
           std::to_string(kKernelParamBytesLimit) + ")";
  if (std::string why = check_gpu_launch(spec.prologue, dims, row_begin, row_end, strides); !why.empty()) return why;
  // Rows are 32-bit indices even when they are empty (a reduction still writes one value each).
  if (row_end > kMaxGpuElements)
    return std::to_string(row_end) + " rows exceed the GPU launch limit of 2^31 - 1 rows";
  return {};
}

std::int64_t row_output_width(const FusedRowSpec& spec, std::int64_t d2) {
  return spec.op == RowOp::Softmax || spec.op == RowOp::LayerNorm ? d2 : 1;
}

CudaStatus launch_row(const CudaDriver& driver, const CudaModule& module, const FusedRowSpec& spec,
                      const DeviceRowArgs& args) {
  if (std::string why = check_gpu_row_launch(spec, args.dims, args.row_begin, args.row_end, args.strides.data());
      !why.empty())
    return CudaStatus::failure(why);
  const FusedElementwiseSpec& pro = spec.prologue;
  if (args.inputs.size() != pro.num_inputs || args.strides.size() != 2u * pro.num_inputs)
    return CudaStatus::failure("device arguments do not match the row spec's inputs");
  if ((spec.has_scale && args.scale == 0) || (spec.has_bias && args.bias == 0))
    return CudaStatus::failure("the row spec reads a scale or bias but none was given");
  if (pro.check_non_finite && args.flag == 0)
    return CudaStatus::failure("the spec checks values but no flag word was given");
  const auto d = launch_dims(pro, args.dims);
  if (args.row_end == args.row_begin) return {};
  RowLaunchScalars s = make_row_scalars(d[1] > 0 ? d[1] : 1, d[2], args.row_begin, args.row_end);
  DeviceRowArgs a = args;  // cuLaunchKernel reads the values through non-const pointers
  std::vector<void*> params;
  for (DevicePtr& p : a.inputs) params.push_back(&p);
  for (DevicePtr* p : {&a.output, &a.scale, &a.bias}) params.push_back(p);
  for (std::int64_t& st : a.strides) params.push_back(&st);
  for (std::uint32_t* v : {&s.d1, &s.d2, &s.row_begin, &s.row_end, &s.magic1, &s.shift1}) params.push_back(v);
  params.push_back(&a.flag);
  const unsigned threads = row_block_threads(d[2]);
  const auto rows = static_cast<unsigned>(args.row_end - args.row_begin);
  const unsigned resident = static_cast<unsigned>(std::max(1, driver.info().sm_count)) * (kThreadsPerSm / threads);
  return launch_kernel(driver, module.function(), LaunchShape{std::min(rows, resident), threads}, params.data());
}

}  // namespace canary::jit::cuda

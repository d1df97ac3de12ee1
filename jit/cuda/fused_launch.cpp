// Fused kernel launches on device memory: argument checks, the parameter
// block, grid sizing, and the per-spec module cache.
#include "jit/cuda/fused_launch.h"

#include <algorithm>
#include <chrono>

#include "jit/cuda/fault_injection.h"
#include "jit/cuda/ptx_elementwise.h"
#include "jit/cuda/ptx_row.h"

namespace canary::jit::cuda {
namespace {

constexpr unsigned kBlockThreads = 256;
// Resident blocks per SM the grid-stride loop aims for.
constexpr unsigned kBlocksPerSm = 32;

// Bytes of the parameter block for a spec.
std::size_t param_bytes(const FusedElementwiseSpec& spec) {
  return 8 * (spec.num_inputs + spec.outputs.size()) + 16 * spec.num_inputs + 4 * 9 + 8;
}

// Whether input k is read at the flat element index (dense along the whole space).
bool input_is_contiguous(const FusedElementwiseSpec& spec, const std::array<std::int64_t, 3>& d,
                         const std::vector<std::int64_t>& strides, int k) {
  if (spec.inner_broadcast[k]) return false;
  return (d[0] == 1 || strides[2 * k] == d[1] * d[2]) && (d[1] == 1 || strides[2 * k + 1] == d[2]);
}

// Whether the kernel's 4-wide loop may run: contiguous inputs, 16-byte
// aligned bases, a start on a multiple of four.
bool vector_path_allowed(const FusedElementwiseSpec& spec, const std::array<std::int64_t, 3>& d,
                         const DeviceFusedArgs& args, std::uint32_t begin) {
  if (begin % 4 != 0) return false;
  for (int k = 0; k < spec.num_inputs; ++k)
    if (!input_is_contiguous(spec, d, args.strides, k) || args.inputs[k] % 16 != 0) return false;
  for (DevicePtr p : args.outputs)
    if (p % 16 != 0) return false;
  return true;
}

}  // namespace

std::array<std::int64_t, 3> launch_dims(const FusedElementwiseSpec& spec, const std::int64_t dims[3]) {
  if (spec.exact_dims) return *spec.exact_dims;
  return {dims[0], dims[1], dims[2]};
}

std::string check_gpu_launch(const FusedElementwiseSpec& spec, const std::int64_t dims[3], std::int64_t row_begin,
                             std::int64_t row_end, const std::int64_t* strides) {
  if (std::string why = check_fused_spec(spec); !why.empty()) return "malformed spec: " + why;
  for (const auto& range : spec.output_ranges)
    if (range) return "range canaries are not emitted for the GPU (the CPU backend runs this group)";
  if (param_bytes(spec) > kKernelParamBytesLimit)
    return "too many inputs and outputs for one kernel's parameter space (" + std::to_string(param_bytes(spec)) +
           " bytes, limit " + std::to_string(kKernelParamBytesLimit) + ")";
  const auto d = launch_dims(spec, dims);
  for (int i = 0; i < 3; ++i) {
    if (d[i] < 0) return "dim " + std::to_string(i) + " is negative (" + std::to_string(d[i]) + ")";
    if (d[i] > kMaxGpuElements) return "dim " + std::to_string(i) + " exceeds the GPU launch limit";
  }
  const std::int64_t rows = d[0] * d[1];
  if (row_begin < 0 || row_end < row_begin || row_end > rows)
    return "rows [" + std::to_string(row_begin) + ", " + std::to_string(row_end) + ") are outside [0, " +
           std::to_string(rows) + ")";
  if (row_end > 0 && d[2] > 0 && row_end > kMaxGpuElements / d[2])
    return std::to_string(row_end) + " rows of " + std::to_string(d[2]) +
           " elements exceed the GPU launch limit of 2^31 - 1 elements";
  if (spec.num_inputs > 0 && strides == nullptr) return "no strides given for " + std::to_string(spec.num_inputs) + " inputs";
  for (int k = 0; k < spec.num_inputs; ++k)
    if (strides[2 * k] < 0 || strides[2 * k + 1] < 0)
      return "input " + std::to_string(k) + " has a negative stride, which the GPU backend does not support";
  return {};
}

std::int64_t input_extent(const FusedElementwiseSpec& spec, const std::array<std::int64_t, 3>& dims,
                          const std::int64_t* strides, int k) {
  if (dims[0] == 0 || dims[1] == 0 || dims[2] == 0) return 0;
  const std::int64_t inner = spec.inner_broadcast[k] ? 0 : dims[2] - 1;
  return (dims[0] - 1) * strides[2 * k] + (dims[1] - 1) * strides[2 * k + 1] + inner + 1;
}

CudaStatus launch_fused(const CudaDriver& driver, const CudaModule& module, const FusedElementwiseSpec& spec,
                        const DeviceFusedArgs& args) {
  if (std::string why = check_gpu_launch(spec, args.dims, args.row_begin, args.row_end, args.strides.data());
      !why.empty())
    return CudaStatus::failure(why);
  if (args.inputs.size() != spec.num_inputs || args.outputs.size() != spec.outputs.size() ||
      args.strides.size() != 2u * spec.num_inputs)
    return CudaStatus::failure("device arguments do not match the spec's inputs and outputs");
  if (spec.check_non_finite && args.flag == 0) return CudaStatus::failure("the spec checks values but no flag word was given");
  const auto d = launch_dims(spec, args.dims);
  if (args.row_end == args.row_begin || d[2] == 0) return {};
  FusedLaunchScalars s = make_launch_scalars(d[1], d[2], args.row_begin, args.row_end);
  s.vector_ok = vector_path_allowed(spec, d, args, s.begin) ? 1u : 0u;
  DeviceFusedArgs a = args;  // cuLaunchKernel reads the values through non-const pointers
  std::vector<void*> params;
  for (DevicePtr& p : a.inputs) params.push_back(&p);
  for (DevicePtr& p : a.outputs) params.push_back(&p);
  for (std::int64_t& st : a.strides) params.push_back(&st);
  for (std::uint32_t* v : {&s.d1, &s.d2, &s.begin, &s.end, &s.magic1, &s.shift1, &s.magic2, &s.shift2, &s.vector_ok})
    params.push_back(v);
  params.push_back(&a.flag);
  const std::uint32_t elements = s.end - s.begin;
  const unsigned wanted = (elements + kBlockThreads - 1) / kBlockThreads;
  const unsigned resident = static_cast<unsigned>(std::max(1, driver.info().sm_count)) * kBlocksPerSm;
  return launch_kernel(driver, module.function(), LaunchShape{std::min(wanted, resident), kBlockThreads},
                       params.data());
}

CudaStatus FusedKernelCache::get(const FusedElementwiseSpec& spec, const CudaModule** out) {
  std::string why = check_fused_spec(spec);
  if (!why.empty()) why = "malformed spec: " + why;
  return get_module(
      spec.key(), why, [&] { return emit_fused_ptx(spec, driver_.ptx_target()); }, kFusedEntryName, out);
}

CudaStatus FusedKernelCache::get(const FusedRowSpec& spec, const CudaModule** out) {
  std::string why = check_row_spec(spec);
  if (!why.empty()) why = "malformed row spec: " + why;
  return get_module(
      spec.key(), why, [&] { return emit_row_ptx(spec, driver_.ptx_target()); }, kRowEntryName, out);
}

CudaStatus FusedKernelCache::get(const MatmulSpec& spec, const CudaModule** out) {
  return get_module(
      spec.key(), "", [&] { return emit_matmul_ptx(spec, driver_.ptx_target()); }, kMatmulEntryName, out);
}

CudaStatus FusedKernelCache::get_module(const std::string& spec_key, const std::string& check,
                                        const std::function<std::string()>& emit, const char* entry,
                                        const CudaModule** out) {
  *out = nullptr;
  const std::string key = spec_key + " @" + driver_.ptx_target();
  if (auto it = modules_.find(key); it != modules_.end()) {
    ++hits_;
    *out = it->second.get();
    return {};
  }
  if (auto it = failures_.find(key); it != failures_.end()) return CudaStatus::failure(it->second);
  if (!check.empty()) return CudaStatus::failure(check);
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CudaModule> module;
  CudaStatus s = CudaModule::load(driver_, emit(), entry, &module);
  compile_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ++compiles_;
  if (!s.ok()) {
    if (injected_cuda_fault() != CudaFault::Load) failures_[key] = s.error();
    return s;
  }
  *out = module.get();
  modules_.emplace(key, std::move(module));
  return {};
}

}  // namespace canary::jit::cuda

// The process-wide runner behind run_fused_on_gpu: one module cache, one
// arena with its staging buffer, serialised by a mutex on the driver's stream.
#include "jit/cuda/fused_runner.h"

#include <cstring>
#include <exception>
#include <mutex>
#include <vector>

#include "jit/cuda/driver.h"
#include "jit/cuda/fused_launch.h"

namespace canary::jit::cuda {
namespace {

// Arena blocks taken for one call, given back when it ends.
class CallBlocks {
 public:
  explicit CallBlocks(DeviceArena& arena) : arena_(arena) {}
  ~CallBlocks() {
    for (DevicePtr p : blocks_) arena_.give_back(p);
  }
  CudaStatus take(std::size_t bytes, DevicePtr* out) {
    CudaStatus s = arena_.acquire(bytes, out);
    if (s.ok()) blocks_.push_back(*out);
    return s;
  }

 private:
  DeviceArena& arena_;
  std::vector<DevicePtr> blocks_;
};

class GpuFusedRunner {
 public:
  explicit GpuFusedRunner(const CudaDriver& driver) : driver_(driver), arena_(driver), kernels_(driver) {}

  GpuRunResult run(const FusedElementwiseSpec& spec, const FusedArgs& args) {
    std::lock_guard<std::mutex> lock(mutex_);
    GpuRunResult result;
    try {
      const std::uint64_t moved_before = stats_.bytes_to_device + stats_.bytes_to_host;
      CudaStatus s = run_locked(spec, args, &result.flag);
      result.bytes_moved = stats_.bytes_to_device + stats_.bytes_to_host - moved_before;
      result.ok = s.ok();
      result.error = s.error();
      // Drain copies a failed call left queued before its staging is reused.
      if (!s.ok()) (void)driver_.synchronize();
    } catch (const std::exception& e) {
      result.error = std::string("CUDA backend: ") + e.what();
    }
    if (result.ok) ++stats_.runs;
    else ++stats_.failures;
    return result;
  }

  GpuFusedStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    GpuFusedStats s = stats_;
    s.modules_compiled = kernels_.compiles();
    s.module_cache_hits = kernels_.hits();
    s.compile_ms = kernels_.compile_ms();
    s.arena = arena_.stats();
    return s;
  }

 private:
  // Stage in, launch, copy back, wait, then publish the outputs.
  CudaStatus run_locked(const FusedElementwiseSpec& spec, const FusedArgs& args, std::uint32_t* flag) {
    if (std::string why = check_gpu_launch(spec, args.dims, args.row_begin, args.row_end, args.strides); !why.empty())
      return CudaStatus::failure(why);
    const auto d = launch_dims(spec, args.dims);
    if (args.row_end == args.row_begin || d[2] == 0) return {};
    const CudaModule* module = nullptr;
    if (CudaStatus s = kernels_.get(spec, &module); !s.ok()) return s;

    const std::size_t out_elems = static_cast<std::size_t>((args.row_end - args.row_begin) * d[2]);
    const std::size_t out_offset = static_cast<std::size_t>(args.row_begin * d[2]);
    std::vector<std::size_t> extents(spec.num_inputs);
    std::size_t staging_elems = out_elems * spec.outputs.size() + 1;
    for (int k = 0; k < spec.num_inputs; ++k) {
      extents[k] = static_cast<std::size_t>(input_extent(spec, d, args.strides, k));
      staging_elems += extents[k];
    }
    void* staging = nullptr;
    if (CudaStatus s = arena_.staging(staging_elems * sizeof(float), &staging); !s.ok()) return s;
    float* host = static_cast<float*>(staging);

    CallBlocks blocks(arena_);
    DeviceFusedArgs dev;
    std::copy(args.dims, args.dims + 3, dev.dims);
    dev.row_begin = args.row_begin;
    dev.row_end = args.row_end;
    dev.strides.assign(args.strides, args.strides + 2 * spec.num_inputs);
    for (int k = 0; k < spec.num_inputs; ++k) {
      DevicePtr p = 0;
      if (CudaStatus s = blocks.take(extents[k] * sizeof(float), &p); !s.ok()) return s;
      std::memcpy(host, args.inputs[k], extents[k] * sizeof(float));
      if (CudaStatus s = driver_.copy_to_device(p, host, extents[k] * sizeof(float)); !s.ok()) return s;
      stats_.bytes_to_device += extents[k] * sizeof(float);
      host += extents[k];
      dev.inputs.push_back(p);
    }
    for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
      DevicePtr p = 0;
      if (CudaStatus s = blocks.take(out_elems * sizeof(float), &p); !s.ok()) return s;
      // The kernel writes element e at base + 4 e; the block holds [begin, end).
      dev.outputs.push_back(p - out_offset * sizeof(float));
    }
    if (spec.check_non_finite) {
      if (CudaStatus s = blocks.take(sizeof(std::uint32_t), &dev.flag); !s.ok()) return s;
      if (CudaStatus s = driver_.fill_u32(dev.flag, 0, 1); !s.ok()) return s;
    }
    if (CudaStatus s = launch_fused(driver_, *module, spec, dev); !s.ok()) return s;

    float* const out_staging = host;
    for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
      const DevicePtr block = dev.outputs[k] + out_offset * sizeof(float);
      if (CudaStatus s = driver_.copy_to_host(out_staging + k * out_elems, block, out_elems * sizeof(float)); !s.ok())
        return s;
      stats_.bytes_to_host += out_elems * sizeof(float);
    }
    std::uint32_t* flag_staging = reinterpret_cast<std::uint32_t*>(out_staging + spec.outputs.size() * out_elems);
    *flag_staging = 0;
    if (spec.check_non_finite)
      if (CudaStatus s = driver_.copy_to_host(flag_staging, dev.flag, sizeof(std::uint32_t)); !s.ok()) return s;
    if (CudaStatus s = driver_.synchronize(); !s.ok()) return s;

    for (std::size_t k = 0; k < spec.outputs.size(); ++k)
      std::memcpy(args.outputs[k] + out_offset, out_staging + k * out_elems, out_elems * sizeof(float));
    *flag = *flag_staging != 0 ? 1u : 0u;
    return {};
  }

  const CudaDriver& driver_;
  std::mutex mutex_;
  DeviceArena arena_;
  FusedKernelCache kernels_;
  GpuFusedStats stats_;
};

// The runner, created with the driver on first use; nullptr when absent.
GpuFusedRunner* runner() {
  static GpuFusedRunner* const instance = [] {
    const CudaDriver* driver = CudaDriver::get();
    return driver != nullptr ? new GpuFusedRunner(*driver) : nullptr;
  }();
  return instance;
}

}  // namespace

GpuRunResult run_fused_on_gpu(const FusedElementwiseSpec& spec, const FusedArgs& args) {
  GpuFusedRunner* r = runner();
  if (r == nullptr) return GpuRunResult{false, "CUDA unavailable: " + CudaDriver::absent_reason(), 0};
  return r->run(spec, args);
}

GpuFusedStats gpu_fused_stats() {
  GpuFusedRunner* r = runner();
  return r != nullptr ? r->stats() : GpuFusedStats{};
}

}  // namespace canary::jit::cuda

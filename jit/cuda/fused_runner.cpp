// The process-wide runner behind run_fused_on_gpu, run_row_on_gpu,
// run_matmul_on_gpu and run_chain_on_gpu: one module cache, one arena with
// its staging buffer, serialised by a mutex on the driver's stream.
#include "jit/cuda/fused_runner.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "jit/cuda/driver.h"
#include "jit/cuda/fused_launch.h"
#include "jit/cuda/row_launch.h"

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
    return guarded([&](std::uint32_t* flag) { return run_locked(spec, args, flag); });
  }

  GpuRunResult run_row(const FusedRowSpec& spec, const RowArgs& args) {
    return guarded([&](std::uint32_t* flag) { return run_row_locked(spec, args, flag); });
  }

  GpuRunResult run_matmul(const MatmulSpec& spec, const MatmulArgs& args) {
    return guarded([&](std::uint32_t*) { return run_matmul_locked(spec, args); });
  }

  GpuRunResult run_chain(const ChainStep* steps, std::size_t count) {
    return guarded([&](std::uint32_t* flag) { return run_chain_locked(steps, count, flag); });
  }

  // One call under the lock: its result, bytes moved and counters; a failed
  // call's queued copies are drained before its staging is reused.
  template <class Run>
  GpuRunResult guarded(Run run_locked_call) {
    std::lock_guard<std::mutex> lock(mutex_);
    GpuRunResult result;
    try {
      const std::uint64_t moved_before = stats_.bytes_to_device + stats_.bytes_to_host;
      CudaStatus s = run_locked_call(&result.flag);
      result.bytes_moved = stats_.bytes_to_device + stats_.bytes_to_host - moved_before;
      result.ok = s.ok();
      result.error = s.error();
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
    const std::vector<std::size_t> extents = input_extents(spec, d, args.strides);
    const std::size_t staging_elems = out_elems * spec.outputs.size() + 1 + sum(extents);
    Staging staging;
    if (CudaStatus s = begin_staging(staging_elems, &staging); !s.ok()) return s;
    CallBlocks blocks(arena_);
    DeviceFusedArgs dev;
    std::copy(args.dims, args.dims + 3, dev.dims);
    dev.row_begin = args.row_begin;
    dev.row_end = args.row_end;
    dev.strides.assign(args.strides, args.strides + 2 * spec.num_inputs);
    if (CudaStatus s = upload_inputs(blocks, staging, args.inputs, extents, &dev.inputs); !s.ok()) return s;
    for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
      DevicePtr p = 0;
      if (CudaStatus s = blocks.take(out_elems * sizeof(float), &p); !s.ok()) return s;
      // The kernel writes element e at base + 4 e; the block holds [begin, end).
      dev.outputs.push_back(p - out_offset * sizeof(float));
    }
    if (CudaStatus s = take_flag(blocks, spec.check_non_finite, &dev.flag); !s.ok()) return s;
    if (CudaStatus s = launch_fused(driver_, *module, spec, dev); !s.ok()) return s;

    std::vector<float*> results;
    for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
      results.push_back(staging.cursor);
      if (CudaStatus s = download(staging, dev.outputs[k] + out_offset * sizeof(float), out_elems); !s.ok()) return s;
    }
    if (CudaStatus s = finish(staging, dev.flag, flag); !s.ok()) return s;
    for (std::size_t k = 0; k < spec.outputs.size(); ++k)
      std::memcpy(args.outputs[k] + out_offset, results[k], out_elems * sizeof(float));
    return {};
  }

  // The same for a row kernel: prologue inputs, scale and bias in; one
  // float per row (reductions) or one row per row (Softmax, LayerNorm) out.
  CudaStatus run_row_locked(const FusedRowSpec& spec, const RowArgs& args, std::uint32_t* flag) {
    const FusedElementwiseSpec& pro = spec.prologue;
    if (std::string why = check_gpu_row_launch(spec, args.dims, args.row_begin, args.row_end, args.strides);
        !why.empty())
      return CudaStatus::failure(why);
    const auto d = launch_dims(pro, args.dims);
    if (args.row_end == args.row_begin) return {};
    const CudaModule* module = nullptr;
    if (CudaStatus s = kernels_.get(spec, &module); !s.ok()) return s;

    const std::int64_t width = row_output_width(spec, d[2]);
    const std::size_t out_elems = static_cast<std::size_t>((args.row_end - args.row_begin) * width);
    const std::size_t out_offset = static_cast<std::size_t>(args.row_begin * width);
    const std::size_t vector_elems = static_cast<std::size_t>(d[2]);
    const std::vector<std::size_t> extents = input_extents(pro, d, args.strides);
    const std::size_t staging_elems = out_elems + 2 * vector_elems + 1 + sum(extents);
    Staging staging;
    if (CudaStatus s = begin_staging(staging_elems, &staging); !s.ok()) return s;
    CallBlocks blocks(arena_);
    DeviceRowArgs dev;
    std::copy(args.dims, args.dims + 3, dev.dims);
    dev.row_begin = args.row_begin;
    dev.row_end = args.row_end;
    dev.strides.assign(args.strides, args.strides + 2 * pro.num_inputs);
    if (CudaStatus s = upload_inputs(blocks, staging, args.inputs, extents, &dev.inputs); !s.ok()) return s;
    if (spec.has_scale)
      if (CudaStatus s = upload(blocks, staging, args.scale, vector_elems, &dev.scale); !s.ok()) return s;
    if (spec.has_bias)
      if (CudaStatus s = upload(blocks, staging, args.bias, vector_elems, &dev.bias); !s.ok()) return s;
    DevicePtr out = 0;
    if (CudaStatus s = blocks.take(std::max<std::size_t>(out_elems, 1) * sizeof(float), &out); !s.ok()) return s;
    dev.output = out - out_offset * sizeof(float);  // the kernel indexes by absolute row
    if (CudaStatus s = take_flag(blocks, pro.check_non_finite, &dev.flag); !s.ok()) return s;
    if (CudaStatus s = launch_row(driver_, *module, spec, dev); !s.ok()) return s;

    float* const result = staging.cursor;
    if (CudaStatus s = download(staging, out, out_elems); !s.ok()) return s;
    if (CudaStatus s = finish(staging, dev.flag, flag); !s.ok()) return s;
    std::memcpy(args.output + out_offset, result, out_elems * sizeof(float));
    return {};
  }

  // A matrix product: A, B and the bias in, C out.
  CudaStatus run_matmul_locked(const MatmulSpec& spec, const MatmulArgs& args) {
    const MatmulDims& d = args.dims;
    if (std::string why = check_gpu_matmul_launch(d); !why.empty()) return CudaStatus::failure(why);
    // Each operand and the result below 2^40 floats, so the staging sum cannot wrap.
    constexpr std::int64_t kLimit = std::int64_t{1} << 40;
    std::int64_t out = 0;
    if (__builtin_mul_overflow(d.batch, d.m, &out) || __builtin_mul_overflow(out, d.n, &out) || out > kLimit ||
        matmul_a_extent(d) > kLimit || matmul_b_extent(d) > kLimit)
      return CudaStatus::failure("the matmul operands or result are too large for the device");
    const auto out_elems = static_cast<std::size_t>(out);
    if (out_elems == 0) return {};
    const auto a_elems = static_cast<std::size_t>(matmul_a_extent(d)), b_elems = static_cast<std::size_t>(matmul_b_extent(d));
    const std::size_t bias_elems = spec.has_bias ? static_cast<std::size_t>(d.n) : 0;
    if ((a_elems > 0 && !args.a) || (b_elems > 0 && !args.b) || !args.c || (bias_elems > 0 && !args.bias))
      return CudaStatus::failure("a matmul operand pointer is null");
    const CudaModule* module = nullptr;
    if (CudaStatus s = kernels_.get(spec, &module); !s.ok()) return s;

    Staging staging;
    if (CudaStatus s = begin_staging(a_elems + b_elems + bias_elems + out_elems + 1, &staging); !s.ok()) return s;
    CallBlocks blocks(arena_);
    DeviceMatmulArgs dev;
    dev.dims = d;
    if (CudaStatus s = upload(blocks, staging, args.a, a_elems, &dev.a); !s.ok()) return s;
    if (CudaStatus s = upload(blocks, staging, args.b, b_elems, &dev.b); !s.ok()) return s;
    if (spec.has_bias)
      if (CudaStatus s = upload(blocks, staging, args.bias, bias_elems, &dev.bias); !s.ok()) return s;
    if (CudaStatus s = blocks.take(out_elems * sizeof(float), &dev.c); !s.ok()) return s;
    if (CudaStatus s = launch_matmul(driver_, *module, spec, dev); !s.ok()) return s;
    float* const result = staging.cursor;
    if (CudaStatus s = download(staging, dev.c, out_elems); !s.ok()) return s;
    std::uint32_t unused_flag = 0;
    if (CudaStatus s = finish(staging, 0, &unused_flag); !s.ok()) return s;
    std::memcpy(args.c, result, out_elems * sizeof(float));
    return {};
  }

  // One step of a chain as it launches: its module, the launch dims, each
  // source's extent in floats and each output's size.
  struct ChainLaunch {
    const CudaModule* module = nullptr;
    std::array<std::int64_t, 3> dims{};
    std::vector<std::size_t> extents;
    std::size_t out_elems = 0;
  };

  // The launch checks and the module of one chain step, before anything is queued.
  CudaStatus prepare_chain_step(const ChainStep& step, ChainLaunch* launch) {
    const FusedElementwiseSpec& pro = step.fused ? *step.fused : step.row->prologue;
    const std::int64_t* dims = step.fused ? step.fused_args.dims : step.row_args.dims;
    const std::int64_t* strides = step.fused ? step.fused_args.strides : step.row_args.strides;
    const std::int64_t begin = step.fused ? step.fused_args.row_begin : step.row_args.row_begin;
    const std::int64_t end = step.fused ? step.fused_args.row_end : step.row_args.row_end;
    std::string why = step.fused ? check_gpu_launch(*step.fused, dims, begin, end, strides)
                                 : check_gpu_row_launch(*step.row, dims, begin, end, strides);
    if (why.empty() && begin != 0) why = "a chained step runs from row 0";
    if (!why.empty()) return CudaStatus::failure(why);
    launch->dims = launch_dims(pro, dims);
    if (CudaStatus s = step.fused ? kernels_.get(*step.fused, &launch->module) : kernels_.get(*step.row, &launch->module);
        !s.ok())
      return s;
    launch->extents = input_extents(pro, launch->dims, strides);
    const std::int64_t width = step.fused ? launch->dims[2] : row_output_width(*step.row, launch->dims[2]);
    if (step.row) {
      if (step.row->has_scale) launch->extents.push_back(static_cast<std::size_t>(launch->dims[2]));
      if (step.row->has_bias) launch->extents.push_back(static_cast<std::size_t>(launch->dims[2]));
    }
    launch->out_elems = static_cast<std::size_t>(end * width);
    return {};
  }

  // A chain: every step checked and its module loaded, then per step its
  // host inputs uploaded (a buffer two steps read goes over once), its
  // outputs given blocks and the kernel launched reading chained inputs from
  // earlier steps' blocks; then the host outputs copied back, the stream
  // waited for, and only then the host buffers written. One canary word serves all steps.
  CudaStatus run_chain_locked(const ChainStep* steps, std::size_t count, std::uint32_t* flag) {
    std::vector<ChainLaunch> launches(count);
    bool checks = false;
    std::size_t staging_elems = 1;
    for (std::size_t k = 0; k < count; ++k) {
      if (CudaStatus s = prepare_chain_step(steps[k], &launches[k]); !s.ok()) return s;
      checks = checks || (steps[k].fused ? steps[k].fused->check_non_finite : steps[k].row->prologue.check_non_finite);
      for (std::size_t i = 0; i < steps[k].num_sources; ++i)
        if (steps[k].sources[i].on_host()) staging_elems += launches[k].extents[i];
      for (std::size_t o = 0; o < steps[k].num_outputs(); ++o)
        if ((steps[k].host_outputs >> o) & 1u) staging_elems += launches[k].out_elems;
    }
    Staging staging;
    if (CudaStatus s = begin_staging(staging_elems, &staging); !s.ok()) return s;
    CallBlocks blocks(arena_);
    DevicePtr dev_flag = 0;
    if (CudaStatus s = take_flag(blocks, checks, &dev_flag); !s.ok()) return s;
    std::vector<std::vector<DevicePtr>> produced(count);
    struct Uploaded {
      DevicePtr block;
      std::size_t elems;
    };
    std::unordered_map<const float*, Uploaded> uploaded;
    for (std::size_t k = 0; k < count; ++k) {
      const ChainStep& step = steps[k];
      const ChainLaunch& launch = launches[k];
      std::vector<DevicePtr> in;
      for (std::size_t i = 0; i < step.num_sources; ++i) {
        const ChainInput& src = step.sources[i];
        if (!src.on_host()) {
          in.push_back(produced[static_cast<std::size_t>(src.step)][src.output]);
          continue;
        }
        const float* host = step.host_input(i);
        const auto it = uploaded.find(host);
        if (it != uploaded.end() && it->second.elems >= launch.extents[i]) {
          in.push_back(it->second.block);
          continue;
        }
        DevicePtr p = 0;
        if (CudaStatus s = upload(blocks, staging, host, launch.extents[i], &p); !s.ok()) return s;
        uploaded[host] = Uploaded{p, launch.extents[i]};
        in.push_back(p);
      }
      for (std::size_t o = 0; o < step.num_outputs(); ++o) {
        DevicePtr p = 0;
        if (CudaStatus s = blocks.take(std::max<std::size_t>(launch.out_elems, 1) * sizeof(float), &p); !s.ok())
          return s;
        produced[k].push_back(p);
      }
      if (launch.out_elems == 0) continue;  // nothing to compute (a Sum or Mean of empty rows still writes)
      if (CudaStatus s = launch_chain_step(step, launch, std::move(in), produced[k], dev_flag); !s.ok()) return s;
    }
    struct Result {
      float* host;
      const float* staged;
      std::size_t elems;
    };
    std::vector<Result> results;
    for (std::size_t k = 0; k < count; ++k)
      for (std::size_t o = 0; o < steps[k].num_outputs(); ++o) {
        if (!((steps[k].host_outputs >> o) & 1u)) continue;
        results.push_back({steps[k].host_output(o), staging.cursor, launches[k].out_elems});
        if (CudaStatus s = download(staging, produced[k][o], launches[k].out_elems); !s.ok()) return s;
      }
    if (CudaStatus s = finish(staging, dev_flag, flag); !s.ok()) return s;
    for (const Result& r : results) std::memcpy(r.host, r.staged, r.elems * sizeof(float));
    return {};
  }

  CudaStatus launch_chain_step(const ChainStep& step, const ChainLaunch& launch, std::vector<DevicePtr> in,
                               const std::vector<DevicePtr>& out, DevicePtr flag) {
    if (step.fused) {
      const FusedArgs& a = step.fused_args;
      DeviceFusedArgs dev;
      std::copy(a.dims, a.dims + 3, dev.dims);
      dev.row_begin = a.row_begin;
      dev.row_end = a.row_end;
      dev.strides.assign(a.strides, a.strides + 2 * step.fused->num_inputs);
      dev.inputs = std::move(in);
      dev.outputs = out;
      dev.flag = step.fused->check_non_finite ? flag : 0;
      return launch_fused(driver_, *launch.module, *step.fused, dev);
    }
    const RowArgs& a = step.row_args;
    const auto n = static_cast<std::size_t>(step.row->prologue.num_inputs);
    DeviceRowArgs dev;
    std::copy(a.dims, a.dims + 3, dev.dims);
    dev.row_begin = a.row_begin;
    dev.row_end = a.row_end;
    dev.strides.assign(a.strides, a.strides + 2 * n);
    dev.inputs.assign(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
    std::size_t next = n;
    if (step.row->has_scale) dev.scale = in[next++];
    if (step.row->has_bias) dev.bias = in[next++];
    dev.output = out[0];
    dev.flag = step.row->prologue.check_non_finite ? flag : 0;
    return launch_row(driver_, *launch.module, *step.row, dev);
  }

  // The pinned staging buffer of one call, used front to back.
  struct Staging {
    float* cursor = nullptr;
  };

  CudaStatus begin_staging(std::size_t elems, Staging* staging) {
    void* p = nullptr;
    if (CudaStatus s = arena_.staging(elems * sizeof(float), &p); !s.ok()) return s;
    staging->cursor = static_cast<float*>(p);
    return {};
  }

  // Copies elems floats from host memory through staging into a new block.
  CudaStatus upload(CallBlocks& blocks, Staging& staging, const float* src, std::size_t elems, DevicePtr* out) {
    if (CudaStatus s = blocks.take(elems * sizeof(float), out); !s.ok()) return s;
    if (elems == 0) return {};
    std::memcpy(staging.cursor, src, elems * sizeof(float));
    if (CudaStatus s = driver_.copy_to_device(*out, staging.cursor, elems * sizeof(float)); !s.ok()) return s;
    stats_.bytes_to_device += elems * sizeof(float);
    staging.cursor += elems;
    return {};
  }

  // Each input's floats (its highest offset + 1) over the launch's dims.
  static std::vector<std::size_t> input_extents(const FusedElementwiseSpec& spec, const std::array<std::int64_t, 3>& d,
                                                const std::int64_t* strides) {
    std::vector<std::size_t> extents;
    for (int k = 0; k < spec.num_inputs; ++k) extents.push_back(static_cast<std::size_t>(input_extent(spec, d, strides, k)));
    return extents;
  }

  static std::size_t sum(const std::vector<std::size_t>& v) {
    std::size_t n = 0;
    for (std::size_t x : v) n += x;
    return n;
  }

  // Every input uploaded into a block of its own, in order.
  CudaStatus upload_inputs(CallBlocks& blocks, Staging& staging, const float* const* inputs,
                           const std::vector<std::size_t>& extents, std::vector<DevicePtr>* out) {
    for (std::size_t k = 0; k < extents.size(); ++k) {
      out->push_back(0);
      if (CudaStatus s = upload(blocks, staging, inputs[k], extents[k], &out->back()); !s.ok()) return s;
    }
    return {};
  }

  // A zeroed canary word when the kernel checks values.
  CudaStatus take_flag(CallBlocks& blocks, bool wanted, DevicePtr* flag) {
    if (!wanted) return {};
    if (CudaStatus s = blocks.take(sizeof(std::uint32_t), flag); !s.ok()) return s;
    return driver_.fill_u32(*flag, 0, 1);
  }

  // Queues the copy of elems floats of block into staging.
  CudaStatus download(Staging& staging, DevicePtr block, std::size_t elems) {
    if (elems == 0) return {};
    if (CudaStatus s = driver_.copy_to_host(staging.cursor, block, elems * sizeof(float)); !s.ok()) return s;
    stats_.bytes_to_host += elems * sizeof(float);
    staging.cursor += elems;
    return {};
  }

  // Queues the canary word's copy, waits for the stream, and reads the word.
  CudaStatus finish(Staging& staging, DevicePtr device_flag, std::uint32_t* flag) {
    std::uint32_t* word = reinterpret_cast<std::uint32_t*>(staging.cursor);
    *word = 0;
    if (device_flag != 0)
      if (CudaStatus s = driver_.copy_to_host(word, device_flag, sizeof(std::uint32_t)); !s.ok()) return s;
    if (CudaStatus s = driver_.synchronize(); !s.ok()) return s;
    *flag = *word != 0 ? 1u : 0u;
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

GpuRunResult run_row_on_gpu(const FusedRowSpec& spec, const RowArgs& args) {
  GpuFusedRunner* r = runner();
  if (r == nullptr) return GpuRunResult{false, "CUDA unavailable: " + CudaDriver::absent_reason(), 0};
  return r->run_row(spec, args);
}

GpuRunResult run_matmul_on_gpu(const MatmulSpec& spec, const MatmulArgs& args) {
  GpuFusedRunner* r = runner();
  if (r == nullptr) return GpuRunResult{false, "CUDA unavailable: " + CudaDriver::absent_reason(), 0};
  return r->run_matmul(spec, args);
}

GpuRunResult run_chain_on_gpu(const ChainStep* steps, std::size_t count) {
  GpuFusedRunner* r = runner();
  if (r == nullptr) return GpuRunResult{false, "CUDA unavailable: " + CudaDriver::absent_reason(), 0};
  return r->run_chain(steps, count);
}

GpuFusedStats gpu_fused_stats() {
  GpuFusedRunner* r = runner();
  return r != nullptr ? r->stats() : GpuFusedStats{};
}

}  // namespace canary::jit::cuda

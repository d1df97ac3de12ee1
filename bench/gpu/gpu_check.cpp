// gpu_check: the CUDA backend on a real GPU, in one short table: device,
// differential suite against the CPU reference, fault fallback, fused chain
// bandwidth against the device's copy bandwidth, launch overhead, the matmul
// catalog and the tiled matmul's GFLOP/s against the f32 peak, a
// dynamic-shape stream, three row steps as one device chain against one
// device call each, and compiled traces on the GPU through the API
// (JitOptions::device "gpu") with a launch fault mid-stream.
//
//   gpu_check [--require-gpu] [--functional]
//
// --functional leaves out the throughput rows (bandwidth, launch overhead,
// matmul GFLOP/s) and feeds the engine stream batches of up to 256 rows, not
// 4096: what ctest runs on the PTX emulator, where only results mean something.
// Exit status: 0 when every row passes (or no GPU and --require-gpu not
// given), 1 when a row fails, 2 when --require-gpu is given and no GPU is usable.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/gpu/check_table.h"
#include "jit/cuda/driver.h"
#include "jit/cuda/fused_runner.h"

namespace gc = canary::gpu_check;
namespace cuda = canary::jit::cuda;

namespace {

// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB, driver 12.4)".
std::string device_text(const cuda::CudaDriver& d) {
  const cuda::CudaDeviceInfo& i = d.info();
  char text[256];
  std::snprintf(text, sizeof text, "%s (cc %d.%d -> PTX %s, %d SMs, %.1f GiB, driver %d.%d)", i.name.c_str(),
                i.compute_major, i.compute_minor, d.ptx_target().c_str(), i.sm_count,
                static_cast<double>(i.total_memory) / (1u << 30), i.driver_version / 1000,
                (i.driver_version % 1000) / 10);
  return text;
}

void print_table(const std::vector<gc::Row>& rows) {
  std::size_t width = 5;
  for (const gc::Row& r : rows) width = std::max(width, r.check.size());
  std::printf("%-*s  %-4s  %s\n", static_cast<int>(width), "check", "ok", "result");
  for (const gc::Row& r : rows)
    std::printf("%-*s  %-4s  %s\n", static_cast<int>(width), r.check.c_str(), r.ok ? "yes" : "FAIL", r.result.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  bool require_gpu = false, functional = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--require-gpu") == 0) require_gpu = true;
    else if (std::strcmp(argv[i], "--functional") == 0) functional = true;
    else {
      std::fprintf(stderr, "gpu_check: unknown argument '%s' (usage: gpu_check [--require-gpu] [--functional])\n", argv[i]);
      return 2;
    }
  }
  const cuda::CudaDriver* driver = cuda::CudaDriver::get();
  if (driver == nullptr) {
    std::printf("gpu_check: CUDA unavailable: %s\n", cuda::CudaDriver::absent_reason().c_str());
    return require_gpu ? 2 : 0;
  }
  std::vector<gc::Row> rows;
  rows.push_back({"device", device_text(*driver), true});
  gc::check_differential(rows);
  gc::check_row_kernels(rows);
  gc::check_fault_fallback(rows);
  if (!functional) {
    gc::check_bandwidth(*driver, rows);
    gc::check_launch_overhead(*driver, rows);
  }
  gc::check_matmul(*driver, rows, !functional);
  gc::check_dynamic_shapes(rows);
  if (functional) gc::check_device_chains(rows, 64, 96, 3);
  else gc::check_device_chains(rows, 16384, 512, 30);
  // On the emulator the stream's larger batches only cost time (its
  // products most: a batch of 256 emulates 16.8M fma per call).
  gc::check_engine_stream(rows, functional ? 64 : 4096);
  gc::check_engine_fallback(rows);
  const cuda::GpuFusedStats s = cuda::gpu_fused_stats();
  char text[200];
  std::snprintf(text, sizeof text, "%d modules compiled (%.1f ms total, emit + driver JIT), %llu runs, %llu refused",
                s.modules_compiled, s.compile_ms, static_cast<unsigned long long>(s.runs),
                static_cast<unsigned long long>(s.failures));
  rows.push_back({"backend totals", text, true});
  print_table(rows);
  for (const gc::Row& r : rows)
    if (!r.ok) return 1;
  return 0;
}

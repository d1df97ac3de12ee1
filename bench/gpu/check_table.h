// The GPU check's table rows and the checks that produce them
// (correctness_checks.cpp, throughput_checks.cpp); gpu_check.cpp runs them
// in order and prints one table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/cuda/driver.h"

namespace canary::gpu_check {

struct Row {
  std::string check;
  std::string result;
  bool ok = true;
};

// GPU vs reference over the differential catalog (one row per math mode).
void check_differential(std::vector<Row>& rows);
// GPU vs reference over the row-kernel catalog, and exact cases bitwise against the host model.
void check_row_kernels(std::vector<Row>& rows);
// CANARY_CUDA_FAULT=load|launch|oom each fail cleanly, then the call succeeds without it.
void check_fault_fallback(std::vector<Row>& rows);
// 300 calls of one symbolic spec with random shapes: time per call, modules compiled, all results match.
void check_dynamic_shapes(std::vector<Row>& rows);
// The fused 10-op chains over 2^24..2^26 floats against cuMemcpyDtoD bandwidth.
void check_bandwidth(const jit::cuda::CudaDriver& driver, std::vector<Row>& rows);
// The matmul catalog on the GPU and, with `throughput`, the tiled kernel's
// GFLOP/s on 1024^3 and 4096^3 against the f32 peak.
void check_matmul(const jit::cuda::CudaDriver& driver, std::vector<Row>& rows, bool throughput);
// Launch + synchronize of a one-element kernel, and a small run_fused_on_gpu round trip.
void check_launch_overhead(const jit::cuda::CudaDriver& driver, std::vector<Row>& rows);
// Three row steps on the GPU as one device chain against one device call per
// step (chain_checks.cpp), on [n, t] inputs: time, bytes per call, results.
void check_device_chains(std::vector<Row>& rows, std::int64_t n, std::int64_t t, int timed_calls);
// Compiled traces with JitOptions::device "gpu" through the API (engine_checks.cpp): a
// dynamic-shape stream (batches 1..max_batch) against the interpreter, and a launch fault mid-stream.
void check_engine_stream(std::vector<Row>& rows, std::int64_t max_batch);
void check_engine_fallback(std::vector<Row>& rows);

}  // namespace canary::gpu_check

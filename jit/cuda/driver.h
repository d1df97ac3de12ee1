// CudaDriver: the CUDA Driver API loaded at run time (dlopen of libcuda.so.1,
// entry points through cuGetProcAddress), device 0's primary context and one
// stream. The only owner of those handles. Absent (no driver, no device,
// cuInit failing) is an ordinary state with a readable reason, never an error:
// callers then run on the CPU.
//
// This header is free of CUDA types so that tests and benchmarks built
// without the toolkit's include path can use it; CUDA handles appear as
// void* and device addresses as DevicePtr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace canary::jit::cuda {

// A device address (CUdeviceptr).
using DevicePtr = std::uint64_t;

// The outcome of a driver operation: ok, or why it failed ("cuMemAlloc
// failed: CUDA_ERROR_OUT_OF_MEMORY (2)"). Never thrown.
class [[nodiscard]] CudaStatus {
 public:
  CudaStatus() = default;
  // A failed status carrying `why` (must not be empty).
  static CudaStatus failure(std::string why);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

// What the backend knows about device 0.
struct CudaDeviceInfo {
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  std::uint64_t total_memory = 0;  // bytes
  int driver_version = 0;          // e.g. 12040 for 12.4
  int memory_clock_khz = 0;
  int memory_bus_bits = 0;
  int clock_khz = 0;               // SM clock; 0 where the driver does not report it
  // Theoretical DRAM bandwidth from the memory clock and bus width (GB/s).
  double peak_bandwidth_gbs() const;
  // Theoretical f32 FMA throughput (GFLOP/s, an FMA counted as two): SMs x
  // f32 lanes per SM (64 on compute capability 8.0, 128 on the others from
  // 8.6 up) x 2 x clock; 0 when the clock is unknown.
  double peak_fp32_gflops() const;
};

struct CudaApi;

class CudaDriver {
 public:
  // The process-wide driver, loaded on first use; nullptr when absent.
  static const CudaDriver* get();
  // Why get() returns nullptr ("libcuda.so.1: cannot open shared object
  // file: ...", "cuInit failed: CUDA_ERROR_NO_DEVICE (100)"); empty when present.
  static const std::string& absent_reason();
  // Brings up `library` the way get() brings up libcuda.so.1, then tears it
  // down; returns why it is unusable, or "" when device 0 came up.
  static std::string probe(const char* library);

  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  const CudaDeviceInfo& info() const { return info_; }
  const CudaApi& api() const { return *api_; }
  void* stream() const { return stream_; }
  // The PTX .target for this device: sm_90 from compute capability 9.0 up, else sm_80.
  std::string ptx_target() const;
  // Makes the primary context current on the calling thread (once per thread).
  CudaStatus make_current() const;
  // ok for CUDA_SUCCESS, else "<what> failed: <NAME> (<code>)".
  CudaStatus check(int result, const char* what) const;
  // "CUDA_ERROR_OUT_OF_MEMORY (2)".
  std::string describe(int result) const;

  // Memory and transfers (driver_memory.cpp); copies and fills are
  // asynchronous on stream(), synchronize() waits for them.
  CudaStatus allocate(std::size_t bytes, DevicePtr* out) const;
  CudaStatus release(DevicePtr ptr) const;
  CudaStatus allocate_pinned(std::size_t bytes, void** out) const;
  CudaStatus release_pinned(void* ptr) const;
  CudaStatus copy_to_device(DevicePtr dst, const void* src, std::size_t bytes) const;
  CudaStatus copy_to_host(void* dst, DevicePtr src, std::size_t bytes) const;
  CudaStatus copy_on_device(DevicePtr dst, DevicePtr src, std::size_t bytes) const;
  CudaStatus fill_u32(DevicePtr dst, std::uint32_t value, std::size_t count) const;
  CudaStatus synchronize() const;
  CudaStatus memory_info(std::size_t* free_bytes, std::size_t* total_bytes) const;

 private:
  CudaDriver();
  // Opens `library`, resolves the entry points, initialises device 0; on
  // failure returns nullptr and sets *reason.
  static std::unique_ptr<CudaDriver> load(const char* library, std::string* reason);
  std::string bring_up(const char* library);
  std::string resolve_entry_points(void* get_proc_address);
  std::string read_device_info();

  void* library_ = nullptr;
  std::unique_ptr<CudaApi> api_;
  int device_ = 0;
  void* context_ = nullptr;
  void* stream_ = nullptr;
  CudaDeviceInfo info_;
};

}  // namespace canary::jit::cuda

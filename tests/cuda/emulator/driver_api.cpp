// libcuda.so.1 for machines without a GPU: the Driver API entry points the
// CUDA backend resolves (jit/cuda/driver_api.h), served by the PTX
// emulator. One device ("Canary PTX emulator", compute capability 9.0);
// device memory is host memory whose allocations are tracked, so a kernel
// that reads or writes outside them fails its launch with
// CUDA_ERROR_ILLEGAL_ADDRESS instead of corrupting the test; copies and
// launches run synchronously on the calling thread.
//
// Tests put the folder holding this library first on LD_LIBRARY_PATH
// (tests/CMakeLists.txt), so CudaDriver::get() opens it exactly as it opens
// a real driver and the whole backend (bring-up, module cache, arena,
// staging, parameter blocks, grids, chains, fallbacks) runs in CI.
//
// Two extra C entry points let tests see what ran:
//   canary_cuda_emulator_counters(launches, instructions, faults)
//   canary_cuda_emulator_last_fault() -> the last launch fault's message ("" if none)
#include <cuda.h>
#include <cudaTypedefs.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tests/cuda/emulator/ptx_machine.h"
#include "tests/cuda/emulator/ptx_program.h"

namespace {

namespace emu = canary::ptx_emulator;

// What the emulated device reports.
constexpr std::size_t kTotalMemory = std::size_t{4} << 30;
constexpr int kSmCount = 2;
constexpr int kMemoryClockKhz = 1'000'000;
constexpr int kBusBits = 256;
constexpr int kClockKhz = 1'000'000;
constexpr int kDriverVersion = 12040;
constexpr std::size_t kAllocationAlignment = 256;

struct Module {
  emu::Program program;
};

struct Event {
  std::chrono::steady_clock::time_point at{};
  bool recorded = false;
};

struct State {
  std::mutex mutex;
  std::map<std::uint64_t, std::size_t> allocations;  // device base -> bytes
  std::size_t allocated = 0;
  std::uint64_t launches = 0, instructions = 0, faults = 0;
  std::string last_fault;
};

State& state() {
  static State s;
  return s;
}

// Whether [address, address + bytes) lies inside one allocation (lock held).
bool inside_allocation(const State& s, std::uint64_t address, std::uint64_t bytes) {
  auto it = s.allocations.upper_bound(address);
  if (it == s.allocations.begin()) return false;
  --it;
  return address >= it->first && address + bytes <= it->first + it->second && address + bytes >= address;
}

// Handles for the objects the driver only needs to exist.
char primary_context_tag, stream_tag;

CUresult CUDAAPI driver_get_version(int* version) {
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = kDriverVersion;
  return CUDA_SUCCESS;
}

const std::map<CUresult, std::pair<const char*, const char*>>& error_names() {
  static const std::map<CUresult, std::pair<const char*, const char*>> names = {
      {CUDA_SUCCESS, {"CUDA_SUCCESS", "no error"}},
      {CUDA_ERROR_INVALID_VALUE, {"CUDA_ERROR_INVALID_VALUE", "invalid argument"}},
      {CUDA_ERROR_OUT_OF_MEMORY, {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"}},
      {CUDA_ERROR_INVALID_PTX, {"CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"}},
      {CUDA_ERROR_INVALID_HANDLE, {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"}},
      {CUDA_ERROR_NOT_FOUND, {"CUDA_ERROR_NOT_FOUND", "named symbol not found"}},
      {CUDA_ERROR_ILLEGAL_ADDRESS, {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"}},
      {CUDA_ERROR_MISALIGNED_ADDRESS, {"CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"}},
      {CUDA_ERROR_LAUNCH_TIMEOUT, {"CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"}},
      {CUDA_ERROR_LAUNCH_FAILED, {"CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"}},
      {CUDA_ERROR_NOT_SUPPORTED, {"CUDA_ERROR_NOT_SUPPORTED", "operation not supported"}},
  };
  return names;
}

CUresult CUDAAPI get_error_name(CUresult error, const char** out) {
  const auto it = error_names().find(error);
  if (!out || it == error_names().end()) return CUDA_ERROR_INVALID_VALUE;
  *out = it->second.first;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI get_error_string(CUresult error, const char** out) {
  const auto it = error_names().find(error);
  if (!out || it == error_names().end()) return CUDA_ERROR_INVALID_VALUE;
  *out = it->second.second;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI device_get_count(int* count) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI device_get(CUdevice* device, int ordinal) {
  if (!device || ordinal != 0) return CUDA_ERROR_INVALID_VALUE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI device_get_name(char* name, int len, CUdevice device) {
  if (!name || len <= 0 || device != 0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<std::size_t>(len), "%s", "Canary PTX emulator (CPU)");
  return CUDA_SUCCESS;
}

CUresult CUDAAPI device_get_attribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  if (!value || device != 0) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = kSmCount; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *value = kMemoryClockKhz; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *value = kBusBits; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *value = kClockKhz; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;  // the backend asks for nothing else
  }
}

CUresult CUDAAPI device_total_mem(std::size_t* bytes, CUdevice device) {
  if (!bytes || device != 0) return CUDA_ERROR_INVALID_VALUE;
  *bytes = kTotalMemory;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI primary_ctx_retain(CUcontext* ctx, CUdevice device) {
  if (!ctx || device != 0) return CUDA_ERROR_INVALID_VALUE;
  *ctx = reinterpret_cast<CUcontext>(&primary_context_tag);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI primary_ctx_release(CUdevice device) { return device == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }

CUresult CUDAAPI ctx_set_current(CUcontext ctx) {
  return ctx == nullptr || ctx == reinterpret_cast<CUcontext>(&primary_context_tag) ? CUDA_SUCCESS
                                                                                    : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI stream_create(CUstream* stream, unsigned int) {
  if (!stream) return CUDA_ERROR_INVALID_VALUE;
  *stream = reinterpret_cast<CUstream>(&stream_tag);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI stream_destroy(CUstream) { return CUDA_SUCCESS; }
CUresult CUDAAPI stream_synchronize(CUstream) { return CUDA_SUCCESS; }  // everything ran already

// Copies the parser's message into the caller's error log buffer, if it gave one.
void write_error_log(unsigned int count, const CUjit_option* options, void** values, const std::string& log) {
  char* buffer = nullptr;
  int size_index = -1;
  for (unsigned int i = 0; i < count; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) buffer = static_cast<char*>(values[i]);
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) size_index = static_cast<int>(i);
  }
  if (!buffer || size_index < 0) return;
  const auto capacity = reinterpret_cast<std::uintptr_t>(values[size_index]);
  if (capacity == 0) return;
  const std::size_t n = std::min<std::size_t>(log.size(), capacity - 1);
  std::memcpy(buffer, log.data(), n);
  buffer[n] = '\0';
  values[size_index] = reinterpret_cast<void*>(static_cast<std::uintptr_t>(n + 1));
}

CUresult CUDAAPI module_load_data_ex(CUmodule* module, const void* image, unsigned int count, CUjit_option* options,
                                     void** values) {
  if (!module || !image || (count > 0 && (!options || !values))) return CUDA_ERROR_INVALID_VALUE;
  auto m = std::make_unique<Module>();
  std::string error;
  if (!emu::parse_program(static_cast<const char*>(image), &m->program, &error)) {
    write_error_log(count, options, values, "ptx emulator: " + error);
    return CUDA_ERROR_INVALID_PTX;
  }
  *module = reinterpret_cast<CUmodule>(m.release());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI module_unload(CUmodule module) {
  if (!module) return CUDA_ERROR_INVALID_HANDLE;
  delete reinterpret_cast<Module*>(module);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI module_get_function(CUfunction* function, CUmodule module, const char* name) {
  if (!function || !module || !name) return CUDA_ERROR_INVALID_VALUE;
  Module* m = reinterpret_cast<Module*>(module);
  if (m->program.entry != name) return CUDA_ERROR_NOT_FOUND;
  *function = reinterpret_cast<CUfunction>(m);
  return CUDA_SUCCESS;
}

CUresult fault_result(emu::Fault f) {
  switch (f) {
    case emu::Fault::None: return CUDA_SUCCESS;
    case emu::Fault::IllegalAddress: return CUDA_ERROR_ILLEGAL_ADDRESS;
    case emu::Fault::MisalignedAddress: return CUDA_ERROR_MISALIGNED_ADDRESS;
    case emu::Fault::Timeout: return CUDA_ERROR_LAUNCH_TIMEOUT;
    case emu::Fault::LaunchFailed: return CUDA_ERROR_LAUNCH_FAILED;
  }
  return CUDA_ERROR_LAUNCH_FAILED;
}

CUresult CUDAAPI launch_kernel(CUfunction function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                               unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared,
                               CUstream, void** params, void** extra) {
  if (!function || extra) return CUDA_ERROR_INVALID_VALUE;
  if (grid_y != 1 || grid_z != 1 || block_y != 1 || block_z != 1 || shared != 0) return CUDA_ERROR_NOT_SUPPORTED;
  const emu::Program& program = reinterpret_cast<Module*>(function)->program;
  emu::Launch launch;
  launch.grid = grid_x;
  launch.block = block_x;
  launch.params.resize(static_cast<std::size_t>(program.param_bytes));
  if (!program.params.empty() && !params) return CUDA_ERROR_INVALID_VALUE;
  for (std::size_t i = 0; i < program.params.size(); ++i) {
    const emu::Param& p = program.params[i];
    std::memcpy(launch.params.data() + p.offset, params[i], static_cast<std::size_t>(p.bytes));
  }
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  const emu::Outcome outcome = emu::run_kernel(
      program, launch, [&](std::uint64_t address, std::uint64_t bytes) { return inside_allocation(s, address, bytes); });
  ++s.launches;
  s.instructions += outcome.instructions;
  if (outcome.ok()) return CUDA_SUCCESS;
  ++s.faults;
  s.last_fault = outcome.message;
  std::fprintf(stderr, "canary cuda emulator: launch of %s failed: %s\n", program.entry.c_str(), outcome.message.c_str());
  return fault_result(outcome.fault);
}

CUresult CUDAAPI mem_get_info(std::size_t* free_bytes, std::size_t* total) {
  if (!free_bytes || !total) return CUDA_ERROR_INVALID_VALUE;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  *free_bytes = kTotalMemory - s.allocated;
  *total = kTotalMemory;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI mem_alloc(CUdeviceptr* ptr, std::size_t bytes) {
  if (!ptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (bytes > kTotalMemory - s.allocated) return CUDA_ERROR_OUT_OF_MEMORY;
  const std::size_t rounded = (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
  void* p = std::aligned_alloc(kAllocationAlignment, rounded);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  std::memset(p, 0xff, rounded);  // NaN bits: device memory starts as garbage
  s.allocations[reinterpret_cast<std::uintptr_t>(p)] = bytes;
  s.allocated += bytes;
  *ptr = reinterpret_cast<std::uintptr_t>(p);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI mem_free(CUdeviceptr ptr) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  const auto it = s.allocations.find(ptr);
  if (it == s.allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  s.allocated -= it->second;
  s.allocations.erase(it);
  std::free(reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr)));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI mem_alloc_host(void** ptr, std::size_t bytes) {
  if (!ptr) return CUDA_ERROR_INVALID_VALUE;
  *ptr = std::malloc(bytes == 0 ? 1 : bytes);
  return *ptr ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI mem_free_host(void* ptr) {
  std::free(ptr);
  return CUDA_SUCCESS;
}

// A device range the copy may touch, checked under the lock.
bool device_range_ok(CUdeviceptr ptr, std::size_t bytes) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return bytes == 0 || inside_allocation(s, ptr, bytes);
}

void* host_pointer(CUdeviceptr ptr) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr)); }

CUresult CUDAAPI memcpy_htod_async(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream) {
  if (!device_range_ok(dst, bytes) || (bytes > 0 && !src)) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > 0) std::memcpy(host_pointer(dst), src, bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI memcpy_dtoh_async(void* dst, CUdeviceptr src, std::size_t bytes, CUstream) {
  if (!device_range_ok(src, bytes) || (bytes > 0 && !dst)) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > 0) std::memcpy(dst, host_pointer(src), bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream) {
  if (!device_range_ok(dst, bytes) || !device_range_ok(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > 0) std::memmove(host_pointer(dst), host_pointer(src), bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI memset_d32_async(CUdeviceptr dst, unsigned int value, std::size_t count, CUstream) {
  if (count > SIZE_MAX / 4 || !device_range_ok(dst, count * 4) || dst % 4 != 0) return CUDA_ERROR_INVALID_VALUE;
  auto* p = static_cast<std::uint32_t*>(host_pointer(dst));
  for (std::size_t i = 0; i < count; ++i) p[i] = value;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI event_create(CUevent* event, unsigned int) {
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  *event = reinterpret_cast<CUevent>(new Event());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI event_record(CUevent event, CUstream) {
  if (!event) return CUDA_ERROR_INVALID_HANDLE;
  Event* e = reinterpret_cast<Event*>(event);
  e->at = std::chrono::steady_clock::now();
  e->recorded = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI event_synchronize(CUevent event) { return event ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }

CUresult CUDAAPI event_elapsed_time(float* ms, CUevent start, CUevent end) {
  if (!ms || !start || !end) return CUDA_ERROR_INVALID_VALUE;
  const Event* a = reinterpret_cast<const Event*>(start);
  const Event* b = reinterpret_cast<const Event*>(end);
  if (!a->recorded || !b->recorded) return CUDA_ERROR_INVALID_HANDLE;
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI event_destroy(CUevent event) {
  if (!event) return CUDA_ERROR_INVALID_HANDLE;
  delete reinterpret_cast<Event*>(event);
  return CUDA_SUCCESS;
}

// Every entry point by name, each checked against the toolkit's type for the
// version the backend asks for.
const std::unordered_map<std::string, void*>& entry_points() {
  static const std::unordered_map<std::string, void*> table = {
#define CANARY_EMULATED(symbol, type, fn) {symbol, reinterpret_cast<void*>(static_cast<type>(&fn))}
      CANARY_EMULATED("cuDriverGetVersion", PFN_cuDriverGetVersion_v2020, driver_get_version),
      CANARY_EMULATED("cuGetErrorName", PFN_cuGetErrorName_v6000, get_error_name),
      CANARY_EMULATED("cuGetErrorString", PFN_cuGetErrorString_v6000, get_error_string),
      CANARY_EMULATED("cuDeviceGetCount", PFN_cuDeviceGetCount_v2000, device_get_count),
      CANARY_EMULATED("cuDeviceGet", PFN_cuDeviceGet_v2000, device_get),
      CANARY_EMULATED("cuDeviceGetName", PFN_cuDeviceGetName_v2000, device_get_name),
      CANARY_EMULATED("cuDeviceGetAttribute", PFN_cuDeviceGetAttribute_v2000, device_get_attribute),
      CANARY_EMULATED("cuDeviceTotalMem", PFN_cuDeviceTotalMem_v3020, device_total_mem),
      CANARY_EMULATED("cuDevicePrimaryCtxRetain", PFN_cuDevicePrimaryCtxRetain_v7000, primary_ctx_retain),
      CANARY_EMULATED("cuDevicePrimaryCtxRelease", PFN_cuDevicePrimaryCtxRelease_v11000, primary_ctx_release),
      CANARY_EMULATED("cuCtxSetCurrent", PFN_cuCtxSetCurrent_v4000, ctx_set_current),
      CANARY_EMULATED("cuStreamCreate", PFN_cuStreamCreate_v2000, stream_create),
      CANARY_EMULATED("cuStreamDestroy", PFN_cuStreamDestroy_v4000, stream_destroy),
      CANARY_EMULATED("cuStreamSynchronize", PFN_cuStreamSynchronize_v2000, stream_synchronize),
      CANARY_EMULATED("cuModuleLoadDataEx", PFN_cuModuleLoadDataEx_v2010, module_load_data_ex),
      CANARY_EMULATED("cuModuleUnload", PFN_cuModuleUnload_v2000, module_unload),
      CANARY_EMULATED("cuModuleGetFunction", PFN_cuModuleGetFunction_v2000, module_get_function),
      CANARY_EMULATED("cuLaunchKernel", PFN_cuLaunchKernel_v4000, launch_kernel),
      CANARY_EMULATED("cuMemGetInfo", PFN_cuMemGetInfo_v3020, mem_get_info),
      CANARY_EMULATED("cuMemAlloc", PFN_cuMemAlloc_v3020, mem_alloc),
      CANARY_EMULATED("cuMemFree", PFN_cuMemFree_v3020, mem_free),
      CANARY_EMULATED("cuMemAllocHost", PFN_cuMemAllocHost_v3020, mem_alloc_host),
      CANARY_EMULATED("cuMemFreeHost", PFN_cuMemFreeHost_v2000, mem_free_host),
      CANARY_EMULATED("cuMemcpyHtoDAsync", PFN_cuMemcpyHtoDAsync_v3020, memcpy_htod_async),
      CANARY_EMULATED("cuMemcpyDtoHAsync", PFN_cuMemcpyDtoHAsync_v3020, memcpy_dtoh_async),
      CANARY_EMULATED("cuMemcpyDtoDAsync", PFN_cuMemcpyDtoDAsync_v3020, memcpy_dtod_async),
      CANARY_EMULATED("cuMemsetD32Async", PFN_cuMemsetD32Async_v3020, memset_d32_async),
      CANARY_EMULATED("cuEventCreate", PFN_cuEventCreate_v2000, event_create),
      CANARY_EMULATED("cuEventRecord", PFN_cuEventRecord_v2000, event_record),
      CANARY_EMULATED("cuEventSynchronize", PFN_cuEventSynchronize_v2000, event_synchronize),
      CANARY_EMULATED("cuEventElapsedTime", PFN_cuEventElapsedTime_v2000, event_elapsed_time),
      CANARY_EMULATED("cuEventDestroy", PFN_cuEventDestroy_v4000, event_destroy),
#undef CANARY_EMULATED
  };
  return table;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUresult CUDAAPI cuInit(unsigned int flags) {
  return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// Exported under its versioned name (cuda.h maps cuGetProcAddress to it).
__attribute__((visibility("default"))) CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int,
                                                                             cuuint64_t,
                                                                             CUdriverProcAddressQueryResult* found) {
  if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
  const auto it = entry_points().find(symbol);
  *pfn = it == entry_points().end() ? nullptr : it->second;
  if (found) *found = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

__attribute__((visibility("default"))) void canary_cuda_emulator_counters(std::uint64_t* launches,
                                                                          std::uint64_t* instructions,
                                                                          std::uint64_t* faults) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (launches) *launches = s.launches;
  if (instructions) *instructions = s.instructions;
  if (faults) *faults = s.faults;
}

__attribute__((visibility("default"))) const char* canary_cuda_emulator_last_fault() {
  static thread_local std::string copy;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  copy = s.last_fault;
  return copy.c_str();
}

}  // extern "C"

// CudaDriver bring-up: dlopen of libcuda.so.1, cuInit, entry points through
// cuGetProcAddress (pinned ABI version), device 0's primary context, one
// stream, device info, and CUresult names for error messages.
#include "jit/cuda/driver.h"

#include <dlfcn.h>

#include <cstring>
#include <utility>

#include "jit/cuda/driver_api.h"

namespace canary::jit::cuda {
namespace {

using GetProcAddressFn = PFN_cuGetProcAddress_v12000;
using InitFn = PFN_cuInit_v2000;

// Names of the results a backend is likely to see, for when the driver
// cannot name them itself (the toolkit's stub library, a failed cuInit).
const char* fallback_result_name(int result) {
  switch (result) {
    case 0: return "CUDA_SUCCESS";
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 4: return "CUDA_ERROR_DEINITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 36: return "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER";
    case 46: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    case 200: return "CUDA_ERROR_INVALID_IMAGE";
    case 201: return "CUDA_ERROR_INVALID_CONTEXT";
    case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 218: return "CUDA_ERROR_INVALID_PTX";
    case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 400: return "CUDA_ERROR_INVALID_HANDLE";
    case 500: return "CUDA_ERROR_NOT_FOUND";
    case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case 719: return "CUDA_ERROR_LAUNCH_FAILED";
    case 803: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case 999: return "CUDA_ERROR_UNKNOWN";
    default: return "CUDA error";
  }
}

// The result's name from the driver when it can tell, else from the table.
std::string result_name(const CudaApi* api, int result) {
  const char* name = nullptr;
  if (api != nullptr && api->get_error_name != nullptr &&
      api->get_error_name(static_cast<CUresult>(result), &name) == CUDA_SUCCESS && name != nullptr)
    return name;
  return fallback_result_name(result);
}

// The reason get() reports when the driver is absent.
std::string& absent_reason_storage() {
  static std::string reason;
  return reason;
}

}  // namespace

CudaStatus CudaStatus::failure(std::string why) {
  CudaStatus s;
  s.error_ = why.empty() ? std::string("CUDA failure") : std::move(why);
  return s;
}

double CudaDeviceInfo::peak_bandwidth_gbs() const {
  return 2.0 * memory_clock_khz * 1e3 * (memory_bus_bits / 8.0) / 1e9;
}

double CudaDeviceInfo::peak_fp32_gflops() const {
  const int lanes = compute_major == 8 && compute_minor == 0 ? 64 : 128;
  return 2.0 * lanes * sm_count * (clock_khz * 1e3) / 1e9;
}

CudaDriver::CudaDriver() : api_(std::make_unique<CudaApi>()) {}

CudaDriver::~CudaDriver() {
  if (stream_ != nullptr) api_->stream_destroy(static_cast<CUstream>(stream_));
  if (context_ != nullptr) api_->primary_ctx_release(device_);
  if (library_ != nullptr) dlclose(library_);
}

const CudaDriver* CudaDriver::get() {
  // Loaded once and never unloaded: tearing the driver down at exit races
  // with the driver's own shutdown.
  static const CudaDriver* const driver = [] {
    std::unique_ptr<CudaDriver> d = load("libcuda.so.1", &absent_reason_storage());
    return d.release();
  }();
  return driver;
}

const std::string& CudaDriver::absent_reason() {
  get();
  return absent_reason_storage();
}

std::string CudaDriver::probe(const char* library) {
  std::string reason;
  std::unique_ptr<CudaDriver> d = load(library, &reason);
  return d ? std::string() : reason;
}

std::unique_ptr<CudaDriver> CudaDriver::load(const char* library, std::string* reason) {
  std::unique_ptr<CudaDriver> d(new CudaDriver());
  *reason = d->bring_up(library);
  if (!reason->empty()) return nullptr;
  return d;
}

// Every step of bring-up in order; returns why it stopped, or "".
std::string CudaDriver::bring_up(const char* library) {
  library_ = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    const char* why = dlerror();
    return why != nullptr ? std::string(why) : std::string(library) + ": cannot be opened";
  }
  void* get_proc = dlsym(library_, "cuGetProcAddress_v2");
  if (get_proc == nullptr) return std::string(library) + ": no cuGetProcAddress_v2 (driver older than CUDA 12.0)";
  auto init = reinterpret_cast<InitFn>(dlsym(library_, "cuInit"));
  if (init == nullptr) return std::string(library) + ": no cuInit";
  const CUresult init_result = init(0);
  if (init_result != CUDA_SUCCESS) {
    resolve_entry_points(get_proc);  // best effort, only to name the result
    return "cuInit failed: " + describe(init_result);
  }
  if (std::string why = resolve_entry_points(get_proc); !why.empty()) return why;
  int count = 0;
  if (CudaStatus s = check(api_->device_get_count(&count), "cuDeviceGetCount"); !s.ok()) return s.error();
  if (count <= 0) return "cuInit succeeded but the driver reports no CUDA device";
  CUdevice device = 0;
  if (CudaStatus s = check(api_->device_get(&device, 0), "cuDeviceGet"); !s.ok()) return s.error();
  device_ = device;
  CUcontext ctx = nullptr;
  if (CudaStatus s = check(api_->primary_ctx_retain(&ctx, device), "cuDevicePrimaryCtxRetain"); !s.ok())
    return s.error();
  context_ = ctx;
  if (CudaStatus s = make_current(); !s.ok()) return s.error();
  CUstream stream = nullptr;
  if (CudaStatus s = check(api_->stream_create(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate"); !s.ok())
    return s.error();
  stream_ = stream;
  return read_device_info();
}

// Fills api_ through cuGetProcAddress; returns the first symbol missing, or "".
std::string CudaDriver::resolve_entry_points(void* get_proc_address) {
  auto get_proc = reinterpret_cast<GetProcAddressFn>(get_proc_address);
  std::string missing;
  auto resolve = [&](const char* symbol, void** slot) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    const CUresult r = get_proc(symbol, slot, kDriverAbiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (r != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || *slot == nullptr) {
      *slot = nullptr;
      if (missing.empty()) missing = std::string("cuGetProcAddress(") + symbol + ", 12000) found no entry point";
    }
  };
#define CANARY_CUDA_RESOLVE(member, symbol, type) resolve(symbol, reinterpret_cast<void**>(&api_->member));
  CANARY_CUDA_ENTRY_POINTS(CANARY_CUDA_RESOLVE)
#undef CANARY_CUDA_RESOLVE
  return missing;
}

// Reads name, compute capability, SM count, memory and driver version.
std::string CudaDriver::read_device_info() {
  char name[256] = {};
  if (CudaStatus s = check(api_->device_get_name(name, sizeof name - 1, device_), "cuDeviceGetName"); !s.ok())
    return s.error();
  info_.name = name;
  struct Attribute {
    CUdevice_attribute attribute;
    int* field;
  };
  const Attribute attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info_.compute_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info_.compute_minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info_.sm_count},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &info_.memory_clock_khz},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &info_.memory_bus_bits},
  };
  for (const Attribute& a : attributes)
    if (CudaStatus s = check(api_->device_get_attribute(a.field, a.attribute, device_), "cuDeviceGetAttribute");
        !s.ok())
      return s.error();
  // Only the GPU check's peak figure reads the clock, so a driver that
  // no longer reports it does not stop bring-up.
  if (api_->device_get_attribute(&info_.clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device_) != CUDA_SUCCESS)
    info_.clock_khz = 0;
  std::size_t total = 0;
  if (CudaStatus s = check(api_->device_total_mem(&total, device_), "cuDeviceTotalMem"); !s.ok()) return s.error();
  info_.total_memory = total;
  if (CudaStatus s = check(api_->driver_get_version(&info_.driver_version), "cuDriverGetVersion"); !s.ok())
    return s.error();
  return {};
}

std::string CudaDriver::ptx_target() const { return info_.compute_major >= 9 ? "sm_90" : "sm_80"; }

CudaStatus CudaDriver::make_current() const {
  // The context bound on this thread; a thread binds once.
  thread_local void* bound = nullptr;
  if (bound == context_) return {};
  CudaStatus s = check(api_->ctx_set_current(static_cast<CUcontext>(context_)), "cuCtxSetCurrent");
  if (s.ok()) bound = context_;
  return s;
}

CudaStatus CudaDriver::check(int result, const char* what) const {
  if (result == CUDA_SUCCESS) return {};
  return CudaStatus::failure(std::string(what) + " failed: " + describe(result));
}

std::string CudaDriver::describe(int result) const {
  return result_name(api_.get(), result) + " (" + std::to_string(result) + ")";
}

}  // namespace canary::jit::cuda

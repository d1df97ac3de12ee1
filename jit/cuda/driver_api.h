// The CUDA Driver API entry points the backend calls, as one table resolved
// at run time with cuGetProcAddress pinned to version 12000. Internal to
// jit/cuda/*.cpp: it includes the toolkit's cuda.h, which only this library
// sees (public headers of the backend stay free of CUDA types).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

namespace canary::jit::cuda {

// The ABI version every entry point below is requested at. Each PFN type is
// the one cuGetProcAddress returns for this version with the default (not
// per-thread) stream semantics; never CUDA_VERSION (13000 would hand back
// cuCtxSynchronize_v2, whose signature differs).
inline constexpr int kDriverAbiVersion = 12000;

// X(member, "symbol", PFN type). Symbols are spelled out so cuda.h's
// versioning macros (cuMemAlloc -> cuMemAlloc_v2) never touch them.
#define CANARY_CUDA_ENTRY_POINTS(X)                                         \
  X(driver_get_version, "cuDriverGetVersion", PFN_cuDriverGetVersion_v2020) \
  X(get_error_name, "cuGetErrorName", PFN_cuGetErrorName_v6000)             \
  X(get_error_string, "cuGetErrorString", PFN_cuGetErrorString_v6000)       \
  X(device_get_count, "cuDeviceGetCount", PFN_cuDeviceGetCount_v2000)       \
  X(device_get, "cuDeviceGet", PFN_cuDeviceGet_v2000)                       \
  X(device_get_name, "cuDeviceGetName", PFN_cuDeviceGetName_v2000)          \
  X(device_get_attribute, "cuDeviceGetAttribute", PFN_cuDeviceGetAttribute_v2000) \
  X(device_total_mem, "cuDeviceTotalMem", PFN_cuDeviceTotalMem_v3020)       \
  X(primary_ctx_retain, "cuDevicePrimaryCtxRetain", PFN_cuDevicePrimaryCtxRetain_v7000) \
  X(primary_ctx_release, "cuDevicePrimaryCtxRelease", PFN_cuDevicePrimaryCtxRelease_v11000) \
  X(ctx_set_current, "cuCtxSetCurrent", PFN_cuCtxSetCurrent_v4000)          \
  X(stream_create, "cuStreamCreate", PFN_cuStreamCreate_v2000)              \
  X(stream_destroy, "cuStreamDestroy", PFN_cuStreamDestroy_v4000)           \
  X(stream_synchronize, "cuStreamSynchronize", PFN_cuStreamSynchronize_v2000) \
  X(module_load_data_ex, "cuModuleLoadDataEx", PFN_cuModuleLoadDataEx_v2010) \
  X(module_unload, "cuModuleUnload", PFN_cuModuleUnload_v2000)              \
  X(module_get_function, "cuModuleGetFunction", PFN_cuModuleGetFunction_v2000) \
  X(launch_kernel, "cuLaunchKernel", PFN_cuLaunchKernel_v4000)              \
  X(mem_get_info, "cuMemGetInfo", PFN_cuMemGetInfo_v3020)                   \
  X(mem_alloc, "cuMemAlloc", PFN_cuMemAlloc_v3020)                          \
  X(mem_free, "cuMemFree", PFN_cuMemFree_v3020)                             \
  X(mem_alloc_host, "cuMemAllocHost", PFN_cuMemAllocHost_v3020)             \
  X(mem_free_host, "cuMemFreeHost", PFN_cuMemFreeHost_v2000)                \
  X(memcpy_htod_async, "cuMemcpyHtoDAsync", PFN_cuMemcpyHtoDAsync_v3020)    \
  X(memcpy_dtoh_async, "cuMemcpyDtoHAsync", PFN_cuMemcpyDtoHAsync_v3020)    \
  X(memcpy_dtod_async, "cuMemcpyDtoDAsync", PFN_cuMemcpyDtoDAsync_v3020)    \
  X(memset_d32_async, "cuMemsetD32Async", PFN_cuMemsetD32Async_v3020)       \
  X(event_create, "cuEventCreate", PFN_cuEventCreate_v2000)                 \
  X(event_record, "cuEventRecord", PFN_cuEventRecord_v2000)                 \
  X(event_synchronize, "cuEventSynchronize", PFN_cuEventSynchronize_v2000)  \
  X(event_elapsed_time, "cuEventElapsedTime", PFN_cuEventElapsedTime_v2000) \
  X(event_destroy, "cuEventDestroy", PFN_cuEventDestroy_v4000)

// The resolved entry points (all non-null once CudaDriver::get() succeeded).
struct CudaApi {
#define CANARY_CUDA_API_MEMBER(member, symbol, type) type member = nullptr;
  CANARY_CUDA_ENTRY_POINTS(CANARY_CUDA_API_MEMBER)
#undef CANARY_CUDA_API_MEMBER
};

}  // namespace canary::jit::cuda

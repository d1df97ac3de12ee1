// CudaDriver's memory and transfer methods: device and pinned allocations,
// asynchronous copies and fills on the backend's stream, and the stream wait.
#include "jit/cuda/driver.h"
#include "jit/cuda/driver_api.h"

namespace canary::jit::cuda {

CudaStatus CudaDriver::allocate(std::size_t bytes, DevicePtr* out) const {
  *out = 0;
  if (CudaStatus s = make_current(); !s.ok()) return s;
  CUdeviceptr ptr = 0;
  CudaStatus s = check(api_->mem_alloc(&ptr, bytes), "cuMemAlloc");
  if (s.ok()) *out = ptr;
  return s;
}

CudaStatus CudaDriver::release(DevicePtr ptr) const {
  if (ptr == 0) return {};
  if (CudaStatus s = make_current(); !s.ok()) return s;
  return check(api_->mem_free(ptr), "cuMemFree");
}

CudaStatus CudaDriver::allocate_pinned(std::size_t bytes, void** out) const {
  *out = nullptr;
  if (CudaStatus s = make_current(); !s.ok()) return s;
  return check(api_->mem_alloc_host(out, bytes), "cuMemAllocHost");
}

CudaStatus CudaDriver::release_pinned(void* ptr) const {
  if (ptr == nullptr) return {};
  if (CudaStatus s = make_current(); !s.ok()) return s;
  return check(api_->mem_free_host(ptr), "cuMemFreeHost");
}

CudaStatus CudaDriver::copy_to_device(DevicePtr dst, const void* src, std::size_t bytes) const {
  if (bytes == 0) return {};
  if (CudaStatus s = make_current(); !s.ok()) return s;
  return check(api_->memcpy_htod_async(dst, src, bytes, static_cast<CUstream>(stream_)), "cuMemcpyHtoDAsync");
}

CudaStatus CudaDriver::copy_to_host(void* dst, DevicePtr src, std::size_t bytes) const {
  if (bytes == 0) return {};
  if (CudaStatus s = make_current(); !s.ok()) return s;
  return check(api_->memcpy_dtoh_async(dst, src, bytes, static_cast<CUstream>(stream_)), "cuMemcpyDtoHAsync");
}

CudaStatus CudaDriver::copy_on_device(DevicePtr dst, DevicePtr src, std::size_t bytes) const {
  if (bytes == 0) return {};
  if (CudaStatus s = make_current(); !s.ok()) return s;
  return check(api_->memcpy_dtod_async(dst, src, bytes, static_cast<CUstream>(stream_)), "cuMemcpyDtoDAsync");
}

CudaStatus CudaDriver::fill_u32(DevicePtr dst, std::uint32_t value, std::size_t count) const {
  if (count == 0) return {};
  if (CudaStatus s = make_current(); !s.ok()) return s;
  return check(api_->memset_d32_async(dst, value, count, static_cast<CUstream>(stream_)), "cuMemsetD32Async");
}

CudaStatus CudaDriver::synchronize() const {
  if (CudaStatus s = make_current(); !s.ok()) return s;
  return check(api_->stream_synchronize(static_cast<CUstream>(stream_)), "cuStreamSynchronize");
}

CudaStatus CudaDriver::memory_info(std::size_t* free_bytes, std::size_t* total_bytes) const {
  if (CudaStatus s = make_current(); !s.ok()) return s;
  return check(api_->mem_get_info(free_bytes, total_bytes), "cuMemGetInfo");
}

}  // namespace canary::jit::cuda

// CudaModule loading with the driver JIT's logs captured, and kernel launch.
#include "jit/cuda/module.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "jit/cuda/driver_api.h"
#include "jit/cuda/fault_injection.h"

namespace canary::jit::cuda {
namespace {

constexpr std::size_t kLogBytes = 8192;

// The text a JIT log buffer holds, without trailing newlines.
std::string log_text(const std::vector<char>& buffer, std::uintptr_t size) {
  std::string s(buffer.data(), std::min<std::size_t>(size, buffer.size()));
  s.resize(std::strlen(s.c_str()));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

CudaStatus CudaModule::load(const CudaDriver& driver, const std::string& ptx, const char* entry,
                            std::unique_ptr<CudaModule>* out) {
  out->reset();
  if (injected_cuda_fault() == CudaFault::Load)
    return CudaStatus::failure("cuModuleLoadDataEx failed: injected fault (CANARY_CUDA_FAULT=load)");
  if (CudaStatus s = driver.make_current(); !s.ok()) return s;
  std::unique_ptr<CudaModule> mod(new CudaModule(driver));
  std::vector<char> info(kLogBytes, '\0'), error(kLogBytes, '\0');
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  void* values[] = {info.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(kLogBytes)), error.data(),
                    reinterpret_cast<void*>(static_cast<std::uintptr_t>(kLogBytes)),
                    reinterpret_cast<void*>(std::uintptr_t{1})};
  CUmodule handle = nullptr;
  const auto start = std::chrono::steady_clock::now();
  const CUresult r = driver.api().module_load_data_ex(&handle, ptx.c_str(), 5, options, values);
  mod->load_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  mod->info_log_ = log_text(info, reinterpret_cast<std::uintptr_t>(values[1]));
  if (r != CUDA_SUCCESS) {
    std::string why = driver.check(r, "cuModuleLoadDataEx").error();
    const std::string log = log_text(error, reinterpret_cast<std::uintptr_t>(values[3]));
    return CudaStatus::failure(why + (log.empty() ? std::string() : "; JIT log: " + log));
  }
  mod->module_ = handle;
  CUfunction function = nullptr;
  if (CudaStatus s = driver.check(driver.api().module_get_function(&function, handle, entry), "cuModuleGetFunction");
      !s.ok())
    return CudaStatus::failure(s.error() + " (entry " + entry + ")");
  mod->function_ = function;
  *out = std::move(mod);
  return {};
}

CudaModule::~CudaModule() {
  if (module_ != nullptr && driver_.make_current().ok()) driver_.api().module_unload(static_cast<CUmodule>(module_));
}

CudaStatus launch_kernel(const CudaDriver& driver, void* function, LaunchShape shape, void** params) {
  if (injected_cuda_fault() == CudaFault::Launch)
    return CudaStatus::failure("cuLaunchKernel failed: injected fault (CANARY_CUDA_FAULT=launch)");
  if (CudaStatus s = driver.make_current(); !s.ok()) return s;
  const CUresult r = driver.api().launch_kernel(static_cast<CUfunction>(function), shape.grid, 1, 1, shape.block, 1,
                                                1, 0, static_cast<CUstream>(driver.stream()), params, nullptr);
  return driver.check(r, "cuLaunchKernel");
}

}  // namespace canary::jit::cuda

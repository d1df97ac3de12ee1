// CudaModule: one PTX module loaded through cuModuleLoadDataEx (the driver
// JIT-compiles it for the device) and its kernel entry; plus the kernel
// launch. The driver's JIT info and error logs are kept: a module that does
// not load reports the log in its error, so the caller's event can show why.
#pragma once

#include <memory>
#include <string>

#include "jit/cuda/driver.h"

namespace canary::jit::cuda {

class CudaModule {
 public:
  // Loads `ptx` and looks up `entry`. Fails (never throws) with the driver's
  // error log appended; CANARY_CUDA_FAULT=load makes it fail on purpose.
  static CudaStatus load(const CudaDriver& driver, const std::string& ptx, const char* entry,
                         std::unique_ptr<CudaModule>* out);
  ~CudaModule();
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  // The CUfunction of the entry.
  void* function() const { return function_; }
  // The driver JIT's info log (registers, spills); may be empty.
  const std::string& info_log() const { return info_log_; }
  // Wall time cuModuleLoadDataEx took (milliseconds).
  double load_ms() const { return load_ms_; }

 private:
  explicit CudaModule(const CudaDriver& driver) : driver_(driver) {}

  const CudaDriver& driver_;
  void* module_ = nullptr;
  void* function_ = nullptr;
  std::string info_log_;
  double load_ms_ = 0.0;
};

// A 1-D launch configuration.
struct LaunchShape {
  unsigned grid = 1;
  unsigned block = 256;
};

// cuLaunchKernel on the driver's stream (asynchronous); `params` as the
// driver expects: one pointer per kernel parameter. CANARY_CUDA_FAULT=launch
// makes it fail on purpose.
CudaStatus launch_kernel(const CudaDriver& driver, void* function, LaunchShape shape, void** params);

}  // namespace canary::jit::cuda

// NvmlEnergy: dlopen, nvmlInit_v2, GPU 0's handle and name, and a first read
// of the energy counter (older boards lack it: NVML_ERROR_NOT_SUPPORTED).
// The few entry points are declared here from NVML's documented C ABI
// (nvmlReturn_t is an int, 0 on success; nvmlDevice_t an opaque pointer),
// since the toolkit ships no nvml.h on every machine.
#include "jit/cost/nvml_energy.h"

#include <dlfcn.h>

namespace canary::jit::cost {

namespace {

using InitFn = int (*)();
using HandleFn = int (*)(unsigned index, void** device);
using NameFn = int (*)(void* device, char* name, unsigned length);
using ErrorStringFn = const char* (*)(int result);

// "NVML_ERROR_NOT_SUPPORTED"-style text where nvmlErrorString resolved, else the code.
std::string describe(ErrorStringFn error_string, int result) {
  const char* text = error_string != nullptr ? error_string(result) : nullptr;
  return (text != nullptr ? std::string(text) : std::string("error")) + " (" + std::to_string(result) + ")";
}

}  // namespace

NvmlEnergy::NvmlEnergy(const std::string& library) {
  library_ = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    const char* why = ::dlerror();
    description_ = why != nullptr ? std::string(why) : library + ": cannot be loaded";
    return;
  }
  const auto init = reinterpret_cast<InitFn>(::dlsym(library_, "nvmlInit_v2"));
  const auto handle = reinterpret_cast<HandleFn>(::dlsym(library_, "nvmlDeviceGetHandleByIndex_v2"));
  const auto name = reinterpret_cast<NameFn>(::dlsym(library_, "nvmlDeviceGetName"));
  const auto error_string = reinterpret_cast<ErrorStringFn>(::dlsym(library_, "nvmlErrorString"));
  energy_ = reinterpret_cast<EnergyFn>(::dlsym(library_, "nvmlDeviceGetTotalEnergyConsumption"));
  shutdown_ = reinterpret_cast<int (*)()>(::dlsym(library_, "nvmlShutdown"));
  if (init == nullptr || handle == nullptr || energy_ == nullptr || shutdown_ == nullptr) {
    description_ = library + " lacks nvmlInit_v2, nvmlDeviceGetHandleByIndex_v2, nvmlShutdown or "
                             "nvmlDeviceGetTotalEnergyConsumption";
    shutdown_ = nullptr;
    return;
  }
  if (const int r = init(); r != 0) {
    description_ = "nvmlInit_v2 failed: " + describe(error_string, r);
    shutdown_ = nullptr;
    return;
  }
  void* device = nullptr;
  if (const int r = handle(0, &device); r != 0) {
    description_ = "nvmlDeviceGetHandleByIndex_v2(0) failed: " + describe(error_string, r);
    return;
  }
  unsigned long long mj = 0;
  if (const int r = energy_(device, &mj); r != 0) {
    description_ = "nvmlDeviceGetTotalEnergyConsumption failed: " + describe(error_string, r);
    return;
  }
  char text[96] = {};
  const bool named = name != nullptr && name(device, text, sizeof text) == 0;
  description_ = "NVML energy counter of GPU 0" + (named ? " (" + std::string(text) + ")" : std::string());
  device_ = device;
}

NvmlEnergy::~NvmlEnergy() {
  if (shutdown_ != nullptr) shutdown_();
  if (library_ != nullptr) ::dlclose(library_);
}

std::optional<std::uint64_t> NvmlEnergy::read_mj() const {
  if (device_ == nullptr) return std::nullopt;
  unsigned long long mj = 0;
  if (energy_(device_, &mj) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(mj);
}

}  // namespace canary::jit::cost

// GPU energy from NVML: the board's total energy counter of GPU 0
// (nvmlDeviceGetTotalEnergyConsumption, millijoules since the driver loaded;
// Volta and later), read through libnvidia-ml.so.1, which comes with the
// driver and is loaded at run time (never linked), so binaries start on
// machines without it. The counter advances every 20-100 ms, so the cost
// model only counts it over a window of many calls (trial.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace canary::jit::cost {

class NvmlEnergy {
 public:
  // Loads `library` (normally libnvidia-ml.so.1) and opens GPU 0; never
  // throws. Not readable when the library, the device or the counter is
  // missing: description() says which.
  explicit NvmlEnergy(const std::string& library = "libnvidia-ml.so.1");
  ~NvmlEnergy();
  NvmlEnergy(const NvmlEnergy&) = delete;
  NvmlEnergy& operator=(const NvmlEnergy&) = delete;

  bool readable() const { return device_ != nullptr; }
  // "NVML energy counter of GPU 0 (NVIDIA H200)", or why not readable.
  const std::string& description() const { return description_; }
  // The counter in millijoules; nullopt when unreadable or the read failed.
  std::optional<std::uint64_t> read_mj() const;

 private:
  using EnergyFn = int (*)(void* device, unsigned long long* energy_mj);
  void* library_ = nullptr;
  void* device_ = nullptr;
  EnergyFn energy_ = nullptr;
  int (*shutdown_)() = nullptr;
  std::string description_;
};

}  // namespace canary::jit::cost

// Runs a parsed PTX kernel (ptx_program.h) on the CPU: every block of a 1-D
// grid in turn, every thread of a block as its own interpreter, scheduled
// so that bar.sync waits for the whole block and shfl.sync for the whole
// warp. It is strict where hardware behaviour is undefined or fragile: a
// global access outside every allocation the caller knows of, a misaligned
// access, a barrier some threads exited before, a shuffle whose warp is
// not whole or not converged, and a kernel that never ends are launch
// errors with the instruction's line, not silent results. Registers and
// shared memory start as all-ones bits (NaN, huge indices), and the threads
// of a block run to their next barrier in ascending and descending order in
// turn, so reads of unwritten state and missing barriers change results.
// The allocations are the driver's (the backend's arena hands out
// power-of-two blocks of them), so an access past a tensor but inside its
// block's slack is not caught.
//
// Arithmetic is IEEE f32 on the host (compile without FMA contraction);
// NaN results are the canonical NaN as on NVIDIA GPUs. The .approx
// instructions (ex2, lg2, rcp, div.full) are computed exactly rounded: the
// emulator checks the kernels' logic, indexing and synchronisation, not the
// hardware's approximation error (tests/cuda/test_ptx_math_accuracy.cpp
// bounds that with the documented figures).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/cuda/emulator/ptx_program.h"

namespace canary::ptx_emulator {

// Whether [address, address + bytes) lies inside one live device allocation.
using GlobalRangeCheck = std::function<bool(std::uint64_t address, std::uint64_t bytes)>;

struct Launch {
  std::uint32_t grid = 1;   // blocks (x only)
  std::uint32_t block = 1;  // threads per block (x only)
  std::vector<std::uint8_t> params;  // the parameter block, laid out as Program::params
};

enum class Fault : std::uint8_t { None, IllegalAddress, MisalignedAddress, LaunchFailed, Timeout };

struct Outcome {
  Fault fault = Fault::None;
  std::string message;  // "line 57: ld.global of 4 bytes at 0x... outside every allocation (block 3, thread 17)"
  std::uint64_t instructions = 0;
  bool ok() const { return fault == Fault::None; }
};

// Executes the kernel; instruction_budget bounds the whole launch.
Outcome run_kernel(const Program& program, const Launch& launch, const GlobalRangeCheck& global_ok,
                   std::uint64_t instruction_budget = std::uint64_t{1} << 34);

}  // namespace canary::ptx_emulator

// Turns a Plan into a CompiledTrace with the x86-64 backend: the entry guards
// as one emitted function, each fused group as one kernel.
#pragma once

#include <memory>
#include <string>

#include "jit/compiled_trace.h"
#include "jit/fused_device.h"
#include "jit/x86/code_cache.h"
#include "jit/x86/isa.h"

namespace canary::jit {

// Returns nullptr with `error` set when any piece fails to compile. A plan
// with groups placed on `device` (device_placement.h) keeps the device, and
// every such group still gets its x86 kernel for when the device fails.
std::shared_ptr<const CompiledTrace> compile_plan(std::uint32_t id, std::shared_ptr<const vm::Program> program,
                                                  Plan plan, x86::Isa isa, x86::CodeCache& cache,
                                                  std::string& error,
                                                  std::shared_ptr<const FusedDevice> device = nullptr);

}  // namespace canary::jit

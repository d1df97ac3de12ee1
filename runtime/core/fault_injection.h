// Fault injection: one process-wide registry of operations made to fail on
// purpose (Options::fault_injection, CANARY_FAULT), so tests and operators can
// exercise every fallback and error path on a healthy machine. Each layer asks
// take_fault() at its own point; nothing configured costs one relaxed load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace canary {

// The operations that can be made to fail, named in a spec as
// compile, code-cache, onednn, kernel, compile-thread and alloc.
enum class FaultPoint : std::uint8_t {
  Compile,          // trace compilation (the JIT falls back to the interpreter)
  CodeCache,        // mapping executable memory for emitted code
  OnednnPrimitive,  // creating a oneDNN primitive (the reference kernel runs)
  KernelExecution,  // a kernel call of compiled code (the interpreter re-runs the step)
  CompileThread,    // starting the background compile thread (compiles run on the caller)
  HostAllocation,   // a tensor allocation inside a model call (Error(Resource))
};

inline constexpr std::size_t kFaultPointCount = 6;

// Replaces the configuration with `spec`: comma-separated "point[:count]"
// or "point@n" items, e.g. "compile,code-cache:3,alloc:2,kernel@3". A count
// makes the next `count` operations at that point fail, no count makes every
// one fail, "@n" makes only the n-th from now fail, and an empty spec turns
// all faults off. Error(Input) naming the bad item leaves the
// previous configuration in place.
void configure_faults(std::string_view spec);

// True when this operation at point p must fail (and uses up one count).
bool take_fault(FaultPoint p);

// How many faults point p has injected since the last configure_faults.
std::uint64_t faults_taken(FaultPoint p);

// The word a spec uses for p ("compile", "code-cache", ...).
std::string_view fault_point_name(FaultPoint p);

}  // namespace canary

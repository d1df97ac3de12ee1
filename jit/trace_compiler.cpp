// Trace compilation with the x86-64 backend; times itself for the events.
#include "jit/trace_compiler.h"

#include <algorithm>
#include <chrono>

#include "jit/x86/elementwise_codegen.h"
#include "jit/x86/guard_codegen.h"
#include "jit/x86/row_codegen.h"

namespace canary::jit {

std::shared_ptr<const CompiledTrace> compile_plan(std::uint32_t id, std::shared_ptr<const vm::Program> program,
                                                  Plan plan, x86::Isa isa, x86::CodeCache& cache,
                                                  std::string& error, std::shared_ptr<const FusedDevice> device) {
  const auto t0 = std::chrono::steady_clock::now();
  CompiledTrace::Code code;
  const auto placed = [](const auto& step) { return step.on_device; };
  if (!device && (std::any_of(plan.fused.begin(), plan.fused.end(), placed) ||
                  std::any_of(plan.rows.begin(), plan.rows.end(), placed) ||
                  std::any_of(plan.steps.begin(), plan.steps.end(), placed))) {
    error = "a step is placed on a device but no device was given";
    return nullptr;
  }
  code.device = std::move(device);
  x86::CompiledGuards guards = x86::compile_guards(plan.guards, cache, error);
  if (!guards.fn) {
    error = "guards: " + error;
    return nullptr;
  }
  code.guards = guards.fn;
  code.code_bytes += guards.code->code_bytes();
  code.keep_alive.push_back(guards.code);
  for (std::size_t i = 0; i < plan.fused.size(); ++i) {
    x86::CompiledElementwise k = x86::compile_elementwise(plan.fused[i].spec, isa, cache, error);
    if (!k.fn) {
      error = "fused group " + std::to_string(i) + " (" + plan.fused[i].spec.key() + "): " + error;
      return nullptr;
    }
    code.fused.push_back(k.fn);
    code.code_bytes += k.code_bytes;
    code.keep_alive.push_back(k.code);
    FusedFn per_element = nullptr;
    if (plan.fused[i].per_element_spec) {
      x86::CompiledElementwise e = x86::compile_elementwise(*plan.fused[i].per_element_spec, isa, cache, error);
      if (!e.fn) {
        error = "fused group " + std::to_string(i) + ", per-element kernel: " + error;
        return nullptr;
      }
      per_element = e.fn;
      code.code_bytes += e.code_bytes;
      code.keep_alive.push_back(e.code);
    }
    code.fused_per_element.push_back(per_element);
  }
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    x86::CompiledRow k = x86::compile_row(plan.rows[i].spec, isa, cache, error);
    if (!k.fn) {
      error = "row kernel " + std::to_string(i) + " (" + plan.rows[i].spec.key() + "): " + error;
      return nullptr;
    }
    code.rows.push_back(k.fn);
    code.code_bytes += k.code_bytes;
    code.keep_alive.push_back(k.code);
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return std::make_shared<const CompiledTrace>(id, std::move(program), std::move(plan), std::move(code), ms);
}

}  // namespace canary::jit

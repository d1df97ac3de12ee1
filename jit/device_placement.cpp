// place_fused_groups: the device decides per spec (FusedDevice::unsupported,
// unsupported_row) and for products (unsupported_matmul); then runs of
// consecutive placed groups and row kernels become device chains, with each
// input wired to the chain step that produced it.
#include "jit/device_placement.h"

#include <algorithm>
#include <unordered_map>

#include "jit/device_matmul.h"

namespace canary::jit {

namespace {

// A placed step the chain can run without ever exiting between its steps:
// no holds or replays (a sunk group's bookkeeping), no hoisting, no held inputs.
bool chainable(const Plan& plan, const Step& step) {
  if (step.hoisted || !step.holds.empty() || !step.replay.empty()) return false;
  if (step.kind == StepKind::Row) return plan.rows[step.fused].on_device;
  if (step.kind != StepKind::Fused) return false;
  const FusedStep& f = plan.fused[step.fused];
  const bool held = std::any_of(f.held_inputs.begin(), f.held_inputs.end(), [](std::int32_t h) { return h >= 0; });
  return f.on_device && !held;
}

bool unparks_at(const Plan& plan, std::uint32_t index) {
  return std::any_of(plan.unparks.begin(), plan.unparks.end(), [&](const Plan::Unpark& u) { return u.step == index; });
}

// The registers a chained step reads, in ChainInput order, and writes.
std::vector<vm::RegId> step_reads(const Plan& plan, const Step& step) {
  if (step.kind == StepKind::Fused) return plan.fused[step.fused].inputs;
  const RowStep& r = plan.rows[step.fused];
  std::vector<vm::RegId> regs = r.inputs;
  if (r.spec.has_scale) regs.push_back(r.scale);
  if (r.spec.has_bias) regs.push_back(r.bias);
  return regs;
}

std::vector<vm::RegId> step_writes(const Plan& plan, const Step& step) {
  if (step.kind == StepKind::Fused) return plan.fused[step.fused].outputs;
  return {plan.rows[step.fused].output};
}

// Wires steps [first, first + count) into a chain: each input to the
// latest earlier step that wrote its register; each output to the host
// when its register is read after the chain and no later step rewrites it.
DeviceChain make_chain(const Plan& plan, std::uint32_t first, std::uint32_t count) {
  DeviceChain chain;
  chain.first = first;
  chain.count = count;
  std::unordered_map<std::uint32_t, ChainInput> writer;  // register -> its latest producer in the chain
  std::vector<std::vector<vm::RegId>> writes;
  for (std::uint32_t k = 0; k < count; ++k) {
    const Step& step = plan.steps[first + k];
    std::vector<ChainInput>& sources = chain.sources.emplace_back();
    for (vm::RegId r : step_reads(plan, step)) {
      const auto it = writer.find(r.index);
      sources.push_back(it == writer.end() ? ChainInput{} : it->second);
    }
    writes.push_back(step_writes(plan, step));
    for (std::uint32_t o = 0; o < writes.back().size(); ++o)
      writer[writes.back()[o].index] = ChainInput{static_cast<std::int32_t>(k), o};
  }
  // Liveness after the last step; a plan built without it copies everything back.
  const std::vector<std::uint32_t>& live = plan.steps[first + count - 1].live_after;
  for (std::uint32_t k = 0; k < count; ++k) {
    std::uint32_t mask = 0;
    for (std::uint32_t o = 0; o < writes[k].size(); ++o) {
      const ChainInput& last_writer = writer.at(writes[k][o].index);
      const bool final_value = last_writer.step == static_cast<std::int32_t>(k) && last_writer.output == o;
      const bool read_after = live.empty() || std::binary_search(live.begin(), live.end(), writes[k][o].index);
      if (final_value && read_after) mask |= 1u << o;
    }
    chain.host_outputs.push_back(mask);
  }
  return chain;
}

void form_device_chains(Plan& plan) {
  plan.device_chains.clear();
  const auto n = static_cast<std::uint32_t>(plan.steps.size());
  for (std::uint32_t first = 0; first < n;) {
    std::uint32_t end = first;
    while (end < n && chainable(plan, plan.steps[end]) && (end == first || !unparks_at(plan, end))) ++end;
    if (end - first >= 2) plan.device_chains.push_back(make_chain(plan, first, end - first));
    first = std::max(end, first + 1);
  }
}

}  // namespace

std::size_t place_fused_groups(Plan& plan, const vm::Program& program, const FusedDevice& device) {
  std::size_t placed = 0;
  for (Step& step : plan.steps) {
    step.on_device = false;
    step.device_refusal.clear();
    if (step.kind != StepKind::Kernel && step.kind != StepKind::Contraction) continue;
    if (!device_matmul_info(program.at(step.pc))) continue;
    step.device_refusal = plan.bf16_matmul         ? "a bf16 variant's products stay on the CPU"
                          : plan.wide_accumulation ? "an f64-accumulation variant's products stay on the CPU"
                                                   : device.unsupported_matmul();
    step.on_device = step.device_refusal.empty();
    if (step.on_device) ++placed;
  }
  for (FusedStep& f : plan.fused) {
    f.device_refusal = device.unsupported(f.spec);
    f.on_device = f.device_refusal.empty();
    if (f.on_device) ++placed;
  }
  for (RowStep& r : plan.rows) {
    r.device_refusal = device.unsupported_row(r.spec);
    r.on_device = r.device_refusal.empty();
    if (r.on_device) ++placed;
  }
  plan.device = placed > 0 ? device.name() : std::string();
  form_device_chains(plan);
  return placed;
}

}  // namespace canary::jit

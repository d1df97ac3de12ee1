// Engine::report: the JIT's state as a public JitReport (for `canary inspect`).
#include <chrono>

#include "jit/engine.h"
#include "jit/engine_anchor.h"
#include "jit/plan_contraction.h"

namespace canary::jit {

namespace {

std::string node_name(const vm::Program& program, vm::Pc pc) {
  const vm::NodeInfo* node = program.node_of(program.at(pc));
  return node ? node->name : "pc " + std::to_string(pc);
}

VariantReport variant_report(const vm::Program& program, const CompiledTrace& t, std::string_view isa) {
  const Plan& p = t.plan();
  VariantReport v;
  v.trace = t.id();
  v.tier = std::string(tier_name(p.tier));
  v.math = p.math == MathMode::Fast ? "fast" : "exact";
  v.isa = std::string(isa);
  v.loop = p.loops;
  v.side = p.side;
  v.start_pc = p.start_pc;
  v.end_pc = p.end_pc;
  // Fusion groups, row kernels and contraction epilogues, in the order they run.
  for (const Step& s : p.steps) {
    FusionGroupReport g;
    switch (s.kind) {
      case StepKind::Fused: {
        const FusedStep& f = p.fused[s.fused];
        for (vm::Pc pc : f.pcs) g.nodes.push_back(node_name(program, pc));
        g.expression = f.spec.key();
        g.inputs = f.inputs.size();
        g.outputs = f.outputs.size();
        g.sunk = f.sunk;
        if (f.on_device) g.device = p.device;
        break;
      }
      case StepKind::Row: {
        const RowStep& r = p.rows[s.fused];
        for (vm::Pc pc : r.pcs) g.nodes.push_back(node_name(program, pc));
        g.expression = r.spec.key();
        g.inputs = r.inputs.size();
        g.outputs = 1;
        if (r.on_device) g.device = p.device;
        break;
      }
      case StepKind::Contraction: {
        const ContractionStep& c = p.contractions[s.fused];
        g.nodes.push_back(node_name(program, s.pc));
        for (vm::Pc pc : c.epilogue_pcs) g.nodes.push_back(node_name(program, pc));
        g.expression = describe_contraction(c);
        g.inputs = program.at(s.pc).num_inputs;
        g.outputs = 1;
        if (s.on_device) g.device = p.device;  // the product; the epilogue is its separate group
        break;
      }
      case StepKind::Kernel: v.kernels.push_back(node_name(program, s.pc)); continue;
      default: continue;
    }
    v.groups.push_back(std::move(g));
  }
  for (std::uint32_t e = 0; e < p.exits.size(); ++e) {
    v.guards.push_back({p.exits[e].description, t.exit_count(e)});
    if (p.exits[e].kind != ExitKind::EntryGuard) v.deopts += t.exit_count(e);
  }
  v.deopts += t.exit_count(static_cast<std::uint32_t>(p.exits.size()));  // kernel-error exits
  v.entries = t.entries();
  v.compile_ms = t.compile_ms();
  v.code_bytes = t.code_bytes();
  v.device_error = t.device_error();
  v.listing = p.describe(program);
  return v;
}

}  // namespace

JitReport Engine::report() const {
  JitReport r;
  r.enabled = active();
  if (isa_) r.isa = std::string(x86::isa_name(*isa_));
  if (device_) r.device = device_->name();
  r.device_absent = device_absent_;
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < anchors_.size(); ++i) {
    const Anchor& a = *anchors_[i];
    const vm::Anchor& pa = program_->anchors()[i];
    AnchorReport ar;
    ar.name = a.name;
    ar.kind = pa.kind == vm::AnchorKind::Entry ? "entry" : pa.kind == vm::AnchorKind::LoopHeader ? "loop" : "continuation";
    ar.pc = pa.pc;
    ar.compiles = a.compiles_total;
    for (const auto& t : *a.list) ar.variants.push_back(variant_report(*program_, *t, r.isa));
    for (const auto& t : *a.sides) ar.side_traces.push_back(variant_report(*program_, *t, r.isa));
    if (!a.list->empty()) ar.state = "compiled (" + std::to_string(a.list->size()) + " variants)";
    else if (a.compiling) ar.state = "compiling";
    else if (a.penalty_until > now)
      ar.state = "interpreted, penalised for " +
                 std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(a.penalty_until - now).count()) +
                 " ms more";
    else ar.state = "interpreted";
    r.anchors.push_back(std::move(ar));
  }
  return r;
}

}  // namespace canary::jit

// Evaluation of a fused elementwise DAG on one vector of lanes: each live
// node becomes a few AVX/AVX-512 instructions on virtual registers, with
// NaN, signed-zero and rounding behaviour identical to the reference kernels
// for every non-transcendental op (instruction operand order is chosen so
// that maxps/minps pick the same operand as the reference's comparisons).
#include <array>
#include <cstring>

#include "jit/x86/elementwise_codegen_stages.h"

namespace canary::jit::x86 {
namespace {

namespace ax = asmjit::x86;

constexpr std::uint32_t kSignBit = 0x80000000u;
constexpr std::uint32_t kAbsMask = 0x7fffffffu;
constexpr std::uint32_t kQuietNaN = 0x7fc00000u;
// vcmpps predicates.
constexpr int kCmpLtOs = 1;
constexpr int kCmpUnordQ = 3;
// vroundps / vrndscaleps modes (bit 3 suppresses the inexact exception).
constexpr int kRoundNearest = 0x08, kRoundDown = 0x09, kRoundUp = 0x0A;

// The bits of a float.
std::uint32_t bits_of(float v) {
  std::uint32_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Emits the instructions of one node at the context's width.
class NodeEmitter {
 public:
  explicit NodeEmitter(VecContext& ctx) : ctx_(ctx), cc_(ctx.cc()), evex_(ctx.isa() == Isa::Avx512) {}

  // dst = op(a) or op(a, b); false for an op this emitter does not know.
  bool emit(const EwNode& n, const ax::Vec& dst, const ax::Vec& a, const ax::Vec& b);

 private:
  // A constant as memory, or loaded into a new register.
  ax::Mem mem(float v) { return lane_constant(ctx_, bits_of(v)); }
  ax::Vec reg(float v) {
    ax::Vec r = ctx_.new_vec("k");
    cc_.vmovups(r, mem(v));
    return r;
  }
  // dst = lhs < rhs ? if_true : if_false, lane-wise (pred is a vcmpps predicate).
  void select(int pred, const ax::Vec& lhs, const asmjit::Operand& rhs, const ax::Vec& dst, const ax::Vec& if_false,
              const asmjit::Operand& if_true);
  void emit_max_min(bool is_max, const ax::Vec& dst, const ax::Vec& a, const ax::Vec& b);
  void emit_round(int mode, const ax::Vec& dst, const ax::Vec& a);
  void emit_hard_sigmoid(const EwNode& n, const ax::Vec& dst, const ax::Vec& a);
  bool emit_transcendental(const EwNode& n, const ax::Vec& dst, const ax::Vec& a);

  VecContext& ctx_;
  ax::Compiler& cc_;
  bool evex_;
};

// Lane-wise select on a compare: k-mask blend on AVX-512, blendv otherwise.
void NodeEmitter::select(int pred, const ax::Vec& lhs, const asmjit::Operand& rhs, const ax::Vec& dst,
                         const ax::Vec& if_false, const asmjit::Operand& if_true) {
  if (evex_) {
    ax::KReg k = cc_.newKw("cmp");
    if (rhs.isMem()) cc_.vcmpps(k, lhs, rhs.as<ax::Mem>(), pred);
    else cc_.vcmpps(k, lhs, rhs.as<ax::Vec>(), pred);
    // Merge-masked move into a defined dst (a {k} blend would read dst undefined).
    cc_.vmovaps(dst, if_false);
    if (if_true.isMem()) cc_.k(k).vmovups(dst, if_true.as<ax::Mem>());
    else cc_.k(k).vmovaps(dst, if_true.as<ax::Vec>());
    return;
  }
  ax::Vec m = ctx_.new_vec("cmp");
  if (rhs.isMem()) cc_.vcmpps(m, lhs, rhs.as<ax::Mem>(), pred);
  else cc_.vcmpps(m, lhs, rhs.as<ax::Vec>(), pred);
  if (if_true.isMem()) cc_.vblendvps(dst, if_false, if_true.as<ax::Mem>(), m);
  else cc_.vblendvps(dst, if_false, if_true.as<ax::Vec>(), m);
}

// Max(a, b) = a < b ? b : a and Min(a, b) = b < a ? b : a, NaN if either is.
// vmaxps(x, y) returns x > y ? x : y, so operands go in as (b, a).
void NodeEmitter::emit_max_min(bool is_max, const ax::Vec& dst, const ax::Vec& a, const ax::Vec& b) {
  ax::Vec r = ctx_.new_vec("mm");
  if (is_max) cc_.vmaxps(r, b, a);
  else cc_.vminps(r, b, a);
  select(kCmpUnordQ, a, b, dst, r, lane_constant(ctx_, kQuietNaN));
}

// Floor / Ceil / Round-half-even: vroundps, or vrndscaleps on zmm.
void NodeEmitter::emit_round(int mode, const ax::Vec& dst, const ax::Vec& a) {
  if (evex_) cc_.vrndscaleps(dst, a, mode);
  else cc_.vroundps(dst, a, mode);
}

// max(0, min(1, alpha a + beta)) as fmax/fmin: NaN gives 1, -0 gives +0.
void NodeEmitter::emit_hard_sigmoid(const EwNode& n, const ax::Vec& dst, const ax::Vec& a) {
  ax::Vec y = ctx_.new_vec("hs");
  cc_.vmulps(y, a, mem(n.imm0));
  cc_.vaddps(y, y, mem(n.imm1));
  cc_.vminps(y, y, mem(1.0f));  // y < 1 ? y : 1, so NaN becomes 1
  cc_.vmaxps(dst, y, mem(0.0f));  // y > 0 ? y : 0, so -0 becomes +0
}

// The polynomial-approximated ops, through jit/x86/vector_math.
bool NodeEmitter::emit_transcendental(const EwNode& n, const ax::Vec& dst, const ax::Vec& a) {
  switch (n.op) {
    case EwOp::Exp: emit_exp(ctx_, dst, a); return true;
    case EwOp::Log: emit_log(ctx_, dst, a); return true;
    case EwOp::Tanh: emit_tanh(ctx_, dst, a); return true;
    case EwOp::Sigmoid: emit_sigmoid(ctx_, dst, a); return true;
    case EwOp::Erf: emit_erf(ctx_, dst, a); return true;
    case EwOp::Softplus: emit_softplus(ctx_, dst, a); return true;
    case EwOp::Gelu: emit_gelu(ctx_, dst, a, n.imm0 == 1.0f); return true;
    default: return false;
  }
}

// One flat switch over the ops; transcendentals go to vector_math.
bool NodeEmitter::emit(const EwNode& n, const ax::Vec& dst, const ax::Vec& a, const ax::Vec& b) {
  switch (n.op) {
    case EwOp::Constant: cc_.vmovups(dst, mem(n.imm0)); return true;
    case EwOp::Add: cc_.vaddps(dst, a, b); return true;
    case EwOp::Sub: cc_.vsubps(dst, a, b); return true;
    case EwOp::Mul: cc_.vmulps(dst, a, b); return true;
    case EwOp::Div: cc_.vdivps(dst, a, b); return true;
    case EwOp::Max: emit_max_min(true, dst, a, b); return true;
    case EwOp::Min: emit_max_min(false, dst, a, b); return true;
    case EwOp::Neg: cc_.vxorps(dst, a, lane_constant(ctx_, kSignBit)); return true;
    case EwOp::Abs: cc_.vandps(dst, a, lane_constant(ctx_, kAbsMask)); return true;
    case EwOp::Sqrt: cc_.vsqrtps(dst, a); return true;
    case EwOp::Reciprocal: cc_.vdivps(dst, reg(1.0f), a); return true;
    case EwOp::Floor: emit_round(kRoundDown, dst, a); return true;
    case EwOp::Ceil: emit_round(kRoundUp, dst, a); return true;
    case EwOp::Round: emit_round(kRoundNearest, dst, a); return true;
    // a < 0 ? 0 : a  ==  vmaxps(0, a): 0 > a ? 0 : a (NaN and -0 pass through).
    case EwOp::Relu: cc_.vmaxps(dst, reg(0.0f), a); return true;
    case EwOp::LeakyRelu: {
      ax::Vec scaled = ctx_.new_vec("lr");
      cc_.vmulps(scaled, a, mem(n.imm0));
      select(kCmpLtOs, a, mem(0.0f), dst, a, scaled);
      return true;
    }
    case EwOp::HardSigmoid: emit_hard_sigmoid(n, dst, a); return true;
    case EwOp::HardSwish: {
      ax::Vec gate = ctx_.new_vec("hsw");
      emit_hard_sigmoid(n, gate, a);
      cc_.vmulps(dst, a, gate);
      return true;
    }
    // min(max(a, lo), hi) as lo > a ? lo : a, then hi < t ? hi : t (NaN passes).
    case EwOp::Clip: {
      ax::Vec t = ctx_.new_vec("clip");
      cc_.vmaxps(t, reg(n.imm0), a);
      cc_.vminps(dst, reg(n.imm1), t);
      return true;
    }
    default: return emit_transcendental(n, dst, a);
  }
}

}  // namespace

// A local constant-pool entry of 16 (scalar), 32 or 64 bytes.
ax::Mem lane_constant(VecContext& ctx, std::uint32_t bits) {
  std::array<std::uint32_t, 16> lanes;
  lanes.fill(bits);
  const int count = ctx.isa() == Isa::Scalar ? 4 : isa_lanes(ctx.isa());
  return ctx.cc().newConst(asmjit::ConstPoolScope::kLocal, lanes.data(), count * sizeof(std::uint32_t));
}

// Marks outputs, then operands of marked nodes, walking backwards.
std::vector<bool> live_nodes(const FusedElementwiseSpec& spec) {
  std::vector<bool> live(spec.nodes.size(), false);
  for (std::uint16_t o : spec.outputs) live[o] = true;
  for (std::size_t i = spec.nodes.size(); i-- > 0;) {
    if (!live[i]) continue;
    const EwNode& n = spec.nodes[i];
    const int arity = ew_arity(n.op);
    if (arity >= 1) live[n.a] = true;
    if (arity == 2) live[n.b] = true;
  }
  return live;
}

// Walks the nodes in order, each live one into a new virtual register.
bool emit_fused_nodes(VecContext& ctx, const FusedElementwiseSpec& spec, const std::vector<bool>& live,
                      const InputLoader& load, std::vector<ax::Vec>& values, std::string& error) {
  NodeEmitter emitter(ctx);
  values.assign(spec.nodes.size(), ax::Vec());
  std::vector<ax::Vec> loaded(spec.num_inputs);
  std::vector<bool> is_loaded(spec.num_inputs, false);
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    if (!live[i]) continue;
    const EwNode& n = spec.nodes[i];
    if (n.op == EwOp::Input) {
      if (!is_loaded[n.input]) loaded[n.input] = load(n.input);
      is_loaded[n.input] = true;
      values[i] = loaded[n.input];
      continue;
    }
    values[i] = ctx.new_vec(ew_op_name(n.op));
    const ax::Vec a = ew_arity(n.op) >= 1 ? values[n.a] : ax::Vec();
    const ax::Vec b = ew_arity(n.op) == 2 ? values[n.b] : ax::Vec();
    if (!emitter.emit(n, values[i], a, b)) {
      error = "node " + std::to_string(i) + " (" + ew_op_name(n.op) + "): no x86 code for this op";
      return false;
    }
  }
  return true;
}

}  // namespace canary::jit::x86

// PTX emission for fused elementwise specs: parameter list, grid-stride
// loop, index decoding with magic-number division, strided and broadcast
// input loads, the node DAG through ew_lowering.h, stores and the value canary.
#include "jit/cuda/ptx_elementwise.h"

#include <array>
#include <vector>

#include "jit/cuda/ew_lowering.h"
#include "jit/cuda/ptx_builder.h"
#include "jit/cuda/ptx_math_ops.h"

namespace canary::jit::cuda {
namespace {

// Registers that hold one input's addressing state for the whole kernel.
struct InputRegs {
  PtxL base, stride0, stride1;
};

// The flat-index decomposition of one element.
struct ElementIndex {
  PtxL i0, i1, i2;
};

class FusedPtxEmitter {
 public:
  explicit FusedPtxEmitter(const FusedElementwiseSpec& spec) : spec_(spec), m_(b_) {}

  // The whole module text.
  std::string emit(const std::string& target) {
    load_parameters();
    emit_loop();
    return ptx_module("Canary fused elementwise kernel\n// " + spec_.key(), target, kFusedEntryName, parameters(),
                      b_.declarations() + b_.body());
  }

 private:
  // The ".param" declarations, in the documented order.
  std::vector<std::string> parameters() const {
    std::vector<std::string> params;
    for (int k = 0; k < spec_.num_inputs; ++k) params.push_back(".param .u64 in_" + std::to_string(k));
    for (std::size_t k = 0; k < spec_.outputs.size(); ++k) params.push_back(".param .u64 out_" + std::to_string(k));
    for (int k = 0; k < spec_.num_inputs; ++k) {
      params.push_back(".param .s64 s0_" + std::to_string(k));
      params.push_back(".param .s64 s1_" + std::to_string(k));
    }
    for (const char* name : {"d1", "d2", "begin", "end", "magic1", "shift1", "magic2", "shift2", "vector_ok"})
      params.push_back(std::string(".param .u32 ") + name);
    params.push_back(".param .u64 flag");
    return params;
  }

  // Loads every parameter once, before the loop; exact dims become immediates.
  void load_parameters() {
    for (int k = 0; k < spec_.num_inputs; ++k) inputs_.push_back({b_.param_pointer("in_" + std::to_string(k)), {}, {}});
    for (std::size_t k = 0; k < spec_.outputs.size(); ++k) outputs_.push_back(b_.param_pointer("out_" + std::to_string(k)));
    for (int k = 0; k < spec_.num_inputs; ++k) {
      inputs_[k].stride0 = b_.param_s64("s0_" + std::to_string(k));
      inputs_[k].stride1 = b_.param_s64("s1_" + std::to_string(k));
    }
    begin_ = b_.param_u32("begin");
    end_ = b_.param_u32("end");
    vector_ok_ = b_.param_u32("vector_ok");
    if (spec_.exact_dims) {
      const auto& d = *spec_.exact_dims;
      const FusedLaunchScalars s = make_launch_scalars(d[1] > 0 ? d[1] : 1, d[2] > 0 ? d[2] : 1, 0, 0);
      trivial_d1_ = s.d1 == 1;
      trivial_d2_ = s.d2 == 1;
      d1_ = b_.immediate_u32(s.d1), d2_ = b_.immediate_u32(s.d2);
      magic1_ = b_.immediate_u32(s.magic1), shift1_ = b_.immediate_u32(s.shift1);
      magic2_ = b_.immediate_u32(s.magic2), shift2_ = b_.immediate_u32(s.shift2);
    } else {
      d1_ = b_.param_u32("d1"), d2_ = b_.param_u32("d2");
      magic1_ = b_.param_u32("magic1"), shift1_ = b_.param_u32("shift1");
      magic2_ = b_.param_u32("magic2"), shift2_ = b_.param_u32("shift2");
    }
    if (spec_.check_non_finite) flag_ = b_.param_pointer("flag");
  }

  // (i0, i1, i2) of flat index e.
  ElementIndex decode(PtxI e) {
    const PtxI zero = b_.immediate_u32(0);
    const PtxI row = trivial_d2_ ? e : b_.divide(e, magic2_, shift2_);
    const PtxI i2 = trivial_d2_ ? zero : b_.remainder(e, row, d2_);
    const PtxI i0 = trivial_d1_ ? row : b_.divide(row, magic1_, shift1_);
    const PtxI i1 = trivial_d1_ ? zero : b_.remainder(row, i0, d1_);
    return {b_.widen(i0), b_.widen(i1), b_.widen(i2)};
  }

  // Loads input k at the element: base + 4 * (i0 s0 + i1 s1 [+ i2]).
  PtxF load_input(int k, const ElementIndex& at) {
    const InputRegs& in = inputs_[k];
    const PtxL off = b_.new_l(), off2 = b_.new_l(), addr = b_.new_l();
    b_.emit("mul.lo.s64 " + ptx_reg(off) + ", " + ptx_reg(at.i0) + ", " + ptx_reg(in.stride0));
    b_.emit("mad.lo.s64 " + ptx_reg(off) + ", " + ptx_reg(at.i1) + ", " + ptx_reg(in.stride1) + ", " + ptx_reg(off));
    if (!spec_.inner_broadcast[k]) b_.emit("add.s64 " + ptx_reg(off) + ", " + ptx_reg(off) + ", " + ptx_reg(at.i2));
    b_.emit("shl.b64 " + ptx_reg(off2) + ", " + ptx_reg(off) + ", 2");
    b_.emit("add.s64 " + ptx_reg(addr) + ", " + ptx_reg(in.base) + ", " + ptx_reg(off2));
    const PtxF v = b_.new_f();
    b_.emit("ld.global.nc.f32 " + ptx_reg(v) + ", [" + ptx_reg(addr) + "]");
    return v;
  }

  // The node DAG on the values `input(k)` supplies for each input.
  template <class InputValue>
  std::vector<PtxF> emit_dag(InputValue input) {
    std::vector<PtxF> values;
    values.reserve(spec_.nodes.size());
    for (const EwNode& n : spec_.nodes) {
      b_.comment(ew_op_name(n.op));
      if (n.op == EwOp::Input) values.push_back(input(n.input));
      else values.push_back(lower_node(m_, n, values, spec_.math));
    }
    return values;
  }

  // Records a non-finite output value in the canary register.
  void note_non_finite(PtxF v) {
    if (!spec_.check_non_finite) return;
    const PtxP finite = m_.is_finite(v);
    b_.emit("@!" + ptx_reg(finite) + " mov.u32 " + ptx_reg(non_finite_) + ", 1");
  }

  // base + 4 * e.
  PtxL element_address(PtxL base, PtxL byte_offset) {
    const PtxL addr = b_.new_l();
    b_.emit("add.s64 " + ptx_reg(addr) + ", " + ptx_reg(base) + ", " + ptx_reg(byte_offset));
    return addr;
  }

  PtxL byte_offset(PtxI e) {
    const PtxL off = b_.new_l();
    b_.emit("mul.wide.u32 " + ptx_reg(off) + ", " + ptx_reg(e) + ", 4");
    return off;
  }

  // One element of the general loop: decode, load, compute, store.
  void emit_element(PtxI e) {
    const ElementIndex at = decode(e);
    const std::vector<PtxF> values = emit_dag([&](int k) { return load_input(k, at); });
    const PtxL off = byte_offset(e);
    for (std::size_t k = 0; k < spec_.outputs.size(); ++k) {
      const PtxF v = values[spec_.outputs[k]];
      b_.emit("st.global.f32 [" + ptx_reg(element_address(outputs_[k], off)) + "], " + ptx_reg(v));
      note_non_finite(v);
    }
  }

  // Four contiguous elements e .. e+3 with 16-byte loads and stores.
  void emit_vector_element(PtxI e) {
    const PtxL off = byte_offset(e);
    std::vector<std::array<PtxF, 4>> lanes_in(spec_.num_inputs);
    for (int k = 0; k < spec_.num_inputs; ++k) {
      auto& r = lanes_in[k];
      for (PtxF& f : r) f = b_.new_f();
      b_.emit("ld.global.nc.v4.f32 {" + ptx_reg(r[0]) + ", " + ptx_reg(r[1]) + ", " + ptx_reg(r[2]) + ", " +
              ptx_reg(r[3]) + "}, [" + ptx_reg(element_address(inputs_[k].base, off)) + "]");
    }
    std::array<std::vector<PtxF>, 4> lanes;
    for (int l = 0; l < 4; ++l) lanes[l] = emit_dag([&](int k) { return lanes_in[k][l]; });
    for (std::size_t k = 0; k < spec_.outputs.size(); ++k) {
      const std::uint16_t node = spec_.outputs[k];
      b_.emit("st.global.v4.f32 [" + ptx_reg(element_address(outputs_[k], off)) + "], {" + ptx_reg(lanes[0][node]) +
              ", " + ptx_reg(lanes[1][node]) + ", " + ptx_reg(lanes[2][node]) + ", " + ptx_reg(lanes[3][node]) + "}");
      for (int l = 0; l < 4; ++l) note_non_finite(lanes[l][node]);
    }
  }

  // The 4-wide loop (when vector_ok), the general loop from where it
  // stopped, then the canary flag.
  void emit_loop() {
    const PtxI tid = b_.new_i(), ntid = b_.new_i(), ctaid = b_.new_i(), nctaid = b_.new_i();
    const PtxI gtid = b_.new_i(), step = b_.new_i(), start = b_.new_i(), e = b_.new_i();
    b_.emit("mov.u32 " + ptx_reg(tid) + ", %tid.x");
    b_.emit("mov.u32 " + ptx_reg(ntid) + ", %ntid.x");
    b_.emit("mov.u32 " + ptx_reg(ctaid) + ", %ctaid.x");
    b_.emit("mov.u32 " + ptx_reg(nctaid) + ", %nctaid.x");
    b_.emit("mad.lo.u32 " + ptx_reg(gtid) + ", " + ptx_reg(ctaid) + ", " + ptx_reg(ntid) + ", " + ptx_reg(tid));
    b_.emit("mul.lo.u32 " + ptx_reg(step) + ", " + ptx_reg(nctaid) + ", " + ptx_reg(ntid));
    b_.emit("mov.u32 " + ptx_reg(start) + ", " + ptx_reg(begin_));
    non_finite_ = b_.immediate_u32(0);

    // An input read once per row can never take the 4-wide loop, so specs
    // with one get only the general loop.
    bool vector_loop = true;
    for (bool row_value : spec_.inner_broadcast) vector_loop = vector_loop && !row_value;
    if (vector_loop) emit_vector_loop(gtid, step, start);
    b_.emit("add.u32 " + ptx_reg(e) + ", " + ptx_reg(start) + ", " + ptx_reg(gtid));
    b_.strided_loop(e, end_, step, "scalar", [&] { emit_element(e); });

    if (spec_.check_non_finite) {
      const PtxP raised = b_.new_p();
      b_.emit("setp.ne.u32 " + ptx_reg(raised) + ", " + ptx_reg(non_finite_) + ", 0");
      b_.emit("@" + ptx_reg(raised) + " red.global.or.b32 [" + ptx_reg(flag_) + "], 1");
    }
    b_.emit("ret");
  }

  // When vector_ok: quads q = gtid, gtid + step, ... of [begin, end), then
  // start = the first element the general loop must still do.
  void emit_vector_loop(PtxI gtid, PtxI step, PtxI start) {
    const std::string general = b_.new_label("general");
    const PtxP scalar_only = b_.new_p();
    b_.emit("setp.eq.u32 " + ptx_reg(scalar_only) + ", " + ptx_reg(vector_ok_) + ", 0");
    b_.emit("@" + ptx_reg(scalar_only) + " bra " + general);
    const PtxI count = b_.new_i(), quads = b_.new_i(), q = b_.new_i(), qe = b_.new_i();
    b_.emit("sub.u32 " + ptx_reg(count) + ", " + ptx_reg(end_) + ", " + ptx_reg(begin_));
    b_.emit("shr.u32 " + ptx_reg(quads) + ", " + ptx_reg(count) + ", 2");
    b_.emit("mov.u32 " + ptx_reg(q) + ", " + ptx_reg(gtid));
    b_.strided_loop(q, quads, step, "vector", [&] {
      b_.emit("shl.b32 " + ptx_reg(qe) + ", " + ptx_reg(q) + ", 2");
      b_.emit("add.u32 " + ptx_reg(qe) + ", " + ptx_reg(qe) + ", " + ptx_reg(begin_));
      emit_vector_element(qe);
    });
    b_.emit("shl.b32 " + ptx_reg(start) + ", " + ptx_reg(quads) + ", 2");
    b_.emit("add.u32 " + ptx_reg(start) + ", " + ptx_reg(start) + ", " + ptx_reg(begin_));
    b_.place_label(general);
  }

  const FusedElementwiseSpec& spec_;
  PtxBuilder b_;
  PtxMath m_;
  std::vector<InputRegs> inputs_;
  std::vector<PtxL> outputs_;
  PtxL flag_;
  PtxI begin_, end_, vector_ok_, d1_, d2_, magic1_, shift1_, magic2_, shift2_, non_finite_;
  bool trivial_d1_ = false;
  bool trivial_d2_ = false;
};

}  // namespace

std::uint32_t Divider::divide(std::uint32_t n) const {
  const std::uint32_t hi = static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * magic) >> 32);
  return (hi + n) >> shift;
}

Divider make_divider(std::uint32_t d) {
  std::uint32_t shift = 0;
  while (shift < 31 && (std::uint64_t{1} << shift) < d) ++shift;
  const std::uint64_t magic = ((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift) - d)) / d + 1;
  return Divider{static_cast<std::uint32_t>(magic), shift};
}

FusedLaunchScalars make_launch_scalars(std::int64_t d1, std::int64_t d2, std::int64_t row_begin,
                                       std::int64_t row_end) {
  FusedLaunchScalars s;
  s.d1 = static_cast<std::uint32_t>(d1);
  s.d2 = static_cast<std::uint32_t>(d2);
  s.begin = static_cast<std::uint32_t>(row_begin * d2);
  s.end = static_cast<std::uint32_t>(row_end * d2);
  const Divider div1 = make_divider(s.d1), div2 = make_divider(s.d2);
  s.magic1 = div1.magic, s.shift1 = div1.shift;
  s.magic2 = div2.magic, s.shift2 = div2.shift;
  return s;
}

std::string emit_fused_ptx(const FusedElementwiseSpec& spec, const std::string& target) {
  return FusedPtxEmitter(spec).emit(target);
}

}  // namespace canary::jit::cuda

// PtxBuilder: typed virtual registers, labels and the instruction text of one
// PTX kernel body. Registers are declared in bulk at the end (".reg .f32
// %f<N>;"); ptxas does the real allocation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace canary::jit::cuda {

// A .f32 register %f<id>.
struct PtxF {
  int id = -1;
};
// A 32-bit integer register %r<id> (.b32; signedness is per instruction).
struct PtxI {
  int id = -1;
};
// A 64-bit integer register %rd<id>.
struct PtxL {
  int id = -1;
};
// A predicate register %p<id>.
struct PtxP {
  int id = -1;
};

// Operand text of each register kind.
std::string ptx_reg(PtxF r);
std::string ptx_reg(PtxI r);
std::string ptx_reg(PtxL r);
std::string ptx_reg(PtxP r);
// A float immediate that reads back bit-exactly ("0f3F800000").
std::string ptx_f32_literal(float value);

// The PTX ISA version the modules declare (CUDA 11.8 and later drivers).
inline constexpr const char* kPtxIsaVersion = "7.8";

// A whole module: a comment, the header for `target` ("sm_90"), and one
// kernel entry with `params` (".param .u64 in_0", ...) and `body` (the
// declarations and instructions between the braces).
std::string ptx_module(const std::string& comment, const std::string& target, const char* entry,
                       const std::vector<std::string>& params, const std::string& body);

class PtxBuilder {
 public:
  PtxF new_f() { return PtxF{next_f_++}; }
  PtxI new_i() { return PtxI{next_i_++}; }
  PtxL new_l() { return PtxL{next_l_++}; }
  PtxP new_p() { return PtxP{next_p_++}; }
  // A fresh label name ("$L_loop_2").
  std::string new_label(const char* stem);

  // Appends one instruction; `text` has no indentation and no ';'.
  void emit(const std::string& text);
  // Appends "label:".
  void place_label(const std::string& label);
  // Appends a comment line.
  void comment(const std::string& text);

  // Common instruction sequences of the kernels.
  // A .u64 address parameter converted to a global address.
  PtxL param_pointer(const std::string& name);
  PtxL param_s64(const std::string& name);
  PtxI param_u32(const std::string& name);
  PtxI immediate_u32(std::uint32_t v);
  // n / d as q = (mulhi(n, magic) + n) >> shift (Divider in ptx_elementwise.h).
  PtxI divide(PtxI n, PtxI magic, PtxI shift);
  // n - q * d.
  PtxI remainder(PtxI n, PtxI q, PtxI d);
  // Zero-extends to 64 bits.
  PtxL widen(PtxI v);
  // "for (; counter < limit; counter += step) body();" on unsigned 32-bit values.
  template <class Body>
  void strided_loop(PtxI counter, PtxI limit, PtxI step, const char* stem, Body body) {
    const std::string loop = new_label(stem), done = new_label(stem);
    const PtxP out_of_range = new_p(), more = new_p();
    emit("setp.ge.u32 " + ptx_reg(out_of_range) + ", " + ptx_reg(counter) + ", " + ptx_reg(limit));
    emit("@" + ptx_reg(out_of_range) + " bra " + done);
    place_label(loop);
    body();
    emit("add.u32 " + ptx_reg(counter) + ", " + ptx_reg(counter) + ", " + ptx_reg(step));
    emit("setp.lt.u32 " + ptx_reg(more) + ", " + ptx_reg(counter) + ", " + ptx_reg(limit));
    emit("@" + ptx_reg(more) + " bra " + loop);
    place_label(done);
  }

  // The ".reg" declarations for every register handed out so far.
  std::string declarations() const;
  const std::string& body() const { return body_; }

 private:
  int next_f_ = 0;
  int next_i_ = 0;
  int next_l_ = 0;
  int next_p_ = 0;
  int next_label_ = 0;
  std::string body_;
};

}  // namespace canary::jit::cuda

// PtxBuilder: register naming, float literals, labels and the body text.
#include "jit/cuda/ptx_builder.h"

#include <cstdio>
#include <cstring>

namespace canary::jit::cuda {

std::string ptx_reg(PtxF r) { return "%f" + std::to_string(r.id); }
std::string ptx_reg(PtxI r) { return "%r" + std::to_string(r.id); }
std::string ptx_reg(PtxL r) { return "%rd" + std::to_string(r.id); }
std::string ptx_reg(PtxP r) { return "%p" + std::to_string(r.id); }

std::string ptx_f32_literal(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  char text[16];
  std::snprintf(text, sizeof text, "0f%08X", static_cast<unsigned>(bits));
  return text;
}

std::string ptx_module(const std::string& comment, const std::string& target, const char* entry,
                       const std::vector<std::string>& params, const std::string& body) {
  std::string s = "// " + comment + "\n.version " + kPtxIsaVersion + "\n.target " + target + "\n.address_size 64\n\n";
  s += std::string(".visible .entry ") + entry + "(\n";
  for (std::size_t i = 0; i < params.size(); ++i) s += "\t" + params[i] + (i + 1 < params.size() ? ",\n" : "\n");
  return s + ")\n{\n" + body + "}\n";
}

std::string PtxBuilder::new_label(const char* stem) {
  return std::string("$L_") + stem + "_" + std::to_string(next_label_++);
}

void PtxBuilder::emit(const std::string& text) {
  body_ += "\t";
  body_ += text;
  body_ += ";\n";
}

void PtxBuilder::place_label(const std::string& label) {
  body_ += label;
  body_ += ":\n";
}

void PtxBuilder::comment(const std::string& text) {
  body_ += "\t// ";
  body_ += text;
  body_ += "\n";
}

PtxL PtxBuilder::param_pointer(const std::string& name) {
  const PtxL raw = new_l(), global = new_l();
  emit("ld.param.u64 " + ptx_reg(raw) + ", [" + name + "]");
  emit("cvta.to.global.u64 " + ptx_reg(global) + ", " + ptx_reg(raw));
  return global;
}

PtxL PtxBuilder::param_s64(const std::string& name) {
  const PtxL r = new_l();
  emit("ld.param.s64 " + ptx_reg(r) + ", [" + name + "]");
  return r;
}

PtxI PtxBuilder::param_u32(const std::string& name) {
  const PtxI r = new_i();
  emit("ld.param.u32 " + ptx_reg(r) + ", [" + name + "]");
  return r;
}

PtxI PtxBuilder::immediate_u32(std::uint32_t v) {
  const PtxI r = new_i();
  emit("mov.u32 " + ptx_reg(r) + ", " + std::to_string(v));
  return r;
}

PtxI PtxBuilder::divide(PtxI n, PtxI magic, PtxI shift) {
  const PtxI hi = new_i(), sum = new_i(), q = new_i();
  emit("mul.hi.u32 " + ptx_reg(hi) + ", " + ptx_reg(n) + ", " + ptx_reg(magic));
  emit("add.u32 " + ptx_reg(sum) + ", " + ptx_reg(hi) + ", " + ptx_reg(n));
  emit("shr.b32 " + ptx_reg(q) + ", " + ptx_reg(sum) + ", " + ptx_reg(shift));
  return q;
}

PtxI PtxBuilder::remainder(PtxI n, PtxI q, PtxI d) {
  const PtxI prod = new_i(), r = new_i();
  emit("mul.lo.u32 " + ptx_reg(prod) + ", " + ptx_reg(q) + ", " + ptx_reg(d));
  emit("sub.u32 " + ptx_reg(r) + ", " + ptx_reg(n) + ", " + ptx_reg(prod));
  return r;
}

PtxL PtxBuilder::widen(PtxI v) {
  const PtxL r = new_l();
  emit("cvt.u64.u32 " + ptx_reg(r) + ", " + ptx_reg(v));
  return r;
}

std::string PtxBuilder::declarations() const {
  std::string s;
  // PTX rejects a zero-sized register vector, so every kind gets at least one.
  auto declare = [&](const char* type, const char* stem, int count) {
    s += "\t.reg ";
    s += type;
    s += " %";
    s += stem;
    s += "<" + std::to_string(count > 0 ? count : 1) + ">;\n";
  };
  declare(".f32", "f", next_f_);
  declare(".b32", "r", next_i_);
  declare(".b64", "rd", next_l_);
  declare(".pred", "p", next_p_);
  return s;
}

}  // namespace canary::jit::cuda

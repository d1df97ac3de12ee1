// How the operands of a MatMul, Gemm or Conv reach its primitive under the
// calling thread's precision (kernels/onednn/precision.h): as they are (f32),
// rounded to bf16 values kept in f32 (emulation), or converted to bf16
// (native), and the per-thread copies the rounded operands are read from.
#pragma once

#include <bit>
#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

namespace canary::kernels::onednn {

enum class OperandEncoding : std::uint8_t {
  F32,         // exact f32 operands
  Bf16Values,  // operands rounded to bf16, stored as f32, on f32 primitives
  Bf16,        // operands converted to bf16, on bf16 primitives with f32 output
};

// The encoding the calling thread's precision asks for on this host.
OperandEncoding current_operand_encoding();

// The bits of the bf16 nearest to v, ties to even. Zero and f32 denormals give
// a signed zero (as the native bf16 instructions read denormals); a NaN stays
// a quiet NaN, and values past the largest bf16 round to infinity.
// Written with selects, not branches, so that loops over it vectorize.
inline std::uint16_t bf16_bits(float v) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
  const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const std::uint32_t quiet_nan = (u >> 16) | 0x0040u, signed_zero = (u >> 16) & 0x8000u;
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u, zero_or_denormal = (u & 0x7f800000u) == 0;
  return static_cast<std::uint16_t>(nan ? quiet_nan : zero_or_denormal ? signed_zero : rounded);
}

// The bf16 nearest to v (bf16_bits(v) << 16), as an f32 value; computed in
// 32-bit lanes so that loops over it vectorize without narrowing.
inline float bf16_value(float v) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
  const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  const std::uint32_t quiet_nan = (u | 0x00400000u) & 0xffff0000u, signed_zero = u & 0x80000000u;
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u, zero_or_denormal = (u & 0x7f800000u) == 0;
  return std::bit_cast<float>(nan ? quiet_nan : zero_or_denormal ? signed_zero : rounded);
}

// The data type operands of encoding e are stored in (f32 or bf16).
dnnl::memory::data_type operand_data_type(OperandEncoding e);
// md (an f32 descriptor) with the data type of e, same dims and strides.
dnnl::memory::desc operand_desc(const dnnl::memory::desc& md, OperandEncoding e);

// The calling thread's copy buffers: one for each operand of a primitive.
enum class OperandSlot : std::uint8_t { Source, Weights };

// The n f32 values at src as encoding e wants them: src itself for F32, else
// a rounded copy in the calling thread's buffer for `slot`, valid until that
// slot is encoded again on this thread.
const void* encode_operand(const float* src, std::int64_t n, OperandEncoding e, OperandSlot slot);

// run(e) (a bool-returning call that may throw dnnl::error); where a native
// bf16 primitive cannot be made or run, run(Bf16Values) gives the same values
// on f32 primitives. False on any other dnnl::error.
template <typename Run>
bool run_with_encoding(OperandEncoding e, Run&& run) {
  try {
    return run(e);
  } catch (const dnnl::error&) {
    if (e != OperandEncoding::Bf16) return false;
  }
  try {
    return run(OperandEncoding::Bf16Values);
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace canary::kernels::onednn

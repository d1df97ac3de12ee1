// Operand encodings for the calling thread's precision, and the rounded operand copies.
#include "kernels/onednn/bf16_operands.h"

#include <immintrin.h>

#include <array>
#include <cstddef>
#include <vector>

#include "kernels/onednn/precision.h"

namespace canary::kernels::onednn {
namespace {

// The rounded copies of one operand slot (bf16 bits or bf16 values in f32).
struct OperandBuffers {
  std::vector<std::uint16_t> bits;
  std::vector<float> values;
};

// The calling thread's buffers, one per slot; they grow to the largest operand seen.
OperandBuffers& thread_buffers(OperandSlot slot) {
  thread_local std::array<OperandBuffers, 2> buffers;
  return buffers[static_cast<std::size_t>(slot)];
}

// Elements per block of the rounding loops: a fixed trip count the compiler
// vectorizes at -O2.
constexpr std::size_t kBlock = 16;

// Writes encode(in[i]) to out[i] for i < n.
template <typename Element, typename Encode>
void encode_all(const float* __restrict in, std::size_t n, Element* __restrict out, Encode encode) {
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (std::size_t j = 0; j < kBlock; ++j) out[i + j] = encode(in[i + j]);
  for (; i < n; ++i) out[i] = encode(in[i]);
}

// Writes bf16_bits(in[i]) to out[i] with vcvtneps2bf16, which rounds exactly
// as bf16_bits does (ties to even, denormals to signed zero, quiet NaNs).
__attribute__((target("avx512f,avx512bf16"))) void convert_natively(const float* in, std::size_t n,
                                                                    std::uint16_t* out) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256bh bf16 = _mm512_cvtneps_pbh(_mm512_loadu_ps(in + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), reinterpret_cast<const __m256i&>(bf16));
  }
  for (; i < n; ++i) out[i] = bf16_bits(in[i]);
}

// True when this CPU has vcvtneps2bf16; probed once.
bool cpu_converts_to_bf16() {
  static const bool supported = __builtin_cpu_supports("avx512bf16");
  return supported;
}

// Writes bf16_bits(in[i]) to out[i] for i < n, natively where the CPU can.
void convert_to_bf16(const float* in, std::size_t n, std::uint16_t* out) {
  if (cpu_converts_to_bf16()) return convert_natively(in, n, out);
  encode_all(in, n, out, [](float v) { return bf16_bits(v); });
}

}  // namespace

// F32 unless the thread asks for BF16; then native bf16 where enabled.
OperandEncoding current_operand_encoding() {
  if (current_matmul_precision() == MatmulPrecision::F32) return OperandEncoding::F32;
  return native_bf16_enabled() ? OperandEncoding::Bf16 : OperandEncoding::Bf16Values;
}

// bf16 for native bf16 operands, f32 otherwise.
dnnl::memory::data_type operand_data_type(OperandEncoding e) {
  return e == OperandEncoding::Bf16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

// Copies the C descriptor and changes only its data type (plain layouts keep their strides in elements).
dnnl::memory::desc operand_desc(const dnnl::memory::desc& md, OperandEncoding e) {
  dnnl_memory_desc_t data = md.data;
  data.data_type = static_cast<dnnl_data_type_t>(operand_data_type(e));
  return dnnl::memory::desc(data);
}

// Rounds src into the slot's buffer of the encoding's element type.
const void* encode_operand(const float* src, std::int64_t n, OperandEncoding e, OperandSlot slot) {
  if (e == OperandEncoding::F32) return src;
  OperandBuffers& buffers = thread_buffers(slot);
  const auto count = static_cast<std::size_t>(n);
  if (e == OperandEncoding::Bf16) {
    if (buffers.bits.size() < count) buffers.bits.resize(count);
    convert_to_bf16(src, count, buffers.bits.data());
    return buffers.bits.data();
  }
  if (buffers.values.size() < count) buffers.values.resize(count);
  encode_all(src, count, buffers.values.data(), [](float v) { return bf16_value(v); });
  return buffers.values.data();
}

}  // namespace canary::kernels::onednn

// Epilogues: the unary ops a contraction applies before storing its result,
// mapped onto oneDNN's eltwise algorithms (see EpilogueOp in kernels/onednn.h).
#include "kernels/onednn/epilogue.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "kernels/host_simd.h"

namespace canary::kernels {

std::string_view epilogue_op_name(EpilogueOp op) {
  switch (op) {
    case EpilogueOp::Relu: return "relu";
    case EpilogueOp::LeakyRelu: return "leaky_relu";
    case EpilogueOp::Clip: return "clip";
    case EpilogueOp::Abs: return "abs";
    case EpilogueOp::Sqrt: return "sqrt";
    case EpilogueOp::Tanh: return "tanh";
    case EpilogueOp::Sigmoid: return "sigmoid";
  }
  return "?";
}

bool Epilogue::append(EpilogueStep step) {
  if (size == kMaxSteps) return false;
  steps[size++] = step;
  return true;
}

}  // namespace canary::kernels

namespace canary::kernels::onednn {
namespace {

using dnnl::algorithm;

// The eltwise algorithm of an op; alpha and beta are oneDNN's.
algorithm eltwise_algorithm(EpilogueOp op) {
  switch (op) {
    case EpilogueOp::Relu:
    case EpilogueOp::LeakyRelu: return algorithm::eltwise_relu;  // alpha: the negative slope
    case EpilogueOp::Clip: return algorithm::eltwise_clip_v2;    // [alpha, beta]
    case EpilogueOp::Abs: return algorithm::eltwise_abs;
    case EpilogueOp::Sqrt: return algorithm::eltwise_sqrt;
    case EpilogueOp::Tanh: return algorithm::eltwise_tanh;
    case EpilogueOp::Sigmoid: return algorithm::eltwise_logistic;
  }
  return algorithm::eltwise_relu;
}

// Relu (oneDNN's max with 0) and Clip give a number for NaN.
bool keeps_nan(EpilogueOp op) { return op != EpilogueOp::Relu && op != EpilogueOp::Clip; }

// The largest of bits[i] & 0x7fffffff. Inlined into one clone per vector ISA:
// the baseline build vectorises it with SSE2, which has no unsigned 32-bit
// max and ran at about 6 GB/s, slower than the convolution it guards on
// small images; the AVX2 and AVX-512 clones use vpmaxud and run at cache speed.
__attribute__((always_inline)) inline std::uint32_t max_abs_bits(const std::uint32_t* bits, std::int64_t n) {
  std::uint32_t m = 0;
#pragma omp simd reduction(max : m)
  for (std::int64_t i = 0; i < n; ++i) m = std::max(m, bits[i] & 0x7fffffffu);
  return m;
}

__attribute__((target("avx512f"))) std::uint32_t max_abs_bits_avx512(const std::uint32_t* bits, std::int64_t n) {
  return max_abs_bits(bits, n);
}

__attribute__((target("avx2"))) std::uint32_t max_abs_bits_avx2(const std::uint32_t* bits, std::int64_t n) {
  return max_abs_bits(bits, n);
}

// The largest magnitude among the elements of an f32 tensor, as the bits of
// |v|: every NaN and infinity compares at or above 0x7f800000, and for finite
// values the integer order is the order of magnitudes. One vector pass over
// the tensor.
std::uint32_t max_magnitude_bits(const Tensor& t) {
  const auto* bits = static_cast<const std::uint32_t*>(t.raw());
  const std::int64_t n = t.numel();
  switch (host_simd()) {
    case Simd::Avx512: return max_abs_bits_avx512(bits, n);
    case Simd::Avx2: return max_abs_bits_avx2(bits, n);
    case Simd::Baseline: break;
  }
  return max_abs_bits(bits, n);
}

// max_magnitude_bits of constant tensors, kept per thread with the tensor
// pinned (so its buffer, the key, cannot be reused by another tensor).
std::uint32_t constant_max_magnitude_bits(const Tensor& t) {
  struct Entry {
    Tensor pinned;
    std::uint32_t bits = 0;
  };
  thread_local std::unordered_map<const void*, Entry> cache;
  if (!t.owns_storage()) return max_magnitude_bits(t);
  auto it = cache.find(t.raw());
  if (it != cache.end() && it->second.pinned.shares_storage_with(t) && it->second.pinned.numel() == t.numel())
    return it->second.bits;
  if (cache.size() >= 4096) cache.clear();
  const std::uint32_t bits = max_magnitude_bits(t);
  cache[t.raw()] = Entry{t, bits};
  return bits;
}

// |v| of the tensor's largest element, or nullopt when one is NaN or infinite.
std::optional<double> max_magnitude(const Tensor& t, bool constant = false) {
  const std::uint32_t m = constant ? constant_max_magnitude_bits(t) : max_magnitude_bits(t);
  if (m >= 0x7f800000u) return std::nullopt;
  float f;
  std::memcpy(&f, &m, sizeof f);
  return f;
}

// Limits under which a float sum of products stays finite with room to
// spare: its terms' magnitudes summed bound the result up to a factor
// (1 + 2^-24)^terms <= e, and bf16 rounding of an operand below 2^100 never
// reaches infinity.
constexpr double kMaxBoundedResult = 0x1p100;
constexpr std::int64_t kMaxBoundedTerms = std::int64_t{1} << 24;

}  // namespace

// The products are summed in f32 before any scale applies (oneDNN's output
// scale comes after the accumulation), so the unscaled sum is bounded on its
// own: a scale of 0 does not make an overflowing sum safe (Inf * 0 is NaN).
bool contraction_stays_finite(const ContractionBound& b) {
  if (b.terms > kMaxBoundedTerms) return false;
  const std::optional<double> mb = max_magnitude(*b.b, b.b_constant);
  if (!mb || *mb > kMaxBoundedResult) return false;  // decided without reading a
  const std::optional<double> ma = max_magnitude(*b.a);
  if (!ma || !mb || *ma > kMaxBoundedResult || *mb > kMaxBoundedResult) return false;
  const double sum = static_cast<double>(b.terms) * *ma * *mb;
  if (sum > kMaxBoundedResult) return false;
  double bound = std::fabs(b.scale) * sum;
  if (b.c) {
    const std::optional<double> mc = max_magnitude(*b.c);
    if (!mc || *mc > kMaxBoundedResult) return false;
    bound += std::fabs(b.c_scale) * *mc;
  }
  return bound <= kMaxBoundedResult;
}

void append_epilogue(dnnl::post_ops& ops, const Epilogue& epilogue) {
  for (std::size_t i = 0; i < epilogue.size; ++i) {
    const EpilogueStep& s = epilogue.steps[i];
    const float alpha = s.op == EpilogueOp::Relu ? 0.0f : s.alpha;
    ops.append_eltwise(1.0f, eltwise_algorithm(s.op), alpha, s.beta);
  }
}

dnnl::primitive_attr epilogue_attributes(const Epilogue& epilogue) {
  dnnl::primitive_attr attr;
  if (epilogue.empty()) return attr;
  dnnl::post_ops ops;
  append_epilogue(ops, epilogue);
  attr.set_post_ops(ops);
  return attr;
}

void push_epilogue(PrimitiveKey& key, const Epilogue& epilogue) {
  if (epilogue.empty()) return;
  key.push(-2);  // marks the epilogue's part of the key
  for (std::size_t i = 0; i < epilogue.size; ++i) {
    const EpilogueStep& s = epilogue.steps[i];
    key.push(static_cast<std::int64_t>(s.op));
    key.push_double(s.alpha);
    key.push_double(s.beta);
  }
}

}  // namespace canary::kernels::onednn

namespace canary::kernels::onednn {

bool epilogue_keeps_nan(const Epilogue& epilogue) {
  bool keeps = true;
  for (std::size_t i = 0; i < epilogue.size; ++i) keeps = keeps && keeps_nan(epilogue.steps[i].op);
  return keeps;
}

bool epilogue_applies(const Epilogue& epilogue, const ContractionBound& bound) {
  return epilogue_keeps_nan(epilogue) || contraction_stays_finite(bound);
}

}  // namespace canary::kernels::onednn

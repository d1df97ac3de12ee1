// The LSTM cell update, compiled for AVX-512, AVX2 and the baseline and
// dispatched once per process (kernels/host_simd.h).
#include "kernels/onednn/lstm_cell.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/host_simd.h"
#include "kernels/onednn/vector_activations.h"

namespace canary::kernels::onednn {
namespace {

#if defined(__clang__)
#define CANARY_VECTORISE
#else  // GCC 12's -O2 vectorises only loops that need no remainder
#define CANARY_VECTORISE __attribute__((optimize("tree-vectorize")))
#endif

// x clamped to [-limit, limit]; a NaN stays NaN (both compares fail).
__attribute__((always_inline)) inline float clamp_gate(float x, float limit) {
  x = x > limit ? limit : x;
  return x < -limit ? -limit : x;
}

// One row. kGeneral adds the peephole terms, the clip and input_forget;
// the plain version (what exporters emit) leaves their work out of the loop.
template <bool kGeneral>
__attribute__((always_inline)) inline void update_row(const float* __restrict gates, const float* __restrict bias,
                                                      const float* __restrict peep, float clip, bool input_forget,
                                                      float* __restrict c, float* __restrict h, std::int64_t H) {
  const float* gi = gates;
  const float* go = gates + H;
  const float* gf = gates + 2 * H;
  const float* gc = gates + 3 * H;
  for (std::int64_t j = 0; j < H; ++j) {
    const float c_prev = c[j];
    float pi = gi[j] + bias[j], pf = gf[j] + bias[2 * H + j], pc = gc[j] + bias[3 * H + j];
    if constexpr (kGeneral) {
      pi = clamp_gate(pi + peep[j] * c_prev, clip);
      pf = clamp_gate(pf + peep[2 * H + j] * c_prev, clip);
      pc = clamp_gate(pc, clip);
    }
    // sigmoid(a) tanh(b) = (e^2b - 1) / ((1 + e^-a)(e^2b + 1)): one division, not two.
    const float ei = exp_approx(-pi), eg = exp_approx(2.0f * pc);
    float f = 1.0f / (1.0f + exp_approx(-pf));
    if constexpr (kGeneral) f = input_forget ? 1.0f - 1.0f / (1.0f + ei) : f;
    const float cell = f * c_prev + (eg - 1.0f) / ((1.0f + ei) * (eg + 1.0f));
    float po = go[j] + bias[H + j];
    if constexpr (kGeneral) po = clamp_gate(po + peep[H + j] * cell, clip);
    const float eo = exp_approx(-po), ec = exp_approx(2.0f * cell);
    c[j] = cell;
    h[j] = (ec - 1.0f) / ((1.0f + eo) * (ec + 1.0f));
  }
}

template <bool kGeneral>
__attribute__((always_inline)) inline void update_rows(const LstmCellRows& s, const float* peep) {
  const std::int64_t H = s.hidden;
  for (std::int64_t b = 0; b < s.rows; ++b) {
    float* h = s.h + b * H;
    update_row<kGeneral>(s.gates + b * s.gates_stride, s.bias, peep, s.clip, s.input_forget, s.c + b * H, h, H);
    if (s.y) std::copy_n(h, H, s.y + b * s.y_stride);
  }
}

// Peephole weights of zero when absent keep the general loop branch-free.
__attribute__((always_inline)) inline void update(const LstmCellRows& s, const float* peep) {
  if (s.peepholes == nullptr && !(s.clip < std::numeric_limits<float>::infinity()) && !s.input_forget)
    update_rows<false>(s, peep);
  else
    update_rows<true>(s, peep);
}

CANARY_VECTORISE __attribute__((target("avx512f"))) void update_avx512(const LstmCellRows& s, const float* peep) {
  update(s, peep);
}
CANARY_VECTORISE __attribute__((target("avx2,fma"))) void update_avx2(const LstmCellRows& s, const float* peep) {
  update(s, peep);
}
CANARY_VECTORISE void update_baseline(const LstmCellRows& s, const float* peep) { update(s, peep); }

}  // namespace

void lstm_cell_rows(const LstmCellRows& step) {
  const float* peep = step.peepholes;
  thread_local std::vector<float> zeros;
  if (peep == nullptr) {
    const auto n = static_cast<std::size_t>(3 * step.hidden);
    if (zeros.size() < n) zeros.assign(n, 0.0f);
    peep = zeros.data();
  }
  switch (host_simd()) {
    case Simd::Avx512: return update_avx512(step, peep);
    case Simd::Avx2: return update_avx2(step, peep);
    case Simd::Baseline: return update_baseline(step, peep);
  }
}

}  // namespace canary::kernels::onednn

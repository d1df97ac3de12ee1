// The GRU cell updates, compiled for AVX-512, AVX2 and the baseline and
// dispatched once per process (kernels/host_simd.h).
#include "kernels/onednn/gru_cell.h"

#include <algorithm>

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

// The three row loops; H is the hidden size, each gate's block H wide.
enum class Half { LinearBeforeReset, ResetGate, AfterReset };

template <Half kHalf>
__attribute__((always_inline)) inline void update_row(const float* __restrict x, float* __restrict rec,
                                                      const float* __restrict bias, float clip, float* __restrict h,
                                                      float* __restrict reset_hidden, std::int64_t H) {
  for (std::int64_t j = 0; j < H; ++j) {
    if constexpr (kHalf == Half::ResetGate) {
      const float z = sigmoid_approx(clamp_gate(x[j] + rec[j] + bias[j], clip));
      const float r = sigmoid_approx(clamp_gate(x[H + j] + rec[H + j] + bias[H + j], clip));
      rec[j] = z;
      reset_hidden[j] = r * h[j];
    } else {
      float z, pre;
      if constexpr (kHalf == Half::LinearBeforeReset) {
        z = sigmoid_approx(clamp_gate(x[j] + rec[j] + bias[j], clip));
        const float r = sigmoid_approx(clamp_gate(x[H + j] + rec[H + j] + bias[H + j], clip));
        pre = x[2 * H + j] + bias[2 * H + j] + r * (rec[2 * H + j] + bias[3 * H + j]);
      } else {
        z = rec[j];
        pre = x[2 * H + j] + rec[2 * H + j] + bias[2 * H + j] + bias[3 * H + j];
      }
      const float candidate = tanh_approx(clamp_gate(pre, clip));
      h[j] = candidate + z * (h[j] - candidate);  // (1 - z) h~ + z h
    }
  }
}

template <Half kHalf>
__attribute__((always_inline)) inline void update_rows(const GruCellRows& s) {
  const std::int64_t H = s.hidden;
  for (std::int64_t b = 0; b < s.rows; ++b) {
    float* h = s.h + b * H;
    update_row<kHalf>(s.gates + b * s.gates_stride, s.recurrent + b * 3 * H, s.bias, s.clip, h,
                      s.reset_hidden ? s.reset_hidden + b * H : nullptr, H);
    if (kHalf != Half::ResetGate && s.y) std::copy_n(h, H, s.y + b * s.y_stride);
  }
}

template <Half kHalf>
CANARY_VECTORISE __attribute__((target("avx512f"))) void update_avx512(const GruCellRows& s) {
  update_rows<kHalf>(s);
}
template <Half kHalf>
CANARY_VECTORISE __attribute__((target("avx2,fma"))) void update_avx2(const GruCellRows& s) {
  update_rows<kHalf>(s);
}
template <Half kHalf>
CANARY_VECTORISE void update_baseline(const GruCellRows& s) {
  update_rows<kHalf>(s);
}

template <Half kHalf>
void dispatch(const GruCellRows& s) {
  switch (host_simd()) {
    case Simd::Avx512: return update_avx512<kHalf>(s);
    case Simd::Avx2: return update_avx2<kHalf>(s);
    case Simd::Baseline: return update_baseline<kHalf>(s);
  }
}

}  // namespace

void gru_cell_rows_linear_before_reset(const GruCellRows& step) { dispatch<Half::LinearBeforeReset>(step); }
void gru_reset_gate_rows(const GruCellRows& step) { dispatch<Half::ResetGate>(step); }
void gru_cell_rows_after_reset(const GruCellRows& step) { dispatch<Half::AfterReset>(step); }

}  // namespace canary::kernels::onednn

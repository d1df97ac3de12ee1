// FusedRowSpec: a fused row kernel — an elementwise prologue (a
// FusedElementwiseSpec whose first output is the row value) followed by a
// reduction or normalisation along the innermost collapsed dim (d2). Covers
// ReduceSum/ReduceMean/ReduceMax over the last axis, Softmax over the last
// axis and LayerNormalization over the last axis, each with the elementwise
// ops that feed them fused in front.
#pragma once

#include <cstdint>
#include <string>

#include "jit/fused_kernel.h"

namespace canary::jit {

enum class RowOp : std::uint8_t {
  Sum,        // out[row] = sum_j v[row, j]
  Mean,       // out[row] = sum / d2
  Max,        // out[row] = max_j v[row, j] (NaN propagates)
  Softmax,    // out[row, j] = exp(v - max) / sum exp(v - max)
  LayerNorm,  // out[row, j] = (v - mean) / sqrt(var + epsilon) * scale[j] + bias[j]
};

const char* row_op_name(RowOp op);

// How a row kernel accumulates its f32 sums (Sum/Mean's sum, Softmax's
// denominator, LayerNorm's mean and variance sums). Max is the same in both.
enum class Accumulation : std::uint8_t {
  Plain,        // one rounding per add, in several vector accumulators
  Compensated,  // Neumaier (Kahan-Babuska) per lane, compensated horizontal fold
};

const char* accumulation_name(Accumulation a);

struct FusedRowSpec {
  // Row values: prologue.outputs must hold exactly one node (the value fed
  // to the row op). Its inputs follow the FusedArgs layout rules.
  FusedElementwiseSpec prologue;
  RowOp op = RowOp::Sum;
  float epsilon = 1e-5f;     // LayerNorm
  bool has_scale = false;    // LayerNorm: scale, a dense vector of d2 floats
  bool has_bias = false;     // LayerNorm: bias, a dense vector of d2 floats
  Accumulation accumulation = Accumulation::Plain;

  std::string key() const;
};

// Empty when the spec is well formed (a well-formed prologue with exactly one
// output, a known op and accumulation, scale/bias only for LayerNorm);
// otherwise what is wrong.
std::string check_row_spec(const FusedRowSpec& spec);

// Arguments of an emitted row kernel: rows [row_begin, row_end) of the
// prologue's (d0 * d1) rows, each of d2 elements. Sum/Mean/Max write one
// float per row at outputs[row]; Softmax/LayerNorm write d2 floats per row
// at outputs + row * d2.
struct RowArgs {
  const float* const* inputs = nullptr;
  const std::int64_t* strides = nullptr;  // per prologue input: stride0, stride1
  float* output = nullptr;
  const float* scale = nullptr;
  const float* bias = nullptr;
  std::int64_t dims[3] = {1, 1, 1};
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;
};

// Returns 0, or 1 when the prologue's check_non_finite is set and an output is NaN or Inf.
using RowFn = std::uint32_t (*)(const RowArgs* args);

// Plain C++ oracle: sums in double for Sum/Mean/LayerNorm statistics and
// Softmax's denominator (backends must match within a documented bound). The
// spec's accumulation does not change it: both modes are checked against it.
std::uint32_t evaluate_row_reference(const FusedRowSpec& spec, const RowArgs& args);

}  // namespace canary::jit

// An Epilogue as oneDNN eltwise post-ops, its part of a primitive key, and
// the check that makes Relu and Clip post-ops safe (see EpilogueOp).
#pragma once

#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/onednn/primitive_cache.h"

namespace canary::kernels::onednn {

// Appends the epilogue's steps, in order, as eltwise post-ops.
void append_epilogue(dnnl::post_ops& ops, const Epilogue& epilogue);
// Attributes holding only the epilogue's post-ops (none when it is empty).
dnnl::primitive_attr epilogue_attributes(const Epilogue& epilogue);
// Appends each step's op, alpha and beta to key (nothing for an empty epilogue).
void push_epilogue(PrimitiveKey& key, const Epilogue& epilogue);

// A contraction y = scale * sum over `terms` products of a and b elements
// (+ c_scale * c when c is given), as the epilogue check sees it. The sum is
// accumulated in f32 before the scale applies.
struct ContractionBound {
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  std::int64_t terms = 0;
  double scale = 1.0;
  const Tensor* c = nullptr;
  double c_scale = 1.0;
  // b is never written while a tensor shares its buffer (constant weights):
  // its largest magnitude is computed once per thread and kept.
  bool b_constant = false;
};

// True when oneDNN's post-ops compute the epilogue exactly as the reference
// kernels would on this contraction's result: always for an epilogue whose
// steps keep NaN as NaN; for one with Relu or Clip, only when the result
// cannot hold a NaN (every operand finite and the sum far from overflowing).
bool epilogue_applies(const Epilogue& epilogue, const ContractionBound& bound);
// True when every step of the epilogue maps NaN to NaN (no Relu or Clip).
bool epilogue_keeps_nan(const Epilogue& epilogue);
// True when every operand is finite and the contraction's result stays far
// below overflow (its terms' magnitudes summed stay under 2^100).
bool contraction_stays_finite(const ContractionBound& bound);

}  // namespace canary::kernels::onednn

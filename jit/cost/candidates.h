// Candidate variants of one trace: the ladder's own variant first, then one
// candidate per axis the trace gives a reason to try (fast math where it has
// transcendentals, bf16 where it has MatMul/Gemm/Conv, unfused where it has
// fused groups, AVX2 on an AVX-512 host, symbolic dims where they are exact,
// compensated sums where it has row kernels that sum, the other placement of
// fused groups where a GPU is usable), and last the interpreter, the
// reference-precision path.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "canary/cost.h"
#include "jit/plan.h"
#include "jit/x86/isa.h"

namespace canary::jit::cost {

struct CandidateSpec {
  std::string name;               // "fused exact avx512 fp32"
  bool interpreter = false;       // the reference-precision path: nothing compiled
  PlanOptions plan;
  ShapeKnowledge knowledge;
  x86::Isa isa = x86::Isa::Avx2;
};

// What the trace contains that makes an axis worth a candidate.
struct TraceTraits {
  bool transcendentals = false;   // an op whose code differs between exact and fast math
  bool matmul_or_conv = false;    // MatMul, Gemm or Conv
  bool products = false;          // MatMul or Gemm (what a device takes of them)
  bool elementwise = false;       // an op the planner can fuse
  bool exact_dims = false;        // an entry dim > 1 not yet symbolic
  // An op a fused plan runs as a row kernel that sums (ReduceSum/ReduceMean
  // over the last axis; Softmax/LayerNormalization where planned as rows).
  bool row_ops = false;
  // Any op a fused plan runs as a row kernel (ReduceMax included).
  bool rows = false;
  // Work that more intra-op threads can split: a MatMul, Gemm, Conv, LSTM or
  // GRU, or a value of at least kParallelElements elements.
  bool parallel_work = false;
  // A MatMul, Gemm, Conv, LSTM or GRU: what oneDNN runs with f32 sums.
  bool heavy = false;
};
inline constexpr std::int64_t kParallelElements = std::int64_t{1} << 16;
TraceTraits trace_traits(const vm::Program& program, const Trace& trace, const ShapeKnowledge& knowledge);

// The candidates, `primary` (what the ladder would install) first and the
// interpreter last; duplicates are never produced.
// host_cores: the host's hardware threads (the threads axis needs more than one);
// device_usable: a GPU can take fused groups (the placement axis needs one).
std::vector<CandidateSpec> candidate_specs(const CandidateSpec& primary, const TraceTraits& traits,
                                           const Trace& trace, const CostModelOptions& options, int host_cores,
                                           bool device_usable = false);

// "fused exact avx512 fp32", "fused exact avx2 bf16 symbolic" (learned dims
// symbolic), "fused exact avx512 fp32 all dims symbolic", "fused exact avx512
// fp32 compensated" (compensated row sums), "fused exact avx512 fp32 on gpu"
// (fused groups on the GPU), ...
std::string candidate_name(const PlanOptions& plan, x86::Isa isa, bool all_symbolic);
// What candidate_name appends for fused groups on the GPU.
inline constexpr std::string_view kOnGpuSuffix = " on gpu";

}  // namespace canary::jit::cost

// What an elementwise, row or contraction kernel instruction computes,
// decoded from its adapter and parameters, so the JIT can fuse it without
// knowing the adapters.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/reference.h"
#include "vm/bytecode.h"

namespace canary::vm {

struct ElementwiseInfo {
  enum class Family { Unary, Binary, Clip, Identity };
  Family family = Family::Unary;
  kernels::UnaryOp unary = kernels::UnaryOp::Neg;  // Unary
  kernels::UnaryParams params;                      // Unary: the op's attributes (LeakyRelu's alpha, ...)
  kernels::BinaryOp binary = kernels::BinaryOp::Add;
};

// The elementwise meaning of a Kernel instruction, or nullopt for any other
// instruction (non-elementwise ops, Where, logical ops, Mod, Cast, ...).
std::optional<ElementwiseInfo> elementwise_info(const Instruction& in);

// Row ops: reductions, Softmax and LayerNormalization, with the parameters
// decoded at compile time (reductions whose axes arrive at run time, and
// those other than Sum, Mean and Max, are not described).
struct RowInfo {
  enum class Kind { Reduce, Softmax, LayerNorm };
  Kind kind = Kind::Reduce;
  kernels::ReduceOp reduce = kernels::ReduceOp::Sum;
  std::vector<std::int64_t> axes;  // Reduce (empty: all axes)
  bool keepdims = true;            // Reduce
  std::int64_t axis = -1;          // Softmax, LayerNorm
  double epsilon = 1e-5;           // LayerNorm
};
std::optional<RowInfo> row_info(const Instruction& in);

// Contractions bound to their oneDNN adapters (MatMul, Gemm, Conv in f32
// programs; the fp64 reference's adapters are not described), with the
// parameters the JIT needs to call the oneDNN kernel itself with an epilogue.
struct ContractionInfo {
  enum class Kind { MatMul, Gemm, Conv };
  Kind kind = Kind::MatMul;
  const kernels::GemmParams* gemm = nullptr;  // Gemm
  const kernels::ConvParams* conv = nullptr;  // Conv
  bool weights_are_constant = false;          // Conv: W is a graph constant
};
std::optional<ContractionInfo> contraction_info(const Instruction& in);

}  // namespace canary::vm

// Seeded random graphs in the text format for the JIT differential tests:
// elementwise DAGs with broadcasting, reductions, Softmax, LayerNormalization,
// MatMul/Gemm with constant weights, data movement, If and Loop, over inputs
// with symbolic dims N, C and T. Every graph is well-conditioned for inputs in
// [-2, 2] and carries a static error bound per output (value_bounds.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canary/dtype.h"

namespace canary::differential {

// Largest values of the symbols (also declared as symbol ranges in the text).
inline constexpr std::int64_t kMaxN = 4096;
inline constexpr std::int64_t kMaxC = 12;
inline constexpr std::int64_t kMaxT = 8;
// Largest value of a trip-count input.
inline constexpr std::int64_t kMaxTrip = 4;
// Inputs are drawn from [-kInputRange, kInputRange].
inline constexpr double kInputRange = 2.0;

// One model input: f32 data with dims "N", "C", "T" or digits, or an i64
// scalar trip count.
struct InputSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::string> dims;
};

// The static bound of one model output.
struct OutputBound {
  std::string name;
  double max_abs = 0.0;      // |exact value| for inputs in range
  double error_units = 0.0;  // |f32 - exact| <= error_units * 2^-24
  int depth = 0;             // ops on the longest path from an input
};

// Which generated features a graph uses (coverage checks).
struct GraphFeatures {
  int ops = 0;  // nodes, subgraphs included
  bool loop = false;
  bool loop_over_t = false;  // a Loop over the T axis of a captured input
  bool if_node = false;
  bool if_in_loop = false;   // an If on the iteration number inside a Loop body
  bool matmul = false;       // MatMul or Gemm
  bool reduction = false;
  bool softmax = false;
  bool layer_norm = false;
  bool data_movement = false;  // Reshape, Transpose or Concat
  bool broadcast = false;      // a binary op whose operands have different shapes
};

struct RandomGraph {
  std::uint64_t seed = 0;
  std::string text;  // the model in the text format
  // The same model with every absent Clip bound written as -inf/+inf. Where an
  // injected infinity reaches such a Clip, the real model clamps it to the f32
  // limits and computes on with values far outside the static bounds; the
  // harness runs this twin's fp64 reference beside the real one and leaves
  // the elements where the two differ out of the comparisons.
  std::string unsaturated_text;
  std::vector<InputSpec> inputs;
  std::vector<OutputBound> outputs;
  bool symbolic_c = true;  // C is a symbol (else a constant written as digits)
  // Main-graph If conditions: the then branch runs iff sum(sign(input)) > 0.
  std::vector<std::string> if_condition_inputs;
  GraphFeatures features;
};

// The graph for a seed (deterministic: same seed, same text).
RandomGraph generate_random_graph(std::uint64_t seed);

}  // namespace canary::differential

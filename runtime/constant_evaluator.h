// The graph optimizer's constant evaluator (graph/passes/optimizer.h): runs
// one node whose inputs are all constants in the interpreter, at load. The
// graph layer cannot run kernels; runtime/ knows both sides.
#pragma once

#include <optional>
#include <vector>

#include "canary/tensor.h"
#include "graph/graph.h"

namespace canary {

// The node's outputs (present ones, in order), or nullopt when the node does
// not run on these inputs (an error it would raise at run time stays there).
std::optional<std::vector<Tensor>> evaluate_constant_node(const graph::Node& node,
                                                          const std::vector<const Tensor*>& inputs);

}  // namespace canary

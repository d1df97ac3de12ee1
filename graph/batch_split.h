// Batch-split analysis: whether a model's calls can run as independent slices
// of the batch (axis 0 of every input) whose outputs concatenate along axis 0.
#pragma once

#include <string>

#include "graph/graph.h"

namespace canary::graph {

// Whether a graph's calls can be split along the batch: every graph input and
// output has the same symbolic leading dim (a bare symbol such as "N"), and each
// sample's outputs depend only on that sample's inputs.
struct BatchSplit {
  bool separable = false;
  // When not separable: what prevents it, naming the node or value
  // ("node 'Range_3' (Range) depends on the batch size").
  std::string reason;
};

// Decides BatchSplit for a graph whose shapes have been inferred (infer_shapes).
// Conservative: an op it has no rule for, or any doubt, makes it not separable.
BatchSplit analyse_batch_split(const Graph& g);

}  // namespace canary::graph

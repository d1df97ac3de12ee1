// Frame: the per-interpreter mutable state a Program runs in — registers
// (kept across calls so their buffers are reused), loop states, scan buffers
// and the symbol bindings of the current call.
#pragma once

#include <cstdint>
#include <vector>

#include "canary/tensor.h"
#include "graph/symbolic.h"

namespace canary::vm {

// The state of one loop (Loop or Scan) while it runs.
struct LoopState {
  std::int64_t iteration = 0;   // iterations started so far
  std::int64_t trip_count = 0;  // INT64_MAX when only the condition ends it
};

// Per-iteration values appended by ScanAppend, stacked by ScanStack. The byte
// vector keeps its capacity across calls.
struct ScanBuffer {
  DType dtype = DType::F32;
  Shape elem_shape;
  std::int64_t count = 0;
  std::vector<unsigned char> bytes;
};

struct Frame {
  std::vector<Tensor> registers;
  std::vector<LoopState> loops;
  std::vector<ScanBuffer> scans;
  std::vector<Tensor> move_scratch;
  graph::Bindings bindings;
};

}  // namespace canary::vm

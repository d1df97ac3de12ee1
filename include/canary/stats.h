// Stats: counters a Session keeps about the calls it ran.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canary/tensor.h"

namespace canary {

struct ShapeCount {
  Shape shape;
  std::uint64_t count = 0;
};

struct InputShapes {
  std::string input;
  std::vector<ShapeCount> shapes;  // distinct shapes in first-seen order
  std::uint64_t other = 0;         // calls whose shape fell outside the tracked set
};

struct Stats {
  std::uint64_t calls = 0;                   // successful run() calls
  std::uint64_t failed_calls = 0;            // run() calls that threw canary::Error
  std::uint64_t instructions_executed = 0;   // bytecode instructions, all calls
  std::uint64_t distinct_shapes = 0;         // distinct output shapes seen, summed over instructions
  std::vector<InputShapes> input_shapes;     // per model input
};

}  // namespace canary

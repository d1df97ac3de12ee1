// Derives the shape-event script of a stream from its call layouts and
// explains each change from the scene's schedule.
#pragma once

#include <vector>

#include "samples/vehicle/stream.h"

namespace vehicle {

// One entry per dim change between consecutive calls; a window that grows one
// sample per call while the history refills is one entry spanning those calls.
std::vector<ShapeEvent> build_shape_script(const Scenario& s, const std::vector<CallSpec>& specs);

}  // namespace vehicle

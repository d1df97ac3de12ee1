// A scene: its schedule and its simulated truth, built in one place.
#pragma once

#include "samples/vehicle/scenario.h"
#include "samples/vehicle/traffic_sim.h"

namespace vehicle {

struct Scene {
  Scenario scenario;
  TruthTrack truth;
};

// draw_scenario → simulate the clean physics → place attacks (control
// commands where the clean track is busy) → simulate with the attacks.
Scene build_scene(const ScenarioConfig& config);

}  // namespace vehicle

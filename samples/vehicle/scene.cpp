// The scene pipeline: schedule, clean physics, attack placement, final physics.
#include "samples/vehicle/scene.h"

#include "samples/vehicle/attack_plan.h"

namespace vehicle {

// Lists the stages of building a scene, in order.
Scene build_scene(const ScenarioConfig& config) {
  Scene scene;
  scene.scenario = draw_scenario(config);
  const TruthTrack clean = simulate_traffic(scene.scenario);
  place_attacks(scene.scenario, clean);
  scene.truth = simulate_traffic(scene.scenario);
  return scene;
}

}  // namespace vehicle

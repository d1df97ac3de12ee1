// Places the labelled attacks and faults of a scene: false data injection
// (spike, bias, drift, combined), control-command manipulation and message
// loss, each on one member vehicle, apart from each other and from the
// scheduled shape events.
#pragma once

#include "samples/vehicle/scenario.h"
#include "samples/vehicle/traffic_sim.h"

namespace vehicle {

// Adds config.attacks_per_kind attacks of every kind (scaled to the scene
// length) to s.events. Control-command attacks go where the clean track shows
// the target accelerating or braking, so that scaling its command matters.
void place_attacks(Scenario& s, const TruthTrack& clean);

}  // namespace vehicle

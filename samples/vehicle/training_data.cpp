// Writes the training series and the window-cutting check for train.py.
#include "samples/vehicle/training_data.h"

#include <cstdio>
#include <filesystem>
#include <vector>

#include "samples/vehicle/broadcast.h"
#include "samples/vehicle/npy_writer.h"
#include "samples/vehicle/scene.h"
#include "samples/vehicle/stream.h"

namespace vehicle {
namespace {

// Received messages (5 fields) of every vehicle at every sample of a feed.
void append_series(const Scene& scene, int step, std::vector<double>& out) {
  const std::int64_t samples = scene.scenario.total_ticks / step + 1;
  for (int v = 0; v < scene.truth.vehicles; ++v)
    for (std::int64_t k = 0; k < samples; ++k) {
      const Message m = receive(scene.scenario, scene.truth, v, k * step, step);
      out.insert(out.end(), m.fields.begin(), m.fields.begin() + kFeatures);
    }
}

// A clean training scene: 8..24 vehicles, its own seed.
ScenarioConfig training_scene(const TrainingDataConfig& config, int index) {
  ScenarioConfig c;
  c.seed = config.seed + static_cast<std::uint64_t>(index);
  c.vehicles = 8 + (index * 7) % 17;
  c.initial_members = c.vehicles;
  c.seconds = config.seconds;
  c.attacks = false;
  c.shape_events = false;
  return c;
}

// Both feeds of one scene into the given file stem.
void write_scene_series(const Scene& scene, const std::string& stem) {
  const std::int64_t vehicles = scene.truth.vehicles;
  for (int step : {kTicksPerSecond / kBaseRateHz, kTicksPerSecond / kFastRateHz}) {
    std::vector<double> series;
    append_series(scene, step, series);
    write_npy(stem + std::to_string(kTicksPerSecond / step) + ".npy", series,
              {vehicles, scene.scenario.total_ticks / step + 1, kFeatures});
  }
}

// Every 23rd five-feature call of a 20 s stream with shape events, and that scene's series.
int write_window_check(const TrainingDataConfig& config) {
  ScenarioConfig c;
  c.seed = config.seed + 999;
  c.seconds = 20.0;
  c.attacks = false;
  const VehicleStream stream(c);
  write_scene_series(stream.scene(), config.out_dir + "/check_series");
  int written = 0;
  for (int i = 0; i < stream.calls(); i += 23) {
    const StreamCall call = stream.call(i);
    if (call.spec.features != kFeatures) continue;
    const std::string stem = config.out_dir + "/check_" + std::to_string(written++);
    write_npy(stem + "_x.npy", call.inputs, {call.rows(), call.spec.window, kFeatures});
    write_npy(stem + "_y.npy", call.observed, {call.rows(), kTargets});
    std::vector<std::int64_t> meta = {call.spec.tick, call.spec.step, call.spec.window};
    meta.insert(meta.end(), call.spec.vehicles.begin(), call.spec.vehicles.end());
    write_npy(stem + "_meta.npy", meta, {static_cast<std::int64_t>(meta.size())});
  }
  return written;
}

}  // namespace

// Scenes one after another (each is simulated once and sampled at both rates).
std::string write_training_data(const TrainingDataConfig& config) {
  std::filesystem::create_directories(config.out_dir);
  std::vector<double> series10, series25;
  std::vector<std::int64_t> row_scene;
  std::int64_t samples10 = 0, samples25 = 0;
  for (int i = 0; i < config.scenes; ++i) {
    const Scene scene = build_scene(training_scene(config, i));
    append_series(scene, kTicksPerSecond / kBaseRateHz, series10);
    append_series(scene, kTicksPerSecond / kFastRateHz, series25);
    row_scene.insert(row_scene.end(), static_cast<std::size_t>(scene.truth.vehicles), i);
    samples10 = scene.scenario.total_ticks / (kTicksPerSecond / kBaseRateHz) + 1;
    samples25 = scene.scenario.total_ticks / (kTicksPerSecond / kFastRateHz) + 1;
  }
  const auto rows = static_cast<std::int64_t>(row_scene.size());
  write_npy(config.out_dir + "/series10.npy", series10, {rows, samples10, kFeatures});
  write_npy(config.out_dir + "/series25.npy", series25, {rows, samples25, kFeatures});
  write_npy(config.out_dir + "/row_scene.npy", row_scene, {rows});
  const int checks = write_window_check(config);
  char line[160];
  std::snprintf(line, sizeof line, "wrote %d scenes (%lld vehicle rows, %.0f s each) and %d window checks to %s",
                config.scenes, static_cast<long long>(rows), config.seconds, checks, config.out_dir.c_str());
  return line;
}

}  // namespace vehicle

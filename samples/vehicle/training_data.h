// The `generate` mode: clean scenes (speed changes and benign braking, no
// attacks, no shape events) written as .npy for samples/vehicle/train.py,
// plus a few calls of a stream with their source series, so the script can
// check that it cuts windows exactly as the app does.
#pragma once

#include <cstdint>
#include <string>

namespace vehicle {

struct TrainingDataConfig {
  std::string out_dir;
  int scenes = 32;
  double seconds = 120.0;
  std::uint64_t seed = 1000;
};

// Writes into out_dir (created when missing):
//   series10.npy f64 [rows, T10, 5]  received messages at 10 Hz, one row per vehicle of every scene
//   series25.npy f64 [rows, T25, 5]  the same scenes at 25 Hz
//   row_scene.npy i64 [rows]         the scene of each row (train/validation split by scene)
//   check_series10.npy, check_series25.npy  one stream scene's series
//   check_<k>_x.npy f32 [N, W, 5], check_<k>_y.npy f32 [N, 3], check_<k>_meta.npy i64 [tick, step, W, vehicles...]
// Returns a one-line summary.
std::string write_training_data(const TrainingDataConfig& config);

}  // namespace vehicle

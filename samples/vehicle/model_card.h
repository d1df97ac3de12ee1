// The trained model's card (models/metrics.json): input and output names,
// residual standard deviations and the alarm threshold the score uses.
#pragma once

#include <array>
#include <string>

namespace vehicle {

struct ModelCard {
  std::string input = "x", output = "y";
  std::array<double, 3> residual_std{1.0, 1.0, 1.0};  // dx (m), v (m/s), a (m/s²) on clean validation data
  double threshold = 0.0;                              // score above this raises an alarm
  double threshold_quantile = 0.95;
  int validation_windows = 0;
  int training_steps = 0;
};

// Reads metrics.json; throws std::runtime_error naming the file and the missing or malformed key.
ModelCard load_model_card(const std::string& path);

// The committed model folder (samples/vehicle/models, fixed at build time).
std::string default_model_dir();

}  // namespace vehicle

// Training data for the flow-meter models, from the same generator and the
// same gap repair the app uses: windows of many independently drawn fields,
// bucketed by window length and written as .npy files for train.py.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace flowmeter {

struct TrainingDataConfig {
  std::string out_dir;
  std::uint64_t seed = 1000;    // fields use seed, seed + 1, ... (streams use small seeds)
  int fields = 100;
  int wells_per_field = 32;
  int calls_per_field = 8;      // window end times per field, drawn over four days
  double validation_fraction = 0.15;  // the last fields go to validation
};

// Writes {train,val}_{x,y}_w<W>.npy into out_dir: x f32 [n, 7, W] (gaps filled as the conv app
// does), y f64 [n, 3] (window-mean oil, gas, water Sm3/h). Logs progress to `log`.
// Throws std::runtime_error when a file cannot be written.
void write_training_data(const TrainingDataConfig& config, std::FILE* log);

}  // namespace flowmeter

// Training windows: random times, window lengths and sampling rates over many fields.
#include "samples/flowmeter/training_data.h"

#include <map>
#include <vector>

#include "samples/flowmeter/npy_io.h"
#include "samples/flowmeter/seeded_random.h"
#include "samples/flowmeter/stream_generator.h"
#include "samples/flowmeter/window_cleaning.h"

namespace flowmeter {
namespace {

constexpr double kHorizonMin = 4.0 * 1440.0;
constexpr int kShortWindows[] = {16, 24, 32, 48};

// Rows of one window length.
struct Bucket {
  std::vector<float> x;
  std::vector<double> y;
  std::int64_t rows = 0;
};

// Window length and sample spacing for one call: mostly nominal, some short, some burst.
std::pair<int, double> draw_window(SeededRandom& rng) {
  const double u = rng.uniform();
  if (u < 0.7) return {60, 1.0};
  if (u < 0.9) return {kShortWindows[rng.integer(0, 3)], 1.0};
  return {360, 1.0 / 6.0};
}

// Adds one field's windows to the buckets.
void add_field(std::uint64_t seed, const TrainingDataConfig& config, std::map<int, Bucket>& buckets) {
  const WellField field(seed, config.wells_per_field, kHorizonMin);
  const SensorFaults faults(seed ^ 0xfa017ULL, config.wells_per_field, kHorizonMin);
  SeededRandom rng = SeededRandom::keyed(seed, {0x7a1});
  std::vector<std::string> names;
  for (int ch = 0; ch < kStandardChannels; ++ch) names.emplace_back(kChannelNames[static_cast<std::size_t>(ch)]);
  for (int k = 0; k < config.calls_per_field; ++k) {
    FlowCall c;
    std::tie(c.window, c.step_min) = draw_window(rng);
    c.end_min = static_cast<double>(rng.integer(90, static_cast<int>(kHorizonMin) - 1));
    for (int w = 0; w < config.wells_per_field; ++w) c.wells.push_back(w);
    for (int ch = 0; ch < kStandardChannels; ++ch) c.channels.push_back(static_cast<Channel>(ch));
    fill_call(field, faults, c);
    const CleanBatch clean = clean_batch(c.x, config.wells_per_field, kStandardChannels, c.window, GapPolicy::Impute, names);
    Bucket& b = buckets[c.window];
    b.x.insert(b.x.end(), clean.x.begin(), clean.x.end());
    for (int row : clean.rows)
      for (int p = 0; p < kPhases; ++p) b.y.push_back(c.truth[static_cast<std::size_t>(row * kPhases + p)]);
    b.rows += static_cast<std::int64_t>(clean.rows.size());
  }
}

// Writes one split's buckets.
void write_split(const std::string& dir, const std::string& split, const std::map<int, Bucket>& buckets, std::FILE* log) {
  for (const auto& [window, b] : buckets) {
    const std::string suffix = "_w" + std::to_string(window) + ".npy";
    write_npy(dir + "/" + split + "_x" + suffix, b.x, {b.rows, kStandardChannels, window});
    write_npy(dir + "/" + split + "_y" + suffix, b.y, {b.rows, kPhases});
    std::fprintf(log, "  %s W=%-3d %6lld windows\n", split.c_str(), window, static_cast<long long>(b.rows));
  }
}

}  // namespace

// Fields [0, n_train) to train, the rest to validation.
void write_training_data(const TrainingDataConfig& config, std::FILE* log) {
  const int validation = std::max(1, static_cast<int>(config.fields * config.validation_fraction));
  std::map<int, Bucket> train, val;
  for (int f = 0; f < config.fields; ++f) {
    add_field(config.seed + static_cast<std::uint64_t>(f), config, f < config.fields - validation ? train : val);
    if ((f + 1) % 10 == 0) std::fprintf(log, "generated %d/%d fields\n", f + 1, config.fields);
  }
  write_split(config.out_dir, "train", train, log);
  write_split(config.out_dir, "val", val, log);
}

}  // namespace flowmeter

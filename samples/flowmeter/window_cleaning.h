// What the app does with missing gauge readings before a prediction, so that
// NaN never reaches a model: each well's window is either repaired (interior
// gaps carried forward, a leading gap filled back or trimmed) or the well is
// masked out of the call with a reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flowmeter {

enum class GapPolicy {
  // Conv model: every gap is filled (forward, then backward for a leading gap).
  Impute,
  // LSTM model: a leading gap is cut off and the rest shifted to the front,
  // its length going to the model's sequence_lens; interior gaps are filled.
  TrimLeading,
};

// A channel may miss at most this fraction of its window, and a trimmed
// window must keep this many steps; otherwise the well gets no estimate.
inline constexpr double kMaxMissingFraction = 0.5;
inline constexpr int kMinValidSteps = 8;

struct MaskedWell {
  int row = 0;         // row in the incoming batch
  std::string reason;  // "PBH missing 35/60 samples"
};

// The batch the model sees: the kept rows, NaN-free.
struct CleanBatch {
  std::vector<int> rows;          // incoming rows kept, in order
  std::vector<float> x;           // [rows, channels, window]
  std::vector<std::int32_t> lens; // per kept row: valid steps (window unless trimmed)
  std::vector<MaskedWell> masked;
  std::int64_t imputed_values = 0;
  std::int64_t trimmed_steps = 0;
};

// Cleans x [n, channels, window] under `policy`. Channel names label the reasons.
CleanBatch clean_batch(const std::vector<float>& x, int n, int channels, int window, GapPolicy policy,
                       const std::vector<std::string>& channel_names);

}  // namespace flowmeter

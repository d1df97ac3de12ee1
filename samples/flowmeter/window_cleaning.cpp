// Gap repair and masking of gauge windows before a prediction.
#include "samples/flowmeter/window_cleaning.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>

namespace flowmeter {
namespace {

// Steps at the start of the window where some channel reads nothing.
int leading_gap(const float* row, int channels, int window) {
  for (int j = 0; j < window; ++j) {
    bool all_finite = true;
    for (int c = 0; c < channels && all_finite; ++c) all_finite = std::isfinite(row[c * window + j]);
    if (all_finite) return j;
  }
  return window;
}

// Fills one channel's gaps in place (forward, then backward from the first reading); returns the count filled.
std::int64_t fill_channel(float* values, int length) {
  std::int64_t filled = 0;
  std::optional<float> last;
  int first = -1;
  for (int j = 0; j < length; ++j) {
    if (std::isfinite(values[j])) {
      last = values[j];
      if (first < 0) first = j;
    } else if (last) {
      values[j] = *last;
      ++filled;
    }
  }
  for (int j = 0; j < first; ++j, ++filled) values[j] = values[first];
  return filled;
}

// Non-finite readings of one channel.
int missing_count(const float* values, int length) {
  int missing = 0;
  for (int j = 0; j < length; ++j) missing += std::isfinite(values[j]) ? 0 : 1;
  return missing;
}

}  // namespace

// Per row: trim (LSTM) or not, mask when a channel misses too much, fill the rest.
CleanBatch clean_batch(const std::vector<float>& x, int n, int channels, int window, GapPolicy policy,
                       const std::vector<std::string>& channel_names) {
  CleanBatch out;
  const std::size_t row_size = static_cast<std::size_t>(channels) * static_cast<std::size_t>(window);
  std::vector<float> row(row_size);
  for (int r = 0; r < n; ++r) {
    const float* in = x.data() + static_cast<std::size_t>(r) * row_size;
    const int lead = policy == GapPolicy::TrimLeading ? leading_gap(in, channels, window) : 0;
    const int valid = window - lead;
    if (valid < kMinValidSteps) {
      out.masked.push_back({r, "only " + std::to_string(valid) + " of " + std::to_string(window) + " steps reported"});
      continue;
    }
    std::fill(row.begin(), row.end(), 0.0f);
    for (int c = 0; c < channels; ++c)
      for (int j = 0; j < valid; ++j) row[static_cast<std::size_t>(c * window + j)] = in[c * window + lead + j];
    std::string reason;
    for (int c = 0; c < channels && reason.empty(); ++c) {
      const int missing = missing_count(row.data() + c * window, valid);
      if (missing > kMaxMissingFraction * valid) {
        const std::string name = c < static_cast<int>(channel_names.size()) ? channel_names[static_cast<std::size_t>(c)]
                                                                            : "channel " + std::to_string(c);
        reason = name + " missing " + std::to_string(missing) + "/" + std::to_string(valid) + " samples";
      }
    }
    if (!reason.empty()) {
      out.masked.push_back({r, reason});
      continue;
    }
    for (int c = 0; c < channels; ++c) out.imputed_values += fill_channel(row.data() + c * window, valid);
    out.trimmed_steps += lead;
    out.rows.push_back(r);
    out.lens.push_back(valid);
    out.x.insert(out.x.end(), row.begin(), row.end());
  }
  return out;
}

}  // namespace flowmeter

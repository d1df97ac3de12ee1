// Scores the detector against the labels: per attack kind, row-level
// precision/recall/F1 and event-level detection and delay; false alarms on
// clean rows and on benign hard braking; latency percentiles.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "samples/vehicle/detector.h"
#include "samples/vehicle/stream.h"

namespace vehicle {

struct KindScore {
  std::int64_t rows = 0, alarms = 0;          // labelled rows of this kind, and the alarms among them
  std::int64_t exceedances = 0;               // rows whose score alone crossed the threshold
  int events = 0, detected = 0;               // events of this kind in calls, and those with an alarm in [start, end + 1 s]
  std::vector<double> delays;                 // seconds from start to the first alarm, per detected event
  double recall() const { return rows ? static_cast<double>(alarms) / static_cast<double>(rows) : 0.0; }
  // One kind against every non-attack row: TP / (TP + all false alarms).
  double precision(std::int64_t false_alarms) const;
  double f1(std::int64_t false_alarms) const;
  double median_delay() const;
};

struct Summary {
  std::array<KindScore, kLabelKindCount> kinds{};
  std::int64_t clean_rows = 0, clean_alarms = 0;     // rows with no attack and no benign braking
  std::int64_t benign_rows = 0, benign_alarms = 0;   // benign hard braking and its 5 s wake
  std::int64_t clean_exceedances = 0, benign_exceedances = 0;  // the same with persistence 1
  std::int64_t aftermath_rows = 0, unscored_rows = 0;
  std::int64_t attack_rows() const;
  std::int64_t attack_alarms() const;
  std::int64_t false_alarms() const { return clean_alarms + benign_alarms; }
  std::vector<double> latencies_us;                  // per model call that ran
  int calls = 0, failed_calls = 0;
  double percentile_latency(double q) const;
};

class Evaluation {
 public:
  explicit Evaluation(const Scenario& scenario);
  void add(const StreamCall& call, const CallResult& result);
  Summary finish() const;

 private:
  const Scenario& scenario_;
  Summary summary_;
  std::vector<double> first_alarm_;  // per event: scene seconds of the first alarm in its span, or -1
  std::vector<bool> seen_;           // per event: some call covered it
};

}  // namespace vehicle

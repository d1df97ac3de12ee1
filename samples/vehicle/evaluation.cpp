// Row accounting: attack rows are positives; clean and benign rows are
// negatives; rows whose window still holds an ended attack (aftermath) and
// rows that could not be scored (window of held messages, a rejected call)
// are left out. An event counts as detected with an alarm on its vehicle from
// its start to 1 s after its end.
#include "samples/vehicle/evaluation.h"

#include <algorithm>

namespace vehicle {
namespace {

constexpr double kDetectionGraceSeconds = 1.0;

// The q-quantile by nearest rank; 0 for no values.
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

}  // namespace

// TP / (TP + FP); 0 without alarms.
double KindScore::precision(std::int64_t false_alarms) const {
  return alarms + false_alarms ? static_cast<double>(alarms) / static_cast<double>(alarms + false_alarms) : 0.0;
}

// Harmonic mean of precision and recall.
double KindScore::f1(std::int64_t false_alarms) const {
  const double p = precision(false_alarms), r = recall();
  return p + r > 0.0 ? 2.0 * p * r / (p + r) : 0.0;
}

// Median seconds from an event's start to its first alarm.
double KindScore::median_delay() const { return quantile(delays, 0.5); }

// Rows labelled with any attack kind.
std::int64_t Summary::attack_rows() const {
  std::int64_t n = 0;
  for (int k = 0; k < kLabelKindCount; ++k)
    if (is_attack(static_cast<LabelKind>(k))) n += kinds[static_cast<std::size_t>(k)].rows;
  return n;
}

// Alarms on rows labelled with any attack kind.
std::int64_t Summary::attack_alarms() const {
  std::int64_t n = 0;
  for (int k = 0; k < kLabelKindCount; ++k)
    if (is_attack(static_cast<LabelKind>(k))) n += kinds[static_cast<std::size_t>(k)].alarms;
  return n;
}

// Session::run latency quantile in microseconds.
double Summary::percentile_latency(double q) const { return quantile(latencies_us, q); }

// Starts with no event seen and no alarm.
Evaluation::Evaluation(const Scenario& scenario)
    : scenario_(scenario), first_alarm_(scenario.events.size(), -1.0), seen_(scenario.events.size(), false) {}

// Counts every row of one call and notes the first alarm inside each event's span.
void Evaluation::add(const StreamCall& call, const CallResult& result) {
  ++summary_.calls;
  if (result.failed) ++summary_.failed_calls;
  else if (result.model_rows > 0) summary_.latencies_us.push_back(result.latency_us);
  const double now = tick_seconds(call.spec.tick);
  for (std::size_t r = 0; r < result.rows.size(); ++r) {
    const RowLabel& label = call.labels[r];
    const RowDecision& d = result.rows[r];
    const int vehicle = call.spec.vehicles[r];
    for (std::size_t e = 0; e < scenario_.events.size(); ++e) {
      const LabelledEvent& ev = scenario_.events[e];
      if (!is_attack(ev.kind) || ev.vehicle != vehicle) continue;
      const double start = tick_seconds(ev.start), end = tick_seconds(ev.end) + kDetectionGraceSeconds;
      if (now < start || now > end) continue;
      seen_[e] = true;
      if (d.alarm && first_alarm_[e] < 0.0) first_alarm_[e] = now;
    }
    const bool unscored = d.outcome == RowOutcome::Recovering || d.outcome == RowOutcome::Rejected;
    if (is_attack(label.kind)) {
      KindScore& k = summary_.kinds[static_cast<std::size_t>(label.kind)];
      ++k.rows;
      k.alarms += d.alarm;
      k.exceedances += d.exceeds;
    } else if (label.aftermath) {
      ++summary_.aftermath_rows;
    } else if (unscored) {
      ++summary_.unscored_rows;
    } else if (label.kind == LabelKind::BenignBraking) {
      ++summary_.benign_rows;
      summary_.benign_alarms += d.alarm;
      summary_.benign_exceedances += d.exceeds;
    } else {
      ++summary_.clean_rows;
      summary_.clean_alarms += d.alarm;
      summary_.clean_exceedances += d.exceeds;
    }
  }
}

// Folds the per-event detections into the per-kind scores.
Summary Evaluation::finish() const {
  Summary s = summary_;
  for (std::size_t e = 0; e < scenario_.events.size(); ++e) {
    const LabelledEvent& ev = scenario_.events[e];
    if (!is_attack(ev.kind) || !seen_[e]) continue;
    KindScore& k = s.kinds[static_cast<std::size_t>(ev.kind)];
    ++k.events;
    if (first_alarm_[e] >= 0.0) {
      ++k.detected;
      k.delays.push_back(first_alarm_[e] - tick_seconds(ev.start));
    }
  }
  return s;
}

}  // namespace vehicle

// The detector: screens each call's rows (held or non-finite messages never
// reach the model), runs the valid rows through a canary::Session, scores
// each prediction against the newest message and raises alarms. A score above
// the threshold is an exceedance; an alarm needs `persistence` consecutive
// exceedances of the same vehicle (1: every exceedance alarms), or one score
// above `strong_factor` times the threshold.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "canary/canary.h"
#include "samples/vehicle/model_card.h"
#include "samples/vehicle/stream.h"

namespace vehicle {

// What happened to one row of a call.
enum class RowOutcome : std::uint8_t {
  Scored,      // predicted and scored
  Stale,       // the newest message is held (message loss): alarm, no prediction
  Recovering,  // the window still holds held messages: no prediction, no alarm
  NonFinite,   // NaN/Inf in the window or the newest message: alarm, no prediction
  Rejected,    // the model refused the call (typed canary::Error): no prediction
};

const char* row_outcome_name(RowOutcome o);

struct RowDecision {
  RowOutcome outcome = RowOutcome::Scored;
  bool alarm = false;
  bool exceeds = false;                // score above the threshold (the alarm with persistence 1)
  double score = 0.0;                  // mean of (residual / residual std)^2 over (dx, v, a)
  std::array<double, 3> prediction{};  // model output for Scored rows (f32, or f64 from a reference session)
};

struct CallResult {
  int index = 0;
  std::int64_t session_call = 0;   // the session's 1-based call number (events use it); 0: model not run
  std::int64_t model_rows = 0;     // the batch the model saw
  std::int64_t window = 0, features = 0;
  double latency_us = 0.0;         // Session::run wall time
  bool compiled = false;           // the JIT's compiled code ran the call (Stats::jit.compiled_entries grew)
  bool failed = false;             // the model threw canary::Error
  canary::ErrorKind error_kind = canary::ErrorKind::Internal;
  std::string error;
  std::vector<RowDecision> rows;
};

// When exceedances become alarms.
struct AlarmRule {
  int persistence = 2;          // consecutive exceedances of a vehicle that raise an alarm
  double strong_factor = 10.0;  // a single score this many thresholds high alarms at once (0: never)
};

class Detector {
 public:
  Detector(canary::Session session, ModelCard card, AlarmRule rule = AlarmRule{});
  // Screens, predicts, scores and decides every row of the call.
  CallResult process(const StreamCall& call);
  const canary::Session& session() const { return session_; }
  const ModelCard& card() const { return card_; }

 private:
  // Applies the persistence rule to a scored row of `vehicle`.
  bool persistent_alarm(int vehicle, bool exceeds, double score);

  canary::Session session_;
  ModelCard card_;
  AlarmRule rule_;
  std::map<int, int> streaks_;  // per vehicle: consecutive exceedances so far
};

// Options for the detector's runtime: the JIT on or off, NaN rejected at the door as a second line of defence.
canary::Options detector_options(bool jit, bool synchronous_compiles);

}  // namespace vehicle

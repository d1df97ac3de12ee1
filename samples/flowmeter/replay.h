// Replays a flow-meter stream through a canary Session: cleans each call's
// gaps, runs the model, and records per call what went in, what came out,
// the error when the model could not take the call, the latency and the JIT
// events the call caused. Public API only.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "canary/canary.h"
#include "samples/flowmeter/stream_generator.h"
#include "samples/flowmeter/window_cleaning.h"

namespace flowmeter {

enum class ModelKind { Conv, Lstm };

std::string_view model_kind_name(ModelKind kind);
// The committed model of that kind (samples/flowmeter/models/).
std::string default_model_path(ModelKind kind);

enum class CallOutcome {
  Ran,       // the model produced rates for every kept well
  Rejected,  // the model raised canary::Error for the call's shape
  NoWells,   // every well was masked; nothing to run
};

struct CallRecord {
  int index = 0;
  std::array<std::int64_t, 3> stream_shape{};  // [wells, channels, window] as the stream delivered it
  std::array<std::int64_t, 3> sent_shape{};    // after masking wells
  CallOutcome outcome = CallOutcome::Ran;
  canary::ErrorKind error_kind = canary::ErrorKind::Internal;
  std::string error;                           // Rejected: the error's message
  std::vector<int> wells;                      // estimated wells
  std::vector<float> rates;                    // [wells, 3] Sm3/h
  std::vector<double> truth;                   // [wells, 3] Sm3/h
  std::vector<std::pair<int, std::string>> masked;  // (well, reason)
  std::int64_t imputed_values = 0, trimmed_steps = 0;
  double latency_us = 0.0;
  double max_reference_error = 0.0;            // vs the fp64 reference session (when run)
  std::vector<canary::Event> events;           // JIT events logged during the call
  std::vector<ShapeEvent> shape_events;
};

struct ReplayOptions {
  bool reference = false;  // also run the fp64 reference session and record the deviation
  int calls = -1;          // calls to replay (-1: the stream's)
};

struct ReplayResult {
  std::vector<CallRecord> calls;
  canary::Stats stats;
  canary::JitReport jit;
  std::vector<canary::Event> events;  // the model's whole log
};

// The gap policy a model needs: trimming when it takes sequence lengths ("lens").
GapPolicy gap_policy_for(const canary::Model& model);

// Runs every call of the stream through one session of the model.
ReplayResult replay_stream(const canary::Model& model, const StreamGenerator& stream, const ReplayOptions& options);

}  // namespace flowmeter

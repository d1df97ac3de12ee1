// canary-vehicle: the connected-vehicle anomaly detector sample.
//
//   canary-vehicle [run] [--model M.onnx] [--seed S] [--seconds S] [--calls N] [--no-jit] [--no-reference]
//                        [--persistence K] [--strong F]
//   canary-vehicle script [--seed S] [--seconds S]      the scene's events and shape-event script
//   canary-vehicle generate --out DIR [--scenes N] [--seconds S] [--seed S]   training data (.npy)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "samples/vehicle/model_card.h"
#include "samples/vehicle/replay.h"
#include "samples/vehicle/report.h"
#include "samples/vehicle/stream.h"
#include "samples/vehicle/training_data.h"

namespace {

struct Args {
  std::string mode = "run", model, out;
  std::uint64_t seed = 7;
  double seconds = 90.0;
  int calls = -1, scenes = 32;
  vehicle::AlarmRule rule;
  bool jit = true, reference = true;
  bool seed_given = false, seconds_given = false;
};

// Parses the command line; unknown arguments are an error.
Args parse_args(int argc, char** argv) {
  Args a;
  int i = 1;
  if (i < argc && argv[i][0] != '-') a.mode = argv[i++];
  for (; i < argc; ++i) {
    const std::string s = argv[i];
    const bool has_value = i + 1 < argc;
    if (s == "--model" && has_value) a.model = argv[++i];
    else if (s == "--out" && has_value) a.out = argv[++i];
    else if (s == "--seed" && has_value) a.seed = std::strtoull(argv[++i], nullptr, 10), a.seed_given = true;
    else if (s == "--seconds" && has_value) a.seconds = std::atof(argv[++i]), a.seconds_given = true;
    else if (s == "--calls" && has_value) a.calls = std::atoi(argv[++i]);
    else if (s == "--scenes" && has_value) a.scenes = std::atoi(argv[++i]);
    else if (s == "--persistence" && has_value) a.rule.persistence = std::max(1, std::atoi(argv[++i]));
    else if (s == "--strong" && has_value) a.rule.strong_factor = std::atof(argv[++i]);
    else if (s == "--no-jit") a.jit = false;
    else if (s == "--no-reference") a.reference = false;
    else throw std::invalid_argument("unknown argument '" + s + "'");
  }
  if (!(a.seconds > 0.0 && a.seconds <= 3600.0))
    throw std::invalid_argument("--seconds must be in (0, 3600], got " + std::to_string(a.seconds));
  if (a.scenes < 1 || a.scenes > 1000) throw std::invalid_argument("--scenes must be in [1, 1000]");
  return a;
}

// Prints the labelled events and the shape-event script of a scene.
int print_script(const Args& a) {
  vehicle::ScenarioConfig config;
  config.seed = a.seed;
  config.seconds = a.seconds;
  const vehicle::VehicleStream stream(config);
  const auto& s = stream.scene().scenario;
  std::printf("scene: seed %llu, %.0f s, %d vehicles, %d calls\n", static_cast<unsigned long long>(a.seed),
              a.seconds, config.vehicles, stream.calls());
  for (const auto& e : s.events)
    std::printf("  %-20s vehicle %2d  %6.1f-%6.1f s  magnitude %+.2f\n",
                std::string(vehicle::label_kind_name(e.kind)).c_str(), e.vehicle, vehicle::tick_seconds(e.start),
                vehicle::tick_seconds(e.end), e.magnitude);
  for (const auto& e : stream.script()) std::printf("  %s\n", e.to_string().c_str());
  return 0;
}

// Writes the training data.
int generate(const Args& a) {
  if (a.out.empty()) throw std::invalid_argument("generate needs --out DIR");
  vehicle::TrainingDataConfig config;
  config.out_dir = a.out;
  config.scenes = a.scenes;
  if (a.seconds_given) config.seconds = a.seconds;
  if (a.seed_given) config.seed = a.seed;
  std::printf("%s\n", vehicle::write_training_data(config).c_str());
  return 0;
}

// Replays the stream through the detector and prints the report.
int run_detector(const Args& a) {
  vehicle::ScenarioConfig scene;
  scene.seed = a.seed;
  scene.seconds = a.seconds;
  const vehicle::VehicleStream stream(scene);
  vehicle::ReplayConfig config;
  config.model_path = a.model.empty() ? vehicle::default_model_dir() + "/vehicle_lstm.onnx" : a.model;
  config.jit = a.jit;
  config.reference = a.reference;
  config.max_calls = a.calls;
  config.rule = a.rule;
  const vehicle::ReplayRun run = vehicle::replay(config, stream);
  vehicle::print_report({a.seed, a.seconds, a.jit, a.reference, a.rule, config.model_path}, run, stream);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse_args(argc, argv);
    if (args.mode == "generate") return generate(args);
    if (args.mode == "script") return print_script(args);
    if (args.mode == "run") return run_detector(args);
    throw std::invalid_argument("unknown mode '" + args.mode + "' (run, script, generate)");
  } catch (const canary::Error& e) {
    std::fprintf(stderr, "canary-vehicle: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "canary-vehicle: %s\n", e.what());
    return 2;
  }
}

// Reads models/metrics.json with nlohmann::json (this TU only).
#include "samples/vehicle/model_card.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace vehicle {

// Parses the keys the detector needs; everything else in the file is for people.
ModelCard load_model_card(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open model card " + path);
  ModelCard card;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    card.input = j.at("input").get<std::string>();
    card.output = j.at("output").get<std::string>();
    const auto stds = j.at("residual_std").get<std::vector<double>>();
    if (stds.size() != 3) throw std::runtime_error("residual_std needs 3 values, has " + std::to_string(stds.size()));
    for (std::size_t i = 0; i < 3; ++i) {
      if (!(stds[i] > 0.0)) throw std::runtime_error("residual_std values must be positive");
      card.residual_std[i] = stds[i];
    }
    card.threshold = j.at("threshold").get<double>();
    card.threshold_quantile = j.value("threshold_quantile", 0.95);
    if (j.contains("validation")) card.validation_windows = j["validation"].value("windows", 0);
    if (j.contains("training")) card.training_steps = j["training"].value("steps", 0);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return card;
}

// Set by CMake to the source folder's models/.
std::string default_model_dir() { return CANARY_VEHICLE_MODEL_DIR; }

}  // namespace vehicle

// What happened to a vehicle's data at a sample: the closed set of labelled
// attacks, faults and benign events, and the labelled events themselves.
#pragma once

#include <cstdint>
#include <string_view>

namespace vehicle {

// X(enum, name, is_attack)
#define VEHICLE_LABEL_KINDS(X)                      \
  X(Clean, "clean", false)                          \
  X(SpikeSpeed, "spike/speed", true)                \
  X(SpikePosition, "spike/position", true)          \
  X(BiasSpeed, "bias/speed", true)                  \
  X(BiasPosition, "bias/position", true)            \
  X(DriftSpeed, "drift/speed", true)                \
  X(DriftPosition, "drift/position", true)          \
  X(Combined, "combined x/v/a", true)               \
  X(ControlCommand, "control command", true)        \
  X(MessageLoss, "message loss", true)              \
  X(BenignBraking, "benign hard braking", false)

enum class LabelKind : std::uint8_t {
#define VEHICLE_LABEL_ENUM(e, n, a) e,
  VEHICLE_LABEL_KINDS(VEHICLE_LABEL_ENUM)
#undef VEHICLE_LABEL_ENUM
};

inline constexpr int kLabelKindCount = 0
#define VEHICLE_LABEL_COUNT(e, n, a) +1
    VEHICLE_LABEL_KINDS(VEHICLE_LABEL_COUNT)
#undef VEHICLE_LABEL_COUNT
    ;

// "bias/speed".
constexpr std::string_view label_kind_name(LabelKind k) {
  switch (k) {
#define VEHICLE_LABEL_NAME(e, n, a) \
  case LabelKind::e:                \
    return n;
    VEHICLE_LABEL_KINDS(VEHICLE_LABEL_NAME)
#undef VEHICLE_LABEL_NAME
  }
  return "?";
}

// True for attacks and faults (what the detector should flag), false for clean and benign data.
constexpr bool is_attack(LabelKind k) {
  switch (k) {
#define VEHICLE_LABEL_ATTACK(e, n, a) \
  case LabelKind::e:                  \
    return a;
    VEHICLE_LABEL_KINDS(VEHICLE_LABEL_ATTACK)
#undef VEHICLE_LABEL_ATTACK
  }
  return false;
}

// One labelled event on one vehicle, active for simulation ticks [start, end]
// (50 ticks per second). Benign braking targets the platoon's head.
struct LabelledEvent {
  LabelKind kind = LabelKind::Clean;
  int vehicle = 0;
  std::int64_t start = 0, end = 0;
  double magnitude = 0.0;  // bias (m or m/s), drift rate (per s), spike size, command scale, braking (m/s²)
};

}  // namespace vehicle

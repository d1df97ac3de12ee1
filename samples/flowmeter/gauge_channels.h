// The gauges a well reports, in model channel order, and the three rates it produces.
#pragma once

#include <array>
#include <string_view>

namespace flowmeter {

// Model channels 0..6 are what every well has; PAN comes with a retrofit.
enum class Channel : int {
  CHK,  // choke opening, fraction 0..1
  PBH,  // bottomhole pressure, bar (the downhole gauge)
  PWH,  // wellhead pressure, bar
  PDC,  // pressure downstream of the choke, bar
  TBH,  // bottomhole temperature, K
  TWH,  // wellhead temperature, K
  QGL,  // lift-gas rate, Sm3/h
  PAN,  // casing-head (annulus) pressure, bar: added by a retrofit
};

inline constexpr int kStandardChannels = 7;
inline constexpr int kAllChannels = 8;
inline constexpr std::array<std::string_view, kAllChannels> kChannelNames = {"CHK", "PBH", "PWH", "PDC",
                                                                            "TBH", "TWH", "QGL", "PAN"};

// Phases of the rate outputs, in model output order.
inline constexpr int kPhases = 3;
inline constexpr std::array<std::string_view, kPhases> kPhaseNames = {"oil", "gas", "water"};

// The channel's short name ("PBH").
inline std::string_view channel_name(Channel c) { return kChannelNames[static_cast<int>(c)]; }

}  // namespace flowmeter

// The shape-event script of a flow-meter stream: which call deviates from the
// nominal [wells, 7, 60] input, how, and why. It has a one-line-per-event text
// form so a stream can be written down and replayed exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flowmeter {

enum class ShapeEventKind {
  ShortWindow,     // gap in history: W 60 -> 16..59
  WellsShutIn,     // wells leave the batch from this call on
  BurstSampling,   // a well test samples every 10 s: W 60 -> 360
  ChannelRemoved,  // a dead downhole gauge: F 7 -> 6
  PartialBatch,    // one call carries an odd subset of the wells
  WellsOnline,     // shut-in wells reopen and new wells join
  ChannelAdded,    // a retrofit adds a gauge: F 7 -> 8
};

inline constexpr int kShapeEventKinds = 7;

std::string_view shape_event_kind_name(ShapeEventKind kind);
std::optional<ShapeEventKind> parse_shape_event_kind(std::string_view name);

struct ShapeEvent {
  int call = 0;   // 0-based call index where it starts
  int span = 1;   // calls it lasts (shut-in and online change the well set for good)
  ShapeEventKind kind = ShapeEventKind::ShortWindow;
  int value = 0;  // short_window/burst: W; channel_removed/added: the channel
  std::vector<int> wells;  // shut-in, online, partial batch: the wells

  // True when the event shapes call `index`.
  bool covers(int index) const { return index >= call && index < call + span; }
  // A readable line: "W 60 -> 23 (gap in history)".
  std::string describe() const;
  // The script line: "call=14 kind=short_window span=1 value=23 wells=".
  std::string to_line() const;
  bool operator==(const ShapeEvent&) const = default;
};

struct ShapeScript {
  std::vector<ShapeEvent> events;  // sorted by call

  std::string to_text() const;
  // Parses to_text() output; throws std::invalid_argument naming the bad line.
  static ShapeScript parse(std::string_view text);
  // The events that shape call `index`.
  std::vector<ShapeEvent> at_call(int index) const;
  bool operator==(const ShapeScript&) const = default;
};

// Draws a script for `calls` calls over a field whose wells [0, regular) start
// online and [regular, total) are new wells waiting to be brought online. The
// first round holds every kind once, after a warm-up; longer streams repeat
// kinds at random.
ShapeScript draw_shape_script(std::uint64_t seed, int calls, int regular_wells, int total_wells);

}  // namespace flowmeter

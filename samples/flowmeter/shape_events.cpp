// The shape-event script: names, text form, and the seeded schedule.
#include "samples/flowmeter/shape_events.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "samples/flowmeter/gauge_channels.h"
#include "samples/flowmeter/seeded_random.h"

namespace flowmeter {
namespace {

constexpr std::array<std::string_view, kShapeEventKinds> kKindNames = {
    "short_window", "wells_shut_in", "burst_sampling", "channel_removed", "partial_batch", "wells_online",
    "channel_added"};

// "3,17,22".
std::string join_wells(const std::vector<int>& wells) {
  std::string s;
  for (std::size_t i = 0; i < wells.size(); ++i) s += (i ? "," : "") + std::to_string(wells[i]);
  return s;
}

// Parses "3,17,22" (empty: none).
std::vector<int> split_wells(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(std::stoi(item));
  return out;
}

// The state the schedule tracks while it draws: which wells report now.
struct FieldState {
  std::vector<int> active, shut, waiting;  // reporting; shut in; new wells not yet online
};

// `count` distinct wells out of `from`, sorted.
std::vector<int> pick_wells(SeededRandom& rng, std::vector<int> from, int count) {
  count = std::clamp(count, 0, static_cast<int>(from.size()));
  for (int i = 0; i < count; ++i) std::swap(from[static_cast<std::size_t>(i)], from[static_cast<std::size_t>(rng.integer(i, static_cast<int>(from.size()) - 1))]);
  from.resize(static_cast<std::size_t>(count));
  std::sort(from.begin(), from.end());
  return from;
}

// Fills in one event of `kind` at `call` and updates the well state.
ShapeEvent make_event(SeededRandom& rng, FieldState& state, int call, ShapeEventKind kind, bool first_round) {
  ShapeEvent e;
  e.call = call;
  e.kind = kind;
  const int active = static_cast<int>(state.active.size());
  switch (kind) {
    case ShapeEventKind::ShortWindow: e.value = first_round ? rng.integer(16, 40) : rng.integer(16, 59); break;
    case ShapeEventKind::BurstSampling: e.value = 360; break;
    case ShapeEventKind::ChannelRemoved: e.value = static_cast<int>(Channel::PBH); e.span = 2; break;
    case ShapeEventKind::ChannelAdded: e.value = static_cast<int>(Channel::PAN); break;
    case ShapeEventKind::PartialBatch:
      e.wells = pick_wells(rng, state.active, first_round ? 1 : (rng.integer(1, std::max(1, active - 1)) | 1));
      break;
    case ShapeEventKind::WellsShutIn:
      e.wells = pick_wells(rng, state.active, std::min(rng.integer(2, 4), active - 2));
      for (int w : e.wells) std::erase(state.active, w);
      state.shut.insert(state.shut.end(), e.wells.begin(), e.wells.end());
      break;
    case ShapeEventKind::WellsOnline:
      e.wells = state.shut;
      e.wells.insert(e.wells.end(), state.waiting.begin(), state.waiting.end());
      std::sort(e.wells.begin(), e.wells.end());
      state.active.insert(state.active.end(), e.wells.begin(), e.wells.end());
      std::sort(state.active.begin(), state.active.end());
      state.shut.clear();
      state.waiting.clear();
      break;
  }
  return e;
}

// A kind for a later round that makes sense in the current state.
ShapeEventKind later_kind(SeededRandom& rng, const FieldState& state) {
  const auto kind = static_cast<ShapeEventKind>(rng.integer(0, kShapeEventKinds - 1));
  if (kind == ShapeEventKind::WellsOnline && state.shut.empty() && state.waiting.empty())
    return ShapeEventKind::WellsShutIn;
  if (kind == ShapeEventKind::WellsShutIn && (state.active.size() < 6 || !state.shut.empty()))
    return ShapeEventKind::ShortWindow;
  return kind;
}

}  // namespace

// "short_window", ...
std::string_view shape_event_kind_name(ShapeEventKind kind) { return kKindNames[static_cast<std::size_t>(kind)]; }

// The kind named `name`, if any.
std::optional<ShapeEventKind> parse_shape_event_kind(std::string_view name) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == name) return static_cast<ShapeEventKind>(i);
  return std::nullopt;
}

// What the event does to the input tensor, in words.
std::string ShapeEvent::describe() const {
  const std::string wells_text = std::to_string(wells.size()) + " well" + (wells.size() == 1 ? "" : "s");
  switch (kind) {
    case ShapeEventKind::ShortWindow: return "W 60 -> " + std::to_string(value) + " (gap in history)";
    case ShapeEventKind::BurstSampling: return "W 60 -> " + std::to_string(value) + " (well test, 10 s sampling)";
    case ShapeEventKind::ChannelRemoved:
      return "F 7 -> 6 (" + std::string(kChannelNames[static_cast<std::size_t>(value)]) + " gauge dead, " +
             std::to_string(span) + " calls)";
    case ShapeEventKind::ChannelAdded:
      return "F 7 -> 8 (retrofit adds " + std::string(kChannelNames[static_cast<std::size_t>(value)]) + ")";
    case ShapeEventKind::PartialBatch: return "one call with " + wells_text + " (" + join_wells(wells) + ")";
    case ShapeEventKind::WellsShutIn: return wells_text + " shut in (" + join_wells(wells) + ")";
    case ShapeEventKind::WellsOnline: return wells_text + " brought online (" + join_wells(wells) + ")";
  }
  return "";
}

// One script line.
std::string ShapeEvent::to_line() const {
  return "call=" + std::to_string(call) + " kind=" + std::string(shape_event_kind_name(kind)) +
         " span=" + std::to_string(span) + " value=" + std::to_string(value) + " wells=" + join_wells(wells);
}

// All events, one line each.
std::string ShapeScript::to_text() const {
  std::string s;
  for (const ShapeEvent& e : events) s += e.to_line() + "\n";
  return s;
}

// Reads key=value fields per line; blank lines and '#' comments are skipped.
ShapeScript ShapeScript::parse(std::string_view text) {
  ShapeScript script;
  std::stringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    ShapeEvent e;
    std::stringstream fields(line);
    for (std::string field; fields >> field;) {
      const auto eq = field.find('=');
      if (eq == std::string::npos) throw std::invalid_argument("shape script: field without '=' in '" + line + "'");
      const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
      if (key == "call") e.call = std::stoi(value);
      else if (key == "span") e.span = std::stoi(value);
      else if (key == "value") e.value = std::stoi(value);
      else if (key == "wells") e.wells = split_wells(value);
      else if (key == "kind" && parse_shape_event_kind(value)) e.kind = *parse_shape_event_kind(value);
      else throw std::invalid_argument("shape script: bad field '" + field + "' in '" + line + "'");
    }
    script.events.push_back(e);
  }
  return script;
}

// Events covering call `index`.
std::vector<ShapeEvent> ShapeScript::at_call(int index) const {
  std::vector<ShapeEvent> out;
  for (const ShapeEvent& e : events)
    if (e.covers(index)) out.push_back(e);
  return out;
}

// First round: every kind once, in an order that tells a story; then random kinds every 6-14 calls.
ShapeScript draw_shape_script(std::uint64_t seed, int calls, int regular_wells, int total_wells) {
  SeededRandom rng = SeededRandom::keyed(seed, {0x5ca1e});
  FieldState state;
  for (int w = 0; w < total_wells; ++w) (w < regular_wells ? state.active : state.waiting).push_back(w);
  const int warmup = std::min(12, calls / 3);
  const int spacing = std::clamp((calls - warmup) / kShapeEventKinds, 1, 10);
  constexpr ShapeEventKind kFirstRound[] = {ShapeEventKind::ShortWindow,  ShapeEventKind::WellsShutIn,
                                            ShapeEventKind::BurstSampling, ShapeEventKind::ChannelRemoved,
                                            ShapeEventKind::PartialBatch, ShapeEventKind::WellsOnline,
                                            ShapeEventKind::ChannelAdded};
  ShapeScript script;
  int call = warmup;
  for (ShapeEventKind kind : kFirstRound) {
    if (call >= calls) return script;
    script.events.push_back(make_event(rng, state, call, kind, true));
    call += spacing;
  }
  for (call += rng.integer(0, 8); call < calls; call += rng.integer(6, 14))
    script.events.push_back(make_event(rng, state, call, later_kind(rng, state), false));
  for (ShapeEvent& e : script.events) e.span = std::min(e.span, calls - e.call);
  return script;
}

}  // namespace flowmeter

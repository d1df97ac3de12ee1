// The fault-injection registry: spec parsing and the per-point counters.
#include "runtime/core/fault_injection.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <mutex>
#include <string>

#include "canary/error.h"

namespace canary {

namespace {

constexpr std::int64_t kEveryTime = -1;
constexpr std::array<std::string_view, kFaultPointCount> kPointNames = {
    "compile", "code-cache", "onednn", "kernel", "compile-thread", "alloc"};

// Per point: faults still to inject (kEveryTime: unlimited) and faults injected.
struct Registry {
  std::atomic<bool> armed{false};
  std::array<std::atomic<std::int64_t>, kFaultPointCount> remaining{};
  std::array<std::atomic<std::int64_t>, kFaultPointCount> skip{};  // operations to let pass first ("point@n")
  std::array<std::atomic<std::uint64_t>, kFaultPointCount> taken{};
  std::mutex configure_mu;  // one configure_faults at a time
};

// The one registry of the process.
Registry& registry() {
  static Registry r;
  return r;
}

// `text` without leading and trailing spaces.
std::string_view trimmed(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// Throws Error(Input) quoting the whole spec and saying what is wrong in it.
[[noreturn]] void bad_spec(std::string_view spec, const std::string& why) {
  throw Error(ErrorKind::Input, "fault injection spec '" + std::string(spec) + "': " + why);
}

// The point a spec word names, or Error(Input) listing the known words.
FaultPoint point_of(std::string_view spec, std::string_view word) {
  for (std::size_t i = 0; i < kFaultPointCount; ++i)
    if (kPointNames[i] == word) return static_cast<FaultPoint>(i);
  bad_spec(spec, "unknown point '" + std::string(word) +
                     "' (expected compile, code-cache, onednn, kernel, compile-thread or alloc)");
}

// A decimal integer of at least `least` in a spec item: the count after
// "point:" (least 0) or the ordinal after "point@" (least 1); `what` names it.
std::int64_t integer_of(std::string_view spec, std::string_view word, std::string_view text, std::int64_t least,
                        const char* what) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < least)
    bad_spec(spec, std::string(what) + " '" + std::string(text) + "' of point '" + std::string(word) + "' is not a " +
                       (least == 0 ? "non-negative" : "positive") + " integer");
  return n;
}

// Per point: faults to inject (0: none, kEveryTime: every operation) and
// operations to let pass before the first.
struct ParsedSpec {
  std::array<std::int64_t, kFaultPointCount> counts{};
  std::array<std::int64_t, kFaultPointCount> skips{};
};

// Parses the whole spec.
ParsedSpec parse_spec(std::string_view spec) {
  ParsedSpec parsed;
  std::array<std::int64_t, kFaultPointCount>& counts = parsed.counts;
  std::array<bool, kFaultPointCount> seen{};
  std::string_view rest = spec;
  while (!trimmed(rest).empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trimmed(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty() || (comma != std::string_view::npos && trimmed(rest).empty()))
      bad_spec(spec, "empty item (two commas in a row, or a comma at an end)");
    const std::size_t colon = item.find(':'), at = item.find('@');
    const std::string_view word = trimmed(item.substr(0, std::min(colon, at)));
    const FaultPoint p = point_of(spec, word);
    const auto i = static_cast<std::size_t>(p);
    if (seen[i]) bad_spec(spec, "point '" + std::string(word) + "' given twice");
    seen[i] = true;
    if (colon != std::string_view::npos && at != std::string_view::npos)
      bad_spec(spec, "point '" + std::string(word) + "' has both a count and an ordinal");
    if (at != std::string_view::npos) {
      counts[i] = 1;
      parsed.skips[i] = integer_of(spec, word, trimmed(item.substr(at + 1)), 1, "ordinal") - 1;
      continue;
    }
    counts[i] = colon == std::string_view::npos ? kEveryTime
                                                : integer_of(spec, word, trimmed(item.substr(colon + 1)), 0, "count");
  }
  return parsed;
}

}  // namespace

// Parses first, so a bad spec changes nothing; then swaps the counters in.
void configure_faults(std::string_view spec) {
  const ParsedSpec parsed = parse_spec(spec);
  const std::array<std::int64_t, kFaultPointCount>& counts = parsed.counts;
  Registry& r = registry();
  std::lock_guard lock(r.configure_mu);
  r.armed.store(false, std::memory_order_relaxed);
  bool any = false;
  for (std::size_t i = 0; i < kFaultPointCount; ++i) {
    r.remaining[i].store(counts[i], std::memory_order_relaxed);
    r.skip[i].store(parsed.skips[i], std::memory_order_relaxed);
    r.taken[i].store(0, std::memory_order_relaxed);
    any = any || counts[i] != 0;
  }
  r.armed.store(any, std::memory_order_release);
}

// One relaxed load when nothing is configured; else claims one count.
bool take_fault(FaultPoint p) {
  Registry& r = registry();
  if (!r.armed.load(std::memory_order_relaxed)) return false;
  const auto i = static_cast<std::size_t>(p);
  std::int64_t n = r.remaining[i].load(std::memory_order_acquire);
  if (n == 0) return false;
  for (std::int64_t pass = r.skip[i].load(std::memory_order_acquire); pass > 0;)
    if (r.skip[i].compare_exchange_weak(pass, pass - 1, std::memory_order_acq_rel)) return false;
  for (;;) {
    if (n == 0) return false;
    if (n == kEveryTime || r.remaining[i].compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) break;
  }
  r.taken[i].fetch_add(1, std::memory_order_relaxed);
  return true;
}

// The counter of injected faults at p.
std::uint64_t faults_taken(FaultPoint p) {
  return registry().taken[static_cast<std::size_t>(p)].load(std::memory_order_relaxed);
}

// The spec word of p.
std::string_view fault_point_name(FaultPoint p) {
  const auto i = static_cast<std::size_t>(p);
  return i < kFaultPointCount ? kPointNames[i] : std::string_view("?");
}

}  // namespace canary

// The event log and CANARY_LOG printing.
#include "jit/event_log.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace canary {

std::string_view event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::Hot: return "hot";
    case EventKind::TraceRecorded: return "trace-recorded";
    case EventKind::Compiled: return "compiled";
    case EventKind::CompileFailed: return "compile-failed";
    case EventKind::GuardFailed: return "guard-failed";
    case EventKind::Deopt: return "deopt";
    case EventKind::ValueCanary: return "value-canary";
    case EventKind::Retrace: return "retrace";
    case EventKind::Evicted: return "evicted";
    case EventKind::Penalty: return "penalty";
    case EventKind::Profile: return "profile";
    case EventKind::Decision: return "decision";
    case EventKind::Fallback: return "fallback";
  }
  return "?";
}

}  // namespace canary

namespace canary::jit {

namespace {

unsigned bit(EventKind k) { return 1u << static_cast<unsigned>(k); }

unsigned mask_of_word(std::string_view w) {
  if (w == "all") return ~0u;
  if (w == "deopt") return bit(EventKind::Deopt) | bit(EventKind::ValueCanary);
  if (w == "guards") return bit(EventKind::GuardFailed);
  if (w == "recompile")
    return bit(EventKind::Retrace) | bit(EventKind::Compiled) | bit(EventKind::Evicted) | bit(EventKind::Penalty);
  if (w == "compile")
    return bit(EventKind::Hot) | bit(EventKind::TraceRecorded) | bit(EventKind::Compiled) |
           bit(EventKind::CompileFailed) | bit(EventKind::Fallback);
  if (w == "cost") return bit(EventKind::Compiled) | bit(EventKind::Decision);
  if (w == "profile") return bit(EventKind::Profile);
  return 0;
}

}  // namespace

unsigned parse_log_mask(const char* value) {
  if (value == nullptr) return 0;
  unsigned mask = 0;
  std::string_view s(value);
  while (!s.empty()) {
    const std::size_t comma = s.find(',');
    mask |= mask_of_word(s.substr(0, comma));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return mask;
}

namespace {
thread_local bool is_compile_thread = false;
}  // namespace

void mark_compile_thread() { is_compile_thread = true; }

EventLog::EventLog(std::size_t capacity)
    : capacity_(capacity), print_mask_(parse_log_mask(std::getenv("CANARY_LOG"))),
      origin_(std::chrono::steady_clock::now()) {}

void EventLog::add(Event event) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mu_);
  event.sequence = next_sequence_++;
  event.time_us = std::chrono::duration<double, std::micro>(now - origin_).count();
  event.thread = is_compile_thread ? 1 : 0;
  ++counts_[static_cast<unsigned>(event.kind)];
  if (print_mask_ & bit(event.kind))
    std::fprintf(stderr, "[canary] #%llu call %llu %s: %s\n", static_cast<unsigned long long>(event.sequence),
                 static_cast<unsigned long long>(event.call), std::string(event_kind_name(event.kind)).c_str(),
                 event.message.c_str());
  events_.push_back(std::move(event));
  if (events_.size() > capacity_) events_.pop_front();
}

std::vector<Event> EventLog::since(std::uint64_t since) const {
  std::lock_guard lock(mu_);
  std::vector<Event> out;
  for (const Event& e : events_)
    if (e.sequence >= since) out.push_back(e);
  return out;
}

std::uint64_t EventLog::count(EventKind kind) const {
  std::lock_guard lock(mu_);
  return counts_[static_cast<unsigned>(kind)];
}

}  // namespace canary::jit

// EventLog: the model's ordered, bounded record of JIT events, shared by all
// its sessions and the compile queue. Also prints events to stderr when the
// CANARY_LOG environment variable asks for their kind.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "canary/events.h"

namespace canary::jit {

class EventLog {
 public:
  // Keeps the most recent `capacity` events; sequence numbers keep counting.
  explicit EventLog(std::size_t capacity = 65536);

  // Stamps the sequence number, stores the event and prints it if asked.
  void add(Event event);
  // Events with sequence >= since that are still held, in order.
  std::vector<Event> since(std::uint64_t since) const;
  // Events of each kind ever added (including dropped ones).
  std::uint64_t count(EventKind kind) const;

 private:
  mutable std::mutex mu_;
  std::deque<Event> events_;
  std::size_t capacity_;
  std::uint64_t next_sequence_ = 1;
  std::uint64_t counts_[16] = {};
  unsigned print_mask_ = 0;
  std::chrono::steady_clock::time_point origin_;  // time_us counts from here
};

// Marks the calling thread as the background compile thread (events it
// adds carry thread = 1).
void mark_compile_thread();

// The CANARY_LOG value parsed into a mask of EventKinds: a comma-separated
// list of "deopt", "recompile", "guards", "compile", "cost", "all".
unsigned parse_log_mask(const char* value);

}  // namespace canary::jit

// A small seeded random source with a fixed algorithm (std::mt19937_64 and
// explicit integer/real mappings), so a seed replays the same graph and
// stream on every standard library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace canary::differential {

class SeededRng {
 public:
  explicit SeededRng(std::uint64_t seed) : engine_(mix(seed)) {}

  // A well-spread 64-bit value derived from x (splitmix64 finaliser).
  static std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

  // The next raw 64-bit value.
  std::uint64_t next() { return engine_(); }
  // An integer in [lo, hi] (inclusive).
  std::int64_t range(std::int64_t lo, std::int64_t hi) {
    auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    return lo + static_cast<std::int64_t>(next() % span);
  }
  // A real in [lo, hi).
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
  }
  // True with probability p.
  bool chance(double p) { return uniform(0.0, 1.0) < p; }
  // An index in [0, n).
  std::size_t index(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  // One element of a non-empty vector.
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[index(items.size())];
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace canary::differential

// Seeded random numbers that are identical on every platform: splitmix64
// streams keyed by (seed, tags), with our own uniform, normal, gamma and
// Dirichlet draws (std:: distributions differ between standard libraries).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace flowmeter {

// One deterministic stream of 64-bit values.
class SeededRandom {
 public:
  explicit SeededRandom(std::uint64_t seed) : state_(seed) {}

  // A stream derived from a seed and a list of tags (well index, channel, ...).
  static SeededRandom keyed(std::uint64_t seed, std::initializer_list<std::uint64_t> tags) {
    std::uint64_t h = mix(seed ^ 0x6a09e667f3bcc909ULL);
    for (std::uint64_t t : tags) h = mix(h ^ mix(t + 0x9e3779b97f4a7c15ULL));
    return SeededRandom(h);
  }

  // The splitmix64 finaliser.
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Next raw 64-bit value.
  std::uint64_t next() { return mix(state_ += 0x9e3779b97f4a7c15ULL); }

  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

  // Uniform integer in [lo, hi].
  int integer(int lo, int hi) {
    return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }

  // True with probability p.
  bool chance(double p) { return uniform() < p; }

  // Standard normal by Box-Muller.
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  // Exponential with the given mean.
  double exponential(double mean) { return -mean * std::log(1.0 - uniform()); }

  // Gamma(shape, 1) by Marsaglia-Tsang (shape < 1 boosted by U^(1/shape)).
  double gamma(double shape) {
    if (shape < 1.0) return gamma(shape + 1.0) * std::pow(1.0 - uniform(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double z = normal(), v = 1.0 + c * z;
      if (v <= 0.0) continue;
      v = v * v * v;
      const double u = 1.0 - uniform();
      if (std::log(u) < 0.5 * z * z + d - d * v + d * std::log(v)) return d * v;
    }
  }

  // Dirichlet(alpha) over three components.
  std::array<double, 3> dirichlet(const std::array<double, 3>& alpha) {
    std::array<double, 3> g{};
    double sum = 0.0;
    for (int i = 0; i < 3; ++i) sum += g[i] = gamma(alpha[i]);
    for (double& v : g) v /= sum;
    return g;
  }

 private:
  std::uint64_t state_;
};

}  // namespace flowmeter

// Seeded random tensors: a splitmix64 stream turned into uniform values per dtype.
#include "cli/random_tensor.h"

namespace canary::cli {

namespace {

// splitmix64: a small, well-mixed 64-bit generator (same output everywhere).
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1) with 53 random bits.
  double next_signed_unit() { return static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0; }
  // Uniform in [-1, 1) with 24 random bits (exact in float).
  float next_signed_unit_f32() { return static_cast<float>(next() >> 40) * 0x1.0p-23f - 1.0f; }
};

// Fills `count` elements of type T from `make`.
template <typename T, typename Make>
void fill(Tensor& t, Make make) {
  T* p = t.data<T>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = make();
}

}  // namespace

std::uint64_t input_seed(std::uint64_t run_seed, std::uint64_t call, std::string_view name) {
  std::uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a of the name
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  SplitMix64 mix{run_seed ^ (call * 0x9E3779B97F4A7C15ull) ^ h};
  return mix.next();
}

Tensor random_tensor(DType dtype, const Shape& shape, std::uint64_t seed) {
  Tensor t = Tensor::empty(dtype, shape);
  SplitMix64 rng{seed};
  switch (dtype) {
    case DType::F32: fill<float>(t, [&] { return rng.next_signed_unit_f32(); }); break;
    case DType::F64: fill<double>(t, [&] { return rng.next_signed_unit(); }); break;
    case DType::I64: fill<std::int64_t>(t, [&] { return static_cast<std::int64_t>(rng.next() % 10); }); break;
    case DType::I32: fill<std::int32_t>(t, [&] { return static_cast<std::int32_t>(rng.next() % 10); }); break;
    case DType::Bool: fill<bool>(t, [&] { return (rng.next() >> 63) != 0; }); break;
  }
  return t;
}

}  // namespace canary::cli

// The npy target: .npy bytes -> parse_npy; an accepted tensor is encoded and
// parsed again, which must give the same dtype, shape and element bytes.
#include <cstring>
#include <string>

#include "cli/npy.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/npy_round_trip.h"

namespace canary::fuzz {

FuzzResult compare_npy_tensors(const Tensor& first, const Tensor& second) {
  if (first.dtype() != second.dtype() || first.shape() != second.shape())
    return FuzzResult::finding("encode_npy -> parse_npy changed the tensor's type: " + first.type_string() +
                               " became " + second.type_string());
  if (first.nbytes() != 0 && std::memcmp(first.raw(), second.raw(), first.nbytes()) != 0)
    return FuzzResult::finding("encode_npy -> parse_npy changed the element bytes of " + first.type_string());
  return FuzzResult::accepted();
}

FuzzResult fuzz_npy(std::string_view bytes) {
  return run_guarded([&] {
    Tensor parsed = cli::parse_npy(bytes, "fuzz.npy");
    Tensor again;
    try {
      again = cli::parse_npy(cli::encode_npy(parsed), "encoded.npy");
    } catch (const Error& e) {
      return FuzzResult::finding("an accepted " + parsed.type_string() + " does not survive encode_npy -> parse_npy: " +
                                 e.what());
    }
    return compare_npy_tensors(parsed, again);
  });
}

}  // namespace canary::fuzz

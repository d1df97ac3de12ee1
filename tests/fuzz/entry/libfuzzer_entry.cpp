// The libFuzzer entry point of one fuzz target. tests/fuzz/CMakeLists.txt
// builds it once per target with CANARY_FUZZ_FUNCTION naming the target's
// function; a finding aborts, so libFuzzer saves the input as a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  canary::fuzz::abort_on_finding(canary::fuzz::CANARY_FUZZ_FUNCTION(bytes), CANARY_FUZZ_NAME);
  return 0;
}

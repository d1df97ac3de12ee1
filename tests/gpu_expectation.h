// Whether this test run must have a GPU. ctest sets CANARY_EXPECT_GPU=emulator
// for the runs on the PTX emulator (tests/CMakeLists.txt): there a [gpu]
// test that skips means the emulated driver did not come up, which must
// fail the run rather than pass it as a skip. CANARY_EXPECT_GPU=1 asks the
// same of any GPU.
#pragma once

#include <cstdlib>
#include <cstring>

namespace canary::test {

inline bool gpu_expected() {
  const char* v = std::getenv("CANARY_EXPECT_GPU");
  return v != nullptr && (std::strcmp(v, "1") == 0 || std::strcmp(v, "emulator") == 0);
}

// The run must be on the PTX emulator's libcuda.so.1.
inline bool emulator_expected() {
  const char* v = std::getenv("CANARY_EXPECT_GPU");
  return v != nullptr && std::strcmp(v, "emulator") == 0;
}

}  // namespace canary::test

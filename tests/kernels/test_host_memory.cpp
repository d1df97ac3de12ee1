// Host buffers (runtime/core/host_memory.h): alignment and huge-page placement.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "canary/tensor.h"
#include "runtime/core/host_memory.h"

TEST_CASE("host buffers are aligned, and large ones start on a huge-page boundary", "[unit][kernels]") {
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{4096}, canary::kHugePageBytes - 1,
                                  canary::kHugePageBytes, canary::kHugePageBytes * 3 + 5}) {
    INFO(bytes << " bytes");
    void* p = canary::allocate_host_buffer(bytes);
    REQUIRE(p != nullptr);
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    CHECK(address % canary::kTensorAlignment == 0);
    if (bytes >= canary::kHugePageBytes) CHECK(address % canary::kHugePageBytes == 0);
    std::memset(p, 0x5a, bytes);  // the whole request is writable
    CHECK(static_cast<unsigned char*>(p)[bytes - 1] == 0x5a);
    std::free(p);
  }
  CHECK(canary::allocate_host_buffer(std::numeric_limits<std::size_t>::max()) == nullptr);
}

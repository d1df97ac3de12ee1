// Host buffers (runtime/core/host_memory.h): size classes, alignment,
// huge-page placement, and the cache of released buffers.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "canary/tensor.h"
#include "runtime/core/host_memory.h"

namespace {

// Restores the process-wide cache limit a test changes.
class CacheLimitScope {
 public:
  explicit CacheLimitScope(std::size_t bytes) : previous_(canary::host_buffer_cache_stats().limit_bytes) {
    canary::set_host_buffer_cache_limit(bytes);
  }
  ~CacheLimitScope() { canary::set_host_buffer_cache_limit(previous_); }

 private:
  std::size_t previous_;
};

}  // namespace

TEST_CASE("host buffers are aligned, and large ones start on a huge-page boundary", "[unit][kernels]") {
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{4096}, canary::kHugePageMinBytes - 1,
                                  canary::kHugePageMinBytes, canary::kHugePageBytes * 3 + 5}) {
    INFO(bytes << " bytes");
    const canary::HostBuffer b = canary::allocate_host_buffer(bytes);
    REQUIRE(b.data != nullptr);
    CHECK(b.bytes >= bytes);
    const auto address = reinterpret_cast<std::uintptr_t>(b.data);
    CHECK(address % canary::kTensorAlignment == 0);
    if (bytes >= canary::kHugePageMinBytes) CHECK(address % canary::kHugePageBytes == 0);
    std::memset(b.data, 0x5a, b.bytes);  // the whole class is writable
    CHECK(static_cast<unsigned char*>(b.data)[b.bytes - 1] == 0x5a);
    canary::release_host_buffer(b);
  }
  CHECK(canary::allocate_host_buffer(std::numeric_limits<std::size_t>::max()).data == nullptr);
}

TEST_CASE("host buffer classes: four per octave, whole huge pages from 1 MiB, each its own class", "[unit][kernels]") {
  CHECK(canary::host_buffer_class(1) == 64);
  CHECK(canary::host_buffer_class(65) == 128);
  CHECK(canary::host_buffer_class(canary::kCachedMinBytes - 1) == canary::kCachedMinBytes);
  CHECK(canary::host_buffer_class(std::size_t{64} << 10) == std::size_t{64} << 10);
  CHECK(canary::host_buffer_class((std::size_t{64} << 10) + 1) == std::size_t{80} << 10);
  CHECK(canary::host_buffer_class(std::size_t{700} << 10) == std::size_t{768} << 10);
  CHECK(canary::host_buffer_class(canary::kHugePageMinBytes) == canary::kHugePageBytes);
  CHECK(canary::host_buffer_class(std::size_t{5} << 20) == std::size_t{6} << 20);
  CHECK(canary::host_buffer_class((std::size_t{40} << 20) + 1) == std::size_t{48} << 20);
  CHECK(canary::host_buffer_class(std::numeric_limits<std::size_t>::max() - 10) == 0);
  for (std::size_t bytes = 1; bytes < (std::size_t{64} << 20); bytes = bytes * 9 / 8 + 7) {
    INFO(bytes << " bytes");
    const std::size_t c = canary::host_buffer_class(bytes);
    CHECK(c >= bytes);
    CHECK(c % canary::kTensorAlignment == 0);
    CHECK(canary::host_buffer_class(c) == c);  // a class is served from itself
    if (c >= canary::kHugePageMinBytes) {
      CHECK(c % canary::kHugePageBytes == 0);
    } else if (bytes >= canary::kCachedMinBytes) {
      CHECK(c <= bytes + bytes / 4);
    }
  }
}

TEST_CASE("a released large buffer is handed out again for its class, and small ones are not kept",
          "[unit][kernels]") {
  const CacheLimitScope limit(std::size_t{64} << 20);
  const std::size_t bytes = std::size_t{300} << 10;
  const canary::HostBuffer first = canary::allocate_host_buffer(bytes);
  REQUIRE(first.data != nullptr);
  const canary::HostBufferCacheStats before = canary::host_buffer_cache_stats();
  canary::release_host_buffer(first);
  CHECK(canary::host_buffer_cache_stats().kept_bytes == before.kept_bytes + first.bytes);
  const canary::HostBuffer again = canary::allocate_host_buffer(bytes - 1000);  // same class
  CHECK(again.data == first.data);
  CHECK(again.bytes == first.bytes);
  CHECK(canary::host_buffer_cache_stats().reused == before.reused + 1);
  canary::release_host_buffer(again);

  const canary::HostBuffer small = canary::allocate_host_buffer(4096);
  canary::release_host_buffer(small);
  CHECK(canary::host_buffer_cache_stats().kept_bytes == before.kept_bytes + first.bytes);
}

TEST_CASE("a request takes a kept buffer of its class or up to twice it, never a larger one", "[unit][kernels]") {
  const CacheLimitScope limit(std::size_t{64} << 20);
  canary::set_host_buffer_cache_limit(0);  // start empty
  canary::set_host_buffer_cache_limit(std::size_t{64} << 20);
  const std::size_t kib = 1024;
  const canary::HostBuffer kept = canary::allocate_host_buffer(700 * kib);  // class 768 KiB
  REQUIRE(kept.bytes == 768 * kib);
  canary::release_host_buffer(kept);
  const canary::HostBuffer below_half = canary::allocate_host_buffer(300 * kib);  // class 320 KiB < 384
  CHECK(below_half.data != kept.data);
  CHECK(below_half.bytes == 320 * kib);
  const canary::HostBuffer within = canary::allocate_host_buffer(400 * kib);  // class 448 KiB >= 384
  CHECK(within.data == kept.data);
  CHECK(within.bytes == 768 * kib);  // what release_host_buffer is given back
  canary::release_host_buffer(within);
  canary::release_host_buffer(below_half);
  // A tensor takes a larger kept buffer the same way.
  const canary::Tensor t = canary::Tensor::empty(canary::DType::F32, canary::Shape{100, kib});  // 400 KiB
  CHECK(t.raw() == kept.data);
}

TEST_CASE("the buffer cache stays under its limit, evicting the least recently released", "[unit][kernels]") {
  const std::size_t mib = std::size_t{1} << 20;
  const CacheLimitScope limit(5 * mib);  // room for two 2 MiB classes, not three
  canary::set_host_buffer_cache_limit(0);  // start empty
  canary::set_host_buffer_cache_limit(5 * mib);
  std::vector<canary::HostBuffer> buffers;
  for (int i = 0; i < 3; ++i) buffers.push_back(canary::allocate_host_buffer(2 * mib));
  const std::uint64_t evicted = canary::host_buffer_cache_stats().evicted;
  for (const canary::HostBuffer& b : buffers) canary::release_host_buffer(b);
  const canary::HostBufferCacheStats stats = canary::host_buffer_cache_stats();
  CHECK(stats.kept_bytes == 4 * mib);
  CHECK(stats.evicted == evicted + 1);
  // The first released went; the two later ones come back, warmest first.
  const canary::HostBuffer a = canary::allocate_host_buffer(2 * mib);
  const canary::HostBuffer b = canary::allocate_host_buffer(2 * mib);
  CHECK(a.data == buffers[2].data);
  CHECK(b.data == buffers[1].data);
  canary::release_host_buffer(a);
  canary::release_host_buffer(b);
  canary::set_host_buffer_cache_limit(0);
  CHECK(canary::host_buffer_cache_stats().kept_bytes == 0);
  // A buffer above the limit is freed, not kept.
  canary::release_host_buffer(canary::allocate_host_buffer(2 * mib));
  CHECK(canary::host_buffer_cache_stats().kept_bytes == 0);
}

TEST_CASE("a tensor dropped gives its buffer to the next tensor of its size class", "[unit][kernels]") {
  const CacheLimitScope limit(std::size_t{64} << 20);
  const canary::Shape shape = {62, 32, 250};  // 1.9 MiB: one 2 MiB huge page
  const void* first = nullptr;
  {
    const canary::Tensor t = canary::Tensor::empty(canary::DType::F32, shape);
    first = t.raw();
  }
  const canary::Tensor t = canary::Tensor::empty(canary::DType::F32, canary::Shape{60, 32, 252});
  CHECK(t.raw() == first);
  CHECK(t.data<float>()[t.numel() - 1] == 0.0f);  // empty() still zero-fills a reused buffer
}

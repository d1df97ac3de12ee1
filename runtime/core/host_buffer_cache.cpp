// The process-wide cache of released host buffers (see host_buffer_cache.h).
#include "runtime/core/host_buffer_cache.h"

#include <cstdlib>
#include <deque>
#include <limits>
#include <mutex>
#include <map>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
// A kept buffer is poisoned: a kernel that writes through a dangling pointer
// into it is reported as a use after free, as it would be without the cache.
#define CANARY_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define CANARY_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define CANARY_POISON(p, n) ((void)(p), (void)(n))
#define CANARY_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace canary {
namespace {

constexpr std::size_t kDefaultLimitBytes = std::size_t{256} << 20;

struct Kept {
  void* data;
  std::uint64_t released_at;  // the cache's clock when it was kept
};

struct State {
  std::mutex mutex;
  // Per size class, oldest first: take() hands out the warmest (the back).
  std::map<std::size_t, std::deque<Kept>> by_class;
  std::size_t kept_bytes = 0;
  std::size_t limit = kDefaultLimitBytes;
  std::uint64_t clock = 0, reused = 0, kept = 0, evicted = 0;

  // Removes the least recently released buffer (the oldest front of any
  // class) and returns it; the caller frees it outside the lock.
  void* evict_oldest() {
    auto oldest = by_class.end();
    for (auto it = by_class.begin(); it != by_class.end(); ++it)
      if (!it->second.empty() && (oldest == by_class.end() ||
                                  it->second.front().released_at < oldest->second.front().released_at))
        oldest = it;
    if (oldest == by_class.end()) return nullptr;
    void* data = oldest->second.front().data;
    oldest->second.pop_front();
    kept_bytes -= oldest->first;
    CANARY_UNPOISON(data, oldest->first);
    if (oldest->second.empty()) by_class.erase(oldest);
    ++evicted;
    return data;
  }

  // Evicts until `bytes` more would fit under the limit; the evicted buffers go to `out`.
  void make_room(std::size_t bytes, std::vector<void*>& out) {
    while (kept_bytes > 0 && kept_bytes + bytes > limit) out.push_back(evict_oldest());
  }
};

State& state() {
  static State* s = new State();  // leaked on purpose: see host_buffer_cache()
  return *s;
}

void free_all(const std::vector<void*>& buffers) {
  for (void* p : buffers) std::free(p);
}

}  // namespace

HostBuffer HostBufferCache::take(std::size_t bytes) noexcept {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  const auto it = s.by_class.lower_bound(bytes);
  if (it == s.by_class.end() || it->first / 2 > bytes) return {};
  const HostBuffer taken{it->second.back().data, it->first};
  it->second.pop_back();
  if (it->second.empty()) s.by_class.erase(it);
  s.kept_bytes -= taken.bytes;
  ++s.reused;
  CANARY_UNPOISON(taken.data, taken.bytes);
  return taken;
}

bool HostBufferCache::keep(void* data, std::size_t bytes) noexcept {
  State& s = state();
  std::vector<void*> evicted;
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    if (bytes > s.limit) return false;
    try {
      s.make_room(bytes, evicted);
      s.by_class[bytes].push_back({data, ++s.clock});
    } catch (...) {  // no memory for the bookkeeping: let the buffer go instead
      free_all(evicted);
      return false;
    }
    s.kept_bytes += bytes;
    ++s.kept;
    CANARY_POISON(data, bytes);
  }
  free_all(evicted);
  return true;
}

void HostBufferCache::set_limit(std::size_t bytes) noexcept {
  State& s = state();
  std::vector<void*> evicted;
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    s.limit = bytes;
    try {
      evicted.reserve(s.by_class.size());
      s.make_room(0, evicted);
    } catch (...) {
      while (s.kept_bytes > s.limit) std::free(s.evict_oldest());
    }
  }
  free_all(evicted);
}

HostBufferCacheStats HostBufferCache::stats() const noexcept {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  return {s.kept_bytes, s.limit, s.kept, s.reused, s.evicted};
}

HostBufferCache& host_buffer_cache() noexcept {
  static HostBufferCache cache;
  return cache;
}

void set_host_buffer_cache_limit(std::size_t bytes) noexcept { host_buffer_cache().set_limit(bytes); }

HostBufferCacheStats host_buffer_cache_stats() noexcept { return host_buffer_cache().stats(); }

}  // namespace canary

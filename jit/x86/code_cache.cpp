// The code cache: maps finalized AsmJit code into W^X pages (read-write to
// fill, then read-execute), indexes blocks by key, bounds mapped bytes and
// evicts least recently used entries that nothing else holds.
#include "jit/x86/code_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/core/fault_injection.h"

namespace canary::jit::x86 {

// An indexed block and when it was last found or installed.
struct CodeCache::Entry {
  std::shared_ptr<const CodeBlock> block;
  std::uint64_t last_use = 0;
};

namespace {

// Installs still to fail on purpose (test hook).
std::atomic<int> injected_failures{0};

// Takes one injected failure if any is pending: the test hook's count, or
// the process-wide fault-injection point "code-cache".
bool take_injected_failure() {
  if (take_fault(FaultPoint::CodeCache)) return true;
  int n = injected_failures.load();
  while (n > 0) {
    if (injected_failures.compare_exchange_weak(n, n - 1)) return true;
  }
  return false;
}

// `bytes` rounded up to whole pages.
std::size_t round_to_pages(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

// Copies the flattened code to `base` (mapped read-write), relocated there.
asmjit::Error copy_code(asmjit::CodeHolder& code, void* base, std::size_t mapped) {
  asmjit::Error err = code.relocateToBase(reinterpret_cast<std::uint64_t>(base));
  if (err != asmjit::kErrorOk) return err;
  return code.copyFlattenedData(
      base, mapped, asmjit::CopySectionFlags::kPadSectionBuffer | asmjit::CopySectionFlags::kPadTargetBuffer);
}

// Maps pages read-write, fills them with the code, then makes them read-execute.
void* map_code(asmjit::CodeHolder& code, std::size_t mapped, std::string& error) {
  void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    error = "mmap of " + std::to_string(mapped) + " bytes failed: " + std::strerror(errno);
    return nullptr;
  }
  if (asmjit::Error err = copy_code(code, base, mapped); err != asmjit::kErrorOk) {
    munmap(base, mapped);
    error = std::string("relocating code failed: ") + asmjit::DebugUtils::errorAsString(err);
    return nullptr;
  }
  if (mprotect(base, mapped, PROT_READ | PROT_EXEC) != 0) {
    error = std::string("mprotect to read-execute failed: ") + std::strerror(errno);
    munmap(base, mapped);
    return nullptr;
  }
  char* begin = static_cast<char*>(base);
  __builtin___clear_cache(begin, begin + mapped);
  return base;
}

// Flattens the code and resolves its links; its size, or 0 with `error` set.
std::size_t finalized_size(asmjit::CodeHolder& code, std::string& error) {
  asmjit::Error err = code.flatten();
  if (err == asmjit::kErrorOk) err = code.resolveUnresolvedLinks();
  if (err != asmjit::kErrorOk) {
    error = std::string("finalizing code failed: ") + asmjit::DebugUtils::errorAsString(err);
    return 0;
  }
  const std::size_t size = code.codeSize();
  if (size == 0) error = "no code to install";
  return size;
}

// Wraps a filled mapping in a block whose release gives its bytes back to `live`.
std::shared_ptr<const CodeBlock> adopt_block(const std::shared_ptr<std::atomic<std::size_t>>& live, void* base,
                                             std::size_t mapped, std::size_t code_bytes) {
  live->fetch_add(mapped);
  return std::shared_ptr<const CodeBlock>(new CodeBlock(base, mapped, code_bytes), [live](CodeBlock* b) {
    live->fetch_sub(b->mapped_bytes());
    delete b;
  });
}

}  // namespace

// Takes ownership of `mapped_bytes` of mapping at `base`.
CodeBlock::CodeBlock(void* base, std::size_t mapped_bytes, std::size_t code_bytes)
    : base_(base), mapped_bytes_(mapped_bytes), code_bytes_(code_bytes) {}

// Unmaps the block's pages.
CodeBlock::~CodeBlock() {
  if (base_ != nullptr) munmap(base_, mapped_bytes_);
}

// An empty cache bounded to capacity_bytes of mapped code.
CodeCache::CodeCache(std::size_t capacity_bytes)
    : capacity_(capacity_bytes), live_bytes_(std::make_shared<std::atomic<std::size_t>>(0)) {}

// The block under key (bumped to most recently used), or nullptr.
std::shared_ptr<const CodeBlock> CodeCache::find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.hits;
  it->second->last_use = ++clock_;
  return it->second->block;
}

// Drops least recently used entries that only the cache holds until `need`
// more bytes fit; false when they still do not. Caller holds mu_.
bool CodeCache::make_room(std::size_t need) {
  while (live_bytes_->load() + need > capacity_) {
    auto victim = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second->block.use_count() != 1) continue;  // a trace still runs it
      if (victim == entries_.end() || it->second->last_use < victim->second->last_use) victim = it;
    }
    if (victim == entries_.end()) return false;
    entries_.erase(victim);
    ++stats_.evictions;
  }
  return true;
}

// Maps the finalized code under key (or returns the block already there).
std::shared_ptr<const CodeBlock> CodeCache::install(const std::string& key, asmjit::CodeHolder& code,
                                                    std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    it->second->last_use = ++clock_;
    return it->second->block;
  }
  if (take_injected_failure()) {
    ++stats_.refusals;
    error = "injected fault: executable memory unavailable (fault injection point 'code-cache')";
    return nullptr;
  }
  const std::size_t code_bytes = finalized_size(code, error);
  if (code_bytes == 0) return nullptr;
  const std::size_t mapped = round_to_pages(code_bytes);
  if (!make_room(mapped)) {
    ++stats_.refusals;
    error = "executable memory budget of " + std::to_string(capacity_) + " bytes exhausted (" +
            std::to_string(live_bytes_->load()) + " in use)";
    return nullptr;
  }
  void* base = map_code(code, mapped, error);
  if (base == nullptr) return nullptr;
  std::shared_ptr<const CodeBlock> block = adopt_block(live_bytes_, base, mapped, code_bytes);
  entries_[key] = std::make_shared<Entry>(Entry{block, ++clock_});
  return block;
}

// A snapshot of the counters.
CodeCacheStats CodeCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  CodeCacheStats s = stats_;
  s.bytes_in_use = live_bytes_->load();
  s.entries = entries_.size();
  return s;
}

// Makes the next `count` installs (process-wide) fail.
void inject_code_cache_failures(int count) { injected_failures.store(count < 0 ? 0 : count); }

}  // namespace canary::jit::x86

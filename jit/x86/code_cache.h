// CodeCache: executable memory for emitted kernels, bounded in bytes, with
// LRU eviction of entries no installed trace uses. Memory is mapped
// read-write, filled, then switched to read-execute: never writable and
// executable at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <asmjit/core.h>

namespace canary::jit::x86 {

// One block of executable code; unmapped when the last reference goes.
class CodeBlock {
 public:
  CodeBlock(void* base, std::size_t mapped_bytes, std::size_t code_bytes);
  ~CodeBlock();
  CodeBlock(const CodeBlock&) = delete;
  CodeBlock& operator=(const CodeBlock&) = delete;

  const void* entry() const { return base_; }
  std::size_t code_bytes() const { return code_bytes_; }
  std::size_t mapped_bytes() const { return mapped_bytes_; }

 private:
  void* base_;
  std::size_t mapped_bytes_;
  std::size_t code_bytes_;
};

struct CodeCacheStats {
  std::size_t bytes_in_use = 0;   // mapped bytes of live blocks
  std::size_t entries = 0;        // blocks the cache still indexes
  std::uint64_t hits = 0, misses = 0, evictions = 0, refusals = 0;
};

// Thread-safe.
class CodeCache {
 public:
  explicit CodeCache(std::size_t capacity_bytes);

  // The block cached under key, or nullptr.
  std::shared_ptr<const CodeBlock> find(const std::string& key);
  // Relocates the finalized code in `code` into new executable memory and
  // indexes it under key. Evicts least recently used entries to stay within
  // capacity; returns nullptr with `error` set when the code still does not
  // fit (out of executable memory) or mapping/relocation fails.
  std::shared_ptr<const CodeBlock> install(const std::string& key, asmjit::CodeHolder& code, std::string& error);

  CodeCacheStats stats() const;
  std::size_t capacity() const { return capacity_; }

 private:
  struct Entry;
  bool make_room(std::size_t need);
  std::size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries_;
  std::uint64_t clock_ = 0;
  CodeCacheStats stats_;
  // Mapped bytes of live blocks, shared with each block's deleter so blocks
  // that outlive their entry (or the cache) still count until unmapped.
  std::shared_ptr<std::atomic<std::size_t>> live_bytes_;
};

// Test hook: makes the next `count` installs fail as if out of executable memory.
void inject_code_cache_failures(int count);

}  // namespace canary::jit::x86

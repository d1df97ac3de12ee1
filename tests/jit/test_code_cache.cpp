// Code cache tests: W^X mappings, capacity refusal, LRU eviction of unheld
// entries, blocks held by callers, injected failures, hit/miss counters and
// concurrent installs.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <asmjit/x86.h>

#include "jit/x86/code_cache.h"

namespace x86 = canary::jit::x86;
using x86::CodeCache;
using x86::CodeCacheStats;

namespace {

using ConstantFn = int (*)();

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

// Emits `int f() { return value; }`, preceded by `padding` bytes of nops.
void emit_constant(asmjit::CodeHolder& code, int value, std::size_t padding = 0) {
  code.init(asmjit::Environment::host());
  asmjit::x86::Assembler a(&code);
  for (std::size_t i = 0; i < padding; ++i) a.nop();
  a.mov(asmjit::x86::eax, value);
  a.ret();
}

// Installs `int f() { return value; }` under key; nullptr with error on refusal.
std::shared_ptr<const x86::CodeBlock> install_constant(CodeCache& cache, const std::string& key, int value,
                                                       std::string& error, std::size_t padding = 0) {
  asmjit::CodeHolder code;
  emit_constant(code, value, padding);
  return cache.install(key, code, error);
}

// Calls a block emitted by emit_constant with no padding.
int call(const std::shared_ptr<const x86::CodeBlock>& block) {
  return reinterpret_cast<ConstantFn>(const_cast<void*>(block->entry()))();
}

// The permission field ("r-xp") of the /proc/self/maps line holding addr, or "".
std::string mapping_perms(const void* addr) {
  std::ifstream maps("/proc/self/maps");
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms;
    in >> range >> perms;
    const auto dash = range.find('-');
    const auto lo = std::stoull(range.substr(0, dash), nullptr, 16);
    const auto hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (lo <= a && a < hi) return perms;
  }
  return "";
}

// Number of mappings in the process that are writable and executable at once.
int rwx_mappings() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms;
    in >> range >> perms;
    if (perms.size() >= 3 && perms[1] == 'w' && perms[2] == 'x') ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("installed code is mapped read-execute, never writable and executable", "[unit][jit][codecache]") {
  CodeCache cache(1 << 20);
  std::string error;
  auto block = install_constant(cache, "k", 42, error);
  INFO(error);
  REQUIRE(block != nullptr);
  CHECK(call(block) == 42);
  CHECK(mapping_perms(block->entry()) == "r-xp");
  CHECK(rwx_mappings() == 0);
  CHECK(block->mapped_bytes() == page_size());
  CHECK(block->code_bytes() == 6);  // mov eax, imm32 (5 bytes) + ret (1 byte)
  CHECK(reinterpret_cast<std::uintptr_t>(block->entry()) % page_size() == 0);
}

TEST_CASE("code larger than a page maps whole pages and runs", "[unit][jit][codecache]") {
  CodeCache cache(1 << 20);
  std::string error;
  auto block = install_constant(cache, "big", 7, error, page_size() + 100);
  REQUIRE(block != nullptr);
  CHECK(block->mapped_bytes() == 2 * page_size());
  CHECK(block->code_bytes() == page_size() + 106);
  CHECK(call(block) == 7);  // runs through the nop sled
  CHECK(cache.stats().bytes_in_use == 2 * page_size());
}

TEST_CASE("an install over capacity is refused with the budget in the message", "[unit][jit][codecache]") {
  CodeCache cache(2 * page_size());
  std::string error;
  auto a = install_constant(cache, "a", 1, error);
  auto b = install_constant(cache, "b", 2, error);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  auto c = install_constant(cache, "c", 3, error);
  CHECK(c == nullptr);
  const std::string cap = std::to_string(2 * page_size());
  CHECK(error == "executable memory budget of " + cap + " bytes exhausted (" + cap + " in use)");
  CodeCacheStats s = cache.stats();
  CHECK(s.refusals == 1);
  CHECK(s.evictions == 0);  // both entries are held: dropping them would free nothing
  CHECK(s.entries == 2);
  CHECK(call(a) == 1);
  CHECK(call(b) == 2);
  std::string too_big_error;
  CodeCache tiny(page_size());
  CHECK(install_constant(tiny, "huge", 1, too_big_error, page_size()) == nullptr);
  CHECK_THAT(too_big_error, Catch::StartsWith("executable memory budget of " + std::to_string(page_size())));
}

TEST_CASE("eviction drops the least recently used unheld entry", "[unit][jit][codecache]") {
  CodeCache cache(3 * page_size());
  std::string error;
  REQUIRE(install_constant(cache, "A", 1, error) != nullptr);
  REQUIRE(install_constant(cache, "B", 2, error) != nullptr);
  REQUIRE(install_constant(cache, "C", 3, error) != nullptr);
  REQUIRE(cache.find("A") != nullptr);  // A is now more recent than B and C
  REQUIRE(install_constant(cache, "D", 4, error) != nullptr);
  CHECK(cache.stats().evictions == 1);
  CHECK(cache.stats().entries == 3);
  CHECK(cache.stats().bytes_in_use == 3 * page_size());
  CHECK(cache.find("B") == nullptr);
  // Recency now: C (oldest), A, D.
  REQUIRE(install_constant(cache, "E", 5, error) != nullptr);
  CHECK(cache.find("C") == nullptr);
  auto a = cache.find("A");
  REQUIRE(a != nullptr);
  CHECK(call(a) == 1);
  CHECK(cache.find("D") != nullptr);
  CHECK(cache.find("E") != nullptr);
  CHECK(cache.stats().evictions == 2);
}

TEST_CASE("held blocks survive eviction pressure, stay callable and count", "[unit][jit][codecache]") {
  CodeCache cache(2 * page_size());
  std::string error;
  auto held = install_constant(cache, "held", 11, error);
  REQUIRE(install_constant(cache, "free", 22, error) != nullptr);
  REQUIRE(cache.find("free") != nullptr);  // "held" is now least recently used
  REQUIRE(install_constant(cache, "new", 33, error) != nullptr);
  CHECK(cache.find("held") != nullptr);  // skipped: a caller holds it
  CHECK(cache.find("free") == nullptr);  // evicted instead
  CHECK(call(held) == 11);
  // With "new" unheld and "held" held, one more page still fits after evicting "new".
  auto second = install_constant(cache, "second", 44, error);
  REQUIRE(second != nullptr);
  CHECK(cache.stats().bytes_in_use == 2 * page_size());
  CHECK(install_constant(cache, "third", 55, error) == nullptr);  // both remaining blocks are held
  second.reset();
  CHECK(install_constant(cache, "third", 55, error) != nullptr);  // "second" is unheld again
  CHECK(call(held) == 11);
}

TEST_CASE("blocks outlive the cache that installed them", "[unit][jit][codecache]") {
  std::shared_ptr<const x86::CodeBlock> block;
  {
    CodeCache cache(1 << 20);
    std::string error;
    block = install_constant(cache, "k", 99, error);
    REQUIRE(block != nullptr);
  }
  CHECK(call(block) == 99);
  CHECK(mapping_perms(block->entry()) == "r-xp");
  const void* entry = block->entry();
  block.reset();
  CHECK(mapping_perms(entry) != "r-xp");  // unmapped with its last reference
}

TEST_CASE("eviction frees enough pages for a multi-page block", "[unit][jit][codecache]") {
  CodeCache cache(4 * page_size());
  std::string error;
  REQUIRE(install_constant(cache, "x", 1, error) != nullptr);
  CHECK(cache.stats().bytes_in_use == page_size());
  REQUIRE(install_constant(cache, "y", 2, error, page_size()) != nullptr);
  CHECK(cache.stats().bytes_in_use == 3 * page_size());
  // A 2-page block needs 2 more pages; evicting "x" (1 page) makes it fit.
  REQUIRE(install_constant(cache, "z", 3, error, page_size()) != nullptr);
  CHECK(cache.stats().bytes_in_use == 4 * page_size());
  CHECK(cache.find("x") == nullptr);
  CHECK(cache.stats().evictions == 1);
}

TEST_CASE("injected failures fail the next installs", "[unit][jit][codecache]") {
  CodeCache cache(1 << 20);
  std::string error;
  x86::inject_code_cache_failures(2);
  CHECK(install_constant(cache, "a", 1, error) == nullptr);
  CHECK_THAT(error, Catch::Contains("injected fault"));
  error.clear();
  CHECK(install_constant(cache, "b", 2, error) == nullptr);
  CHECK_THAT(error, Catch::Contains("injected fault"));
  auto c = install_constant(cache, "c", 3, error);
  REQUIRE(c != nullptr);
  CHECK(call(c) == 3);
  CHECK(cache.stats().refusals == 2);
  CHECK(cache.stats().entries == 1);
  CHECK(cache.stats().bytes_in_use == page_size());
}

TEST_CASE("find counts hits and misses; installing an existing key reuses it", "[unit][jit][codecache]") {
  CodeCache cache(1 << 20);
  std::string error;
  CHECK(cache.find("k") == nullptr);
  auto first = install_constant(cache, "k", 5, error);
  REQUIRE(first != nullptr);
  CHECK(cache.find("k") == first);
  CHECK(cache.find("k") == first);
  CHECK(cache.find("other") == nullptr);
  CodeCacheStats s = cache.stats();
  CHECK(s.hits == 2);
  CHECK(s.misses == 2);
  CHECK(install_constant(cache, "k", 6, error) == first);
  CHECK(cache.stats().bytes_in_use == page_size());
}

TEST_CASE("concurrent installs from four threads", "[unit][jit][codecache]") {
  CodeCache cache(8 * page_size());
  std::atomic<int> wrong{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        const int value = t * 1000 + i % 20;  // 20 keys per thread, installed five times each
        const std::string key = "t" + std::to_string(t) + "/" + std::to_string(i % 20);
        std::string error;
        auto block = cache.find(key);
        if (!block) block = install_constant(cache, key, value, error);
        if (!block) {
          ++refused;
          continue;
        }
        if (call(block) != value) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
  CHECK(refused == 0);
  CodeCacheStats s = cache.stats();
  CHECK(s.bytes_in_use <= 8 * page_size());
  CHECK(s.bytes_in_use == s.entries * page_size());
  CHECK(s.hits + s.misses == 400);
  CHECK(s.evictions > 0);
}

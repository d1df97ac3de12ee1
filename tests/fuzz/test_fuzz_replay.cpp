// Replays every committed fuzz input through its target's function under the
// normal build: the seed corpus (tests/fuzz/corpus/<target>/) must run
// without a finding, and so must every past finding (regressions/<target>/),
// so each fixed bug stays fixed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_targets.h"

using namespace canary::fuzz;
namespace fs = std::filesystem;

namespace {

// The files of tests/fuzz/<kind>/<target>/ in name order (none when the folder is absent).
std::vector<fs::path> inputs_of(const char* kind, const char* target) {
  std::vector<fs::path> files;
  const fs::path dir = fs::path(CANARY_FUZZ_DIR) / kind / target;
  if (!fs::is_directory(dir)) return files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The whole file as bytes.
std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs every file through the target; returns how many were accepted.
std::size_t replay(const FuzzTarget& target, const std::vector<fs::path>& files) {
  std::size_t accepted = 0;
  for (const fs::path& file : files) {
    const FuzzResult r = target.run(read_bytes(file));
    INFO(target.name << ": " << file.string() << " -> " << verdict_name(r.verdict) << "\n" << r.detail);
    CHECK_FALSE(r.is_finding());
    accepted += r.verdict == FuzzVerdict::Accepted ? 1 : 0;
  }
  return accepted;
}

}  // namespace

TEST_CASE("fuzz replay: every seed corpus file runs through its target without a finding", "[fuzz][replay]") {
  for (const FuzzTarget& target : kFuzzTargets) {
    const std::vector<fs::path> files = inputs_of("corpus", target.name);
    INFO("tests/fuzz/corpus/" << target.name);
    REQUIRE(files.size() > 0);
    // A seed corpus of rejected inputs would start the fuzzer from nothing valid.
    CHECK(replay(target, files) > 0);
  }
}

TEST_CASE("fuzz replay: every recorded finding stays fixed", "[fuzz][replay][regression]") {
  REQUIRE(fs::is_directory(fs::path(CANARY_FUZZ_DIR) / "regressions"));
  std::size_t total = 0;
  for (const FuzzTarget& target : kFuzzTargets) {
    const std::vector<fs::path> files = inputs_of("regressions", target.name);
    replay(target, files);
    total += files.size();
  }
  WARN(total << " regression inputs replayed");
}

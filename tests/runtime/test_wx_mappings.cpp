// W^X end to end. While sessions run models whose traces Canary compiles
// (AsmJit), a watcher thread reads /proc/self/maps over and over and never
// finds a mapping that is writable and executable at the same time. oneDNN
// 2.6 (Debian 12) generates its kernels with Xbyak in pages that are briefly
// writable and executable while a primitive is created, then read-execute;
// for models with oneDNN ops the test checks that none is left that way once
// the primitives exist (docs/RELIABILITY.md).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "jit_test_models.h"

using namespace canary;
using namespace canary::test;

namespace {

// The writable-and-executable mappings of the process, as /proc/self/maps lines.
std::vector<std::string> rwx_mappings() {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> found;
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms;
    in >> range >> perms;
    if (perms.size() >= 3 && perms[1] == 'w' && perms[2] == 'x') found.push_back(line);
  }
  return found;
}

// A conv + gemm + elementwise model: oneDNN JIT kernels and AsmJit fused code.
Model conv_model(const Runtime& rt) {
  std::vector<float> w(8 * 4 * 3), fc(8 * 2);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i % 17) - 0.05f;
  for (std::size_t i = 0; i < fc.size(); ++i) fc[i] = 0.1f * static_cast<float>(i % 5) - 0.2f;
  ModelBuilder b("conv");
  b.input("x", DType::F32, {"N", 4, "T"})
      .constant("w", Tensor::from_vector<float>(w, {8, 4, 3}))
      .constant("fc", Tensor::from_vector<float>(fc, {8, 2}))
      .node("Conv", {"x", "w"}, {"c"}, {{"pads", std::vector<std::int64_t>{1, 1}}})
      .node("Relu", {"c"}, {"r"})
      .node("ReduceMean", {"r"}, {"m"}, {{"axes", std::vector<std::int64_t>{2}}, {"keepdims", std::int64_t{0}}})
      .node("Gemm", {"m", "fc"}, {"logits"})
      .node("Tanh", {"logits"}, {"y"})
      .output("y");
  return rt.build(b);
}

}  // namespace

// Runs `work` while a watcher thread scans /proc/self/maps; the RWX lines
// seen that were not there before (earlier tests in the same process may
// have run oneDNN, whose mappings are not what these tests are about).
template <typename Work>
std::vector<std::string> rwx_seen_during(Work work, std::uint64_t& scans) {
  const std::vector<std::string> before = rwx_mappings();
  std::atomic<bool> done{false};
  std::vector<std::string> seen;
  auto scan = [&] {
    for (std::string& line : rwx_mappings())
      if (std::find(before.begin(), before.end(), line) == before.end()) seen.push_back(std::move(line));
    ++scans;
  };
  std::thread watcher([&] {
    while (!done.load()) scan();
  });
  work();
  done = true;
  watcher.join();
  scan();  // and once after
  return seen;
}

TEST_CASE("Canary's compiled code is never writable and executable, at any moment", "[unit][jit][wx]") {
  std::uint64_t scans = 0;
  std::uint64_t compiles = 0;
  const std::vector<std::string> seen = rwx_seen_during([&] {
    Runtime rt(jit_options(2));
    Model chain = elementwise_chain(rt);  // elementwise only: every kernel is Canary's
    Session s = chain.session();
    for (int i = 0; i < 60; ++i) {
      const std::int64_t c = 16 + 8 * (i % 7);  // new shapes: retraces, new variants
      s.run({{"x", random_tensor({4 + i % 3, c}, 1 + static_cast<std::uint32_t>(i))}, {"b", random_tensor({c}, 3)}});
    }
    compiles = s.stats().jit.compiles;
  }, scans);
  INFO((seen.empty() ? std::string() : seen.front()));
  CHECK(compiles >= 2);
  CHECK(scans > 0);
  CHECK(seen.empty());
}

TEST_CASE("with use_onednn off, a conv model never maps anything writable and executable", "[unit][jit][wx]") {
  std::uint64_t scans = 0;
  std::vector<Tensor> outputs, expected;
  const std::vector<std::string> seen = rwx_seen_during([&] {
    Options o = jit_options(2);
    o.use_onednn = false;
    Runtime rt(o);
    Model conv = conv_model(rt);
    Session cs = conv.session();
    for (int i = 0; i < 30; ++i)
      outputs.push_back(cs.run({{"x", random_tensor({2, 4, 16 + 8 * (i % 5)}, 1 + static_cast<std::uint32_t>(i))}}).at("y"));
    CHECK(cs.stats().jit.compiles >= 1);
  }, scans);
  INFO((seen.empty() ? std::string() : seen.front()));
  CHECK(scans > 0);
  CHECK(seen.empty());
  // The reference kernels compute the same model (oneDNN on, afterwards: its
  // own mappings no longer matter to this test).
  Runtime rt(interpreter_options());
  Session ref = conv_model(rt).session();
  for (int i = 0; i < 30; ++i) {
    const Tensor y = ref.run({{"x", random_tensor({2, 4, 16 + 8 * (i % 5)}, 1 + static_cast<std::uint32_t>(i))}}).at("y");
    CHECK(max_relative_difference(outputs[static_cast<std::size_t>(i)], y) < 1e-5);
  }
}

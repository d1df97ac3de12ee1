// Non-adjacent fusion end to end: a gated unit, sigmoid(x W) * tanh(x V) in
// source order, runs its three elementwise ops as one kernel after the second
// MatMul and agrees with the interpreter; an exit at the MatMul in between,
// and at the sunk group itself, replays the ops not yet run (reading the
// value the MatMul overwrote through the kept handle) and gives the
// interpreter's bits; with the option off the groups stay apart.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "jit_test_models.h"
#include "runtime/core/fault_injection.h"

using canary::NamedTensors;
using canary::Tensor;
using namespace canary::test;

namespace {

// The second MatMul's result takes the register of the first one's, which
// the Sigmoid read: sinking the Sigmoid past it needs the kept handle.
const char* kGated = R"(canary v1
graph main(x: f32[N, 16], w: f32[16, 16], v: f32[16, 16]) -> (y) {
  g = MatMul(x, w)
  s = Sigmoid(g)
  h = MatMul(x, v)
  t = Tanh(h)
  y = Mul(s, t)
}
)";

// Two sunk groups of different shapes read g, whose register the second
// MatMul takes over: one kept handle serves both.
const char* kTwoReaders = R"(canary v1
graph main(x: f32[N, 16], w: f32[16, 16], v: f32[16, 16], c: f32[2, N, 16], d: f32[2, N, 16]) -> (y, z) {
  g = MatMul(x, w)
  s = Sigmoid(g)
  u = Add(g, c)
  h = MatMul(x, v)
  t = Tanh(h)
  y = Mul(s, t)
  z = Mul(u, d)
}
)";

NamedTensors two_reader_inputs(std::uint32_t seed) {
  return {{"x", random_tensor({8, 16}, seed)}, {"w", random_tensor({16, 16}, 7, -0.5f, 0.5f)},
          {"v", random_tensor({16, 16}, 8, -0.5f, 0.5f)}, {"c", random_tensor({2, 8, 16}, seed + 1)},
          {"d", random_tensor({2, 8, 16}, seed + 2)}};
}

NamedTensors gated_inputs(std::uint32_t seed, std::int64_t n = 64) {
  return {{"x", random_tensor({n, 16}, seed)}, {"w", random_tensor({16, 16}, 7, -0.5f, 0.5f)},
          {"v", random_tensor({16, 16}, 8, -0.5f, 0.5f)}};
}

// Clears the process-wide fault configuration when a test ends.
struct FaultsOff {
  ~FaultsOff() { canary::configure_faults(""); }
};

}  // namespace

TEST_CASE("nonadjacent fusion: the gated unit runs as two MatMuls and one sunk group, matching the interpreter",
          "[unit][jit][api][nonadjacent]") {
  canary::Runtime rt(jit_options(2)), plain(interpreter_options());
  auto model = rt.load_text(kGated);
  auto s = model.session();
  auto p = plain.load_text(kGated).session();
  for (std::uint32_t call = 0; call < 5; ++call) {
    INFO("call " << call);
    const NamedTensors in = gated_inputs(call + 1);
    check_same_values(s.run(in).at("y"), p.run(in).at("y"), 1e-6);
  }
  const std::string listing = listings(model), log = event_messages(model);
  INFO(listing << "\n" << log);
  CHECK(listing.find("(sunk to pc") != std::string::npos);
  CHECK(listing.find("for a sunk group]") != std::string::npos);  // the second MatMul keeps the first's result
  CHECK(log.find("1 ops sunk into later groups") != std::string::npos);
  // The report names the group's nodes in recorded order and marks it sunk.
  const auto report = model.jit_report();
  REQUIRE(report.anchors.size() == 1);
  REQUIRE(report.anchors[0].variants.size() == 1);
  const auto& groups = report.anchors[0].variants[0].groups;
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].nodes == std::vector<std::string>{"s", "t", "y"});
  CHECK(groups[0].sunk);
  CHECK(s.stats().jit.compiled_entries >= 3);
  CHECK(s.stats().jit.deopts == 0);
}

TEST_CASE("nonadjacent fusion: exits at the op in between and at the sunk group replay what has not run",
          "[unit][jit][api][nonadjacent]") {
  const FaultsOff faults_off;
  canary::Runtime rt(jit_options(2)), plain(interpreter_options());
  auto model = rt.load_text(kGated);
  auto s = model.session();
  auto p = plain.load_text(kGated).session();
  for (std::uint32_t call = 0; call < 3; ++call) s.run(gated_inputs(call + 1));
  REQUIRE(s.stats().jit.compiled_entries >= 1);
  // Compiled kernel calls per entry: MatMul, MatMul, the group. The second
  // exits before the MatMul writes; the third after it overwrote what the
  // Sigmoid reads, so its replay must read the kept handle.
  for (const char* fault : {"kernel@2", "kernel@3"}) {
    INFO(fault);
    const std::uint64_t deopts = s.stats().jit.deopts;
    canary::configure_faults(fault);
    const NamedTensors in = gated_inputs(11);
    const Tensor got = s.run(in).at("y");
    CHECK(canary::faults_taken(canary::FaultPoint::KernelExecution) == 1);
    CHECK(s.stats().jit.deopts == deopts + 1);
    // From the exit on, the interpreter's kernels compute everything, the
    // replayed Sigmoid (and Tanh) included: the same bits.
    CHECK(bit_identical(got, p.run(in).at("y")));
    canary::configure_faults("");
  }
  // And the next call runs compiled again.
  const NamedTensors in = gated_inputs(12);
  check_same_values(s.run(in).at("y"), p.run(in).at("y"), 1e-6);
}

TEST_CASE("nonadjacent fusion: two sunk groups reading one overwritten register share its kept handle",
          "[unit][jit][api][nonadjacent]") {
  const FaultsOff faults_off;
  canary::Runtime rt(jit_options(2)), plain(interpreter_options());
  auto model = rt.load_text(kTwoReaders);
  auto s = model.session();
  auto p = plain.load_text(kTwoReaders).session();
  for (std::uint32_t call = 0; call < 4; ++call) {
    INFO("call " << call);
    const NamedTensors in = two_reader_inputs(call + 1);
    const NamedTensors got = s.run(in), want = p.run(in);
    check_same_values(got.at("y"), want.at("y"), 1e-6);
    check_same_values(got.at("z"), want.at("z"), 1e-6);
  }
  const std::string listing = listings(model);
  INFO(listing);
  std::size_t sunk = 0;
  for (std::size_t at = listing.find("(sunk to pc"); at != std::string::npos; at = listing.find("(sunk to pc", at + 1))
    ++sunk;
  CHECK(sunk == 2);
  // Exits at the second MatMul, at the first sunk group and at the second.
  for (const char* fault : {"kernel@2", "kernel@3", "kernel@4"}) {
    INFO(fault);
    canary::configure_faults(fault);
    const NamedTensors in = two_reader_inputs(21);
    const NamedTensors got = s.run(in), want = p.run(in);
    CHECK(canary::faults_taken(canary::FaultPoint::KernelExecution) == 1);
    canary::configure_faults("");
    CHECK(bit_identical(got.at("z"), want.at("z")));  // z is computed after every exit by the interpreter
    check_same_values(got.at("y"), want.at("y"), 1e-6);
  }
}

TEST_CASE("nonadjacent fusion: off, the Sigmoid is a group of its own", "[unit][jit][api][nonadjacent]") {
  canary::Options options = jit_options(2);
  options.jit.nonadjacent_fusion = false;
  canary::Runtime rt(options), plain(interpreter_options());
  auto model = rt.load_text(kGated);
  auto s = model.session();
  auto p = plain.load_text(kGated).session();
  for (std::uint32_t call = 0; call < 4; ++call) {
    const NamedTensors in = gated_inputs(call + 1);
    check_same_values(s.run(in).at("y"), p.run(in).at("y"), 1e-6);
  }
  const std::string listing = listings(model);
  INFO(listing);
  CHECK(listing.find("sunk") == std::string::npos);
  CHECK(listing.find("fused group 1") != std::string::npos);
}

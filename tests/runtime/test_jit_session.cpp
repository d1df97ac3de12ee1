// The JIT through the public API: hot traces compile, guards fail and learn,
// deopts resume the interpreter, and every step is an event.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "jit_test_models.h"

using canary::DType;
using canary::EventKind;
using canary::Tensor;
using namespace canary::test;

namespace {
// Profiles go to the temp directory so that a run never leaves files in the
// working directory.
std::string temp_profile_path(const std::string& stem) {
  return (std::filesystem::temp_directory_path() / (stem + std::to_string(::getpid()) + ".txt")).string();
}
}  // namespace

TEST_CASE("jit: a hot elementwise chain compiles once and matches the interpreter", "[unit][jit][api]") {
  canary::Runtime jit_rt(jit_options(2)), plain_rt(interpreter_options());
  auto model = elementwise_chain(jit_rt);
  auto plain = elementwise_chain(plain_rt);
  auto s = model.session();
  auto p = plain.session();
  for (int call = 0; call < 6; ++call) {
    const canary::NamedTensors in{{"x", random_tensor({4, 37}, 10 + call)}, {"b", random_tensor({37}, 99)}};
    const Tensor y = s.run(in).at("y");
    const Tensor want = p.run(in).at("y");
    CHECK(max_relative_difference(y, want) < 1e-6);
  }
  CHECK(events_of(model, EventKind::Hot).size() == 1);
  CHECK(events_of(model, EventKind::TraceRecorded).size() == 1);
  REQUIRE(events_of(model, EventKind::Compiled).size() == 1);
  const auto& st = s.stats().jit;
  CHECK(st.compiles == 1);
  CHECK(st.compiled_entries == 4);  // calls 3..6 (call 2 recorded, call 1 counted)
  CHECK(st.guard_failures == 0);
  CHECK(st.variants_installed == 1);
  CHECK(st.code_bytes > 0);
  CHECK(s.stats().instructions_executed < p.stats().instructions_executed);
}

TEST_CASE("jit: a new batch size fails the exact guard, then the dim becomes symbolic", "[unit][jit][api]") {
  canary::Runtime rt(jit_options(2));
  auto model = elementwise_chain(rt);
  auto s = model.session();
  const Tensor b = random_tensor({16}, 5);
  for (int i = 0; i < 3; ++i) s.run({{"x", random_tensor({8, 16}, 1)}, {"b", b}});
  REQUIRE(events_of(model, EventKind::Compiled).size() == 1);

  s.run({{"x", random_tensor({96, 16}, 2)}, {"b", b}});
  auto failed = events_of(model, EventKind::GuardFailed);
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].guard == "x.dim0 == 8");
  CHECK(failed[0].observed == "saw 96");
  CHECK(failed[0].call == 4);

  // The second failure queues a retrace that makes dim 0 symbolic.
  s.run({{"x", random_tensor({40, 16}, 3)}, {"b", b}});
  auto retraces = events_of(model, EventKind::Retrace);
  REQUIRE(retraces.size() == 1);
  CHECK(retraces[0].decision == "x.dim0 made symbolic (seen 8..96, divisible by 8)");
  auto compiled = events_of(model, EventKind::Compiled);
  REQUIRE(compiled.size() == 2);
  CHECK(compiled[1].decision.find("symbolic fused") == 0);
  // The exact variant is subsumed by the symbolic one.
  CHECK(events_of(model, EventKind::Evicted).size() == 1);

  // Any other batch (but 0 and 1, which stay exact) now runs compiled code.
  const auto entries = s.stats().jit.compiled_entries;
  for (std::int64_t n : {3, 17, 250, 8}) s.run({{"x", random_tensor({n, 16}, 4)}, {"b", b}});
  CHECK(s.stats().jit.compiled_entries == entries + 4);
  CHECK(events_of(model, EventKind::GuardFailed).size() == 2);
}

TEST_CASE("jit: batch 1 stays exact and becomes a sibling variant", "[unit][jit][api]") {
  canary::Runtime rt(jit_options(1));
  auto model = elementwise_chain(rt);
  auto s = model.session();
  const Tensor b = random_tensor({8}, 5);
  s.run({{"x", random_tensor({4, 8}, 1)}, {"b", b}});
  for (int i = 0; i < 2; ++i) s.run({{"x", random_tensor({1, 8}, 2)}, {"b", b}});
  auto retraces = events_of(model, EventKind::Retrace);
  REQUIRE(retraces.size() == 1);
  CHECK(retraces[0].decision == "sibling trace: x.dim0 is 1 (stays exact)");
  s.run({{"x", random_tensor({1, 8}, 3)}, {"b", b}});
  s.run({{"x", random_tensor({4, 8}, 3)}, {"b", b}});
  CHECK(s.stats().jit.variants_installed == 2);
  CHECK(s.stats().jit.compiled_entries >= 2);
}

TEST_CASE("jit: an entry guard failure interprets the whole call, bit-identical", "[unit][jit][api]") {
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = elementwise_chain(rt);
  auto plain = elementwise_chain(plain_rt);
  auto s = model.session();
  auto p = plain.session();
  s.run({{"x", random_tensor({4, 8}, 1)}, {"b", random_tensor({8}, 2)}});
  s.run({{"x", random_tensor({4, 8}, 1)}, {"b", random_tensor({8}, 2)}});
  const canary::NamedTensors odd{{"x", random_tensor({3, 8}, 7)}, {"b", random_tensor({8}, 8)}};
  const Tensor y = s.run(odd).at("y");
  CHECK(events_of(model, EventKind::GuardFailed).size() == 1);
  CHECK(bit_identical(y, p.run(odd).at("y")));
}

TEST_CASE("jit: a branch that flips deoptimises mid-trace and resumes the interpreter", "[unit][jit][api]") {
  // The If condition comes from the data; the arithmetic before the branch is
  // exact in every tier, so the deoptimised call is bit-identical.
  const char* text = R"(canary v1
graph main(x: f32[N, 4]) -> (y) {
  const two: f32[] = [2]
  const zero: f32[] = [0]
  d = Mul(x, two)
  s = ReduceSum(d) {keepdims = 0}
  flag: bool[] = Greater(s, zero)
  y: f32[N, 4] = If(flag) {
    else_branch = graph neg() -> (z) {
      z = Neg(d)
    },
    then_branch = graph pos() -> (z) {
      z = Add(d, x)
    }
  } "choose"
}
)";
  canary::Options o = jit_options(1);
  o.jit.side_traces = false;  // the cut below (side traces: test_jit_side_traces.cpp)
  canary::Runtime rt(o), plain_rt(interpreter_options());
  auto model = rt.load_text(text);
  auto plain = plain_rt.load_text(text);
  auto s = model.session();
  auto p = plain.session();
  const Tensor positive = random_tensor({2, 4}, 1, 0.5f, 1.0f);
  const Tensor negative = random_tensor({2, 4}, 2, -1.0f, -0.5f);
  s.run({{"x", positive}});
  s.run({{"x", positive}});
  REQUIRE(events_of(model, EventKind::Compiled).size() == 1);
  const Tensor y = s.run({{"x", negative}}).at("y");
  auto deopts = events_of(model, EventKind::Deopt);
  REQUIRE(deopts.size() == 1);
  CHECK(deopts[0].guard.find("branch at pc") == 0);
  CHECK(s.stats().jit.deopts == 1);
  CHECK(bit_identical(y, p.run({{"x", negative}}).at("y")));
  // A branch that keeps flipping gets the trace cut before it.
  s.run({{"x", negative}});
  auto retraces = events_of(model, EventKind::Retrace);
  REQUIRE(!retraces.empty());
  CHECK(retraces.back().decision.find("trace cut before it") != std::string::npos);
  for (int i = 0; i < 4; ++i) {
    const Tensor& in = i % 2 ? positive : negative;
    CHECK(bit_identical(s.run({{"x", in}}).at("y"), p.run({{"x", in}}).at("y")));
  }
}

TEST_CASE("jit: a loop body compiles as a loop trace and iterates in compiled code", "[unit][jit][api]") {
  const char* text = R"(canary v1
graph main(h0: f32[N, 4], steps: i64[]) -> (h_last) {
  const keep_going: bool[] = [true]
  const w: f32[4, 4] = [0.5, -0.25, 0.1, 0, 0.2, 0.3, -0.1, 0.05, 0, 0.1, 0.4, -0.2, 0.1, 0, 0.2, 0.3]
  const bias: f32[4] = [0.1, -0.1, 0.05, 0]
  h_last: f32[N, 4] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[N, 4]) -> (cond, h_next) {
      a = MatMul(h, w)
      s = Add(a, bias)
      h_next: f32[N, 4] = Tanh(s)
    }
  } "rnn"
}
)";
  canary::Runtime rt(jit_options(3)), plain_rt(interpreter_options());
  auto model = rt.load_text(text);
  auto plain = plain_rt.load_text(text);
  auto s = model.session();
  auto p = plain.session();
  for (int call = 0; call < 3; ++call) {
    const canary::NamedTensors in{{"h0", random_tensor({3, 4}, 20 + call)}, {"steps", Tensor::scalar<std::int64_t>(50)}};
    const Tensor y = s.run(in).at("h_last");
    CHECK(max_relative_difference(y, p.run(in).at("h_last")) < 1e-5);
  }
  auto compiled = events_of(model, EventKind::Compiled);
  REQUIRE(!compiled.empty());
  CHECK(compiled[0].anchor == "rnn");
  // One entry runs all remaining iterations of a call.
  CHECK(s.stats().jit.compiled_entries >= 2);
  CHECK(s.stats().instructions_executed < p.stats().instructions_executed / 2);
}

TEST_CASE("jit: disabled JIT records nothing", "[unit][jit][api]") {
  canary::Runtime rt(interpreter_options());
  auto model = elementwise_chain(rt);
  auto s = model.session();
  for (int i = 0; i < 5; ++i) s.run({{"x", random_tensor({2, 3}, 1)}, {"b", random_tensor({3}, 2)}});
  CHECK(model.events().empty());
  CHECK(s.stats().jit.compiled_entries == 0);
}

TEST_CASE("jit: a saved shape profile makes a restarted model compile symbolic at once", "[unit][jit][api]") {
  const std::string path = temp_profile_path("canary_jit_profile_");
  std::remove(path.c_str());
  canary::Options o = jit_options(2);
  o.jit.profile_path = path;
  const Tensor b = random_tensor({16}, 5);
  {
    canary::Runtime rt(o);
    auto model = elementwise_chain(rt);
    auto s = model.session();
    for (std::int64_t n : {8, 8, 8, 96, 40}) s.run({{"x", random_tensor({n, 16}, 1)}, {"b", b}});
    REQUIRE(events_of(model, EventKind::Retrace).size() == 1);
  }  // the model saves what it learned here
  {  // the restarted model saves again when it is destroyed
    canary::Runtime rt(o);
    auto model = elementwise_chain(rt);
    auto s = model.session();
    for (std::int64_t n : {8, 8, 8, 96, 40}) s.run({{"x", random_tensor({n, 16}, 1)}, {"b", b}});
    auto loaded = events_of(model, EventKind::Profile);
    REQUIRE(loaded.size() == 1);
    CHECK(loaded[0].message.find("loaded: 1 anchors start warm") != std::string::npos);
    auto compiled = events_of(model, EventKind::Compiled);
    REQUIRE(compiled.size() == 1);
    CHECK(compiled[0].decision.find("symbolic fused") == 0);
    CHECK(events_of(model, EventKind::Retrace).empty());
  }
  std::remove(path.c_str());
}

TEST_CASE("jit: a corrupt shape profile is reported and ignored", "[unit][jit][api]") {
  const std::string path = temp_profile_path("canary_jit_profile_bad_");
  std::FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f);
  std::fputs("not a profile\n", f);
  std::fclose(f);
  canary::Options o = jit_options(2);
  o.jit.profile_path = path;
  {
    canary::Runtime rt(o);
    auto model = elementwise_chain(rt);
    auto s = model.session();
    for (int i = 0; i < 3; ++i) s.run({{"x", random_tensor({2, 3}, 1)}, {"b", random_tensor({3}, 2)}});
    auto loaded = events_of(model, EventKind::Profile);
    REQUIRE(loaded.size() == 1);
    CHECK(loaded[0].message.find("not a canary JIT profile") != std::string::npos);
    CHECK(events_of(model, EventKind::Compiled).size() == 1);
  }
  std::remove(path.c_str());
}

TEST_CASE("jit: the report lists anchors, variants, fused groups and guard failures", "[unit][jit][api]") {
  canary::Runtime rt(jit_options(2));
  auto model = elementwise_chain(rt);
  auto s = model.session();
  const Tensor b = random_tensor({16}, 5);
  for (std::int64_t n : {8, 8, 8, 96}) s.run({{"x", random_tensor({n, 16}, 1)}, {"b", b}});
  const canary::JitReport r = model.jit_report();
  CHECK(r.enabled);
  CHECK_FALSE(r.isa.empty());
  REQUIRE(r.anchors.size() == 1);
  const canary::AnchorReport& a = r.anchors[0];
  CHECK(a.name == "entry");
  CHECK(a.kind == "entry");
  CHECK(a.compiles == 1);
  REQUIRE(a.variants.size() == 1);
  const canary::VariantReport& v = a.variants[0];
  CHECK(v.tier == "exact fused");
  CHECK(v.entries == 1);
  REQUIRE(v.groups.size() == 1);
  CHECK(v.groups[0].nodes.size() == 6);
  CHECK(v.groups[0].inputs == 2);
  bool saw_failed_guard = false;
  for (const canary::GuardReport& g : v.guards)
    if (g.condition == "x.dim0 == 8") saw_failed_guard = g.failures == 1;
  CHECK(saw_failed_guard);
  CHECK(v.listing.find("fused group 0: 6 ops") != std::string::npos);
  // Events carry a time and, with synchronous compiles, the session's thread.
  auto compiled = events_of(model, EventKind::Compiled);
  REQUIRE(compiled.size() == 1);
  CHECK(compiled[0].time_us > 0.0);
  CHECK(compiled[0].thread == 0);
}

TEST_CASE("jit: dims seen equal share a symbol until they differ", "[unit][jit][api]") {
  // Two independent inputs whose batch dims happen to match at first.
  canary::ModelBuilder mb("pair");
  mb.input("x", DType::F32, {"N", 4})
      .input("y", DType::F32, {"M", 4})
      .node("Tanh", {"x"}, {"tx"})
      .node("Sigmoid", {"y"}, {"sy"})
      .output("tx")
      .output("sy");
  canary::Runtime rt(jit_options(1));
  auto model = rt.build(mb);
  auto s = model.session();
  auto call = [&](std::int64_t n, std::int64_t m) { s.run({{"x", random_tensor({n, 4}, 1)}, {"y", random_tensor({m, 4}, 2)}}); };
  call(4, 4);
  call(8, 8);
  call(9, 9);  // second failure: both dims made symbolic, sharing one symbol
  auto retraces = events_of(model, EventKind::Retrace);
  REQUIRE(retraces.size() == 1);
  CHECK(retraces[0].decision == "x.dim0, y.dim0 made symbolic (x.dim0 seen 4..9; y.dim0 seen 4..9)");
  const auto failures_before = s.stats().jit.guard_failures;
  call(12, 12);
  CHECK(s.stats().jit.guard_failures == failures_before);  // one symbolic variant covers it
  call(12, 30);
  auto failed = events_of(model, EventKind::GuardFailed);
  REQUIRE(!failed.empty());
  CHECK(failed.back().guard == "y.dim0 == x.dim0");
  CHECK(failed.back().observed == "saw 30 vs 12");
  call(7, 3);
  retraces = events_of(model, EventKind::Retrace);
  REQUIRE(retraces.size() == 2);
  // The next variant keeps the dims apart: any pair of batch sizes now runs compiled.
  const auto entries = s.stats().jit.compiled_entries;
  call(20, 6);
  call(6, 20);
  CHECK(s.stats().jit.compiled_entries == entries + 2);
  // y.dim0 was already symbolic when 30 was refused: its facts still hold it.
  const canary::JitReport report = model.jit_report();
  REQUIRE(report.anchors.size() == 1);
  REQUIRE_FALSE(report.anchors[0].variants.empty());
  CHECK_THAT(report.anchors[0].variants.back().listing, Catch::Contains("= y.dim0: 3..30"));
}

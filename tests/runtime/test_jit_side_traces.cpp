// Side traces through the public API: a branch exit that keeps firing gets
// a compiled trace of its own from the exit's pc, later exits continue in it
// instead of the interpreter, and every step is an event.
#include <catch2/catch.hpp>

#include <algorithm>

#include "jit_test_models.h"
#include "runtime/core/fault_injection.h"

using canary::EventKind;
using canary::NamedTensors;
using canary::Tensor;
using namespace canary::test;

namespace {

// The If condition comes from the data; every op is exact in every tier, so
// compiled, side-traced and interpreted calls are bit-identical.
const char* kBranchy = R"(canary v1
graph main(x: f32[N, 4]) -> (y) {
  const two: f32[] = [2]
  const zero: f32[] = [0]
  d = Mul(x, two)
  s = ReduceSum(d) {keepdims = 0}
  flag: bool[] = Greater(s, zero)
  y: f32[N, 4] = If(flag) {
    else_branch = graph neg() -> (z) {
      n = Neg(d)
      z = Sub(n, x)
    },
    then_branch = graph pos() -> (z) {
      z = Add(d, x)
    }
  } "choose"
}
)";

Tensor positive(std::int64_t n, std::uint32_t seed) { return random_tensor({n, 4}, seed, 0.5f, 1.0f); }
Tensor negative(std::int64_t n, std::uint32_t seed) { return random_tensor({n, 4}, seed, -1.0f, -0.5f); }

// Runs x through both sessions and checks the outputs are the same bits.
void check_call(canary::Session& jit, canary::Session& plain, const Tensor& x) {
  const NamedTensors in{{"x", x}};
  CHECK(bit_identical(jit.run(in).at("y"), plain.run(in).at("y")));
}

std::vector<canary::VariantReport> side_traces(const canary::Model& m) {
  std::vector<canary::VariantReport> all;
  for (const auto& a : m.jit_report().anchors) all.insert(all.end(), a.side_traces.begin(), a.side_traces.end());
  return all;
}

}  // namespace

TEST_CASE("jit: a branch exit that keeps firing continues in a side trace", "[unit][jit][api][side]") {
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = rt.load_text(kBranchy);
  auto plain = plain_rt.load_text(kBranchy);
  auto s = model.session();
  auto p = plain.session();
  check_call(s, p, positive(2, 1));  // hot: recorded along the then-branch
  check_call(s, p, positive(2, 2));
  REQUIRE(events_of(model, EventKind::Compiled).size() == 1);
  // Two exits at the branch ask for a side trace; the third records it.
  for (std::uint32_t i = 0; i < 3; ++i) check_call(s, p, negative(2, 10 + i));
  const std::string log = event_messages(model);
  INFO(log);
  CHECK(log.find("keeps deoptimising: side trace from it") != std::string::npos);
  CHECK(log.find("trace cut before it") == std::string::npos);
  const auto sides = side_traces(model);
  REQUIRE(sides.size() == 1);
  CHECK(sides[0].side);
  CHECK(sides[0].listing.find("side trace") != std::string::npos);
  const auto recorded = events_of(model, EventKind::TraceRecorded);
  REQUIRE(recorded.size() == 2);
  CHECK(recorded[1].message.find("side trace") != std::string::npos);
  // The parent stays installed, and its branch exit now continues compiled.
  const std::uint64_t deopts = s.stats().jit.deopts;
  CHECK(deopts == 3);
  for (std::uint32_t i = 0; i < 6; ++i) check_call(s, p, i % 2 ? positive(2, 20 + i) : negative(2, 20 + i));
  const auto& st = s.stats().jit;
  CHECK(st.deopts == deopts);
  CHECK(st.side_trace_entries == 3);
  CHECK(st.side_traces_installed == 1);
  CHECK(st.variants_installed == 1);
  CHECK(side_traces(model)[0].entries == 3);
  CHECK(events_of(model, EventKind::Compiled).size() == 2);
}

TEST_CASE("jit: with side traces off a flipping branch cuts the trace", "[unit][jit][api][side]") {
  canary::Options o = jit_options(1);
  o.jit.side_traces = false;
  canary::Runtime rt(o), plain_rt(interpreter_options());
  auto model = rt.load_text(kBranchy);
  auto s = model.session();
  auto p = plain_rt.load_text(kBranchy).session();
  check_call(s, p, positive(2, 1));
  for (std::uint32_t i = 0; i < 6; ++i) check_call(s, p, negative(2, 10 + i));
  const std::string log = event_messages(model);
  INFO(log);
  CHECK(log.find("trace cut before it") != std::string::npos);
  CHECK(side_traces(model).empty());
  CHECK(s.stats().jit.side_trace_entries == 0);
}

TEST_CASE("jit: a side trace that refuses new shapes learns them symbolic", "[unit][jit][api][side]") {
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = rt.load_text(kBranchy);
  auto s = model.session();
  auto p = plain_rt.load_text(kBranchy).session();
  check_call(s, p, positive(2, 1));
  // The parent learns N symbolic (two refusals, then a symbolic retrace).
  for (std::uint32_t i = 0; i < 3; ++i) check_call(s, p, positive(3, 30 + i));
  // Its branch exits get a side trace, whose inner value d keeps its dims
  // exact (nothing taught otherwise yet).
  for (std::uint32_t i = 0; i < 3; ++i) check_call(s, p, negative(3, 10 + i));
  REQUIRE(side_traces(model).size() == 1);
  const std::uint64_t compiles = s.stats().jit.compiles;
  CHECK(compiles == 3);
  // A new batch size: the side trace refuses twice (the parent's exits ask
  // for nothing while a side trace starts there), then learns d.dim0.
  for (std::uint32_t i = 0; i < 3; ++i) check_call(s, p, negative(4, 40 + i));
  std::string side_decision;
  for (const canary::Event& e : events_of(model, EventKind::Retrace))
    if (e.decision.find("keeps failing") != std::string::npos) side_decision = e.decision;
  INFO(event_messages(model));
  CHECK(side_decision.find("of side trace") != std::string::npos);
  CHECK(side_decision.find("made symbolic") != std::string::npos);
  CHECK(s.stats().jit.compiles == compiles + 1);
  // The symbolic side trace subsumed the exact one and serves any batch.
  REQUIRE(side_traces(model).size() == 1);
  const std::uint64_t deopts = s.stats().jit.deopts;
  const std::uint64_t entries = s.stats().jit.side_trace_entries;
  for (std::int64_t n : {5, 7, 2, 6}) check_call(s, p, negative(n, static_cast<std::uint32_t>(50 + n)));
  CHECK(s.stats().jit.deopts == deopts);
  CHECK(s.stats().jit.side_trace_entries == entries + 4);
  CHECK(s.stats().jit.compiles == compiles + 1);
}

TEST_CASE("jit: a side trace that fails to compile leaves the cut", "[unit][jit][api][side]") {
  struct FaultsOff {
    ~FaultsOff() { canary::configure_faults(""); }
  } faults_off;
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = rt.load_text(kBranchy);
  auto s = model.session();
  auto p = plain_rt.load_text(kBranchy).session();
  check_call(s, p, positive(2, 1));
  REQUIRE(events_of(model, EventKind::Compiled).size() == 1);
  canary::configure_faults("compile@1");  // the next compile, the side trace's, fails
  for (std::uint32_t i = 0; i < 8; ++i) check_call(s, p, negative(2, 10 + i));
  const std::string log = event_messages(model);
  INFO(log);
  CHECK(events_of(model, EventKind::CompileFailed).size() == 1);
  CHECK(log.find("trace cut before it") != std::string::npos);
  CHECK(side_traces(model).empty());
}

TEST_CASE("jit: a branch in a loop body gets a side trace to the end of the iteration", "[unit][jit][api][side]") {
  // Iterations before k take Tanh, later ones Relu: each call flips the
  // branch mid-loop. The loop trace stays a loop trace; its exits finish the
  // iteration in the side trace, and the interpreter only takes the back edge.
  const char* text = R"(canary v1
graph main(h0: f32[N, 4], steps: i64[], k: i64[]) -> (h_last, hs) {
  const keep_going: bool[] = [true]
  const w: f32[4, 4] = [0.5, -0.25, 0.1, 0, 0.2, 0.3, -0.1, 0.05, 0, 0.1, 0.4, -0.2, 0.1, 0, 0.2, 0.3]
  h_last: f32[N, 4], hs: f32[T, N, 4] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[N, 4]) -> (cond, h_next, y) {
      a = MatMul(h, w)
      early = Less(i, k)
      h_next: f32[N, 4] = If(early) {
        else_branch = graph later() -> (z) {
          r = Relu(a)
          z = Add(r, h)
        },
        then_branch = graph sooner() -> (z) {
          z = Tanh(a)
        }
      }
      y: f32[N, 4] = Identity(h_next)
    }
  } "rnn"
}
)";
  canary::Runtime rt(jit_options(2)), plain_rt(interpreter_options());
  auto model = rt.load_text(text);
  auto s = model.session();
  auto p = plain_rt.load_text(text).session();
  for (std::uint32_t call = 0; call < 6; ++call) {
    INFO("call " << call);
    const NamedTensors in{{"h0", random_tensor({3, 4}, 60 + call)},
                          {"steps", Tensor::scalar<std::int64_t>(20)},
                          {"k", Tensor::scalar<std::int64_t>(8 + call)}};
    // hs stacks every iteration once: the side trace runs the append of the
    // iterations it finishes, the loop trace those it completes.
    const NamedTensors got = s.run(in), want = p.run(in);
    check_same_values(got.at("h_last"), want.at("h_last"), 1e-6);
    check_same_values(got.at("hs"), want.at("hs"), 1e-6);
  }
  const std::string log = event_messages(model);
  INFO(log);
  CHECK(log.find("(loop back edge)") != std::string::npos);
  CHECK(log.find("trace cut before it") == std::string::npos);
  const auto& st = s.stats().jit;
  CHECK(st.side_trace_entries > 20);
  const auto report = model.jit_report();
  const auto rnn = std::find_if(report.anchors.begin(), report.anchors.end(),
                                [](const canary::AnchorReport& a) { return a.kind == "loop"; });
  REQUIRE(rnn != report.anchors.end());
  CHECK(std::any_of(rnn->variants.begin(), rnn->variants.end(), [](const auto& v) { return v.loop; }));
  REQUIRE(rnn->side_traces.size() == 1);
  CHECK(!rnn->side_traces[0].loop);
}

// Two Ifs on flags the caller passes: the trace records both then-branches.
const char* kTwoBranches = R"(canary v1
graph main(x: f32[N, 4], a: bool[], b: bool[]) -> (y) {
  const two: f32[] = [2]
  u: f32[N, 4] = If(a) {
    else_branch = graph a_else() -> (z) {
      z = Sub(x, two)
    },
    then_branch = graph a_then() -> (z) {
      z = Mul(x, two)
    }
  } "first"
  y: f32[N, 4] = If(b) {
    else_branch = graph b_else() -> (w) {
      w = Neg(u)
    },
    then_branch = graph b_then() -> (w) {
      w = Add(u, x)
    }
  } "second"
}
)";

TEST_CASE("jit: exits at two branches that take turns each get a side trace, and chain", "[unit][jit][api][side]") {
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = rt.load_text(kTwoBranches);
  auto s = model.session();
  auto p = plain_rt.load_text(kTwoBranches).session();
  auto call = [&](bool a, bool b, std::uint32_t seed) {
    const NamedTensors in{{"x", random_tensor({3, 4}, seed)},
                          {"a", Tensor::scalar<bool>(a)},
                          {"b", Tensor::scalar<bool>(b)}};
    CHECK(bit_identical(s.run(in).at("y"), p.run(in).at("y")));
  };
  call(true, true, 1);  // hot: recorded through both then-branches
  call(true, true, 2);
  // The exits alternate between the first branch and the second: each
  // request must survive the other's exits until one takes it up.
  for (std::uint32_t i = 0; i < 8; ++i) call(i % 2 == 0 ? false : true, i % 2 == 0, 10 + i);
  INFO(event_messages(model));
  REQUIRE(side_traces(model).size() == 2);
  const std::uint64_t deopts = s.stats().jit.deopts, entries = s.stats().jit.side_trace_entries;
  for (std::uint32_t i = 0; i < 6; ++i) call(i % 2 == 0 ? false : true, i % 2 == 0, 30 + i);
  CHECK(s.stats().jit.deopts == deopts);
  CHECK(s.stats().jit.side_trace_entries == entries + 6);
  // Both else-branches: the main trace exits at the first If into the side
  // trace from there, which exits at the second If into the side trace from
  // that pc (recorded after a then-branch; its guards hold either way).
  for (std::uint32_t i = 0; i < 3; ++i) call(false, false, 40 + i);
  CHECK(s.stats().jit.deopts == deopts);
  CHECK(s.stats().jit.side_trace_entries == entries + 6 + 2 * 3);
}

// Five Ifs in a row, each on its own flag.
const char* kFiveBranches = R"(canary v1
graph main(x: f32[N, 4], a1: bool[], a2: bool[], a3: bool[], a4: bool[], a5: bool[]) -> (y5) {
  const two: f32[] = [2]
  y1: f32[N, 4] = If(a1) {
    else_branch = graph e1() -> (z) { z = Sub(x, two) },
    then_branch = graph t1() -> (z) { z = Mul(x, two) }
  } "b1"
  y2: f32[N, 4] = If(a2) {
    else_branch = graph e2() -> (z) { z = Sub(y1, x) },
    then_branch = graph t2() -> (z) { z = Add(y1, x) }
  } "b2"
  y3: f32[N, 4] = If(a3) {
    else_branch = graph e3() -> (z) { z = Neg(y2) },
    then_branch = graph t3() -> (z) { z = Mul(y2, two) }
  } "b3"
  y4: f32[N, 4] = If(a4) {
    else_branch = graph e4() -> (z) { z = Sub(y3, two) },
    then_branch = graph t4() -> (z) { z = Add(y3, two) }
  } "b4"
  y5: f32[N, 4] = If(a5) {
    else_branch = graph e5() -> (z) { z = Sub(y4, x) },
    then_branch = graph t5() -> (z) { z = Add(y4, x) }
  } "b5"
}
)";

TEST_CASE("jit: an exit follows at most four side traces, then the interpreter finishes", "[unit][jit][api][side]") {
  canary::Options o = jit_options(1);
  o.jit.max_side_traces_per_anchor = 8;
  o.jit.max_compiles_per_anchor = 16;
  canary::Runtime rt(o), plain_rt(interpreter_options());
  auto model = rt.load_text(kFiveBranches);
  auto s = model.session();
  auto p = plain_rt.load_text(kFiveBranches).session();
  auto call = [&](std::uint32_t else_mask, std::uint32_t seed) {
    NamedTensors in{{"x", random_tensor({3, 4}, seed)}};
    for (int k = 0; k < 5; ++k)
      in.emplace("a" + std::to_string(k + 1), Tensor::scalar<bool>(((else_mask >> k) & 1u) == 0));
    CHECK(bit_identical(s.run(in).at("y5"), p.run(in).at("y5")));
  };
  call(0, 1);  // hot: recorded through every then-branch
  call(0, 2);
  // Each branch alone takes its else, in turn, until every one has a side trace.
  for (std::uint32_t round = 0; round < 4; ++round)
    for (std::uint32_t k = 0; k < 5; ++k) call(1u << k, 10 + 5 * round + k);
  INFO(event_messages(model));
  REQUIRE(side_traces(model).size() == 5);
  const std::uint64_t deopts = s.stats().jit.deopts, entries = s.stats().jit.side_trace_entries;
  // Every else at once: the main trace exits at b1 into the side trace from
  // there, which exits at b2 into the next, and so on; the fourth side trace
  // exits at b5, where the chain stops and the interpreter runs b5's else.
  for (std::uint32_t i = 0; i < 3; ++i) call(0x1f, 40 + i);
  CHECK(s.stats().jit.side_trace_entries == entries + 4 * 3);
  CHECK(s.stats().jit.deopts == deopts + 3);
}

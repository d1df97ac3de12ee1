// The JIT's policy against hostile streams: fused groups whose intermediate
// shapes change, shape cycles, many sessions, branches that open a region.
#include <catch2/catch.hpp>

#include "jit_test_models.h"

using canary::DType;
using canary::EventKind;
using canary::Tensor;
using namespace canary::test;

TEST_CASE("jit: a fused group leaves when an intermediate dim turns into 1", "[unit][jit][api]") {
  // a = x[1:] has P-1 rows; y2 broadcasts y1 against w. With symbolic dims,
  // a call with P = 2 makes a one-row a that now broadcasts: the fused group
  // must not return y1 with w's shape.
  const char* text = R"(canary v1
graph main(x: f32[P, 5], w: f32[K, 5]) -> (y1, y2) {
  const st: i64[1] = [1]
  const en: i64[1] = [1000000]
  const ax: i64[1] = [0]
  a = Slice(x, st, en, ax)
  y1 = Neg(a)
  y2 = Mul(y1, w)
}
)";
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = rt.load_text(text);
  auto plain = plain_rt.load_text(text);
  auto s = model.session();
  auto p = plain.session();
  const std::vector<std::pair<std::int64_t, std::int64_t>> calls{{5, 4}, {5, 4}, {7, 6}, {7, 6}, {9, 8}, {2, 4}, {2, 4}};
  for (auto [rows, k] : calls) {
    const canary::NamedTensors in{{"x", random_tensor({rows, 5}, 1)}, {"w", random_tensor({k, 5}, 2)}};
    auto got = s.run(in);
    auto want = p.run(in);
    REQUIRE(got.at("y1").shape() == want.at("y1").shape());
    REQUIRE(got.at("y2").shape() == want.at("y2").shape());
    CHECK(bit_identical(got.at("y1"), want.at("y1")));
    CHECK(bit_identical(got.at("y2"), want.at("y2")));
  }
}

TEST_CASE("jit: a stream cycling through more shape classes than variants cannot storm", "[unit][jit][api]") {
  canary::Options o = jit_options(1);
  o.jit.max_variants_per_anchor = 2;
  o.jit.max_compiles_per_anchor = 4;
  canary::Runtime rt(o);
  auto model = elementwise_chain(rt);
  auto s = model.session();
  const std::vector<std::vector<std::int64_t>> classes{{1, 1}, {1, 5}, {3, 1}, {3, 5}, {0, 5}};
  for (int call = 0; call < 2000; ++call) {
    const auto& shape = classes[static_cast<std::size_t>(call) % classes.size()];
    s.run({{"x", random_tensor(shape, 1)}, {"b", random_tensor({shape[1]}, 2)}});
  }
  // The budget (4) plus one attempt per expired penalty, and penalties double.
  CHECK(s.stats().jit.compiles + s.stats().jit.compile_failures <= 4 + 8);
  CHECK(!events_of(model, EventKind::Penalty).empty());
  // Repeated failures are counted but not all logged.
  CHECK(events_of(model, EventKind::GuardFailed).size() < 400);
}

TEST_CASE("jit: new sessions run the installed variant instead of recompiling", "[unit][jit][api]") {
  canary::Runtime rt(jit_options(2));
  auto model = elementwise_chain(rt);
  const Tensor b = random_tensor({8}, 2);
  std::uint64_t compiled_entries = 0;
  for (int session = 0; session < 12; ++session) {
    auto s = model.session();
    for (int call = 0; call < 4; ++call) s.run({{"x", random_tensor({4, 8}, 1)}, {"b", b}});
    compiled_entries += s.stats().jit.compiled_entries;
  }
  CHECK(events_of(model, EventKind::Compiled).size() == 1);
  CHECK(events_of(model, EventKind::Evicted).empty());
  CHECK(compiled_entries >= 12 * 4 - 2);
}

TEST_CASE("jit: a branch that opens the region is not cut into an empty trace", "[unit][jit][api]") {
  const bool side_traces = GENERATE(true, false);
  INFO("side traces " << (side_traces ? "on" : "off"));
  canary::Options o = jit_options(1);
  o.jit.side_traces = side_traces;
  canary::Runtime rt(o), plain_rt(interpreter_options());
  const std::string path = std::string(CANARY_TEST_DATA_DIR) + "/if_select.cnr";
  auto model = rt.load(path);
  auto plain = plain_rt.load(path);
  auto s = model.session();
  auto p = plain.session();
  for (int call = 0; call < 40; ++call) {
    const canary::NamedTensors in{{"x", random_tensor({3, 4}, 1)}, {"flag", Tensor::scalar<bool>(call % 2 == 0)}};
    CHECK(bit_identical(s.run(in).at("y"), p.run(in).at("y")));
  }
  for (const canary::Event& e : events_of(model, EventKind::TraceRecorded))
    CHECK(e.message.find(": 0 instructions") == std::string::npos);
  // The variant exits at the branch; with side traces, the other direction
  // gets one from there and those exits continue compiled.
  CHECK(events_of(model, EventKind::Compiled).size() == (side_traces ? 2 : 1));
  if (side_traces) CHECK(s.stats().jit.side_trace_entries >= 15);
  else CHECK(s.stats().jit.side_trace_entries == 0);
}

TEST_CASE("jit: row kernels for reductions match the interpreter across shapes", "[unit][jit][api]") {
  const char* text = R"(canary v1
graph main(x: f32[N, T], b: f32[T]) -> (s, mx, mean) {
  t = Mul(x, b)
  u = Sigmoid(t)
  const last: i64[1] = [-1]
  s = ReduceSum(u, last) {keepdims = 1}
  mx = ReduceMax(x) {axes = [1], keepdims = 0}
  mean = ReduceMean(t) {axes = [-1], keepdims = 0}
}
)";
  canary::Runtime rt(jit_options(1)), plain_rt(interpreter_options());
  auto model = rt.load_text(text);
  auto plain = plain_rt.load_text(text);
  auto s = model.session();
  auto p = plain.session();
  for (auto [n, t] : std::vector<std::pair<std::int64_t, std::int64_t>>{{4, 33}, {4, 33}, {7, 100}, {7, 100}, {2, 5}, {1, 17}}) {
    const canary::NamedTensors in{{"x", random_tensor({n, t}, 3)}, {"b", random_tensor({t}, 4)}};
    auto got = s.run(in);
    auto want = p.run(in);
    for (const char* name : {"s", "mx", "mean"}) {
      REQUIRE(got.at(name).shape() == want.at(name).shape());
      CHECK(max_relative_difference(got.at(name), want.at(name)) < 1e-5);
    }
  }
  bool has_row_kernel = false;
  for (const auto& a : model.jit_report().anchors)
    for (const auto& v : a.variants) has_row_kernel = has_row_kernel || v.listing.find("row kernel") != std::string::npos;
  CHECK(has_row_kernel);
}

TEST_CASE("jit: eviction keeps the variants traffic uses now, not the ones it used most",
          "[unit][jit][api]") {
  // Dims of size 1 stay exact: A, B and C are three sibling variants, and
  // two fit. After a long run of A, traffic alternates B and C: evicting by
  // lifetime use would keep A and make B and C evict each other at every
  // switch; evicting the least recently used drops A once and keeps both.
  canary::Options o = jit_options(1);
  o.jit.max_variants_per_anchor = 2;
  canary::Runtime rt(o);
  auto model = elementwise_chain(rt);
  auto s = model.session();
  const std::vector<std::int64_t> a{5, 4}, b{1, 4}, c{5, 1};
  const auto call = [&](const std::vector<std::int64_t>& shape) {
    s.run({{"x", random_tensor(shape, 1)}, {"b", random_tensor({shape[1]}, 2)}});
  };
  for (int i = 0; i < 50; ++i) call(a);
  for (int i = 0; i < 40; ++i) call(i % 2 ? c : b);
  const std::uint64_t compiles = s.stats().jit.compiles;
  const std::uint64_t entries = s.stats().jit.compiled_entries;
  for (int i = 0; i < 40; ++i) call(i % 2 ? c : b);
  CHECK(s.stats().jit.compiles == compiles);               // no more compiles once B and C are in
  CHECK(s.stats().jit.compiled_entries == entries + 40);  // and every call runs one of them
  CHECK(compiles <= 3);
  bool a_evicted = false;
  for (const canary::Event& e : events_of(model, canary::EventKind::Evicted))
    a_evicted = a_evicted || e.message.find("least recently used") != std::string::npos;
  CHECK(a_evicted);
}

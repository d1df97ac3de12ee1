// Shape streams on fixed models: a 10,000-call stream with random batch sizes
// compiles at most 3 times per anchor and always matches the interpreter, and
// the test-data models (MLP, RNN Loop) follow dims that change mid-stream.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "tests/jit_differential/differential_harness.h"
#include "tests/jit_differential/seeded_rng.h"
#include "tests/jit_differential/value_bounds.h"

using namespace canary::differential;
using canary::DType;
using canary::EventKind;
using canary::Tensor;

namespace {

// y = Sigmoid(2 * Tanh(x W + b)) for x: f32[N, 2], the small elementwise + matmul model.
const char* const kBatchModel = R"(canary v1
symbols {
  N in [1, 4096]
}
graph main(x: f32[N, 2]) -> (y) {
  const w: f32[2, 2] = [0.5, -0.25, 1, 0.75]
  const b: f32[2] = [0.125, -0.5]
  const two: f32[] = [2]
  h = MatMul(x, w) "fc"
  a = Add(h, b)
  t = Tanh(a)
  s = Mul(t, two)
  y = Sigmoid(s)
}
)";

// The batch model in double precision for row x (hand-written formula).
std::vector<double> batch_model_row(const float* x) {
  const double w[2][2] = {{0.5, -0.25}, {1, 0.75}};
  const double b[2] = {0.125, -0.5};
  std::vector<double> y(2);
  for (int j = 0; j < 2; ++j) {
    double h = b[j];
    for (int k = 0; k < 2; ++k) h += static_cast<double>(x[k]) * w[k][j];
    y[static_cast<std::size_t>(j)] = 1.0 / (1.0 + std::exp(-2.0 * std::tanh(h)));
  }
  return y;
}

// The static error bound of the batch model's output (value_bounds.h rules; column sums of |w| <= 1.5).
OutputBound batch_model_bound() {
  Bound x = exact_bound(-2, 2);
  Bound h = matmul_bound(x, 2, 1.5);
  Bound a = add_bound(h, exact_bound(-0.5, 0.125));
  Bound t = unary_bound(UnaryRule::Tanh, a);
  Bound s = mul_bound(t, exact_bound(2, 2));
  Bound y = unary_bound(UnaryRule::Sigmoid, s);
  return OutputBound{"y", max_abs(y), y.g, y.depth};
}

// An [n, 2] input with values uniform in [-2, 2].
Tensor random_rows(SeededRng& rng, std::int64_t n) {
  Tensor t = Tensor::empty(DType::F32, {n, 2});
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(rng.uniform(-2.0, 2.0));
  return t;
}

// Requires the JIT's events when it is active, or warns that it is not.
bool jit_active(const std::vector<canary::Event>& events) {
  if (events.empty()) FAIL("Model::events() is empty: the JIT is not active");
  return true;
}

// A RandomGraph wrapper around a fixed model, for the harness.
RandomGraph fixed_graph(const std::string& text, std::vector<InputSpec> inputs, std::vector<OutputBound> outputs) {
  RandomGraph g;
  g.seed = 0;
  g.text = text;
  g.inputs = std::move(inputs);
  g.outputs = std::move(outputs);
  return g;
}

// A stream call with the given dims and a value seed.
StreamCall call(std::int64_t n, std::int64_t t, std::uint64_t seed) {
  StreamCall c;
  c.n = n;
  c.t = t;
  c.value_seed = seed;
  return c;
}

}  // namespace

TEST_CASE("streams: the batch model matches its hand-written formula on the JIT", "[differential][jit][streams]") {
  canary::Runtime rt(jit_options(1));
  canary::Model model = rt.load_text(kBatchModel);
  canary::Session s = model.session();
  SeededRng rng(5);
  double margin = 1.25 * batch_model_bound().error_units * kUnitRoundoff;
  for (std::int64_t n : {3, 3, 3, 64, 3}) {
    Tensor x = random_rows(rng, n);
    Tensor y = s.run({{"x", x}}).at("y");
    REQUIRE(y.shape() == canary::Shape{n, 2});
    for (std::int64_t r = 0; r < n; ++r) {
      std::vector<double> want = batch_model_row(x.data<float>() + 2 * r);
      for (int j = 0; j < 2; ++j) CHECK(y.data<float>()[r * 2 + j] == Approx(want[static_cast<std::size_t>(j)]).epsilon(0).margin(margin));
    }
  }
}

TEST_CASE("streams: a stream of 10000 calls with random batch sizes in 1..4096 compiles at most 3 times per anchor",
          "[differential][jit][streams]") {
  canary::Runtime jit_rt(jit_options(2)), interp_rt(interpreter_options());
  canary::Model model = jit_rt.load_text(kBatchModel), plain = interp_rt.load_text(kBatchModel);
  canary::Session jit = model.session(), interp = plain.session();
  Tolerance tol = jit_tolerance(batch_model_bound());
  SeededRng rng(10000);
  const int calls = 10000;
  int mismatches = 0;
  for (int i = 0; i < calls && mismatches < 3; ++i) {
    Tensor x = random_rows(rng, rng.range(1, 4096));
    canary::NamedTensors in{{"x", x}};
    CompareResult c = compare_tensors(jit.run(in).at("y"), interp.run(in).at("y"), tol);
    if (!c.difference.empty()) {
      ++mismatches;
      FAIL_CHECK("call " << i + 1 << " (N=" << x.dim(0) << "): " << c.difference);
    }
  }
  CHECK(mismatches == 0);
  std::vector<canary::Event> events = model.events();
  std::map<std::string, std::size_t> per_anchor = compiles_per_anchor(events);
  INFO("events:\n" << describe_events(events, 40));
  for (const auto& [anchor, count] : per_anchor) {
    INFO("anchor " << anchor);
    CHECK(count <= 3);
  }
  const canary::JitStats& stats = jit.stats().jit;
  CHECK(stats.compiles <= 3 * std::max<std::size_t>(per_anchor.size(), 1));
  if (!jit_active(events)) return;
  REQUIRE(per_anchor.count("entry") == 1);
  REQUIRE(stats.compiles >= 1);
  REQUIRE(stats.compiled_entries >= static_cast<std::uint64_t>(calls / 2));  // a new batch size costs a branch, not a compile
}

TEST_CASE("streams: the MLP test model follows batch sizes that change mid-stream", "[differential][jit][streams]") {
  Bound x = exact_bound(-2, 2);
  Bound h = unary_bound(UnaryRule::Relu, add_bound(matmul_bound(x, 4, 3.425), exact_bound(-0.02, 0.01)));
  Bound logits = add_bound(matmul_bound(h, 3, 4.5), exact_bound(0, 0.1));
  Bound probs = softmax_bound(logits, 2);
  RandomGraph g = fixed_graph(R"(canary v1
symbols {
  N in [1, 4096]
}
graph main(x: f32[N, 4]) -> (probs) {
  const w1: f32[4, 3] = [0.5, -0.25, 0.125, 1, 0, -1, 0.1, 0.2, 0.3, -0.5, 0.75, 2]
  const b1: f32[3] = [0.01, -0.02, 0]
  const w2: f32[3, 2] = [1, -1, 0.5, 0.5, -2, 3]
  const b2: f32[2] = [0, 0.1]
  h0 = MatMul(x, w1) "fc1"
  h1 = Add(h0, b1)
  h = Relu(h1)
  logits = Gemm(h, w2, b2) {alpha = 1.0, beta = 1.0} "fc2"
  probs = Softmax(logits) {axis = -1}
}
)",
                              {InputSpec{"x", DType::F32, {"N", "4"}}},
                              {OutputBound{"probs", 1.0, probs.g, probs.depth}});
  std::vector<StreamCall> stream;
  std::uint64_t seed = 1;
  for (std::int64_t n : {4, 4, 4, 4, 9, 9, 4, 1, 1, 300, 4, 4096, 4, 17, 17, 1}) stream.push_back(call(n, 1, seed++));
  DifferentialRunner runner;
  for (std::uint64_t threshold : {1, 2}) {
    HarnessOptions options;
    options.hot_threshold = threshold;
    DifferentialReport r = runner.run(g, stream, options);
    INFO("hot threshold " << threshold);
    CHECK(r.failure == "");
    CHECK(r.calls == stream.size());
    CHECK(r.error_calls == 0);
  }
}

TEST_CASE("streams: the RNN Loop test model follows sequence lengths and batch sizes that change mid-stream",
          "[differential][jit][streams]") {
  const std::int64_t max_t = 12;
  Bound h = carried_bound(-2, 2);
  Bound xt = exact_bound(-2, 2);
  Bound hn = unary_bound(UnaryRule::Tanh, add_bound(matmul_bound(xt, 3, 1.75), matmul_bound(h, 2, 1.0)));
  Bound h0 = exact_bound(-2, 2);
  double g_last = loop_error(h0, hn, max_t);
  double g_scan = hn.g + hn.s * g_last;
  int depth = static_cast<int>(max_t) * hn.depth;
  std::string text = R"(canary v1
symbols {
  T in [1, 1024]
  N in [1, 32]
}
graph main(xs: f32[T, N, 3], h0: f32[N, 2]) -> (h_last, hs) {
  const wx: f32[3, 2] = [0.5, -0.5, 0.25, 0.25, -1, 1]
  const wh: f32[2, 2] = [0.9, -0.1, 0.1, 0.9]
  const keep_going: bool[] = [true]
  steps: i64[1] = Shape(xs) {end = 1}
  h_last: f32[N, 2], hs: f32[T, N, 2] = Loop(steps, keep_going, h0) {
    body = graph step(i: i64[], cond: bool[], h: f32[N, 2]) -> (cond, h_next, h_next) {
      x_t: f32[N, 3] = Gather(xs, i) {axis = 0}
      a = MatMul(x_t, wx)
      r = MatMul(h, wh)
      s = Add(a, r)
      h_next: f32[N, 2] = Tanh(s)
    }
  } "rnn"
}
)";
  RandomGraph g = fixed_graph(text, {InputSpec{"xs", DType::F32, {"T", "N", "3"}}, InputSpec{"h0", DType::F32, {"N", "2"}}},
                              {OutputBound{"h_last", 2.0, g_last, depth}, OutputBound{"hs", 1.0, g_scan, depth}});
  std::vector<StreamCall> stream;
  std::uint64_t seed = 100;
  for (auto [n, t] : std::vector<std::pair<int, int>>{{2, 5}, {2, 5}, {2, 5}, {2, 9}, {2, 9}, {7, 9}, {2, 5}, {1, 1},
                                                      {1, 12}, {32, 3}, {2, 5}, {2, 5}})
    stream.push_back(call(n, t, seed++));
  DifferentialRunner runner;
  for (std::uint64_t threshold : {1, 2}) {
    HarnessOptions options;
    options.hot_threshold = threshold;
    DifferentialReport r = runner.run(g, stream, options);
    INFO("hot threshold " << threshold);
    CHECK(r.failure == "");
    CHECK(r.calls == stream.size());
    CHECK(r.error_calls == 0);
  }
}

// The resource limits of Options (docs/RELIABILITY.md): session arena bytes,
// graph size and nesting on load, traces per model, and the checks of the
// limits themselves. Each one exceeded gives a typed error or a fallback,
// and the runtime keeps serving.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "jit_test_models.h"

using canary::DType;
using canary::Error;
using canary::ErrorKind;
using canary::EventKind;
using canary::Model;
using canary::NamedTensors;
using canary::Options;
using canary::Runtime;
using canary::Session;
using canary::Tensor;
using namespace canary::test;

namespace {

// The error a call throws, with its kind checked.
std::string call_error(Session& s, const NamedTensors& inputs, ErrorKind kind) {
  try {
    s.run(inputs);
  } catch (const Error& e) {
    CHECK(e.kind() == kind);
    return e.what();
  }
  FAIL("expected a canary::Error");
  return "";
}

NamedTensors chain_inputs(std::int64_t n, std::int64_t c, std::uint32_t seed) {
  return {{"x", random_tensor({n, c}, seed)}, {"b", random_tensor({c}, seed + 1)}};
}

// A text model with `nodes` Relu nodes in a chain.
std::string relu_chain_text(int nodes) {
  std::string text = "canary v1\ngraph main(x: f32[4]) -> (y" + std::to_string(nodes) + ") {\n";
  std::string prev = "x";
  for (int i = 1; i <= nodes; ++i) {
    text += "  y" + std::to_string(i) + " = Relu(" + prev + ")\n";
    prev = "y" + std::to_string(i);
  }
  return text + "}\n";
}

// A text model whose If branches nest `depth` levels deep.
std::string nested_if_text(int depth) {
  std::string text = "canary v1\ngraph main(c: bool[], x: f32[2]) -> (y) {\n";
  std::string close;
  for (int level = 0; level < depth; ++level) {
    text += "y = If(c) {then_branch = graph t" + std::to_string(level) + "() -> (y) {\n";
    close = "}, else_branch = graph e" + std::to_string(level) + "() -> (x) {}}\n" + close;
  }
  return text + "y = Relu(x)\n" + close + "}\n";
}

}  // namespace

TEST_CASE("limits: a call whose tensors exceed max_arena_bytes is Error(Resource) and the session recovers",
          "[unit][limits]") {
  for (const bool jit : {false, true}) {
    INFO("jit " << jit);
    Options o = jit ? jit_options(1) : interpreter_options();
    o.max_arena_bytes = 512 * 1024;  // room for the small calls, not for 1000 x 64 floats in flight
    Runtime rt(o);
    Model m = elementwise_chain(rt);
    Session s = m.session();
    for (int i = 0; i < 3; ++i) s.run(chain_inputs(8, 4, 10 + i));  // compiled from the second call with the JIT
    const std::string message = call_error(s, chain_inputs(1000, 64, 3), ErrorKind::Resource);
    CHECK_THAT(message, Catch::Contains("Options::max_arena_bytes") && Catch::Contains("f32[1000, 64]") &&
                            Catch::Contains("524288 bytes"));
    CHECK(s.stats().failed_calls == 1);
    // The session keeps serving calls that fit, with the right values (the
    // JIT's exact tanh is within a few ulp of the interpreter's).
    Session reference = elementwise_chain(Runtime(interpreter_options())).session();
    const NamedTensors small = chain_inputs(8, 4, 20);
    CHECK(max_relative_difference(s.run(small).at("y"), reference.run(small).at("y")) < 1e-6);
  }
}

TEST_CASE("limits: the arena counts what a session holds, not the outputs it handed out", "[unit][limits]") {
  Runtime rt(interpreter_options());
  Model m = elementwise_chain(rt);
  Session s = m.session();
  std::vector<NamedTensors> kept;
  kept.push_back(s.run(chain_inputs(256, 16, 1)));
  const std::size_t held = s.stats().arena_bytes;
  const std::size_t peak = s.stats().peak_arena_bytes;
  // At least two intermediates of 256 x 16 floats are live at once.
  CHECK(peak >= 2 * 256 * 16 * sizeof(float));
  CHECK(held <= peak);
  for (std::uint32_t i = 0; i < 10; ++i) kept.push_back(s.run(chain_inputs(256, 16, 2 + i)));
  // Ten more outputs are alive in `kept`, yet the session holds no more than before.
  CHECK(s.stats().arena_bytes == held);
  CHECK(s.stats().peak_arena_bytes == peak);
  // The measured peak is exactly what the call needs: a fresh session under
  // that limit runs it, one byte less does not.
  for (const std::size_t limit : {peak, peak - 1}) {
    Options o = interpreter_options();
    o.max_arena_bytes = limit;
    Session fresh = elementwise_chain(Runtime(o)).session();
    if (limit == peak) CHECK_NOTHROW(fresh.run(chain_inputs(256, 16, 1)));
    else CHECK_THAT(call_error(fresh, chain_inputs(256, 16, 1), ErrorKind::Resource), Catch::Contains("max_arena_bytes"));
  }
}

TEST_CASE("limits: Runtime rejects limits that cannot work, naming the option", "[unit][limits]") {
  const auto message = [](Options o) {
    try {
      Runtime rt(o);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Input);
      return std::string(e.what());
    }
    FAIL("expected a canary::Error");
    return std::string();
  };
  Options o;
  o.max_arena_bytes = 0;
  CHECK_THAT(message(o), Catch::Contains("Options::max_arena_bytes is 0"));
  o = Options();
  o.max_graph_nodes = 0;
  CHECK_THAT(message(o), Catch::Contains("Options::max_graph_nodes is 0"));
  o = Options();
  o.max_graph_depth = 257;
  CHECK_THAT(message(o), Catch::Contains("Options::max_graph_depth is 257") && Catch::Contains("[0, 256]"));
  o = Options();
  o.jit.max_traces = 0;
  CHECK_THAT(message(o), Catch::Contains("Options::jit.max_traces is 0"));
  o = Options();
  o.jit.max_compile_queue = -1;
  CHECK_THAT(message(o), Catch::Contains("Options::jit.max_compile_queue is -1"));
  o = Options();
  o.max_loop_iterations = -5;
  CHECK_THAT(message(o), Catch::Contains("Options::max_loop_iterations is -5"));
  o = Options();
  o.jit.epilogue_min_elements = -1;
  CHECK_THAT(message(o), Catch::Contains("Options::jit.epilogue_min_elements is -1"));
}

TEST_CASE("limits: Runtime::load refuses a model over max_graph_nodes or max_graph_depth", "[unit][limits]") {
  Options o;
  o.max_graph_nodes = 10;
  o.max_graph_depth = 3;
  Runtime rt(o);
  CHECK_NOTHROW(rt.load_text(relu_chain_text(10), "ten.cnr"));
  try {
    rt.load_text(relu_chain_text(11), "eleven.cnr");
    FAIL("a model with 11 nodes loaded under max_graph_nodes = 10");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Resource);
    CHECK_THAT(std::string(e.what()), Catch::Contains("eleven.cnr:13:3") && Catch::Contains("more than 10 nodes") &&
                                          Catch::Contains("Options::max_graph_nodes"));
  }
  CHECK_NOTHROW(rt.load_text(nested_if_text(3), "three.cnr"));
  try {
    rt.load_text(nested_if_text(4), "four.cnr");
    FAIL("subgraphs nested 4 deep loaded under max_graph_depth = 3");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Resource);
    CHECK_THAT(std::string(e.what()), Catch::Contains("four.cnr:") && Catch::Contains("deeper than 3 levels") &&
                                          Catch::Contains("Options::max_graph_depth"));
  }
}

TEST_CASE("limits: max_traces bounds the variants of a model and evicts the least used", "[unit][limits][jit]") {
  // Dims of size 1 stay exact, so these three shapes give three sibling variants.
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {{5, 4}, {1, 4}, {5, 1}};
  const auto run_stream = [&](Options o, Session& reference) {
    Runtime rt(o);
    Model m = elementwise_chain(rt);
    Session s = m.session();
    std::uint32_t seed = 100;
    for (int round = 0; round < 4; ++round)
      for (const auto& [n, c] : shapes) {
        const NamedTensors in = chain_inputs(n, c, seed++);
        CHECK(max_relative_difference(s.run(in).at("y"), reference.run(in).at("y")) < 1e-5);
        CHECK(s.stats().jit.variants_installed <= static_cast<std::uint64_t>(o.jit.max_traces));
      }
    return std::make_pair(s.stats().jit, events_of(m, EventKind::Evicted));
  };
  Runtime interp(interpreter_options());
  Session reference = elementwise_chain(interp).session();
  Options unlimited = jit_options(1);
  const auto [free_stats, free_evictions] = run_stream(unlimited, reference);
  REQUIRE(free_stats.variants_installed == 3);  // otherwise the limit below would not bind
  CHECK(free_stats.traces_evicted == 0);

  Options limited = jit_options(1);
  limited.jit.max_traces = 2;
  const auto [stats, evictions] = run_stream(limited, reference);
  CHECK(stats.variants_installed == 2);
  CHECK(stats.traces_evicted >= 1);
  REQUIRE_FALSE(evictions.empty());
  CHECK_THAT(evictions.front().message, Catch::Contains("JitOptions::max_traces"));
}

TEST_CASE("limits: an output that shares its buffer with a kept register stays charged", "[unit][limits]") {
  // y is a view of a's buffer, which the session keeps for reuse: handing y
  // out must not take that buffer off the session's account.
  const char* text = R"(canary v1
graph main(x: f32[N, 8]) -> (y) {
  const flat: i64[1] = [-1]
  a = Relu(x)
  y = Reshape(a, flat)
}
)";
  Runtime rt(interpreter_options());
  Session s = rt.load_text(text).session();
  const NamedTensors out = s.run({{"x", random_tensor({64, 8}, 1)}});
  const Tensor& y = out.at("y");
  REQUIRE(y.numel() == 64 * 8);
  CHECK(s.stats().arena_bytes >= y.nbytes());
  CHECK(s.stats().arena_bytes <= s.stats().peak_arena_bytes);
}

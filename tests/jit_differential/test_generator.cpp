// The random graph generator itself: deterministic per seed, every graph
// loads, and over many seeds every feature the differential suite relies on
// appears.
#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "canary/canary.h"
#include "tests/jit_differential/random_graph.h"
#include "tests/jit_differential/shape_stream.h"

using namespace canary::differential;

TEST_CASE("generator: the same seed gives the same graph and stream", "[differential][jit][generator]") {
  for (std::uint64_t seed : {1u, 77u, 4242u}) {
    RandomGraph a = generate_random_graph(seed), b = generate_random_graph(seed);
    CHECK(a.text == b.text);
    std::vector<StreamCall> sa = generate_shape_stream(a, seed), sb = generate_shape_stream(b, seed);
    REQUIRE(sa.size() == sb.size());
    for (std::size_t i = 0; i < sa.size(); ++i) CHECK(describe_call(a, sa[i]) == describe_call(b, sb[i]));
  }
  CHECK(generate_random_graph(1).text != generate_random_graph(2).text);
}

TEST_CASE("generator: 300 seeds load and cover every feature", "[differential][jit][generator]") {
  canary::Runtime rt;
  GraphFeatures seen;
  std::set<std::string> ops;
  int loads = 0;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    RandomGraph g = generate_random_graph(seed);
    INFO("seed " << seed << "\n" << g.text);
    REQUIRE_NOTHROW(rt.load_text(g.text));
    ++loads;
    REQUIRE(!g.outputs.empty());
    seen.loop |= g.features.loop;
    seen.loop_over_t |= g.features.loop_over_t;
    seen.if_node |= g.features.if_node;
    seen.if_in_loop |= g.features.if_in_loop;
    seen.matmul |= g.features.matmul;
    seen.reduction |= g.features.reduction;
    seen.softmax |= g.features.softmax;
    seen.layer_norm |= g.features.layer_norm;
    seen.data_movement |= g.features.data_movement;
    seen.broadcast |= g.features.broadcast;
    for (const char* op : {"Exp(", "Log(", "Sqrt(", "Tanh(", "Sigmoid(", "Erf(", "Gelu(", "Softplus(", "Reciprocal(",
                           "Floor(", "Ceil(", "Clip(", "LeakyRelu(", "HardSigmoid(", "Div(", "Max(", "Min(", "Neg(",
                           "Abs(", "Relu(", "Gemm(", "Transpose(", "Reshape(", "Concat(", "ReduceSum(", "ReduceMean(",
                           "ReduceMax(", "Softmax(", "LayerNormalization("})
      if (g.text.find(std::string(" = ") + op) != std::string::npos) ops.insert(op);
  }
  CHECK(loads == 300);
  CHECK(seen.loop);
  CHECK(seen.loop_over_t);
  CHECK(seen.if_node);
  CHECK(seen.if_in_loop);
  CHECK(seen.matmul);
  CHECK(seen.reduction);
  CHECK(seen.softmax);
  CHECK(seen.layer_norm);
  CHECK(seen.data_movement);
  CHECK(seen.broadcast);
  CHECK(ops.size() == 29);
}

TEST_CASE("generator: the unsaturated twin is the graph with its absent Clip bounds written as infinities",
          "[differential][jit][generator]") {
  canary::Runtime rt;
  int twins = 0;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    RandomGraph g = generate_random_graph(seed);
    INFO("seed " << seed << "\n" << g.unsaturated_text);
    if (g.unsaturated_text == g.text) continue;
    ++twins;
    REQUIRE_NOTHROW(rt.load_text(g.unsaturated_text));
    // Undoing the twin's edits gives the graph back: same names, same nodes.
    std::string undone = std::regex_replace(g.unsaturated_text, std::regex(" *const unbounded[0-9]+: f32\\[\\] = \\[-?inf\\]\n"), "");
    undone = std::regex_replace(undone, std::regex(", unbounded[0-9]+\\)"), ")");  // an absent max: the last argument
    undone = std::regex_replace(undone, std::regex("unbounded[0-9]+"), "_");       // an absent min: a "_" slot
    CHECK(undone == g.text);
  }
  CHECK(twins > 20);  // Clips without a bound are common enough to matter
}

TEST_CASE("generator: streams change dims mid-stream and return to earlier shapes", "[differential][jit][generator]") {
  int changed = 0, returned = 0, zero_n = 0, large_n = 0, total = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    RandomGraph g = generate_random_graph(seed);
    std::vector<StreamCall> s = generate_shape_stream(g, seed * 31 + 7);
    REQUIRE(s.size() >= 6);
    REQUIRE(s.size() <= 20);
    std::vector<std::string> shapes;
    for (const StreamCall& c : s) {
      std::string d = describe_call(g, c);
      d = d.substr(0, d.find(" trip="));
      if (!shapes.empty() && shapes.back() != d) {
        ++changed;
        for (std::size_t k = 0; k + 1 < shapes.size(); ++k)
          if (shapes[k] == d && shapes.back() != d) {
            ++returned;
            break;
          }
      }
      shapes.push_back(d);
      zero_n += c.n == 0;
      large_n += c.n > 16;
      ++total;
    }
  }
  CHECK(changed > 200);
  CHECK(returned > 50);
  CHECK(zero_n > 0);
  CHECK(large_n > 0);
  CHECK(large_n < total / 4);
}

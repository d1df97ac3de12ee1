#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include "tests/fuzz/stream_plan.h"
#include "tests/fuzz/stream_budget.h"
#include "graph/text_format.h"
#include "tests/jit_differential/random_graph.h"
using namespace canary::fuzz;
TEST_CASE("probe", "[.probe]") {
  std::ifstream in(std::getenv("PROBE"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  StreamPlan plan = decode_stream_plan(bytes);
  auto graph = canary::differential::generate_random_graph(plan.graph_seed);
  fit_plan_to_budget(plan, *canary::graph::parse_graph(graph.text));
  std::printf("%s\n%s\n", describe_plan(plan, graph).c_str(), graph.text.c_str());
  canary::differential::DifferentialRunner runner;
  for (std::size_t i = 1; i <= plan.calls.size(); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<canary::differential::StreamCall> calls(plan.calls.begin(), plan.calls.begin() + i);
    auto r = runner.run(graph, calls, plan.options);
    std::printf("calls %zu: %.3f s ok=%d\n", i, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), (int)r.ok());
  }
}

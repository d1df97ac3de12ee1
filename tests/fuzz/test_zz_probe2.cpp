#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>
#include "canary/canary.h"
#include "tests/fuzz/stream_plan.h"
#include "tests/fuzz/stream_budget.h"
#include "graph/text_format.h"
#include "tests/jit_differential/random_graph.h"
#include "tests/jit_differential/shape_stream.h"
using namespace canary::fuzz;
TEST_CASE("probe2", "[.probe2]") {
  std::ifstream in(std::getenv("PROBE"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  StreamPlan plan = decode_stream_plan(bytes);
  auto graph = canary::differential::generate_random_graph(plan.graph_seed);
  fit_plan_to_budget(plan, *canary::graph::parse_graph(graph.text));
  std::string text = graph.text;
  std::string outs = std::getenv("OUTS");
  auto a = text.find(") -> ("); auto b = text.find(")", a + 6);
  text = text.substr(0, a + 6) + outs + text.substr(b);
  int ci = std::atoi(std::getenv("CALL"));
  int elem = std::atoi(std::getenv("ELEM"));
  int rowlen = std::atoi(std::getenv("ROW"));
  canary::Runtime rt(canary::differential::interpreter_options());
  auto model = rt.load_text(text);
  auto s = model.session(); auto r = model.reference_session();
  auto inputs = canary::differential::make_inputs(graph, plan.calls[ci], plan.options.values);
  for (auto& [n, t] : inputs) { if (n == "x3" || n == "s" || n == "m" || n == "x") { int base = (elem / rowlen) * rowlen; std::printf("input %s:", n.c_str()); for (int i = 0; i < std::min<int>(rowlen, t.numel()); ++i) std::printf(" %g", t.element_as_double(std::min<std::int64_t>(t.numel()-1, base + i))); std::printf("\n"); } }
  auto o1 = s.run(inputs), o2 = r.run(inputs);
  for (auto& [n, t] : o1) {
    int base = (elem / rowlen) * rowlen;
    std::printf("%s interp:", n.c_str()); for (int i = 0; i < rowlen; ++i) std::printf(" %.9g", t.element_as_double(base + i)); std::printf("\n");
    std::printf("%s ref   :", n.c_str()); for (int i = 0; i < rowlen; ++i) std::printf(" %.9g", o2.at(n).element_as_double(base + i)); std::printf("\n");
  }
}

// The graph_stream target: fuzz bytes -> a generated graph and a shape stream
// (stream_plan.h) run by the differential harness on the JIT, the interpreter
// and the fp64 reference. The generator only writes valid graphs and the
// stream only valid sizes, so every disagreement and every exception that
// escapes the harness is a finding.
#include "graph/text_format.h"
#include "tests/fuzz/differential_verdict.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/stream_budget.h"
#include "tests/fuzz/stream_plan.h"
#include "tests/jit_differential/random_graph.h"

namespace canary::fuzz {
namespace {

// The runtimes live across executions: creating them costs more than a short stream.
differential::DifferentialRunner& stream_runner() {
  static differential::DifferentialRunner runner;
  return runner;
}

}  // namespace

FuzzResult judge_report(const differential::DifferentialReport& report) {
  if (report.ok()) return FuzzResult::accepted();
  return FuzzResult::finding("JIT, interpreter and fp64 reference disagree: " + report.failure);
}

FuzzResult fuzz_graph_stream(std::string_view bytes) {
  FuzzResult result = run_guarded([&] {
    StreamPlan plan = decode_stream_plan(bytes);
    const differential::RandomGraph graph = differential::generate_random_graph(plan.graph_seed);
    fit_plan_to_budget(plan, *graph::parse_graph(graph.text, "generated.cnr"));
    FuzzResult verdict = judge_report(stream_runner().run(graph, plan.calls, plan.options));
    if (verdict.is_finding()) verdict.detail = "stream: " + describe_plan(plan, graph) + "\n" + verdict.detail;
    return verdict;
  });
  if (result.verdict != FuzzVerdict::Rejected) return result;
  return FuzzResult::finding("a canary::Error escaped the differential harness: " + result.detail);
}

}  // namespace canary::fuzz

// Model::to_dot through the public API: clusters from installed variants, guarded values, subgraphs.
#include <catch2/catch.hpp>

#include "canary/canary.h"
#include "cli_process.h"

namespace {

// The fixture's nodes as written (the graph optimizer would make fc1 and h1 one Gemm).
canary::Options sync_jit(std::uint64_t hot) {
  canary::Options o;
  o.jit.synchronous = true;
  o.jit.hot_threshold = hot;
  o.jit.hot_time_us = 0;  // tier up by visits only: deterministic
  o.graph_optimization = canary::GraphOptimization::Off;
  return o;
}

}  // namespace

TEST_CASE("to_dot: nodes, edges and one cluster per fused group after the JIT compiled", "[unit][dot]") {
  const canary::Runtime rt(sync_jit(2));
  const canary::Model model = rt.load(canary::test::fixture("mlp.cnr"));
  const std::string before = model.to_dot();
  CHECK_THAT(before, Catch::Contains("label=\"fc1\\nMatMul\", shape=box"));
  CHECK_THAT(before, Catch::Contains("label=\"output probs\\nf32[N, 2]\""));
  CHECK_THAT(before, Catch::Contains("[label=\"logits\"]"));
  CHECK(before.find("cluster") == std::string::npos);

  canary::Session s = model.session();
  for (int i = 0; i < 3; ++i) s.run({{"x", canary::Tensor::empty(canary::DType::F32, {5, 4})}});
  const std::string after = model.to_dot();
  const std::size_t cluster = after.find("subgraph cluster_fused_0 {");
  REQUIRE(cluster != std::string::npos);
  const std::size_t end = after.find('}', cluster);
  // The cluster lists the vertices of h1 (Add) and h (Relu): 6 and 7 in vertex order
  // (x, 4 constants, fc1, h1, h, ...).
  CHECK(after.substr(cluster, end - cluster).find("\n6;\n7;\n") != std::string::npos);
  CHECK_THAT(after, Catch::Contains("0->5 [label=\"x\", color=red"));      // the guarded input's edge
  CHECK_THAT(after, Catch::Contains("1->5 [label=\"w1\"]"));               // constants stay plain
}

TEST_CASE("to_dot: an If draws both branches as nested clusters with captures", "[unit][dot]") {
  const canary::Runtime rt;
  const std::string dot = rt.load(canary::test::fixture("if_select.cnr")).to_dot();
  CHECK_THAT(dot, Catch::Contains("If 'choose' else_branch"));
  CHECK_THAT(dot, Catch::Contains("If 'choose' then_branch"));
  CHECK_THAT(dot, Catch::Contains("shape=box3d"));
  CHECK_THAT(dot, Catch::Contains("[label=\"x\", style=dashed]"));
}

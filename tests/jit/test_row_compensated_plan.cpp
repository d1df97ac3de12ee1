// Compensated accumulation in plans and cost-model candidates: the planner
// copies PlanOptions::accumulation into the plan and into each row kernel
// that sums (ReduceMax keeps the plain key), the trace trait row_ops marks
// traces with such row kernels, and candidate_specs offers the compensated
// candidate (named "... compensated") exactly when the trait, the option and
// a fused tier allow it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>

#include "graph/text_format.h"
#include "trace_recording.h"
#include "jit/cost/candidates.h"
#include "jit/plan.h"
#include "jit/trace_recorder.h"
#include "vm/compiler.h"
#include "vm/interpreter.h"

using namespace canary;
using namespace canary::jit;

namespace {

using test::Recorded;

// Records one run of the graph on an x of shape [3, 6].
Recorded record(const char* text) { return test::record(text, {Tensor::empty(DType::F32, {3, 6})}); }

// A ReduceSum and a ReduceMax over the last axis, each after an elementwise op.
const char* kSumAndMax = R"(canary v1
graph main(x: f32[N, 6]) -> (s, m) {
  t = Abs(x)
  const last: i64[1] = [-1]
  s = ReduceSum(t, last) {keepdims = 1}
  u = Neg(x)
  m = ReduceMax(u) {axes = [-1], keepdims = 0}
}
)";

const char* kMaxOnly = R"(canary v1
graph main(x: f32[N, 6]) -> (m) {
  m = ReduceMax(x) {axes = [-1], keepdims = 0}
}
)";

const char* kMeanOverRows = R"(canary v1
graph main(x: f32[N, 6]) -> (m) {
  t = Abs(x)
  m = ReduceMean(t) {axes = [0], keepdims = 0}
}
)";

const char* kMeanOverLastAxis = R"(canary v1
graph main(x: f32[N, 6]) -> (m) {
  m = ReduceMean(x) {axes = [1], keepdims = 0}
}
)";

// The row step whose op is `op`, or null.
const RowStep* row_of(const Plan& plan, RowOp op) {
  for (const RowStep& r : plan.rows)
    if (r.spec.op == op) return &r;
  return nullptr;
}

// The primary candidate the engine builds: fused exact on the given tier.
cost::CandidateSpec primary(Tier tier = Tier::ExactFused) {
  cost::CandidateSpec c;
  c.plan.tier = tier;
  c.isa = x86::Isa::Avx512;
  c.name = cost::candidate_name(c.plan, c.isa, false);
  return c;
}

// Names of the candidates whose plans accumulate compensated.
std::vector<std::string> compensated_names(const std::vector<cost::CandidateSpec>& specs) {
  std::vector<std::string> names;
  for (const cost::CandidateSpec& s : specs)
    if (!s.interpreter && s.plan.accumulation == Accumulation::Compensated) names.push_back(s.name);
  return names;
}

}  // namespace

TEST_CASE("PlanOptions::accumulation reaches the plan and the row kernels that sum", "[unit][jit][rows]") {
  const Recorded r = record(kSumAndMax);
  const Plan plain = plan_trace(*r.program, r.trace, {}, PlanOptions{});
  CHECK(plain.accumulation == Accumulation::Plain);
  REQUIRE(row_of(plain, RowOp::Sum));
  CHECK(row_of(plain, RowOp::Sum)->spec.accumulation == Accumulation::Plain);

  PlanOptions options;
  options.accumulation = Accumulation::Compensated;
  const Plan comp = plan_trace(*r.program, r.trace, {}, options);
  CHECK(comp.accumulation == Accumulation::Compensated);
  REQUIRE(comp.rows.size() == 2);
  const RowStep* sum = row_of(comp, RowOp::Sum);
  const RowStep* max = row_of(comp, RowOp::Max);
  REQUIRE(sum);
  REQUIRE(max);
  CHECK(sum->spec.accumulation == Accumulation::Compensated);
  CHECK(sum->spec.key().rfind("row sum compensated : ", 0) == 0);
  CHECK(sum->spec.key() != row_of(plain, RowOp::Sum)->spec.key());
  // Max has no sums: the same kernel, under the plain key.
  CHECK(max->spec.accumulation == Accumulation::Plain);
  CHECK(max->spec.key() == row_of(plain, RowOp::Max)->spec.key());
}

TEST_CASE("row_ops marks traces with a summing row kernel, rows with any row kernel", "[unit][jit][rows]") {
  auto traits_of = [](const char* text) {
    const Recorded r = record(text);
    return cost::trace_traits(*r.program, r.trace, {});
  };
  CHECK(traits_of(kSumAndMax).row_ops);
  CHECK(traits_of(kMeanOverLastAxis).row_ops);
  CHECK_FALSE(traits_of(kMaxOnly).row_ops);       // Max is the same in both modes
  CHECK_FALSE(traits_of(kMeanOverRows).row_ops);  // not over the last axis: a kernel call
  // rows: any row kernel, the one that does not sum included (what a device may take).
  CHECK(traits_of(kMaxOnly).rows);
  CHECK(traits_of(kSumAndMax).rows);
  CHECK_FALSE(traits_of(kMeanOverRows).rows);
}

TEST_CASE("candidate_specs offers compensated row sums where they change code", "[unit][jit][rows]") {
  CostModelOptions options;
  CHECK(options.try_compensated);
  cost::TraceTraits traits;
  traits.row_ops = true;
  const Recorded r = record(kSumAndMax);
  auto specs = cost::candidate_specs(primary(), traits, r.trace, options, 1);
  CHECK(compensated_names(specs) == std::vector<std::string>{"fused exact avx512 fp32 compensated"});
  const auto found = std::find_if(specs.begin(), specs.end(), [](const cost::CandidateSpec& s) {
    return s.plan.accumulation == Accumulation::Compensated;
  });
  REQUIRE(found != specs.end());
  // It differs from the primary in the accumulation only.
  CHECK(found->plan.tier == Tier::ExactFused);
  CHECK(found->plan.math == MathMode::Exact);
  CHECK_FALSE(found->plan.bf16_matmul);
  CHECK(found->isa == x86::Isa::Avx512);
  CHECK(specs.back().interpreter);

  // Not offered without the trait, with the option off, or on the unfused tier (no row kernels).
  traits.row_ops = false;
  CHECK(compensated_names(cost::candidate_specs(primary(), traits, r.trace, options, 1)).empty());
  traits.row_ops = true;
  options.try_compensated = false;
  CHECK(compensated_names(cost::candidate_specs(primary(), traits, r.trace, options, 1)).empty());
  options.try_compensated = true;
  CHECK(compensated_names(cost::candidate_specs(primary(Tier::Unfused), traits, r.trace, options, 1)).empty());

  // A primary that already accumulates compensated is not offered twice.
  cost::CandidateSpec comp = primary();
  comp.plan.accumulation = Accumulation::Compensated;
  comp.name = cost::candidate_name(comp.plan, comp.isa, false);
  CHECK(compensated_names(cost::candidate_specs(comp, traits, r.trace, options, 1)).size() == 1);
}

TEST_CASE("candidate names say compensated after every other axis", "[unit][jit][rows]") {
  PlanOptions plan;
  CHECK(cost::candidate_name(plan, x86::Isa::Avx2, false) == "fused exact avx2 fp32");
  plan.accumulation = Accumulation::Compensated;
  CHECK(cost::candidate_name(plan, x86::Isa::Avx2, false) == "fused exact avx2 fp32 compensated");
  plan.tier = Tier::SymbolicFused;
  CHECK(cost::candidate_name(plan, x86::Isa::Avx2, false) == "fused exact avx2 fp32 symbolic compensated");
  CHECK(cost::candidate_name(plan, x86::Isa::Avx2, true) == "fused exact avx2 fp32 all dims symbolic compensated");
}

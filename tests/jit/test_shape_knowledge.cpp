// What the retrace policy keeps of symbolic dims (DimFacts: range and
// divisibility), how it reaches the planner's choice of kernel versions,
// and how it survives a restart in the shape profile file.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

#include <unistd.h>

#include "trace_recording.h"
#include "jit/plan.h"
#include "jit/plan_versions.h"
#include "jit/profile_store.h"

using namespace canary;
using namespace canary::jit;
using canary::jit::test::record;
using canary::jit::test::Recorded;

namespace {

DimFacts facts_of(std::initializer_list<std::int64_t> values) {
  DimFacts f;
  for (std::int64_t v : values) f.note(v);
  return f;
}

// tanh of x scaled per row after a per-channel shift: r holds one value per
// row, so rows short enough to tile (under 32 floats, with a
// transcendental, and not whole vectors) run as tiles only through the
// group's per-element kernel.
const char* kPerRowScale = R"(canary v1
graph main(x: f32[R, C], m: f32[C], r: f32[R, 1]) -> (y) {
  a = Sub(x, m)
  b = Mul(a, r)
  y = Tanh(b)
}
)";

Recorded record_per_row_scale(std::int64_t rows, std::int64_t cols) {
  return record(kPerRowScale, {Tensor::empty(DType::F32, {rows, cols}), Tensor::empty(DType::F32, {cols}),
                               Tensor::empty(DType::F32, {rows, 1})});
}

// Knowledge with R and C symbolic (x.dim0, x.dim1, m.dim0, r.dim0), C
// having been seen as `cols`, R as `rows`.
ShapeKnowledge per_row_scale_knowledge(const Recorded& r, const DimFacts& cols,
                                       const DimFacts& rows = facts_of({64, 5000})) {
  ShapeKnowledge k;
  std::uint32_t x = 0, m = 0, rr = 0;
  for (const TraceValue& v : r.trace.entry) {
    if (v.shape.size() == 2 && v.shape[1] != 1) x = v.reg.index;
    else if (v.shape.size() == 1) m = v.reg.index;
    else rr = v.reg.index;
  }
  k.symbolic[RegDim{x, 0}] = rows;
  k.symbolic[RegDim{rr, 0}] = rows;
  k.symbolic[RegDim{x, 1}] = cols;
  k.symbolic[RegDim{m, 0}] = cols;
  return k;
}

bool has_per_element_kernel(const Recorded& r, const ShapeKnowledge& k) {
  PlanOptions po;
  po.tier = Tier::SymbolicFused;
  const Plan plan = plan_trace(*r.program, r.trace, k, po);
  REQUIRE(plan.fused.size() == 1);
  return plan.fused[0].per_element_spec.has_value();
}

std::string temp_path(const std::string& stem) {
  return (std::filesystem::temp_directory_path() / (stem + std::to_string(::getpid()))).string();
}

}  // namespace

TEST_CASE("dim facts keep the range seen and the largest of 16, 8, 4 dividing every value", "[unit][jit][policy]") {
  CHECK(power_divisor(96) == 16);
  CHECK(power_divisor(24) == 8);
  CHECK(power_divisor(12) == 4);
  CHECK(power_divisor(6) == 1);
  DimFacts f;
  CHECK_FALSE(f.known());
  CHECK(f.describe() == "not recorded");
  f.note(128);
  CHECK(f.describe() == "128, divisible by 16");
  f.note(96);
  CHECK(f.describe() == "96..128, divisible by 16");
  f.note(200);  // 8 * 25
  CHECK(f == DimFacts{96, 200, 8});
  f.note(36);  // 4 * 9
  CHECK(f.describe() == "36..200, divisible by 4");
  f.note(37);
  CHECK(f.describe() == "36..200");
  CHECK(f.divisor == 1);
  // Values no symbolic dim takes (the range guard refuses them) stay out.
  for (std::int64_t v : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-8}, kMaxSymbolicDim + 16,
                         std::numeric_limits<std::int64_t>::max()})
    f.note(v);
  CHECK(f == DimFacts{36, 200, 1});
  f.note(kMaxSymbolicDim);
  CHECK(f.hi == kMaxSymbolicDim);
}

TEST_CASE("the samples versions are decided on: smallest, next residue, largest", "[unit][jit][policy]") {
  const DimFacts f = facts_of({16, 24, 40});  // divisible by 8
  CHECK(symbol_sample(f, 0) == 16);
  CHECK(symbol_sample(f, 1) == 24);  // 16 + 8: rows that are not whole vectors
  CHECK(symbol_sample(f, 2) == 40);
  const DimFacts one = facts_of({7});
  CHECK(symbol_sample(one, 1) == 7);  // never beyond what was seen
}

TEST_CASE("knowledge notes the values of its symbolic dims only", "[unit][jit][policy]") {
  ShapeKnowledge k;
  k.symbolic[RegDim{3, 1}] = facts_of({8, 16});
  const std::int64_t dims[] = {1, 40, 7};
  k.note_values(3, dims);
  CHECK(k.symbolic.size() == 1);
  CHECK(k.symbolic.at(RegDim{3, 1}) == DimFacts{8, 40, 8});
  const std::int64_t one[] = {5, 1};
  k.note_values(3, one);  // 1 goes to a sibling trace, not into the range
  CHECK(k.symbolic.at(RegDim{3, 1}).lo == 8);
}

TEST_CASE("a symbolic group gets the per-element kernel when its rows were seen short", "[unit][jit][plan]") {
  // Recorded on rows of 48 floats, which do not tile.
  const Recorded r = record_per_row_scale(300, 48);
  // C also seen at 5: rows of 5 tile through the per-element kernel.
  CHECK(has_per_element_kernel(r, per_row_scale_knowledge(r, facts_of({5, 48}))));
  // C seen at 48 only, or at long rows only: no version for short rows.
  CHECK_FALSE(has_per_element_kernel(r, per_row_scale_knowledge(r, facts_of({48}))));
  CHECK_FALSE(has_per_element_kernel(r, per_row_scale_knowledge(r, facts_of({40, 48}))));
  // Short rows that were always whole vectors (16, 48: divisible by 16) do
  // not tile. Seen at 16, 40 and 48, divisible by 8 only: rows may end in
  // half a vector, and the sample of that residue (24, not itself seen)
  // tiles.
  CHECK_FALSE(has_per_element_kernel(r, per_row_scale_knowledge(r, facts_of({16, 48}))));
  CHECK(has_per_element_kernel(r, per_row_scale_knowledge(r, facts_of({16, 40, 48}))));
  // Both dims seen up to the largest the range guard admits: the sample
  // with both at their largest counts more elements than an int64 holds and
  // is left out; the others still decide.
  CHECK(has_per_element_kernel(
      r, per_row_scale_knowledge(r, facts_of({5, kMaxSymbolicDim}), facts_of({64, kMaxSymbolicDim}))));
  // Nothing recorded of C (a version 1 profile): decided on the recorded rows.
  CHECK_FALSE(has_per_element_kernel(r, per_row_scale_knowledge(r, DimFacts{})));

  // The listing shows each symbol with what was seen of it.
  PlanOptions po;
  po.tier = Tier::SymbolicFused;
  const Plan plan = plan_trace(*r.program, r.trace, per_row_scale_knowledge(r, facts_of({5, 48})), po);
  const std::string listing = plan.describe(*r.program);
  CHECK(listing.find("symbols (2, values seen: not guarded)") != std::string::npos);
  CHECK(listing.find("= x.dim1: 5..48") != std::string::npos);
  CHECK(listing.find("= x.dim0: 64..5000") != std::string::npos);
}

TEST_CASE("the shape profile keeps each symbolic dim's facts and reads version 1 files", "[unit][jit][policy]") {
  const Recorded r = record_per_row_scale(300, 200);
  const std::string path = temp_path("canary_profile_facts_");
  AnchorProfile p;
  p.anchor = "entry";
  p.tier = Tier::SymbolicFused;
  p.knowledge.symbolic[RegDim{2, 0}] = facts_of({5, 200});
  p.knowledge.symbolic[RegDim{4, 1}] = DimFacts{};  // learned before facts were kept
  p.knowledge.unequal.insert({RegDim{2, 0}, RegDim{4, 1}});
  std::string error;
  REQUIRE(save_profile(path, *r.program, {p}, error));
  std::vector<AnchorProfile> loaded;
  REQUIRE(load_profile(path, *r.program, loaded, error));
  REQUIRE(loaded.size() == 1);
  CHECK(loaded[0].knowledge.symbolic == p.knowledge.symbolic);
  CHECK(loaded[0].knowledge.unequal == p.knowledge.unequal);

  const std::string fingerprint = program_fingerprint(*r.program);
  const auto write = [&](const std::string& text) { std::ofstream(path, std::ios::trunc) << text; };
  write("canary-jit-profile 1 " + fingerprint + "\nanchor 5 entry tier 1\nsymbolic 2 0\n");
  REQUIRE(load_profile(path, *r.program, loaded, error));
  REQUIRE(loaded.size() == 1);
  CHECK(loaded[0].knowledge.symbolic.at(RegDim{2, 0}) == DimFacts{});

  for (const char* bad : {"symbolic 2 0 200 5 1", "symbolic 2 0 5 200 3", "symbolic 2 0 1 8 1", "symbolic 2 0 12 24 8",
                          "symbolic 2 0 8 16", "symbolic 2 0 16 2199023255568 16",
                          "symbolic 2 0 9223372036854775792 9223372036854775792 16",
                          "symbolic 2 0 16 99999999999999999999 16"}) {
    INFO(bad);
    write("canary-jit-profile 2 " + fingerprint + "\nanchor 5 entry tier 1\n" + bad + "\n");
    loaded.clear();
    CHECK_FALSE(load_profile(path, *r.program, loaded, error));
    CHECK(error.find("line 3") != std::string::npos);
    CHECK(loaded.empty());
  }
  write("canary-jit-profile 3 " + fingerprint + "\n");
  CHECK_FALSE(load_profile(path, *r.program, loaded, error));
  CHECK(error.find("version 1 or 2") != std::string::npos);

  // A matching fingerprint does not vouch for every line: dims must name a
  // register of this program and an axis below 64.
  const std::string past = std::to_string(r.program->register_count());
  for (const std::string& bad : std::vector<std::string>{"symbolic " + past + " 0 2 8 1", "symbolic 4294967295 0 2 8 1",
                                                          "symbolic 2 64 2 8 1",
                                                          "unequal 2 0 " + past + " 0", "unequal 2 99 4 1"}) {
    INFO(bad);
    write("canary-jit-profile 2 " + fingerprint + "\nanchor 5 entry tier 1\n" + bad + "\n");
    loaded.clear();
    CHECK_FALSE(load_profile(path, *r.program, loaded, error));
    CHECK(error.find("line 3: no such dim in this model") != std::string::npos);
    CHECK(loaded.empty());
  }
  std::remove(path.c_str());
}

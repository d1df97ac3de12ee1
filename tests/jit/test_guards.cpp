// Guard tests: each guard kind passes and fails at the right index in the
// C++ evaluator and in emitted code, 64-bit immediates, symbol capture,
// ordering validation, describe_* text, and emitted code against the
// evaluator on randomised guard sets and headers.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "canary/dtype.h"
#include "jit/guard.h"
#include "jit/x86/guard_codegen.h"

using canary::DType;
using canary::jit::evaluate_guards;
using canary::jit::Guard;
using canary::jit::GuardKind;
using canary::jit::GuardSet;
using canary::jit::TensorHeader;
namespace x86 = canary::jit::x86;

namespace {

constexpr std::int64_t kF32 = static_cast<std::int64_t>(DType::F32);
constexpr std::int64_t kF64 = static_cast<std::int64_t>(DType::F64);

// Test tensor: owns its dims; data is a fake address that is never read.
struct FakeTensor {
  std::vector<std::int64_t> dims;
  std::int64_t dtype = kF32;
  std::uintptr_t address = 0x10000;
  bool defined = true;

  TensorHeader header() const {
    TensorHeader h;
    if (!defined) return h;
    h.data = reinterpret_cast<const void*>(address);
    h.dims = dims.data();
    h.rank = static_cast<std::int64_t>(dims.size());
    h.dtype = dtype;
    return h;
  }
};

std::vector<TensorHeader> headers_of(const std::vector<FakeTensor>& ts) {
  std::vector<TensorHeader> hs;
  for (const auto& t : ts) hs.push_back(t.header());
  return hs;
}

Guard rank(std::uint32_t t, std::int64_t r) { return Guard{GuardKind::Rank, t, 0, 0, 0, r, 0}; }
Guard dtype(std::uint32_t t, std::int64_t d) { return Guard{GuardKind::DType, t, 0, 0, 0, d, 0}; }
Guard dim_eq(std::uint32_t t, std::uint32_t a, std::int64_t v) { return Guard{GuardKind::DimEquals, t, a, 0, 0, v, 0}; }
Guard dim_range(std::uint32_t t, std::uint32_t a, std::int64_t lo, std::int64_t hi) {
  return Guard{GuardKind::DimRange, t, a, 0, 0, lo, hi};
}
Guard dim_div(std::uint32_t t, std::uint32_t a, std::int64_t v) { return Guard{GuardKind::DimDivisible, t, a, 0, 0, v, 0}; }
Guard dims_eq(std::uint32_t t, std::uint32_t a, std::uint32_t t2, std::uint32_t a2) {
  return Guard{GuardKind::DimsEqual, t, a, t2, a2, 0, 0};
}
Guard aligned(std::uint32_t t, std::int64_t v) { return Guard{GuardKind::Aligned, t, 0, 0, 0, v, 0}; }
Guard capture(std::uint32_t t, std::uint32_t a, std::int64_t slot) { return Guard{GuardKind::CaptureDim, t, a, 0, 0, slot, 0}; }

GuardSet make_set(std::vector<Guard> gs, std::uint32_t tensors, std::uint32_t symbols = 0) {
  GuardSet s;
  s.guards = std::move(gs);
  s.num_tensors = tensors;
  s.num_symbols = symbols;
  return s;
}

// Result of one guard set on some tensors, from the evaluator and from emitted code.
struct BothResults {
  std::uint32_t evaluated = 0, emitted = 0;
  std::vector<std::int64_t> evaluated_symbols, emitted_symbols;
};

// Runs the set both ways; symbols start at -777.
BothResults run_both(const GuardSet& set, const std::vector<TensorHeader>& hs, x86::CodeCache& cache) {
  BothResults r;
  r.evaluated_symbols.assign(set.num_symbols + 1, -777);
  r.emitted_symbols.assign(set.num_symbols + 1, -777);
  r.evaluated = evaluate_guards(set, hs.data(), r.evaluated_symbols.data());
  std::string error;
  x86::CompiledGuards cg = x86::compile_guards(set, cache, error);
  INFO(error);
  REQUIRE(cg.fn != nullptr);
  r.emitted = cg.fn(hs.data(), r.emitted_symbols.data());
  return r;
}

// Expects both evaluator and emitted code to return `expected`.
void expect_result(const GuardSet& set, const std::vector<FakeTensor>& ts, std::uint32_t expected) {
  x86::CodeCache cache(1 << 20);
  BothResults r = run_both(set, headers_of(ts), cache);
  CHECK(r.evaluated == expected);
  CHECK(r.emitted == expected);
}

}  // namespace

TEST_CASE("rank and dtype guards pass and fail at their index", "[unit][jit][guards]") {
  GuardSet s = make_set({rank(0, 2), dtype(0, kF32), rank(1, 1), dtype(1, kF64)}, 2);
  FakeTensor x{{4, 8}, kF32};
  FakeTensor h{{5}, kF64};
  expect_result(s, {x, h}, 0);
  expect_result(s, {FakeTensor{{4}, kF32}, h}, 1);      // x rank 1, not 2
  expect_result(s, {FakeTensor{{4, 8}, kF64}, h}, 2);   // x is f64
  expect_result(s, {x, FakeTensor{{5, 1}, kF64}}, 3);   // h rank 2
  expect_result(s, {x, FakeTensor{{5}, kF32}}, 4);      // h is f32
  FakeTensor undefined;
  undefined.defined = false;
  expect_result(s, {undefined, h}, 1);  // rank -1 fails, dims never read
}

TEST_CASE("dim equals, range and divisible guards", "[unit][jit][guards]") {
  GuardSet s = make_set({rank(0, 3), dim_eq(0, 2, 128), dim_range(0, 0, 16, 4096), dim_div(0, 1, 8)}, 1);
  expect_result(s, {FakeTensor{{16, 24, 128}}}, 0);
  expect_result(s, {FakeTensor{{4096, 0, 128}}}, 0);
  expect_result(s, {FakeTensor{{16, 24, 96}}}, 2);
  expect_result(s, {FakeTensor{{15, 24, 128}}}, 3);
  expect_result(s, {FakeTensor{{4097, 24, 128}}}, 3);
  expect_result(s, {FakeTensor{{16, 20, 128}}}, 4);  // 20 % 8 == 4
  expect_result(s, {FakeTensor{{16, 24}}}, 1);
}

TEST_CASE("divisibility by a non power of two uses a division", "[unit][jit][guards]") {
  GuardSet s = make_set({rank(0, 1), dim_div(0, 0, 12)}, 1);
  expect_result(s, {FakeTensor{{36}}}, 0);
  expect_result(s, {FakeTensor{{0}}}, 0);
  expect_result(s, {FakeTensor{{-24}}}, 0);
  expect_result(s, {FakeTensor{{30}}}, 2);
  expect_result(s, {FakeTensor{{-30}}}, 2);
  GuardSet one = make_set({rank(0, 1), dim_div(0, 0, 1)}, 1);
  expect_result(one, {FakeTensor{{7}}}, 0);
}

TEST_CASE("dims equal guard compares two tensors", "[unit][jit][guards]") {
  GuardSet s = make_set({rank(0, 2), rank(1, 1), dims_eq(0, 1, 1, 0)}, 2);
  expect_result(s, {FakeTensor{{3, 64}}, FakeTensor{{64}}}, 0);
  expect_result(s, {FakeTensor{{3, 96}}, FakeTensor{{128}}}, 3);
}

TEST_CASE("aligned guard tests the data address", "[unit][jit][guards]") {
  GuardSet s = make_set({rank(0, 1), aligned(0, 64)}, 1);
  FakeTensor t{{4}};
  t.address = 0x7f0000001000;
  expect_result(s, {t}, 0);
  t.address = 0x7f0000001010;
  expect_result(s, {t}, 2);
  t.address = 0x7f0000001040;
  expect_result(s, {t}, 0);
}

TEST_CASE("capture dim writes symbols after earlier checks pass", "[unit][jit][guards]") {
  GuardSet s = make_set({rank(0, 2), capture(0, 1, 2), rank(1, 1), capture(1, 0, 0), dim_eq(1, 0, 5)}, 2, 3);
  x86::CodeCache cache(1 << 20);
  std::vector<FakeTensor> ts{FakeTensor{{3, 77}}, FakeTensor{{5}}};
  BothResults ok = run_both(s, headers_of(ts), cache);
  CHECK(ok.evaluated == 0);
  CHECK(ok.emitted == 0);
  CHECK(ok.emitted_symbols == std::vector<std::int64_t>{5, -777, 77, -777});
  CHECK(ok.evaluated_symbols == ok.emitted_symbols);
  ts[1].dims = {6};
  BothResults bad = run_both(s, headers_of(ts), cache);
  CHECK(bad.emitted == 5);
  CHECK(bad.evaluated == 5);
  CHECK(bad.emitted_symbols == std::vector<std::int64_t>{6, -777, 77, -777});
  ts[0].dims = {3};
  BothResults early = run_both(s, headers_of(ts), cache);
  CHECK(early.emitted == 1);
  CHECK(early.emitted_symbols == std::vector<std::int64_t>{-777, -777, -777, -777});
}

TEST_CASE("guards with 64-bit immediates", "[unit][jit][guards]") {
  const std::int64_t big = std::int64_t{1} << 40;
  GuardSet s = make_set({rank(0, 2), dim_eq(0, 0, 0x123456789), dim_range(0, 1, -big, big + 5),
                         dim_div(0, 1, 3 * (std::int64_t{1} << 33)), dim_div(0, 0, 1)},
                        1);
  const std::int64_t div = 3 * (std::int64_t{1} << 33);
  expect_result(s, {FakeTensor{{0x123456789, 2 * div}}}, 0);
  expect_result(s, {FakeTensor{{0x23456789, 2 * div}}}, 2);  // low 32 bits alone do not match
  expect_result(s, {FakeTensor{{0x123456789, big + 6}}}, 3);
  expect_result(s, {FakeTensor{{0x123456789, -big - 1}}}, 3);
  expect_result(s, {FakeTensor{{0x123456789, div + 1}}}, 4);
  GuardSet huge_rank = make_set({rank(0, big)}, 1);
  expect_result(huge_rank, {FakeTensor{{1}}}, 1);
  GuardSet pow2 = make_set({rank(0, 1), dim_div(0, 0, big)}, 1);
  expect_result(pow2, {FakeTensor{{3 * big}}}, 0);
  expect_result(pow2, {FakeTensor{{big + (std::int64_t{1} << 20)}}}, 2);
  GuardSet align = make_set({aligned(0, std::int64_t{1} << 33)}, 1);
  FakeTensor t{{1}};
  t.address = std::uintptr_t{1} << 34;
  expect_result(align, {t}, 0);
  t.address = (std::uintptr_t{1} << 34) + (std::uintptr_t{1} << 32);
  expect_result(align, {t}, 1);
  GuardSet dt = make_set({dtype(0, -big)}, 1);
  FakeTensor odd{{1}};
  odd.dtype = -big;
  expect_result(dt, {odd}, 0);
  expect_result(dt, {FakeTensor{{1}}}, 1);
}

TEST_CASE("compile_guards rejects sets that could read missing dims", "[unit][jit][guards]") {
  x86::CodeCache cache(1 << 20);
  auto error_of = [&](const GuardSet& s) {
    std::string error;
    x86::CompiledGuards cg = x86::compile_guards(s, cache, error);
    CHECK(cg.fn == nullptr);
    CHECK(cg.code == nullptr);
    return error;
  };
  CHECK_THAT(error_of(make_set({dim_eq(0, 0, 4), rank(0, 1)}, 1)),
             Catch::Contains("guard 0") && Catch::Contains("without an earlier Rank guard"));
  CHECK_THAT(error_of(make_set({rank(0, 2), dim_eq(0, 2, 4)}, 1)), Catch::Contains("reads dim2 of tensor 0"));
  CHECK_THAT(error_of(make_set({rank(0, 2), dims_eq(0, 0, 1, 0), rank(1, 1)}, 2)),
             Catch::Contains("guard 1") && Catch::Contains("tensor 1"));
  CHECK_THAT(error_of(make_set({rank(1, 2), capture(0, 0, 0)}, 2, 1)), Catch::Contains("guard 1"));
  CHECK_THAT(error_of(make_set({rank(0, 1), dim_div(0, 0, 0)}, 1)), Catch::Contains("divisor 0 is not positive"));
  CHECK_THAT(error_of(make_set({aligned(0, 48)}, 1)), Catch::Contains("alignment 48 is not a power of two"));
  CHECK_THAT(error_of(make_set({rank(0, 1), capture(0, 0, 2)}, 1, 2)), Catch::Contains("symbol slot 2"));
  CHECK_THAT(error_of(make_set({rank(3, 1)}, 2)), Catch::Contains("tensor index outside"));
  CHECK(cache.stats().entries == 0);
}

TEST_CASE("identical guard sets share code through the cache", "[unit][jit][guards]") {
  x86::CodeCache cache(1 << 20);
  std::string error;
  GuardSet s = make_set({rank(0, 1), dim_eq(0, 0, 3)}, 1);
  x86::CompiledGuards a = x86::compile_guards(s, cache, error);
  x86::CompiledGuards b = x86::compile_guards(s, cache, error);
  GuardSet other = make_set({rank(0, 1), dim_eq(0, 0, 4)}, 1);
  x86::CompiledGuards c = x86::compile_guards(other, cache, error);
  REQUIRE(a.fn != nullptr);
  CHECK(a.fn == b.fn);
  CHECK(c.fn != a.fn);
  CHECK(cache.stats().hits == 1);
  CHECK(cache.stats().entries == 2);
}

TEST_CASE("describe_guard names each kind", "[unit][jit][guards]") {
  std::vector<std::string> names{"x", "h"};
  CHECK(canary::jit::describe_guard(rank(0, 3), names) == "x.rank == 3");
  CHECK(canary::jit::describe_guard(dtype(0, kF32), names) == "x.dtype == f32");
  CHECK(canary::jit::describe_guard(dtype(1, 42), names) == "h.dtype == dtype#42");
  CHECK(canary::jit::describe_guard(dim_eq(0, 1, 128), names) == "x.dim1 == 128");
  CHECK(canary::jit::describe_guard(dim_range(0, 0, 16, 4096), names) == "16 <= x.dim0 <= 4096");
  CHECK(canary::jit::describe_guard(dim_div(0, 0, 8), names) == "x.dim0 % 8 == 0");
  CHECK(canary::jit::describe_guard(dims_eq(0, 1, 1, 0), names) == "x.dim1 == h.dim0");
  CHECK(canary::jit::describe_guard(aligned(0, 64), names) == "x is 64-byte aligned");
  CHECK(canary::jit::describe_guard(capture(1, 0, 2), names) == "s2 := h.dim0");
  CHECK(canary::jit::describe_guard(rank(2, 1), names) == "t2.rank == 1");
}

TEST_CASE("describe_observed reports what the header held", "[unit][jit][guards]") {
  FakeTensor x{{3, 96}, kF64};
  x.address = 0x1010;
  FakeTensor h{{128}};
  FakeTensor undefined;
  undefined.defined = false;
  const std::vector<FakeTensor> ts{x, h, undefined};  // owns the dims the headers point to
  std::vector<TensorHeader> hs = headers_of(ts);
  CHECK(canary::jit::describe_observed(rank(0, 3), hs.data()) == "saw rank 2");
  CHECK(canary::jit::describe_observed(rank(2, 1), hs.data()) == "saw an undefined tensor");
  CHECK(canary::jit::describe_observed(dtype(0, kF32), hs.data()) == "saw f64");
  CHECK(canary::jit::describe_observed(dim_eq(0, 1, 128), hs.data()) == "saw 96");
  CHECK(canary::jit::describe_observed(dim_range(0, 1, 100, 200), hs.data()) == "saw 96");
  CHECK(canary::jit::describe_observed(dim_div(0, 0, 2), hs.data()) == "saw 3");
  CHECK(canary::jit::describe_observed(dims_eq(0, 1, 1, 0), hs.data()) == "saw 96 vs 128");
  CHECK(canary::jit::describe_observed(aligned(0, 64), hs.data()) == "saw address 0x1010 % 64 == 16");
  CHECK(canary::jit::describe_observed(dim_eq(1, 3, 1), hs.data()) == "saw no axis 3 (rank 1)");
}

namespace {

// A random valid guard set: per tensor a Rank guard, then checks on it (and
// DimsEqual against tensors already ranked), in planner order.
GuardSet random_guard_set(std::mt19937_64& rng, std::vector<std::int64_t>& planned_ranks) {
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  GuardSet s;
  s.num_tensors = static_cast<std::uint32_t>(pick(1, 3));
  s.num_symbols = 4;
  planned_ranks.clear();
  const std::int64_t divisors[] = {1, 2, 3, 4, 5, 8, 12, 16};
  for (std::uint32_t t = 0; t < s.num_tensors; ++t) {
    const std::int64_t r = pick(0, 4);
    planned_ranks.push_back(r);
    s.guards.push_back(rank(t, r));
    const int n = static_cast<int>(pick(0, 5));
    for (int k = 0; k < n; ++k) {
      const auto kind = static_cast<int>(pick(0, 7));
      const auto axis = static_cast<std::uint32_t>(r > 0 ? pick(0, r - 1) : 0);
      if (kind == 0) s.guards.push_back(dtype(t, pick(0, 2)));
      if (kind == 1) s.guards.push_back(aligned(t, std::int64_t{1} << pick(0, 6)));
      if (r == 0) continue;
      if (kind == 2) s.guards.push_back(dim_eq(t, axis, pick(0, 8)));
      if (kind == 3) {
        const std::int64_t lo = pick(-2, 8);
        s.guards.push_back(dim_range(t, axis, lo, lo + pick(0, 6)));
      }
      if (kind == 4) s.guards.push_back(dim_div(t, axis, divisors[pick(0, 7)]));
      if (kind == 5) s.guards.push_back(capture(t, axis, pick(0, 3)));
      if (kind >= 6) {
        const auto t2 = static_cast<std::uint32_t>(pick(0, t));
        if (planned_ranks[t2] > 0) {
          s.guards.push_back(dims_eq(t, axis, t2, static_cast<std::uint32_t>(pick(0, planned_ranks[t2] - 1))));
        }
      }
    }
  }
  return s;
}

// Random tensors mostly shaped as planned, with small dims so guards both pass and fail.
std::vector<FakeTensor> random_tensors(std::mt19937_64& rng, const std::vector<std::int64_t>& planned_ranks) {
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  std::vector<FakeTensor> ts;
  for (std::int64_t r : planned_ranks) {
    FakeTensor t;
    t.defined = pick(0, 19) != 0;
    const std::int64_t actual = pick(0, 5) == 0 ? pick(0, 5) : r;
    for (std::int64_t i = 0; i < actual; ++i) t.dims.push_back(pick(0, 9) == 0 ? pick(-3, 1 << 20) : pick(0, 9));
    t.dtype = pick(-1, 2);
    t.address = static_cast<std::uintptr_t>(0x10000 + pick(0, 1 << 12) * 8);
    ts.push_back(std::move(t));
  }
  return ts;
}

}  // namespace

TEST_CASE("emitted guards agree with the evaluator on random sets", "[unit][jit][guards]") {
  std::mt19937_64 rng(20240611);
  x86::CodeCache cache(64 << 20);
  std::set<std::uint32_t> outcomes;
  int mismatches = 0;
  std::vector<std::int64_t> planned;
  for (int set_index = 0; set_index < 50; ++set_index) {
    GuardSet s = random_guard_set(rng, planned);
    std::string error;
    x86::CompiledGuards cg = x86::compile_guards(s, cache, error);
    INFO(error);
    REQUIRE(cg.fn != nullptr);
    for (int i = 0; i < 200; ++i) {
      std::vector<FakeTensor> ts = random_tensors(rng, planned);
      std::vector<TensorHeader> hs = headers_of(ts);
      std::vector<std::int64_t> sym_eval(s.num_symbols, -777), sym_emit(s.num_symbols, -777);
      const std::uint32_t expected = evaluate_guards(s, hs.data(), sym_eval.data());
      const std::uint32_t got = cg.fn(hs.data(), sym_emit.data());
      if (expected != got || sym_eval != sym_emit) ++mismatches;
      outcomes.insert(expected);
    }
  }
  CHECK(mismatches == 0);
  // The headers exercised both passing and failures at many indices.
  CHECK(outcomes.count(0) == 1);
  CHECK(outcomes.size() >= 8);
}

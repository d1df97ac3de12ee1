// Tests of symbolic dimensions: simplification, conv arithmetic, evaluation,
// substitution, printing and parsing.
#include <catch2/catch.hpp>

#include <random>

#include "canary/error.h"
#include "graph/symbolic.h"

using canary::Error;
using canary::ErrorKind;
using namespace canary::graph;

namespace {

// Output length of a 1-D convolution as shape inference computes it.
Dim conv_length(const Dim& t, std::int64_t pad, std::int64_t kernel, std::int64_t stride, std::int64_t dilation) {
  return floor_div(t + Dim(2 * pad) - Dim(dilation) * (Dim(kernel) - Dim(1)) - Dim(1), Dim(stride)) + Dim(1);
}

// Runs parse_dim and returns the error it throws (fails the test if none).
Error parse_error(std::string_view text) {
  try {
    parse_dim(text);
  } catch (const Error& e) {
    return e;
  }
  FAIL("parse_dim accepted '" << text << "'");
  return Error(ErrorKind::Internal, "unreachable");
}

}  // namespace

TEST_CASE("constants fold and like terms collect", "[unit][symbolic]") {
  Dim t = Dim::symbol("T"), n = Dim::symbol("N");
  CHECK(Dim(3) + Dim(4) == Dim(7));
  CHECK((Dim(3) * Dim(4)).value() == 12);
  CHECK(t + Dim(0) == t);
  CHECK(t * Dim(1) == t);
  CHECK(t * Dim(0) == Dim(0));
  CHECK((t + Dim(2)) - t == Dim(2));
  CHECK(n - n == Dim(0));
  CHECK((n - n).is_constant());
  CHECK(Dim(3) * (t + Dim(1)) == t + t + t + Dim(3));
  CHECK((Dim(3) * (t + Dim(1))).to_string() == "3*T + 3");
  CHECK(t.is_symbol());
  CHECK(t.symbol_name() == "T");
  CHECK_FALSE((t + Dim(1)).is_symbol());
  CHECK_FALSE(t.is_constant());
  CHECK(t * n == n * t);
  CHECK((t + n) * (t - n) == t * t - n * n);
}

TEST_CASE("floor division of constants rounds toward negative infinity", "[unit][symbolic]") {
  CHECK(floor_div(Dim(7), Dim(2)).value() == 3);
  CHECK(floor_div(Dim(-7), Dim(2)).value() == -4);
  CHECK(floor_div(Dim(7), Dim(-2)).value() == -4);
  CHECK(floor_div(Dim(-7), Dim(-2)).value() == 3);
  CHECK(floor_div(Dim(6), Dim(3)).value() == 2);
  CHECK(ceil_div(Dim(7), Dim(2)).value() == 4);
  CHECK(ceil_div(Dim(-7), Dim(2)).value() == -3);
  CHECK(ceil_div(Dim(8), Dim(2)).value() == 4);
}

TEST_CASE("floor division simplifies linear numerators", "[unit][symbolic]") {
  Dim t = Dim::symbol("T"), n = Dim::symbol("N");
  CHECK(floor_div(t, Dim(1)) == t);
  CHECK(floor_div(Dim(4) * t + Dim(8), Dim(4)) == t + Dim(2));
  CHECK(floor_div(Dim(6) * t - Dim(6) * n, Dim(3)) == Dim(2) * t - Dim(2) * n);
  CHECK(floor_div(Dim(2) * t + Dim(5), Dim(2)) == t + Dim(2));
  CHECK(floor_div(t - Dim(1), Dim(2)) + Dim(1) == floor_div(t + Dim(1), Dim(2)));
  CHECK(floor_div(Dim(2) * t + Dim(3), Dim(4)) == floor_div(t + Dim(1), Dim(2)));
  CHECK(floor_div(floor_div(t, Dim(2)), Dim(3)) == floor_div(t, Dim(6)));
  CHECK(floor_div(Dim(0) - t, Dim(-1)) == t);
  CHECK(ceil_div(t, Dim(2)) == floor_div(t + Dim(1), Dim(2)));
  CHECK(ceil_div(t, Dim(1)) == t);
  CHECK(floor_div(t, n).to_string() == "T // N");
}

TEST_CASE("exact quotients divide monomials and constants, and nothing else", "[unit][symbolic]") {
  const Dim t = Dim::symbol("T"), n = Dim::symbol("N");
  CHECK(exact_quotient(Dim(64), Dim(16)) == Dim(4));
  CHECK(exact_quotient(Dim(4) * t * n, Dim(2) * t) == Dim(2) * n);
  CHECK(exact_quotient(t * n * t, t) == t * n);
  CHECK(exact_quotient(Dim(6) * t + Dim(12), Dim(3)) == Dim(2) * t + Dim(4));
  CHECK(exact_quotient(Dim(-8) * n, Dim(-4)) == Dim(2) * n);
  CHECK(exact_quotient(t + n, t + n) == Dim(1));
  CHECK_FALSE(exact_quotient(Dim(6), Dim(4)));             // not a multiple
  CHECK_FALSE(exact_quotient(Dim(2) * t + Dim(1), Dim(2)));  // a multiple of 2 for no T
  CHECK_FALSE(exact_quotient(t, Dim(2) * t));              // 1/2
  CHECK_FALSE(exact_quotient(t, n));
  CHECK_FALSE(exact_quotient(Dim(2) * t, Dim(4)));          // a multiple of 4 only for even T
  CHECK_FALSE(exact_quotient(t + n, t));                   // a sum by a monomial
  CHECK_FALSE(exact_quotient(t, Dim(0)));
  CHECK_FALSE(exact_quotient(Dim(0), Dim(0)));
}

TEST_CASE("division by a constant zero stays symbolic and evaluates to nothing", "[unit][symbolic]") {
  Dim t = Dim::symbol("T");
  Dim q = floor_div(t, Dim(0));
  CHECK(q.to_string() == "T // 0");
  CHECK_FALSE(q.evaluate({{"T", 5}}).has_value());
  CHECK_FALSE(floor_div(Dim(5), Dim(0)).evaluate({}).has_value());
  CHECK_FALSE(ceil_div(t, Dim(0)).evaluate({{"T", 5}}).has_value());
  CHECK_FALSE(floor_div(t, Dim::symbol("N")).evaluate({{"T", 5}, {"N", 0}}).has_value());
  CHECK(floor_div(t, Dim::symbol("N")).evaluate({{"T", 7}, {"N", 2}}) == 3);
  CHECK(floor_div(t, Dim::symbol("N")).evaluate({{"T", -7}, {"N", 2}}) == -4);
}

TEST_CASE("max and min simplify", "[unit][symbolic]") {
  Dim t = Dim::symbol("T"), n = Dim::symbol("N");
  CHECK(max(Dim(3), Dim(5)).value() == 5);
  CHECK(min(Dim(3), Dim(5)).value() == 3);
  CHECK(max(t, t) == t);
  CHECK(min(t, t) == t);
  CHECK(max(t + Dim(1), t) == t + Dim(1));
  CHECK(min(t + Dim(1), t) == t);
  CHECK(max(t - Dim(2), t) == t);
  CHECK(max(t, n) == max(n, t));
  CHECK(max(t, n).to_string() == "max(N, T)");
  CHECK(max(t + Dim(1), n + Dim(1)) == max(t, n) + Dim(1));
  CHECK(max(t, n) != min(t, n));
  CHECK(max(t, n).evaluate({{"T", 3}, {"N", 9}}) == 9);
  CHECK(min(t, n).evaluate({{"T", 3}, {"N", 9}}) == 3);
}

TEST_CASE("conv output length with stride 1 is the input length", "[unit][symbolic][conv]") {
  Dim t = Dim::symbol("T");
  CHECK(floor_div(t + Dim(2) * Dim(1) - Dim(3), Dim(1)) + Dim(1) == t);
  CHECK(conv_length(t, 1, 3, 1, 1) == t);
  CHECK(conv_length(t, 2, 5, 1, 1) == t);
  CHECK(conv_length(t, 0, 3, 1, 1) == t - Dim(2));
  CHECK(conv_length(t, 2, 3, 1, 2) == t);
  CHECK(conv_length(t, 0, 3, 1, 2) == t - Dim(4));
}

TEST_CASE("conv output length with stride 2 evaluates like integer arithmetic", "[unit][symbolic][conv]") {
  Dim t = Dim::symbol("T");
  Dim len = floor_div(t + Dim(2) - Dim(3), Dim(2)) + Dim(1);
  CHECK(len.to_string() == "(T + 1) // 2");
  CHECK(len == ceil_div(t, Dim(2)));
  for (std::int64_t v = 1; v <= 20; ++v) {
    CHECK(len.evaluate({{"T", v}}) == (v - 1) / 2 + 1);
  }
  Dim dilated = conv_length(t, 0, 3, 2, 2);  // (T - 5) // 2 + 1
  CHECK(dilated.to_string() == "(T + 1) // 2 - 2");
  for (std::int64_t v = 5; v <= 20; ++v) {
    CHECK(dilated.evaluate({{"T", v}}) == (v - 5) / 2 + 1);
  }
  Dim stride3 = conv_length(t, 2, 5, 3, 1);  // (T - 1) // 3 + 1
  CHECK(stride3.to_string() == "(T + 2) // 3");
  for (std::int64_t v = 1; v <= 20; ++v) {
    CHECK(stride3.evaluate({{"T", v}}) == (v - 1) / 3 + 1);
  }
}

TEST_CASE("evaluation uses the bindings and reports unbound symbols", "[unit][symbolic]") {
  Dim n = Dim::symbol("N"), t = Dim::symbol("T");
  Dim d = Dim(2) * n + Dim(1);
  CHECK(d.evaluate({{"N", 4}}) == 9);
  CHECK_FALSE(d.evaluate({{"T", 4}}).has_value());
  CHECK((n * t - Dim(3)).evaluate({{"N", 4}, {"T", 5}}) == 17);
  CHECK(Dim(-3).evaluate({}) == -3);
}

TEST_CASE("substitution re-simplifies", "[unit][symbolic]") {
  Dim n = Dim::symbol("N"), t = Dim::symbol("T"), b = Dim::symbol("B");
  Dim d = floor_div(t + Dim(1), Dim(2));
  CHECK(d.substitute({{"T", Dim(2) * n}}) == n);
  CHECK(d.substitute({{"T", Dim(9)}}) == Dim(5));
  CHECK((n * t).substitute({{"N", Dim(3)}}) == Dim(3) * t);
  CHECK(max(n, t).substitute({{"N", t + Dim(1)}}) == t + Dim(1));
  CHECK((b + n).substitute({}) == b + n);
}

TEST_CASE("symbols lists each mentioned name once, sorted", "[unit][symbolic]") {
  Dim n = Dim::symbol("N"), t = Dim::symbol("T"), b = Dim::symbol("B");
  auto names = (n * t + max(b, t) + floor_div(t, n)).symbols();
  CHECK(names == std::vector<std::string>{"B", "N", "T"});
  CHECK(Dim(4).symbols().empty());
}

TEST_CASE("canonical text round-trips through parse_dim", "[unit][symbolic][parse]") {
  const char* texts[] = {
      "T", "0", "-5", "2*N + 1", "-T + 3", "N*T", "2*T + T*T + 1", "(T + 1) // 2", "(T + 1) // 2 - 2",
      "3*(T // 2)", "-(T // 2) + 1", "max(N, T)", "min(N, T) - 1", "T // N", "(N*T) // (B + 1)",
      "max(N, T // 2)", "T // 0", "(-5) // N", "T*max(B, N)", "B*N*T + 7", "T - T // 2",
      "max(B, N) + min(B, N)", "-2*N - 3", "batch_size_2 + 1"};
  for (const char* text : texts) {
    INFO(text);
    Dim d = parse_dim(text);
    CHECK(d.to_string() == text);
    CHECK(parse_dim(d.to_string()) == d);
  }
}

TEST_CASE("parse_dim simplifies and follows Python precedence", "[unit][symbolic][parse]") {
  Dim t = Dim::symbol("T"), n = Dim::symbol("N");
  CHECK(parse_dim("T + 2 - 3") == t - Dim(1));
  CHECK(parse_dim("  T+1 ") == t + Dim(1));
  CHECK(parse_dim("(T + 2*1 - 3) // 1 + 1") == t);
  CHECK(parse_dim("2*T // 3") == floor_div(Dim(2) * t, Dim(3)));
  CHECK(parse_dim("N - T // 2") == n - floor_div(t, Dim(2)));
  CHECK(parse_dim("-T // 2").evaluate({{"T", 3}}) == -2);
  CHECK(parse_dim("max ( T , 3 )") == max(t, Dim(3)));
  CHECK(parse_dim("max + 1") == Dim::symbol("max") + Dim(1));
  CHECK(parse_dim("-9223372036854775808").value() == INT64_MIN);
  CHECK(parse_dim("9223372036854775807").value() == INT64_MAX);
  auto round = [](const Dim& d) { return parse_dim(d.to_string()) == d; };
  CHECK(round(ceil_div(t, n)));
  CHECK(round(floor_div(max(t, n) - Dim(3), Dim(4)) * n));
  CHECK(round(min(floor_div(t, Dim(3)), n - Dim(1)) + Dim(1)));
}

TEST_CASE("parse_dim errors name the text and the position", "[unit][symbolic][parse]") {
  struct Case {
    const char* text;
    const char* fragment;
  };
  const Case cases[] = {{"T +", "position 3"},          {"2 $ 3", "position 2"},
                        {"max(T", "expected ','"},     {"(T", "expected ')'"},
                        {"", "position 0"},            {"99999999999999999999", "out of range"},
                        {"T T", "unexpected 'T'"},     {"3 * )", "position 4"}};
  for (const Case& c : cases) {
    INFO(c.text);
    Error e = parse_error(c.text);
    CHECK(e.kind() == ErrorKind::Model);
    CHECK_THAT(e.detail(), Catch::Contains(std::string("'") + c.text + "'"));
    CHECK_THAT(e.detail(), Catch::Contains(c.fragment));
  }
}

TEST_CASE("symbol names must be identifiers", "[unit][symbolic]") {
  CHECK_THROWS_AS(Dim::symbol("2x"), Error);
  CHECK_THROWS_AS(Dim::symbol(""), Error);
  CHECK(Dim::symbol("_x1").to_string() == "_x1");
}

TEST_CASE("dims_to_string prints a bracketed list", "[unit][symbolic]") {
  CHECK(dims_to_string({Dim::symbol("N"), Dim(3), floor_div(Dim::symbol("T") + Dim(1), Dim(2))}) ==
        "[N, 3, (T + 1) // 2]");
  CHECK(dims_to_string({}) == "[]");
}

namespace {

// A random expression built twice: as a Dim, and as its directly computed
// value for fixed symbol values (no simplification involved).
struct RandomExpr {
  Dim dim;
  std::optional<std::int64_t> value;
};

// Floor division of plain integers, written independently of the library.
std::optional<std::int64_t> reference_floor_div(std::int64_t a, std::int64_t b) {
  if (b == 0) return std::nullopt;
  std::int64_t q = a / b;
  if (q * b != a && ((a < 0) != (b < 0))) q -= 1;
  return q;
}

// Builds a random expression of the given depth over T and N.
RandomExpr random_expr(std::mt19937& rng, int depth, std::int64_t t, std::int64_t n) {
  std::uniform_int_distribution<int> pick(0, depth > 0 ? 9 : 2);
  int kind = pick(rng);
  if (kind == 0) return {Dim::symbol("T"), t};
  if (kind == 1) return {Dim::symbol("N"), n};
  if (kind == 2) {
    std::int64_t c = std::uniform_int_distribution<std::int64_t>(-4, 6)(rng);
    return {Dim(c), c};
  }
  RandomExpr a = random_expr(rng, depth - 1, t, n);
  RandomExpr b = random_expr(rng, depth - 1, t, n);
  if (kind == 9) {  // divide by a small constant, as shape rules do
    std::int64_t c = std::uniform_int_distribution<std::int64_t>(-3, 4)(rng);
    auto v = a.value ? reference_floor_div(*a.value, c) : std::nullopt;
    return {floor_div(a.dim, Dim(c)), v};
  }
  if (kind == 8) {  // ceiling division by a small positive constant
    std::int64_t c = std::uniform_int_distribution<std::int64_t>(1, 4)(rng);
    auto v = a.value ? reference_floor_div(-*a.value, c) : std::nullopt;
    return {ceil_div(a.dim, Dim(c)), v ? std::optional<std::int64_t>(-*v) : std::nullopt};
  }
  if (!a.value || !b.value) return {a.dim + b.dim, std::nullopt};
  std::int64_t x = *a.value, y = *b.value;
  switch (kind) {
    case 3: return {a.dim + b.dim, x + y};
    case 4: return {a.dim - b.dim, x - y};
    case 5: return {a.dim * b.dim, x * y};
    case 6: return {max(a.dim, b.dim), std::max(x, y)};
    case 7: return {min(a.dim, b.dim), std::min(x, y)};
    default: return {floor_div(a.dim, b.dim), reference_floor_div(x, y)};
  }
}

}  // namespace

TEST_CASE("random expressions simplify to the same value and round-trip", "[unit][symbolic][parse]") {
  std::mt19937 rng(12345);
  int checked = 0;
  for (int i = 0; i < 3000; ++i) {
    std::int64_t t = std::uniform_int_distribution<std::int64_t>(-6, 20)(rng);
    std::int64_t n = std::uniform_int_distribution<std::int64_t>(-6, 20)(rng);
    RandomExpr e = random_expr(rng, 3, t, n);
    INFO(e.dim.to_string() << " at T=" << t << " N=" << n);
    CHECK(parse_dim(e.dim.to_string()) == e.dim);
    if (e.value) {
      CHECK(e.dim.evaluate({{"T", t}, {"N", n}}) == e.value);
      ++checked;
    }
  }
  CHECK(checked > 1000);
}

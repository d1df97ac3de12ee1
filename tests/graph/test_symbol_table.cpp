// Tests of the symbol table: equality classes, ranges, divisors, fixed values,
// contradictions, run-time binding and describe().
#include <catch2/catch.hpp>

#include "canary/error.h"
#include "graph/symbolic.h"

using canary::Error;
using canary::ErrorKind;
using namespace canary::graph;

namespace {

// Runs f and returns the canary::Error it throws (fails the test if none).
template <typename F>
Error thrown_by(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  FAIL("no canary::Error thrown");
  return Error(ErrorKind::Internal, "unreachable");
}

}  // namespace

TEST_CASE("declare is idempotent and fresh names are unused", "[unit][symbols]") {
  SymbolTable st;
  CHECK(st.declare("T") == Dim::symbol("T"));
  st.declare("T");
  st.declare("s1");
  CHECK(st.names() == std::vector<std::string>{"T", "s1"});
  CHECK(st.fresh().to_string() == "s0");
  CHECK(st.fresh().to_string() == "s2");
  CHECK(st.fresh("len").to_string() == "len3");
  CHECK(st.contains("s2"));
  CHECK_FALSE(st.contains("s3"));
}

TEST_CASE("symbol equalities are transitive", "[unit][symbols]") {
  SymbolTable st;
  Dim m = st.declare("M"), n = st.declare("N"), k = st.declare("K");
  CHECK_FALSE(st.equal(m, k));
  st.assert_equal(n, k, "first");
  st.assert_equal(m, n, "second");
  CHECK(st.equal(m, k));
  CHECK(st.representative("K") == "M");
  CHECK(st.representative("N") == "M");
  CHECK(st.canonical(m + k) == Dim(2) * m);
  CHECK(st.canonical(floor_div(k, Dim(2))) == floor_div(m, Dim(2)));
  CHECK(st.equal(n * k, m * m));
  st.assert_equal(m, k, "already known");
}

TEST_CASE("ranges and divisors intersect", "[unit][symbols]") {
  SymbolTable st;
  st.declare("T");
  st.set_range("T", 1, 4096);
  st.set_range("T", 0, 100);
  CHECK(st.constraints("T").min == 1);
  CHECK(st.constraints("T").max == 100);
  st.set_divisor("T", 4);
  st.set_divisor("T", 6);
  CHECK(st.constraints("T").divisor == 12);
  CHECK(thrown_by([&] { st.set_range("T", 200, 300); }).kind() == ErrorKind::Shape);
  CHECK(thrown_by([&] { st.set_range("T", 5, 4); }).kind() == ErrorKind::Shape);
  CHECK(thrown_by([&] { st.set_divisor("T", 0); }).kind() == ErrorKind::Shape);
  CHECK(thrown_by([&] { st.set_range("T", 1, 11); }).kind() == ErrorKind::Shape);  // no multiple of 12
  CHECK(st.constraints("T").max == 100);
}

TEST_CASE("merging classes intersects their constraints", "[unit][symbols]") {
  SymbolTable st;
  Dim a = st.declare("A"), b = st.declare("B");
  st.set_range("A", 1, 100);
  st.set_range("B", 50, 200);
  st.set_divisor("B", 5);
  st.assert_equal(b, a, "concat");
  SymbolConstraints c = st.constraints("A");
  CHECK(c.min == 50);
  CHECK(c.max == 100);
  CHECK(c.divisor == 5);
  CHECK(st.constraints("B").min == 50);
  SymbolTable disjoint;
  Dim x = disjoint.declare("X"), y = disjoint.declare("Y");
  disjoint.set_range("X", 1, 10);
  disjoint.set_range("Y", 20, 30);
  Error e = thrown_by([&] { disjoint.assert_equal(x, y, "node 'add'"); });
  CHECK(e.kind() == ErrorKind::Shape);
  CHECK_THAT(e.detail(), Catch::Contains("node 'add'"));
}

TEST_CASE("fixed values substitute and contradict", "[unit][symbols]") {
  SymbolTable st;
  Dim k = st.declare("K"), j = st.declare("J");
  st.assert_equal(k, Dim(3), "kernel");
  CHECK(st.fixed_value("K") == 3);
  CHECK(st.canonical(Dim(2) * k + Dim(1)) == Dim(7));
  st.assert_equal(Dim(3), k, "again");
  Error e = thrown_by([&] { st.assert_equal(k, Dim(4), "node 'conv1'"); });
  CHECK(e.kind() == ErrorKind::Shape);
  CHECK_THAT(e.detail(), Catch::Contains("node 'conv1'"));
  CHECK_THAT(e.detail(), Catch::Contains("K == 4"));
  CHECK_THAT(e.detail(), Catch::Contains("3"));
  st.assert_equal(j, k, "join");
  CHECK(st.fixed_value("J") == 3);
  CHECK_FALSE(st.fixed_value("Q").has_value());
}

TEST_CASE("two distinct constants are a contradiction", "[unit][symbols]") {
  SymbolTable st;
  Error e = thrown_by([&] { st.assert_equal(Dim(2), Dim(3), "node 'mm' axis 1"); });
  CHECK(e.kind() == ErrorKind::Shape);
  CHECK_THAT(e.detail(), Catch::Contains("node 'mm' axis 1"));
  CHECK_THAT(e.detail(), Catch::Contains("2 == 3"));
  st.assert_equal(Dim(5), Dim(5), "same");
}

TEST_CASE("a value outside the range or divisor contradicts", "[unit][symbols]") {
  SymbolTable st;
  Dim t = st.declare("T"), d = st.declare("D");
  st.set_range("T", 1, 10);
  st.set_divisor("D", 4);
  Error range = thrown_by([&] { st.assert_equal(t, Dim(20), "input 'x'"); });
  CHECK(range.kind() == ErrorKind::Shape);
  CHECK_THAT(range.detail(), Catch::Contains("input 'x'"));
  CHECK_THAT(range.detail(), Catch::Contains("T == 20"));
  CHECK_THAT(range.detail(), Catch::Contains("[1, 10]"));
  Error div = thrown_by([&] { st.assert_equal(d, Dim(6), "input 'y'"); });
  CHECK_THAT(div.detail(), Catch::Contains("multiple of 4"));
  st.assert_equal(d, Dim(8), "input 'y'");
  CHECK(st.fixed_value("D") == 8);
  SymbolTable two;
  Dim a = two.declare("A"), b = two.declare("B");
  two.assert_equal(a, Dim(1), "a");
  two.assert_equal(b, Dim(2), "b");
  CHECK(thrown_by([&] { two.assert_equal(a, b, "a == b"); }).kind() == ErrorKind::Shape);
}

TEST_CASE("linear equalities solve for one symbol", "[unit][symbols]") {
  SymbolTable st;
  Dim n = st.declare("N"), t = st.declare("T");
  st.assert_equal(Dim(2) * n, Dim(8), "reshape");
  CHECK(st.fixed_value("N") == 4);
  CHECK(thrown_by([&] { st.assert_equal(Dim(2) * t, Dim(7), "odd"); }).kind() == ErrorKind::Shape);
  CHECK(thrown_by([&] { st.assert_equal(t + Dim(1), t, "off by one"); }).kind() == ErrorKind::Shape);
  // Not decidable: nothing is recorded.
  Dim m = st.declare("M");
  st.assert_equal(floor_div(t, Dim(2)), m, "unknown");
  CHECK(st.representative("M") == "M");
  CHECK_FALSE(st.fixed_value("T").has_value());
}

TEST_CASE("bind checks range, divisor, fixed value and the class", "[unit][symbols]") {
  SymbolTable st;
  Dim n = st.declare("N"), m = st.declare("M"), k = st.declare("K");
  st.declare("T");
  st.set_range("T", 1, 4096);
  st.set_divisor("T", 4);
  st.assert_equal(k, Dim(3), "k");
  st.assert_equal(m, n, "m");
  Bindings b;
  st.bind(b, "T", 8);
  CHECK(b.at("T") == 8);
  Error range = thrown_by([&] { st.bind(b, "T", 5000); });
  CHECK(range.kind() == ErrorKind::Shape);
  CHECK_THAT(range.detail(), Catch::Contains("'T'"));
  CHECK_THAT(range.detail(), Catch::Contains("5000"));
  CHECK_THAT(thrown_by([&] { st.bind(b, "T", 6); }).detail(), Catch::Contains("multiple of 4"));
  CHECK_THAT(thrown_by([&] { st.bind(b, "K", 4); }).detail(), Catch::Contains("K == 3"));
  st.bind(b, "K", 3);
  st.bind(b, "N", 4);
  CHECK(b.at("M") == 4);  // the whole class is bound
  Error cls = thrown_by([&] { st.bind(b, "M", 5); });
  CHECK(cls.kind() == ErrorKind::Shape);
  CHECK_THAT(cls.detail(), Catch::Contains("'M' = 5"));
  CHECK_THAT(cls.detail(), Catch::Contains("N = 4"));
  st.bind(b, "M", 4);
  CHECK_THAT(thrown_by([&] { st.bind(b, "T", 12); }).detail(), Catch::Contains("already bound to 8"));
  CHECK((m * k).evaluate(b) == 12);
}

TEST_CASE("describe lists one constraint per line", "[unit][symbols]") {
  SymbolTable st;
  Dim t = st.declare("T"), n = st.declare("N"), m = st.declare("M"), k = st.declare("K");
  st.declare("X");
  st.declare("Y");
  st.declare("Free");
  st.set_range("T", 1, 4096);
  st.set_divisor("T", 4);
  st.assert_equal(m, n, "m");
  st.assert_equal(k, Dim(3), "k");
  st.set_divisor("X", 8);
  st.set_range("Y", 2, INT64_MAX);
  CHECK(st.describe() == std::vector<std::string>{"T in [1, 4096] % 4", "M == N", "K == 3", "X % 8",
                                                   "Y in [2, 9223372036854775807]"});
  CHECK(SymbolTable().describe().empty());
}

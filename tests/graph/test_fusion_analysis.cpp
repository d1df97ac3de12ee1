// The fusion analysis: which sets of operations may sink to their last member.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "graph/fusion_analysis.h"

using canary::graph::SequenceDependences;

namespace {

bool sinks(const SequenceDependences& d, std::vector<std::size_t> members) { return d.can_sink_to_last(members); }

}  // namespace

TEST_CASE("fusion analysis: members sink past operations that do not need them", "[unit][graph][fusion]") {
  // 0: s = sigmoid(g)   1: v = gemm(x)   2: t = tanh(v)   3: o = s * t
  SequenceDependences d(4);
  d.add(1, 2);
  d.add(0, 3);
  d.add(2, 3);
  CHECK(sinks(d, {0, 2, 3}));  // the gemm needs none of them
  CHECK(sinks(d, {0, 3}));     // 1 and 2 stay in place: neither needs 0
  CHECK(sinks(d, {3}));        // a single member never moves
  CHECK(sinks(d, {2, 3}));
}

TEST_CASE("fusion analysis: a member an operation in between needs cannot sink past it", "[unit][graph][fusion]") {
  // 0: a = tanh(x)   1: m = matmul(a, w)   2: b = a * m
  SequenceDependences d(3);
  d.add(0, 1);
  d.add(0, 2);
  d.add(1, 2);
  CHECK_FALSE(sinks(d, {0, 2}));  // contracting {0, 2} would make a cycle through 1
  CHECK(sinks(d, {0, 1, 2}));     // with 1 a member nothing is overtaken
}

TEST_CASE("fusion analysis: dependences through other operations count, those after the last member do not",
          "[unit][graph][fusion]") {
  // 0 -> 1 -> 2 in between, 3 the last member; 4 after it needs 0.
  SequenceDependences d(5);
  d.add(0, 1);
  d.add(1, 2);
  d.add(0, 4);
  CHECK_FALSE(sinks(d, {0, 2, 3}));  // 1 needs 0 and is not a member
  CHECK(sinks(d, {0, 1, 2, 3}));
  CHECK(sinks(d, {1, 3}) == false);  // 2 needs 1
  CHECK(sinks(d, {2, 3}));           // 2's dependences come from before it
  SequenceDependences e(5);
  e.add(0, 4);
  CHECK(sinks(e, {0, 3}));  // 4 runs after the unit anyway
}

TEST_CASE("fusion analysis: rejects dependences against the sequence and unsorted members", "[unit][graph][fusion]") {
  SequenceDependences d(3);
  CHECK_THROWS_AS(d.add(2, 1), std::invalid_argument);
  CHECK_THROWS_AS(d.add(1, 1), std::invalid_argument);
  CHECK_THROWS_AS(d.add(0, 3), std::invalid_argument);
  CHECK_THROWS_AS(sinks(d, {2, 1}), std::invalid_argument);
  CHECK_THROWS_AS(sinks(d, {}), std::invalid_argument);
  CHECK_THROWS_AS(sinks(d, {0, 5}), std::invalid_argument);
}

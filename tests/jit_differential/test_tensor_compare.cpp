// The harness's element comparisons: classes, tolerances, the reference's
// skipped elements, and the mask of elements that depend on a clamped infinity.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "tests/jit_differential/tensor_compare.h"

using canary::Tensor;
using namespace canary::differential;

namespace {

Tensor row(const std::vector<double>& v) { return Tensor::from_vector<double>(v, {static_cast<std::int64_t>(v.size())}); }

}  // namespace

TEST_CASE("tensor compare: saturated_elements marks exactly the elements where the twin differs",
          "[differential][compare]") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Tensor ref = row({1.0, 2.0, nan, 0.0, 3.4e37, -1.0});
  Tensor twin = row({1.0, 2.5, nan, -0.0, inf, nan});
  SkipMask mask = saturated_elements(ref, twin);
  CHECK(mask == SkipMask{false, true, false, true, true, true});  // -0.0 differs in its bits: skipped too
  CHECK(saturated_elements(ref, row({1.0})).empty());            // shapes differ: nothing masked
}

TEST_CASE("tensor compare: masked elements are skipped by both comparisons and nothing else is",
          "[differential][compare]") {
  Tensor want = row({1.0, 2.0, 3.0});
  Tensor got = row({1.0, 7.0, std::numeric_limits<double>::infinity()});
  SkipMask both{false, true, true}, one{false, true, false};
  CompareResult a = compare_tensors(got, want, Tolerance{1e-6, 0}, &both);
  CHECK(a.difference.empty());
  CHECK(a.skipped == 2);
  CHECK(a.compared == 1);
  CHECK_FALSE(compare_tensors(got, want, Tolerance{1e-6, 0}, &one).difference.empty());  // the Inf is still seen
  CHECK_FALSE(compare_tensors(got, want, Tolerance{1e-6, 0}).difference.empty());
  CompareResult r = compare_to_reference(got, want, Tolerance{1e-6, 0}, 1e30, &both);
  CHECK(r.difference.empty());
  CHECK(r.skipped == 2);
  CHECK(compare_to_reference(got, want, Tolerance{1e-6, 0}, 1e30, &one).difference.find("element 2") !=
        std::string::npos);
}

// Public API: building, loading, running, reference sessions and typed errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "canary/canary.h"

using canary::DType;
using canary::Error;
using canary::ErrorKind;
using canary::Tensor;

namespace {

// y = relu(x @ w + b) with x [N, 2].
canary::Model small_mlp(const canary::Runtime& rt) {
  canary::ModelBuilder b("mlp");
  b.input("x", DType::F32, {"N", 2})
      .constant("w", Tensor::from_vector<float>({1, -1, 2, 0.5f}, {2, 2}))
      .constant("b", Tensor::from_vector<float>({0.5f, -4}, {2}))
      .node("MatMul", {"x", "w"}, {"xw"}, {}, "matmul")
      .node("Add", {"xw", "b"}, {"z"})
      .node("Relu", {"z"}, {"y"})
      .output("y");
  return rt.build(b);
}

// Runs and returns the kind of the canary::Error thrown, with its message.
std::pair<ErrorKind, std::string> error_of(canary::Session& s, const canary::NamedTensors& in) {
  try {
    s.run(in);
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  FAIL("expected a canary::Error");
  return {ErrorKind::Internal, ""};
}

}  // namespace

TEST_CASE("api: a built MLP computes relu(x w + b)", "[unit][api]") {
  canary::Runtime rt;
  auto model = small_mlp(rt);
  REQUIRE(model.inputs().size() == 1);
  CHECK(model.inputs()[0].to_string() == "x: f32[N, 2]");
  CHECK(model.outputs()[0].to_string() == "y: f32[N, 2]");
  auto s = model.session();
  // x = [[1, 2], [3, -1]]: xw = [[5, 0], [1, -3.5]]; + b = [[5.5, -4], [1.5, -7.5]]; relu.
  auto out = s.run({{"x", Tensor::from_vector<float>({1, 2, 3, -1}, {2, 2})}});
  const Tensor& y = out.at("y");
  REQUIRE(y.shape() == canary::Shape{2, 2});
  CHECK(y.data<float>()[0] == 5.5f);
  CHECK(y.data<float>()[1] == 0.0f);
  CHECK(y.data<float>()[2] == 1.5f);
  CHECK(y.data<float>()[3] == 0.0f);
  CHECK(s.stats().calls == 1);
  CHECK(s.stats().instructions_executed >= 3);
}

TEST_CASE("api: the batch dim may change between calls and stats record each shape", "[unit][api]") {
  canary::Runtime rt;
  auto s = small_mlp(rt).session();
  for (std::int64_t n : {1, 4, 1, 7}) {
    auto out = s.run({{"x", Tensor::empty(DType::F32, {n, 2})}});
    CHECK(out.at("y").shape() == canary::Shape{n, 2});
  }
  const auto& shapes = s.stats().input_shapes.at(0);
  CHECK(shapes.input == "x");
  REQUIRE(shapes.shapes.size() == 3);
  CHECK(shapes.shapes[0].count == 2);
}

TEST_CASE("api: outputs of one call are not overwritten by the next", "[unit][api]") {
  canary::Runtime rt;
  auto s = small_mlp(rt).session();
  auto first = s.run({{"x", Tensor::from_vector<float>({1, 2}, {1, 2})}});
  auto second = s.run({{"x", Tensor::from_vector<float>({10, 20}, {1, 2})}});
  CHECK(first.at("y").data<float>()[0] == 5.5f);   // 1 + 4 + 0.5
  CHECK(second.at("y").data<float>()[0] == 50.5f);  // 10 + 40 + 0.5
  CHECK_FALSE(first.at("y").shares_storage_with(second.at("y")));
}

TEST_CASE("api: the reference session runs in f64 and agrees with f32", "[unit][api][differential]") {
  canary::Runtime rt;
  auto model = small_mlp(rt);
  auto fast = model.session();
  auto ref = model.reference_session();
  canary::NamedTensors in{{"x", Tensor::from_vector<float>({0.1f, 0.2f, 0.3f, 0.7f}, {2, 2})}};
  auto a = fast.run(in).at("y");
  auto b = ref.run(in).at("y");
  REQUIRE(b.dtype() == DType::F64);
  for (std::int64_t i = 0; i < a.numel(); ++i) CHECK(std::abs(a.element_as_double(i) - b.element_as_double(i)) < 1e-6);
}

TEST_CASE("api: bad calls give typed errors and the session keeps serving", "[unit][api][errors]") {
  canary::Runtime rt;
  auto s = small_mlp(rt).session();
  auto [k1, m1] = error_of(s, {});
  CHECK(k1 == ErrorKind::Input);
  CHECK(m1.find("missing input 'x: f32[N, 2]'") != std::string::npos);

  auto [k2, m2] = error_of(s, {{"x", Tensor::empty(DType::F32, {2, 2})}, {"bogus", Tensor::empty(DType::F32, {1})}});
  CHECK(k2 == ErrorKind::Input);
  CHECK(m2.find("bogus") != std::string::npos);

  auto [k3, m3] = error_of(s, {{"x", Tensor::empty(DType::F64, {2, 2})}});
  CHECK(k3 == ErrorKind::Input);
  CHECK(m3.find("x") != std::string::npos);

  auto [k4, m4] = error_of(s, {{"x", Tensor::empty(DType::F32, {2, 3})}});
  CHECK((k4 == ErrorKind::Input || k4 == ErrorKind::Shape));
  CHECK(m4.find("[2, 3]") != std::string::npos);

  auto [k5, m5] = error_of(s, {{"x", Tensor::empty(DType::F32, {2})}});
  CHECK((k5 == ErrorKind::Input || k5 == ErrorKind::Shape));
  CHECK(m5.find("rank") != std::string::npos);

  CHECK(s.stats().failed_calls == 5);
  auto ok = s.run({{"x", Tensor::from_vector<float>({1, 2}, {1, 2})}});
  CHECK(ok.at("y").data<float>()[0] == 5.5f);
}

TEST_CASE("api: non-finite inputs are rejected only when asked", "[unit][api][errors]") {
  canary::Options strict;
  strict.reject_non_finite_inputs = true;
  canary::Runtime lax_rt, strict_rt(strict);
  Tensor x = Tensor::from_vector<float>({1, NAN}, {1, 2});
  auto lax = small_mlp(lax_rt).session();
  CHECK(std::isnan(lax.run({{"x", x}}).at("y").data<float>()[0]));
  auto s = small_mlp(strict_rt).session();
  auto [kind, msg] = error_of(s, {{"x", x}});
  CHECK(kind == ErrorKind::Input);
  CHECK(msg.find("flat index 1") != std::string::npos);
}

TEST_CASE("api: building an unknown op or an undefined value is a model error", "[unit][api][errors]") {
  canary::Runtime rt;
  canary::ModelBuilder unknown;
  unknown.input("x", DType::F32, {4}).node("Frobnicate", {"x"}, {"y"}, {}, "f1").output("y");
  try {
    rt.build(unknown);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Model);
    CHECK(std::string(e.what()).find("Frobnicate") != std::string::npos);
  }
  canary::ModelBuilder undefined;
  undefined.input("x", DType::F32, {4}).node("Add", {"x", "nope"}, {"y"}).output("y");
  CHECK_THROWS_AS(rt.build(undefined), Error);
}

TEST_CASE("api: tensors check dtype access and element counts", "[unit][api]") {
  Tensor t = Tensor::from_vector<std::int64_t>({1, 2, 3}, {3});
  CHECK(t.type_string() == "i64[3]");
  CHECK_THROWS_AS(t.data<float>(), Error);
  CHECK_THROWS_AS(Tensor::from_vector<float>({1, 2}, {3}), Error);
  try {
    Tensor::empty(DType::F32, {std::int64_t{1} << 40, std::int64_t{1} << 40});
    FAIL("expected overflow");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Resource);
  }
  // 2^40 elements = 4 TiB: a resource error, not a crash.
  try {
    Tensor::empty(DType::F32, {std::int64_t{1} << 40});
    FAIL("expected allocation failure");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Resource);
  }
}

TEST_CASE("api: a model round-trips through its text form", "[unit][api]") {
  canary::Runtime rt;
  auto model = small_mlp(rt);
  auto again = rt.load_text(model.to_text());
  CHECK(again.to_text() == model.to_text());
  auto out = again.session().run({{"x", Tensor::from_vector<float>({1, 2}, {1, 2})}});
  CHECK(out.at("y").data<float>()[0] == 5.5f);
}

// Models and calls that once broke the runtime: each must give correct outputs
// or a typed error, never a crash or silent garbage.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "canary/canary.h"

using canary::DType;
using canary::Error;
using canary::ErrorKind;
using canary::Tensor;

namespace {

// The kind and message of the canary::Error f throws.
template <typename F>
std::pair<ErrorKind, std::string> error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  FAIL("expected a canary::Error");
  return {ErrorKind::Internal, ""};
}

}  // namespace

TEST_CASE("hostile: one value listed twice as a graph output gives two independent copies", "[unit][api][errors]") {
  canary::Runtime rt;
  auto s = rt.load_text("canary v1\ngraph main(x: f32[2]) -> (y, y) {\n  y = Relu(x)\n}\n").session();
  for (int call = 0; call < 2; ++call) {
    auto out = s.run({{"x", Tensor::from_vector<float>({-1, 3}, {2})}});
    // NamedTensors holds one entry per name; the run itself must not crash.
    REQUIRE(out.size() == 1);
    CHECK(out.at("y").data<float>()[0] == 0.0f);
    CHECK(out.at("y").data<float>()[1] == 3.0f);
  }
}

TEST_CASE("hostile: a graph output that is an input is copied, never the caller's buffer", "[unit][api]") {
  canary::Runtime rt;
  auto s = rt.load_text("canary v1\ngraph main(x: f32[2]) -> (x) {\n}\n").session();
  float data[2] = {1, 2};
  Tensor x = Tensor::wrap(data, DType::F32, std::vector<std::int64_t>{2});
  auto out = s.run({{"x", x}});
  CHECK_FALSE(out.at("x").shares_storage_with(x));
  data[0] = 9;
  CHECK(out.at("x").data<float>()[0] == 1.0f);
}

TEST_CASE("hostile: a Loop that swaps its carried values stays right across calls", "[unit][api][vm]") {
  canary::Runtime rt;
  auto model = rt.load_text(R"(canary v1
graph main(n: i64[], a0: f32[1], b0: f32[1]) -> (a, b) {
  const go: bool[] = [true]
  a: f32[1], b: f32[1] = Loop(n, go, a0, b0) {
    body = graph swap(i: i64[], c: bool[], a: f32[1], b: f32[1]) -> (c, b, a) {
    }
  }
}
)");
  auto s = model.session();
  for (std::int64_t n : {3, 4, 3, 0}) {
    auto out = s.run({{"n", Tensor::scalar<std::int64_t>(n)},
                      {"a0", Tensor::from_vector<float>({1}, {1})},
                      {"b0", Tensor::from_vector<float>({2}, {1})}});
    const bool swapped = n % 2 == 1;
    INFO("n = " << n);
    CHECK(out.at("a").data<float>()[0] == (swapped ? 2.0f : 1.0f));
    CHECK(out.at("b").data<float>()[0] == (swapped ? 1.0f : 2.0f));
  }
}

TEST_CASE("hostile: an output above max_tensor_bytes is refused before it is allocated", "[unit][api][errors]") {
  canary::Options options;
  options.max_tensor_bytes = 1 << 20;
  canary::Runtime rt(options);
  auto s = rt.load_text(R"(canary v1
graph main(a: f32[M, 1], b: f32[1, N]) -> (y) {
  y = Gemm(a, b) "outer"
}
)")
               .session();
  // 4000 x 4000 f32 = 64 MB > 1 MB.
  auto [kind, msg] = error_of([&] {
    s.run({{"a", Tensor::empty(DType::F32, {4000, 1})}, {"b", Tensor::empty(DType::F32, {1, 4000})}});
  });
  CHECK(kind == ErrorKind::Resource);
  CHECK(msg.find("outer") != std::string::npos);
  CHECK(msg.find("[4000, 4000]") != std::string::npos);
  // A small call still works afterwards.
  auto out = s.run({{"a", Tensor::from_vector<float>({2}, {1, 1})}, {"b", Tensor::from_vector<float>({3}, {1, 1})}});
  CHECK(out.at("y").data<float>()[0] == 6.0f);
}

TEST_CASE("hostile: huge conv dilations are typed errors naming the node, not overflow", "[unit][api][errors]") {
  canary::Runtime rt;
  auto [kind, msg] = error_of([&] {
    rt.load_text(R"(canary v1
graph main(x: f32[1, 1, T], w: f32[1, 1, 3]) -> (y) {
  y = Conv(x, w) {dilations = [4611686018427387904], pads = [0, 0]} "dilated"
}
)");
  });
  CHECK((kind == ErrorKind::Shape || kind == ErrorKind::Resource));
  CHECK(msg.find("dilated") != std::string::npos);
}

TEST_CASE("hostile: Concat of empty inputs whose lengths sum beyond int64 is a resource error naming the node",
          "[unit][api][errors]") {
  canary::Runtime rt;
  auto s = rt.load_text(R"(canary v1
graph main(a: f32[0, N], b: f32[0, M]) -> (y) {
  y = Concat(a, b) {axis = 1} "joined"
}
)")
               .session();
  auto [kind, msg] = error_of([&] {
    s.run({{"a", Tensor::empty(DType::F32, {0, INT64_MAX})}, {"b", Tensor::empty(DType::F32, {0, 1})}});
  });
  CHECK(kind == ErrorKind::Resource);
  CHECK(msg.find("joined") != std::string::npos);
  CHECK(msg.find("overflows int64") != std::string::npos);
  // Lengths that fit still concatenate.
  auto out = s.run({{"a", Tensor::empty(DType::F32, {0, INT64_MAX - 1})}, {"b", Tensor::empty(DType::F32, {0, 1})}});
  CHECK(out.at("y").dim(1) == INT64_MAX);
}

TEST_CASE("hostile: a rank above 64 is refused when the model loads", "[unit][api][errors]") {
  canary::Runtime rt;
  std::string axes;
  for (int i = 0; i < 65; ++i) axes += (i ? ", " : "") + std::to_string(i);
  const std::string text = "canary v1\ngraph main(x: f32[]) -> (y) {\n  const axes: i64[65] = [" + axes +
                           "]\n  y = Unsqueeze(x, axes) \"wide\"\n}\n";
  auto [kind, msg] = error_of([&] { rt.load_text(text); });
  CHECK(kind == ErrorKind::Shape);
  CHECK(msg.find("wide") != std::string::npos);
}

TEST_CASE("hostile: an absent required output of a variadic op is a model error", "[unit][api][errors]") {
  canary::Runtime rt;
  auto [kind, msg] = error_of([&] {
    rt.load_text("canary v1\ngraph main(x: f32[6]) -> (a) {\n  a, _, c = Split(x) {axis = 0} \"split3\"\n}\n");
  });
  CHECK(kind == ErrorKind::Model);
  CHECK(msg.find("split3") != std::string::npos);
  CHECK(msg.find("required output 1 is absent") != std::string::npos);
}

TEST_CASE("hostile: Max and Min of a single input return that input", "[unit][api]") {
  canary::Runtime rt;
  auto s = rt.load_text("canary v1\ngraph main(x: f32[3]) -> (hi, lo) {\n  hi = Max(x)\n  lo = Min(x)\n}\n").session();
  auto out = s.run({{"x", Tensor::from_vector<float>({1, -2, 3}, {3})}});
  CHECK(out.at("hi").data<float>()[1] == -2.0f);
  CHECK(out.at("lo").data<float>()[2] == 3.0f);
}

TEST_CASE("hostile: an empty tensor whose other dims multiply past int64 cannot be made", "[unit][api][errors]") {
  // Kernels derive strides and row sizes from the dims of empty tensors too,
  // so the non-zero dims must fit int64 even when the element count is 0.
  const std::int64_t big = std::int64_t{1} << 40;
  for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{0, big, big},
                                                 std::vector<std::int64_t>{big, 0, big}}) {
    auto [kind, msg] = error_of([&] { Tensor::empty(DType::F32, shape); });
    CHECK(kind == ErrorKind::Resource);
    CHECK(msg.find("multiply past int64") != std::string::npos);
    auto [wrap_kind, wrap_msg] = error_of([&] { Tensor::wrap(nullptr, DType::F32, shape); });
    CHECK(wrap_kind == ErrorKind::Resource);
  }
  // Empty tensors whose other dims fit are still fine.
  CHECK(Tensor::empty(DType::F32, {0, big, 1 << 20}).numel() == 0);
}

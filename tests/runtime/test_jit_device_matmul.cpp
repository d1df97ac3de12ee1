// MatMul and Gemm of compiled traces on a device (FusedDevice::run_matmul)
// through the public API, with HostFusedDevice standing in for the GPU: the
// products it covers run there, within float rounding of the interpreter;
// operands the device call does not cover (broadcast batch dims, a Gemm C
// that is not a bias row) run the CPU kernel for that call; a failure hands
// the product back to the CPU with one Fallback event; a device without
// products says so in the listing.
#include <catch2/catch.hpp>

#include <memory>

#include "device_test_support.h"
#include "host_fused_device.h"

using canary::EventKind;
using canary::NamedTensors;
using canary::Runtime;
using canary::Session;
using canary::Tensor;
using namespace canary::test;

namespace {

// Gemm with B transposed, alpha 0.5 and C added once: a bias row [4], or
// a full [N, 4] matrix, which the device call does not cover.
const char* kGemm = R"(canary v1
graph main(x: f32[N, 6], w: f32[4, 6], c: f32[C, 4]) -> (y) {
  g = Gemm(x, w, c) {alpha = 0.5, beta = 1.0, transB = 1}
  y = Relu(g)
}
)";

// Batched products: x [B, T, 8] times a 2-D w (rows folded) and times a
// batched v of x's batch dims, or of dims that broadcast against them.
const char* kBatched = R"(canary v1
graph main(x: f32[B, T, 8], w: f32[8, 5], v: f32[V, 5, 3]) -> (y) {
  h = MatMul(x, w)
  r = Relu(h)
  y = MatMul(r, v)
}
)";

std::shared_ptr<HostFusedDevice> product_device(int fail_from_run = -1) {
  HostFusedDevice::Script script;
  script.matmuls = true;
  script.fail_from_run = fail_from_run;
  return std::make_shared<HostFusedDevice>(script);
}

}  // namespace

TEST_CASE("jit device matmul: a trace's MatMul runs on the device, within float rounding of the interpreter",
          "[unit][jit][api][device]") {
  auto device = product_device();
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu")), ref_rt(interpreter_options());
  const canary::Model model = rt.load_text(kTwoGroups);
  Session s = model.session(), ref = ref_rt.load_text(kTwoGroups).session();
  for (std::uint32_t call = 0; call < 6; ++call) {
    const NamedTensors in = two_group_inputs(16 + call, call);
    check_same_values(s.run(in).at("y"), ref.run(in).at("y"), 1e-5);
  }
  const canary::JitStats& jit = s.stats().jit;
  REQUIRE(jit.compiled_entries >= 1);
  CHECK(device->matmul_runs() == static_cast<int>(jit.compiled_entries));
  // Two groups and the product per compiled call, each one device call.
  CHECK(jit.device_fused_calls == 3 * jit.compiled_entries);
  CHECK(jit.device_fallbacks == 0);
  const std::string listing = listings(model);
  INFO(listing);
  CHECK((listing.find("(MatMul) (on host:0 test device, the CPU kernel if it fails)") != std::string::npos ||
         listing.find(": the product on host:0 test device (the CPU kernel if it fails)") != std::string::npos));
}

TEST_CASE("jit device matmul: Gemm with a bias row runs on the device; a full C runs the CPU kernel",
          "[unit][jit][api][device]") {
  auto device = product_device();
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu")), ref_rt(interpreter_options()), cpu_rt(device_options("cpu"));
  const canary::Model model = rt.load_text(kGemm);
  Session s = model.session(), ref = ref_rt.load_text(kGemm).session(), cpu = cpu_rt.load_text(kGemm).session();
  const Tensor w = random_tensor({4, 6}, 7);
  for (std::uint32_t call = 0; call < 5; ++call) {
    const NamedTensors in{{"x", random_tensor({9, 6}, call)}, {"w", w}, {"c", random_tensor({1, 4}, 20 + call)}};
    check_same_values(s.run(in).at("y"), ref.run(in).at("y"), 1e-5);
  }
  REQUIRE(s.stats().jit.compiled_entries >= 1);
  const int runs = device->matmul_runs();
  CHECK(runs == static_cast<int>(s.stats().jit.compiled_entries));
  // C [9, 4]: the trace retraces for C's new dim, and the device call does
  // not cover a full C: the CPU kernel runs those products, bit for bit.
  const auto entries = s.stats().jit.compiled_entries;
  for (std::uint32_t call = 0; call < 5; ++call) {
    const NamedTensors in{{"x", random_tensor({9, 6}, 40 + call)}, {"w", w}, {"c", random_tensor({9, 4}, 50 + call)}};
    CHECK(bit_identical(s.run(in).at("y"), cpu.run(in).at("y")));
  }
  CHECK(s.stats().jit.compiled_entries > entries);  // compiled code ran them
  CHECK(device->matmul_runs() == runs);
  CHECK(s.stats().jit.device_fallbacks == 0);
}

TEST_CASE("jit device matmul: batched products fold or batch; broadcasting batch dims stay on the CPU",
          "[unit][jit][api][device]") {
  auto device = product_device();
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu")), ref_rt(interpreter_options());
  const canary::Model model = rt.load_text(kBatched);
  Session s = model.session(), ref = ref_rt.load_text(kBatched).session();
  const Tensor w = random_tensor({8, 5}, 3);
  for (std::uint32_t call = 0; call < 5; ++call) {
    const NamedTensors in{{"x", random_tensor({2, 7, 8}, call)}, {"w", w}, {"v", random_tensor({2, 5, 3}, 9 + call)}};
    check_same_values(s.run(in).at("y"), ref.run(in).at("y"), 1e-5);
  }
  const auto entries = s.stats().jit.compiled_entries;
  REQUIRE(entries >= 1);
  CHECK(device->matmul_runs() == static_cast<int>(2 * entries));  // both products on every compiled call
  // v [1, 5, 3] broadcasts over x's batch: the second product runs on the
  // CPU, the first still on the device.
  const int before = device->matmul_runs();
  for (std::uint32_t call = 0; call < 5; ++call) {
    const NamedTensors in{{"x", random_tensor({2, 7, 8}, 30 + call)}, {"w", w}, {"v", random_tensor({1, 5, 3}, 60)}};
    check_same_values(s.run(in).at("y"), ref.run(in).at("y"), 1e-5);
  }
  const auto broadcast_entries = s.stats().jit.compiled_entries - entries;
  CHECK(broadcast_entries >= 1);
  CHECK(device->matmul_runs() == before + static_cast<int>(broadcast_entries));
}

TEST_CASE("jit device matmul: a failed product finishes on the CPU kernel and the trace stays on the CPU",
          "[unit][jit][api][device]") {
  auto device = product_device(2);  // the first compiled call's product (run 1 is its first group)
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu")), cpu_rt(device_options("cpu"));
  const canary::Model model = rt.load_text(kTwoGroups);
  Session s = model.session(), cpu = cpu_rt.load_text(kTwoGroups).session();
  for (std::uint32_t call = 0; call < 6; ++call) {
    const NamedTensors in = two_group_inputs(32, call);
    const bool failed_before = device->runs() >= 2;
    const Tensor got = s.run(in).at("y"), want = cpu.run(in).at("y");
    if (failed_before) CHECK(bit_identical(got, want));  // after the failing call, the CPU's kernels
  }
  REQUIRE(s.stats().jit.compiled_entries >= 2);
  CHECK(device->runs() == 2);  // never asked again after the failure
  CHECK(device->matmul_runs() == 0);
  CHECK(s.stats().jit.device_fallbacks == 1);
  CHECK(count_events(model, EventKind::Fallback, "a step failed on host:0 test device (cuLaunchKernel failed") == 1);
  CHECK(s.stats().failed_calls == 0);
}

TEST_CASE("jit device matmul: a device without products leaves them on the CPU and says why",
          "[unit][jit][api][device]") {
  auto device = std::make_shared<HostFusedDevice>();  // the default script: no products
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu"));
  const canary::Model model = rt.load_text(kTwoGroups);
  Session s = model.session();
  for (std::uint32_t call = 0; call < 4; ++call) s.run(two_group_inputs(16, call));
  REQUIRE(s.stats().jit.compiled_entries >= 1);
  CHECK(device->matmul_runs() == 0);
  const std::string listing = listings(model);
  INFO(listing);
  CHECK(listing.find("on the CPU: this device runs no matrix products)") != std::string::npos);
}

TEST_CASE("jit device matmul: a product the device declines runs the CPU kernel, and the next one the device",
          "[unit][jit][api][device]") {
  HostFusedDevice::Script script;
  script.matmuls = true;
  script.decline_above = 40 * 8;  // elements of one call's groups and product at 40 rows
  auto device = std::make_shared<HostFusedDevice>(script);
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu")), ref_rt(interpreter_options());
  const canary::Model model = rt.load_text(kTwoGroups);
  Session s = model.session(), ref = ref_rt.load_text(kTwoGroups).session();
  const std::int64_t rows[] = {16, 24, 16, 24, 200, 24, 300, 16};  // dim 0 turns symbolic after the first two
  int products_before_big = 0;
  for (std::int64_t r : rows) {
    const NamedTensors in = two_group_inputs(r, static_cast<std::uint32_t>(r));
    if (r > 40) products_before_big = device->matmul_runs();
    check_same_values(s.run(in).at("y"), ref.run(in).at("y"), 1e-5);
    if (r > 40) CHECK(device->matmul_runs() == products_before_big);  // declined: the CPU kernel ran it
  }
  CHECK(device->declines() >= 3);  // a big compiled call: two groups and the product
  CHECK(device->matmul_runs() > products_before_big);  // small calls after the big ones went back to the device
  CHECK(s.stats().jit.device_fallbacks == 0);
}

TEST_CASE("jit device matmul: an output register reused from an operand is written after the device read it",
          "[unit][jit][api][device]") {
  // a dies at the product, so the register allocator may give m a's
  // register; either way the product must read a before m is sized.
  const char* text = R"(canary v1
graph main(x: f32[N, 6], w: f32[6, 6]) -> (y) {
  a = Tanh(x)
  m = MatMul(a, w)
  y = Sigmoid(m)
}
)";
  auto device = product_device();
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu")), ref_rt(interpreter_options());
  const canary::Model model = rt.load_text(text);
  Session s = model.session(), ref = ref_rt.load_text(text).session();
  const Tensor w = random_tensor({6, 6}, 5, -0.5f, 0.5f);
  for (std::uint32_t call = 0; call < 5; ++call) {
    const NamedTensors in{{"x", random_tensor({12, 6}, call)}, {"w", w}};
    check_same_values(s.run(in).at("y"), ref.run(in).at("y"), 1e-5);
  }
  REQUIRE(s.stats().jit.compiled_entries >= 1);
  CHECK(device->matmul_runs() == static_cast<int>(s.stats().jit.compiled_entries));
}

// Fused groups on a device (JitOptions::device) through the public API,
// with HostFusedDevice standing in for the GPU: groups the device runs are
// placed there and the rest stay on the CPU with the reason in the listing;
// a run that fails finishes on the x86 kernels with their bits and keeps
// the trace on the CPU, with one Fallback event; value canaries come back
// from the device; and without any usable GPU the option says why and
// changes nothing.
#include <catch2/catch.hpp>

#include <limits>
#include <memory>

#include "device_test_support.h"
#include "host_fused_device.h"

using canary::Error;
using canary::ErrorKind;
using canary::EventKind;
using canary::NamedTensors;
using canary::Options;
using canary::Runtime;
using canary::Session;
using canary::Tensor;
using namespace canary::test;

namespace {

// The groups of the model's variants that run on a device.
std::size_t groups_on(const canary::Model& m, const std::string& device) {
  std::size_t n = 0;
  for (const auto& a : m.jit_report().anchors)
    for (const auto& v : a.variants)
      for (const auto& g : v.groups) n += g.device == device ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("jit device: fused groups run on the device, within float rounding of the interpreter",
          "[unit][jit][api][device]") {
  auto device = std::make_shared<HostFusedDevice>();
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu")), ref_rt(interpreter_options());
  const canary::Model model = rt.load_text(kTwoGroups);
  Session s = model.session(), ref = ref_rt.load_text(kTwoGroups).session();
  for (std::uint32_t call = 0; call < 6; ++call) {
    const NamedTensors in = two_group_inputs(16 + call, call);
    check_same_values(s.run(in).at("y"), ref.run(in).at("y"), 1e-6);
  }
  const canary::JitStats& jit = s.stats().jit;
  REQUIRE(jit.compiled_entries >= 1);
  CHECK(groups_on(model, device->name()) == 2);
  CHECK(jit.device_fused_calls == 2 * jit.compiled_entries);
  CHECK(device->runs() == static_cast<int>(jit.device_fused_calls));
  CHECK(jit.device_bytes > 0);
  CHECK(jit.device_fallbacks == 0);
  CHECK(model.jit_report().device == device->name());
  CHECK(listings(model).find("(on host:0 test device, the x86 kernel if it fails)") != std::string::npos);
}

TEST_CASE("jit device: a failed run finishes on the x86 kernels with their bits and the trace stays on the CPU",
          "[unit][jit][api][device]") {
  HostFusedDevice::Script script;
  script.fail_from_run = 3;  // the second compiled call's first group
  auto device = std::make_shared<HostFusedDevice>(script);
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu")), cpu_rt(device_options("cpu"));
  const canary::Model model = rt.load_text(kTwoGroups);
  const canary::Model cpu_model = cpu_rt.load_text(kTwoGroups);
  Session s = model.session(), cpu = cpu_model.session();
  for (std::uint32_t call = 0; call < 8; ++call) {
    const NamedTensors in = two_group_inputs(32, call);
    const Tensor got = s.run(in).at("y"), want = cpu.run(in).at("y");
    // From the failing call on, every group runs the same x86 kernel as the CPU variant.
    if (device->runs() >= 3) CHECK(bit_identical(got, want));
  }
  const canary::JitStats& jit = s.stats().jit;
  REQUIRE(jit.compiled_entries >= 3);
  CHECK(device->runs() == 3);  // never asked again after the failure
  CHECK(jit.device_fused_calls == 2);
  CHECK(jit.device_fallbacks == 1);
  CHECK(count_events(model, EventKind::Fallback,
                     "a step failed on host:0 test device (cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED "
                     "(719)); the CPU kernels finish the call") == 1);
  bool reported = false;
  for (const auto& a : model.jit_report().anchors)
    for (const auto& v : a.variants) reported = reported || v.device_error.find("CUDA_ERROR_LAUNCH_FAILED") == 0 ||
                                                v.device_error.find("cuLaunchKernel failed") == 0;
  CHECK(reported);
  CHECK(s.stats().failed_calls == 0);
}

TEST_CASE("jit device: a call the device declines for its size runs on the CPU, and the next one on the device",
          "[unit][jit][api][device]") {
  HostFusedDevice::Script script;
  script.decline_above = 64 * 8;  // elements of one group's call
  auto device = std::make_shared<HostFusedDevice>(script);
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu")), cpu_rt(device_options("cpu"));
  const canary::Model model = rt.load_text(kTwoGroups);
  Session s = model.session(), cpu = cpu_rt.load_text(kTwoGroups).session();
  const std::int64_t rows[] = {16, 24, 16, 24, 200, 24, 300, 16};  // dim 0 turns symbolic after the first two
  int runs_before_big = 0;
  for (std::int64_t r : rows) {
    const NamedTensors in = two_group_inputs(r, static_cast<std::uint32_t>(r));
    if (r > 64) runs_before_big = device->runs();
    const Tensor got = s.run(in).at("y"), want = cpu.run(in).at("y");
    if (r > 64) {
      CHECK(bit_identical(got, want));        // the x86 kernels ran it
      CHECK(device->runs() == runs_before_big);  // and the device did not
    }
  }
  CHECK(device->declines() >= 2);
  CHECK(device->runs() > runs_before_big);  // the small calls after the big ones went back to the device
  CHECK(s.stats().jit.device_fallbacks == 0);
  CHECK(count_events(model, EventKind::Fallback, "failed on") == 0);
}

TEST_CASE("jit device: a group the device refuses stays on the CPU, and the listing says why",
          "[unit][jit][api][device]") {
  HostFusedDevice::Script script;
  script.refuse_op = "tanh";
  auto device = std::make_shared<HostFusedDevice>(script);
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu")), ref_rt(interpreter_options());
  const canary::Model model = rt.load_text(kTwoGroups);
  Session s = model.session(), ref = ref_rt.load_text(kTwoGroups).session();
  for (std::uint32_t call = 0; call < 4; ++call) {
    const NamedTensors in = two_group_inputs(8, call);
    check_same_values(s.run(in).at("y"), ref.run(in).at("y"), 1e-6);
  }
  REQUIRE(s.stats().jit.compiled_entries >= 1);
  CHECK(groups_on(model, device->name()) == 1);
  CHECK(s.stats().jit.device_fused_calls == s.stats().jit.compiled_entries);
  CHECK(listings(model).find("(on the CPU: this device has no tanh)") != std::string::npos);
}

TEST_CASE("jit device: range canaries keep groups on the CPU; value canaries come back from the device",
          "[unit][jit][api][device]") {
  auto device = std::make_shared<HostFusedDevice>();
  canary::jit::ScopedDeviceOverride installed(device);
  SECTION("range canaries") {
    Options o = device_options("gpu");
    o.jit.range_canaries = true;
    Runtime rt(o);
    const canary::Model model = rt.load_text(kTwoGroups);
    Session s = model.session();
    for (std::uint32_t call = 0; call < 4; ++call) s.run(two_group_inputs(8, call));
    REQUIRE(s.stats().jit.compiled_entries >= 1);
    CHECK(groups_on(model, device->name()) == 0);
    CHECK(device->runs() == 0);
    CHECK(listings(model).find("(on the CPU: range canaries are not emitted for this device)") != std::string::npos);
  }
  SECTION("value canaries") {
    Options o = device_options("gpu");
    o.jit.value_canaries = true;
    Runtime rt(o);
    const canary::Model model = rt.load_text(kTwoGroups);
    Session s = model.session();
    for (std::uint32_t call = 0; call < 3; ++call) s.run(two_group_inputs(8, call));
    REQUIRE(s.stats().jit.value_canaries == 0);
    NamedTensors bad = two_group_inputs(8, 9);
    bad.at("x").data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
    s.run(bad);
    CHECK(s.stats().jit.device_fused_calls > 0);
    CHECK(s.stats().jit.value_canaries == 1);
    CHECK(count_events(model, EventKind::ValueCanary, "produced NaN or Inf") == 1);
  }
}

TEST_CASE("jit device: without a usable GPU, 'gpu' says why and everything runs on the CPU",
          "[unit][jit][api][device]") {
  Runtime rt(device_options("gpu")), cpu_rt(device_options("cpu"));
  const canary::Model model = rt.load_text(kTwoGroups);
  if (!model.jit_report().enabled) {
    WARN("skipped: this CPU cannot run the x86 backend (no AVX2+FMA)");
    return;
  }
  if (!model.jit_report().device.empty()) {
    WARN("skipped: this machine has a usable GPU (" << model.jit_report().device << "); the GPU check covers it");
    return;
  }
  const std::string why = model.jit_report().device_absent;
  CHECK_FALSE(why.empty());
  CHECK(count_events(model, EventKind::Fallback, "JitOptions::device is 'gpu' but no GPU is usable (" + why +
                                                     "): fused groups run on the CPU") == 1);
  Session s = model.session(), cpu = cpu_rt.load_text(kTwoGroups).session();
  for (std::uint32_t call = 0; call < 4; ++call) {
    const NamedTensors in = two_group_inputs(8, call);
    CHECK(bit_identical(s.run(in).at("y"), cpu.run(in).at("y")));
  }
  CHECK(s.stats().jit.compiled_entries >= 1);
  CHECK(s.stats().jit.device_fused_calls == 0);
}

TEST_CASE("jit device: an unknown device, or 'auto' without the cost model, is a typed error naming the option",
          "[unit][jit][api][device]") {
  Options o;
  o.jit.device = "tpu";
  try {
    Runtime rt(o);
    FAIL("Runtime accepted device 'tpu'");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Input);
    CHECK(std::string(e.what()).find("Options::jit.device is 'tpu'; expected \"cpu\", \"gpu\" or \"auto\"") !=
          std::string::npos);
  }
  o.jit.device = "auto";
  try {
    Runtime rt(o);
    FAIL("Runtime accepted device 'auto' without the cost model");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Input);
    CHECK(std::string(e.what()).find("Options::cost.enabled is false") != std::string::npos);
  }
  o.cost.enabled = true;
  CHECK_NOTHROW(Runtime(o));
}

namespace {

// Softmax, LayerNormalization and a ReduceSum, each with an elementwise prologue: three row kernels.
const char* kRows = R"(canary v1
graph main(x: f32[N, T], s: f32[T], b: f32[T]) -> (p, n, r) {
  const half: f32[] = [0.5]
  h = Mul(x, half)
  t = Sub(h, b)
  p = Softmax(t) {axis = -1}
  u = Add(x, b)
  n = LayerNormalization(u, s, b) {axis = -1, epsilon = 0.00001}
  e = Exp(x)
  const last: i64[1] = [-1]
  r = ReduceSum(e, last) {keepdims = 1}
}
)";

NamedTensors row_inputs(std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
  return {{"x", random_tensor({rows, cols}, seed)},
          {"s", random_tensor({cols}, seed + 1, 0.5f, 1.5f)},
          {"b", random_tensor({cols}, seed + 2)}};
}

// Row kernels of the model's variants that run on a device.
std::size_t row_kernels_on(const canary::Model& m, const std::string& device) {
  std::size_t n = 0;
  for (const auto& a : m.jit_report().anchors)
    for (const auto& v : a.variants)
      for (const auto& g : v.groups) n += g.device == device && g.expression.rfind("row ", 0) == 0 ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("jit device: row kernels run on the device, and a failure hands them back to the x86 kernels",
          "[unit][jit][api][device][rows]") {
  SECTION("placed and run") {
    auto device = std::make_shared<HostFusedDevice>();
    canary::jit::ScopedDeviceOverride installed(device);
    Runtime rt(device_options("gpu")), ref_rt(interpreter_options());
    const canary::Model model = rt.load_text(kRows);
    Session s = model.session(), ref = ref_rt.load_text(kRows).session();
    for (std::uint32_t call = 0; call < 6; ++call) {
      const NamedTensors in = row_inputs(4 + call, 33 + 10 * call, call);
      const auto got = s.run(in), want = ref.run(in);
      check_same_values(got.at("p"), want.at("p"), 2e-6);
      check_same_values(got.at("n"), want.at("n"), 2e-5);
      check_same_values(got.at("r"), want.at("r"), 2e-5);
    }
    REQUIRE(s.stats().jit.compiled_entries >= 1);
    CHECK(row_kernels_on(model, device->name()) == 3);
    CHECK(device->row_runs() == static_cast<int>(3 * s.stats().jit.compiled_entries));
    CHECK(s.stats().jit.device_fused_calls == static_cast<std::uint64_t>(device->runs()));
    const std::string listing = listings(model);
    INFO(listing);
    CHECK(listing.find("(softmax): ") != std::string::npos);
    CHECK(listing.find("(on host:0 test device, the x86 kernel if it fails)") != std::string::npos);
  }
  SECTION("an elementwise-only device leaves them on the CPU and says why") {
    HostFusedDevice::Script script;
    script.rows = false;
    auto device = std::make_shared<HostFusedDevice>(script);
    canary::jit::ScopedDeviceOverride installed(device);
    Runtime rt(device_options("gpu"));
    const canary::Model model = rt.load_text(kRows);
    Session s = model.session();
    for (std::uint32_t call = 0; call < 4; ++call) s.run(row_inputs(4, 40, call));
    REQUIRE(s.stats().jit.compiled_entries >= 1);
    CHECK(row_kernels_on(model, device->name()) == 0);
    CHECK(device->row_runs() == 0);
    CHECK(listings(model).find("(on the CPU: this device runs fused elementwise groups only)") != std::string::npos);
  }
  SECTION("a failing run") {
    HostFusedDevice::Script script;
    script.fail_from_run = 2;
    script.chains = false;  // the steps one call each, so the second one fails alone
    auto device = std::make_shared<HostFusedDevice>(script);
    canary::jit::ScopedDeviceOverride installed(device);
    Runtime rt(device_options("gpu")), cpu_rt(device_options("cpu"));
    const canary::Model model = rt.load_text(kRows);
    Session s = model.session(), cpu = cpu_rt.load_text(kRows).session();
    for (std::uint32_t call = 0; call < 6; ++call) {
      const NamedTensors in = row_inputs(8, 64, call);
      const bool failed_before = device->runs() >= 2;  // the first compiled call's LayerNorm row kernel fails
      const auto got = s.run(in), want = cpu.run(in);
      if (failed_before)
        for (const char* out : {"p", "n", "r"}) CHECK(bit_identical(got.at(out), want.at(out)));
    }
    CHECK(device->row_runs() == 1);  // run 1 is the Softmax row kernel, run 2 the LayerNorm's
    CHECK(device->runs() == 2);  // never asked again after the failure
    CHECK(s.stats().jit.device_fallbacks == 1);
    CHECK(count_events(model, EventKind::Fallback, "failed on host:0 test device") == 1);
    CHECK(s.stats().failed_calls == 0);
  }
}

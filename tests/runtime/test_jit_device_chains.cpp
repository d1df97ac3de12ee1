// Device chains (jit/device_chain.h) through the public API, with
// HostFusedDevice standing in for the GPU: consecutive placed steps run as
// one device call in which a value only the chain reads stays on the device
// (the stand-in fills its host buffer with NaN, so a reader of the host copy
// would show); a chain the device fails or declines runs its steps again
// from the host inputs; an error preparing a step mid-chain exits there.
#include <catch2/catch.hpp>

#include <memory>

#include "device_chain_model.h"
#include "device_test_support.h"
#include "host_fused_device.h"
#include "jit_test_models.h"
#include "runtime/core/fault_injection.h"

using canary::EventKind;
using canary::NamedTensors;
using canary::Options;
using canary::Runtime;
using canary::Session;
using namespace canary::test;

namespace {

NamedTensors chain_inputs(std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
  return {{"x", random_tensor({rows, cols}, seed)},
          {"b", random_tensor({cols}, seed + 1)},
          {"s", random_tensor({cols}, seed + 2, 0.5f, 1.5f)}};
}

void check_outputs(Session& got_session, Session& want_session, const NamedTensors& in) {
  const auto got = got_session.run(in), want = want_session.run(in);
  check_same_values(got.at("y"), want.at("y"), 2e-5);
  check_same_values(got.at("n"), want.at("n"), 2e-5);
}

struct FaultReset {
  ~FaultReset() { canary::configure_faults(""); }
};

}  // namespace

TEST_CASE("device chains: placed steps in a row run as one call, and a value only they read stays on the device",
          "[unit][jit][api][device][chains]") {
  auto chained = std::make_shared<HostFusedDevice>();
  HostFusedDevice::Script one_by_one;
  one_by_one.chains = false;
  auto unchained = std::make_shared<HostFusedDevice>(one_by_one);
  Runtime ref_rt(interpreter_options());
  Session ref = ref_rt.load_text(kDeviceChainModel).session();
  std::uint64_t bytes[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    canary::jit::ScopedDeviceOverride installed(k == 0 ? chained : unchained);
    Runtime rt(device_options("gpu"));
    const canary::Model model = rt.load_text(kDeviceChainModel);
    Session s = model.session();
    for (std::uint32_t call = 0; call < 6; ++call) check_outputs(s, ref, chain_inputs(8 + call, 40 + 9 * call, call));
    const canary::JitStats& jit = s.stats().jit;
    REQUIRE(jit.compiled_entries >= 1);
    CHECK(jit.device_fused_calls == 3 * jit.compiled_entries);
    CHECK(jit.device_fallbacks == 0);
    bytes[k] = jit.device_bytes;
    if (k == 0) {
      CHECK(jit.device_chain_calls == jit.compiled_entries);
      CHECK(chained->chain_runs() == static_cast<int>(jit.compiled_entries));
      const std::string listing = listings(model);
      INFO(listing);
      CHECK(listing.find("device chains (1, the steps one by one if the device declines)") != std::string::npos);
      CHECK(listing.find("steps 0..2 run as one call on host:0 test device:") != std::string::npos);
      CHECK(listing.find("nothing stays there") == std::string::npos);
    } else {
      CHECK(jit.device_chain_calls == 0);
    }
  }
  // Chained: x, b and s go over once, y and n come back. One by one: each
  // step moves its inputs and its output, p among them three times.
  INFO("chained " << bytes[0] << " bytes, one by one " << bytes[1]);
  CHECK(bytes[0] * 10 < bytes[1] * 7);
}

TEST_CASE("device chains: a failed chain runs every step on the x86 kernels, with the CPU's bits",
          "[unit][jit][api][device][chains]") {
  HostFusedDevice::Script script;
  script.fail_from_run = 1;
  auto device = std::make_shared<HostFusedDevice>(script);
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu")), cpu_rt(jit_options(2));
  const canary::Model model = rt.load_text(kDeviceChainModel);
  Session s = model.session(), cpu = cpu_rt.load_text(kDeviceChainModel).session();
  for (std::uint32_t call = 0; call < 5; ++call) {
    const NamedTensors in = chain_inputs(8, 64, call);
    const auto got = s.run(in), want = cpu.run(in);
    for (const char* out : {"y", "n"}) CHECK(bit_identical(got.at(out), want.at(out)));
  }
  CHECK(device->chain_runs() == 0);
  CHECK(device->runs() == 3);  // the one chain call, three steps; never asked again
  CHECK(s.stats().jit.device_fallbacks == 1);
  CHECK(s.stats().jit.device_fused_calls == 0);
  CHECK(count_events(model, EventKind::Fallback, "failed on host:0 test device") == 1);
}

TEST_CASE("device chains: a chain the device declines runs its steps one call each",
          "[unit][jit][api][device][chains]") {
  HostFusedDevice::Script script;
  script.decline_above = 8 * 64;  // one step's elements: the chain's three are too many
  auto device = std::make_shared<HostFusedDevice>(script);
  canary::jit::ScopedDeviceOverride installed(device);
  Runtime rt(device_options("gpu")), ref_rt(interpreter_options());
  const canary::Model model = rt.load_text(kDeviceChainModel);
  Session s = model.session(), ref = ref_rt.load_text(kDeviceChainModel).session();
  for (std::uint32_t call = 0; call < 5; ++call) check_outputs(s, ref, chain_inputs(8, 64, call));
  const canary::JitStats& jit = s.stats().jit;
  REQUIRE(jit.compiled_entries >= 1);
  CHECK(jit.device_chain_calls == 0);
  CHECK(device->declines() == static_cast<int>(jit.compiled_entries));
  CHECK(jit.device_fused_calls == 3 * jit.compiled_entries);
  CHECK(jit.device_fallbacks == 0);
}

TEST_CASE("device chains: an error preparing a step mid-chain runs the steps before it and exits there",
          "[unit][jit][api][device][chains]") {
  const FaultReset reset;
  auto device = std::make_shared<HostFusedDevice>();
  canary::jit::ScopedDeviceOverride installed(device);
  Options o = device_options("gpu");
  o.fault_injection = "kernel@2";  // the first compiled call's second step
  Runtime rt(o);
  Runtime ref_rt(interpreter_options());
  const canary::Model model = rt.load_text(kDeviceChainModel);
  Session s = model.session(), ref = ref_rt.load_text(kDeviceChainModel).session();
  for (std::uint32_t call = 0; call < 5; ++call) check_outputs(s, ref, chain_inputs(8, 64, call));
  const canary::JitStats& jit = s.stats().jit;
  REQUIRE(jit.compiled_entries >= 2);
  CHECK(jit.deopts == 1);
  CHECK(s.stats().failed_calls == 0);
  // The Softmax ran alone before the exit; every later call ran the chain.
  CHECK(device->chain_runs() == static_cast<int>(jit.compiled_entries) - 1);
  CHECK(jit.device_fused_calls == 1 + 3 * (jit.compiled_entries - 1));
}

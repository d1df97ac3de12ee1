// The GPU check's device-chain row: a model whose three row steps run on
// the GPU in a row (Softmax, a ReduceSum and a LayerNorm reading its
// result), once as one chain (the Softmax's output stays on the device) and
// once one step per device call (the same CUDA device with chains declined),
// in alternating calls: time per call, bytes moved per call, chains run,
// and both against the interpreter.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu/api_values.h"
#include "bench/gpu/check_table.h"
#include "canary/canary.h"
#include "jit/cuda/cuda_fused_device.h"
#include "jit/fused_device.h"
#include "tests/runtime/device_chain_model.h"

namespace canary::gpu_check {
namespace {

// The CUDA device with run_chain left at FusedDevice's default (declining),
// so every placed step is a device call of its own.
class UnchainedDevice : public jit::FusedDevice {
 public:
  explicit UnchainedDevice(std::shared_ptr<const jit::FusedDevice> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  std::string unsupported(const jit::FusedElementwiseSpec& spec) const override { return inner_->unsupported(spec); }
  jit::DeviceRun run(const jit::FusedElementwiseSpec& spec, const jit::FusedArgs& args) const override {
    return inner_->run(spec, args);
  }
  std::string unsupported_row(const jit::FusedRowSpec& spec) const override { return inner_->unsupported_row(spec); }
  jit::DeviceRun run_row(const jit::FusedRowSpec& spec, const jit::RowArgs& args) const override {
    return inner_->run_row(spec, args);
  }

 private:
  std::shared_ptr<const jit::FusedDevice> inner_;
};

// One configuration's session and what its calls measured.
struct Side {
  Session session;
  std::vector<double> ms;
  double worst = 0.0;
  std::uint64_t bytes_before = 0;
};

}  // namespace

void check_device_chains(std::vector<Row>& rows, std::int64_t n, std::int64_t t, int timed_calls) {
  std::string why;
  const std::shared_ptr<const jit::FusedDevice> device = jit::cuda::open_cuda_fused_device(why);
  if (!device) {
    rows.push_back({"device chains", "no device: " + why, false});
    return;
  }
  Runtime chained_rt(engine_options("gpu")), unchained_rt(engine_options("gpu"));
  Options interp;
  interp.jit.enabled = false;
  Runtime ref_rt(interp);
  const Model chained_model = chained_rt.load_text(test::kDeviceChainModel);
  std::optional<Model> unchained_model;
  {
    const jit::ScopedDeviceOverride swap(std::make_shared<UnchainedDevice>(device));
    unchained_model = unchained_rt.load_text(test::kDeviceChainModel);
  }
  Session ref = ref_rt.load_text(test::kDeviceChainModel).session();
  Side sides[2] = {{chained_model.session(), {}, 0.0, 0}, {unchained_model->session(), {}, 0.0, 0}};
  std::mt19937 rng(11);
  const NamedTensors in = {{"x", uniform({n, t}, rng, -2.0f, 2.0f)},
                           {"b", uniform({t}, rng, -1.0f, 1.0f)},
                           {"s", uniform({t}, rng, 0.5f, 1.5f)}};
  const NamedTensors want = ref.run(in);
  for (Side& side : sides)
    for (int warm = 0; warm < 3; ++warm) side.session.run(in);  // records, compiles, loads the modules
  for (Side& side : sides) side.bytes_before = side.session.stats().jit.device_bytes;
  for (int call = 0; call < timed_calls; ++call)
    for (Side& side : sides) {
      const auto start = std::chrono::steady_clock::now();
      const NamedTensors got = side.session.run(in);
      side.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      for (const char* name : {"y", "n"}) side.worst = std::max(side.worst, max_relative(got.at(name), want.at(name)));
    }
  const JitStats a = sides[0].session.stats().jit, b = sides[1].session.stats().jit;
  const double mb_chained = static_cast<double>(a.device_bytes - sides[0].bytes_before) / timed_calls / 1e6;
  const double mb_single = static_cast<double>(b.device_bytes - sides[1].bytes_before) / timed_calls / 1e6;
  const double worst = std::max(sides[0].worst, sides[1].worst);
  char label[64], text[300];
  std::snprintf(label, sizeof label, "device chains [%lld, %lld]", static_cast<long long>(n), static_cast<long long>(t));
  std::snprintf(text, sizeof text,
                "chained %.3f ms, %.2f MB/call (%llu chains); one call per step %.3f ms, %.2f MB/call: "
                "%.2fx the time, %.2fx the bytes; max rel diff vs interpreter %.1e",
                median(sides[0].ms), mb_chained, static_cast<unsigned long long>(a.device_chain_calls),
                median(sides[1].ms), mb_single, median(sides[1].ms) / median(sides[0].ms), mb_single / mb_chained,
                worst);
  const bool ok = a.device_chain_calls > 0 && b.device_chain_calls == 0 && a.device_fallbacks == 0 &&
                  b.device_fallbacks == 0 && mb_chained < mb_single && worst <= 1e-5;
  rows.push_back({label, text, ok});
}

}  // namespace canary::gpu_check

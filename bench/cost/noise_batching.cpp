// The cost model's noise copies through the fp64 reference: one by one
// against one batch stacked along dim 0 (CostModelOptions::batch_noise_copies),
// on the two samples' committed models, side by side in one process.
//
//   canary_bench_cost_noise_batching [--rounds R] [--copies K]
//
// Each round builds, for each setting, a Runtime with the JIT and the cost
// model on (balanced, one intra-op thread, the shadow budget wide open so
// every trial call it can shadow is shadowed), runs 60 calls of the sample's
// input shape (random inputs from a fixed seed, the same for both settings)
// and reads Stats::cost: shadow time per shadowed call, and how many of them
// batched. The two settings alternate within each round; the table gives
// medians over rounds and the ratio taken within each round.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/jit/timing.h"
#include "canary/canary.h"
#include "samples/flowmeter/replay.h"
#include "samples/vehicle/model_card.h"

namespace {

struct Model {
  std::string title, path, input;
  std::vector<std::int64_t> shape;
  std::string text = {};  // a text-format model instead of `path`
};

// Many small ops on a few values per row: interpreter dispatch dominates
// the reference's time, which a batch shares out across the copies.
std::string small_ops_model() {
  std::string t = "canary v1\ngraph main(x: f32[N, 8]) -> (y) {\n  const k: f32[] = [0.75]\n  v0 = Mul(x, k)\n";
  for (int i = 1; i < 30; ++i)
    t += "  v" + std::to_string(i) + " = " + (i % 3 == 0 ? "Tanh(v" + std::to_string(i - 1) + ")"
                                             : (i % 3 == 1 ? "Add(v" : "Mul(v") + std::to_string(i - 1) + ", k)") +
         "\n";
  return t + "  y = Add(v29, x)\n}\n";
}

struct Measured {
  double shadow_us_per_call = 0.0;
  std::uint64_t shadow_calls = 0, batched = 0;
};

canary::Tensor uniform(const std::vector<std::int64_t>& shape, std::mt19937& rng) {
  canary::Tensor t = canary::Tensor::empty(canary::DType::F32, shape);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

Measured run(const Model& m, bool batch, int copies) {
  canary::Options o;
  o.jit.synchronous = true;
  o.jit.hot_threshold = 2;
  o.cost.enabled = true;
  o.cost.noise_copies = copies;
  o.cost.batch_noise_copies = batch;
  o.cost.shadow_burst_ms = 1e9;
  o.cost.max_shadow_overhead = 1e9;
  o.cost.trial_calls = 4;
  o.cost.shadow_samples = 4;
  o.cost.monitor_every = 1;  // after the decision every call is a shadowed monitoring sample
  const canary::Runtime rt(o);
  const canary::Model model = m.text.empty() ? rt.load(m.path) : rt.load_text(m.text);
  canary::Session s = model.session();
  std::mt19937 rng(11);
  for (int i = 0; i < 60; ++i) s.run({{m.input, uniform(m.shape, rng)}});
  const canary::CostStats& c = s.stats().cost;
  Measured out;
  out.shadow_calls = c.shadow_calls;
  out.batched = c.batched_noise_calls;
  out.shadow_us_per_call = c.shadow_calls > 0 ? c.shadow_us / static_cast<double>(c.shadow_calls) : 0.0;
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  int rounds = 5, copies = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--copies") == 0) copies = std::max(2, std::atoi(argv[i + 1]));
  }
  const std::string flow = flowmeter::default_model_path(flowmeter::ModelKind::Conv);
  const std::string car = vehicle::default_model_dir() + "/vehicle_lstm.onnx";
  const std::vector<Model> models = {{"flow meter (conv net)", flow, "x", {1, 7, 128}},
                                     {"flow meter (conv net)", flow, "x", {16, 7, 128}},
                                     {"vehicle (LSTM)", car, "x", {1, 32, 5}},
                                     {"vehicle (LSTM)", car, "x", {16, 32, 5}},
                                     {"30 small elementwise ops", "", "x", {1, 8}, small_ops_model()},
                                     {"30 small elementwise ops", "", "x", {64, 8}, small_ops_model()}};
  std::printf("%d rounds, %d noise copies, 60 calls per run; shadow time per shadowed call (reference, its noise "
              "copies, the candidates' comparisons)\n\n",
              rounds, copies);
  std::printf("| model | x | one by one us | batched us | one by one / batched | shadowed calls | batched |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Model& m : models) {
    std::vector<double> single, batched, ratio;
    Measured last;
    for (int r = 0; r < rounds; ++r) {
      const bool batch_first = r % 2 == 1;  // alternate which setting runs first
      Measured a, b;
      if (batch_first) {
        b = run(m, true, copies);
        a = run(m, false, copies);
      } else {
        a = run(m, false, copies);
        b = run(m, true, copies);
      }
      single.push_back(a.shadow_us_per_call);
      batched.push_back(b.shadow_us_per_call);
      ratio.push_back(b.shadow_us_per_call > 0 ? a.shadow_us_per_call / b.shadow_us_per_call : 0.0);
      last = b;
    }
    std::string shape;
    for (std::int64_t d : m.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    std::printf("| %s | [%s] | %.0f | %.0f | %.2f | %llu | %llu |\n", m.title.c_str(), shape.c_str(), median(single),
                median(batched), median(ratio), static_cast<unsigned long long>(last.shadow_calls),
                static_cast<unsigned long long>(last.batched));
  }
  return 0;
}

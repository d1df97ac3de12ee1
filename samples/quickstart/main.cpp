// Quickstart: a small 1-D conv net over sensor windows whose batch size and
// window length change from call to call, run on the interpreter and checked
// call by call against the fp64 reference. Uses only the public API.
//
//   canary_quickstart [MODEL.cnr] [--calls N] [--seed S] [--print-model]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "canary/canary.h"

namespace {

struct Args {
  std::string model_path;
  int calls = 200;
  unsigned seed = 7;
  bool print_model = false;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--calls" && i + 1 < argc) a.calls = std::atoi(argv[++i]);
    else if (s == "--seed" && i + 1 < argc) a.seed = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (s == "--print-model") a.print_model = true;
    else if (!s.empty() && s[0] != '-') a.model_path = s;
    else throw canary::Error(canary::ErrorKind::Input, "unknown argument '" + s + "'");
  }
  return a;
}

// Deterministic weights: small values so the activations stay in range.
canary::Tensor weights(std::mt19937& rng, std::vector<std::int64_t> shape, float scale) {
  std::normal_distribution<float> n(0.0f, scale);
  std::int64_t count = 1;
  for (auto d : shape) count *= d;
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v) x = n(rng);
  return canary::Tensor::from_vector(v, shape);
}

// x[N, 3, T] → conv(3→8, k5, pad 2) → relu → conv(8→8, k3, stride 2) → relu
// → mean over time → gemm(8→2) → sigmoid: two alarm scores per window.
canary::Model build_sensor_net(const canary::Runtime& rt) {
  std::mt19937 rng(1234);
  canary::ModelBuilder b("sensor_net");
  b.input("x", canary::DType::F32, {"N", 3, "T"})
      .symbol_range("T", 8, 4096)
      .constant("w1", weights(rng, {8, 3, 5}, 0.3f))
      .constant("b1", weights(rng, {8}, 0.1f))
      .constant("w2", weights(rng, {8, 8, 3}, 0.3f))
      .constant("b2", weights(rng, {8}, 0.1f))
      .constant("w3", weights(rng, {8, 2}, 0.5f))
      .constant("b3", weights(rng, {2}, 0.1f))
      .node("Conv", {"x", "w1", "b1"}, {"c1"}, {{"pads", std::vector<std::int64_t>{2, 2}}}, "conv1")
      .node("Relu", {"c1"}, {"r1"})
      .node("Conv", {"r1", "w2", "b2"}, {"c2"}, {{"strides", std::vector<std::int64_t>{2}}}, "conv2")
      .node("Relu", {"c2"}, {"r2"})
      .node("ReduceMean", {"r2"}, {"pooled"}, {{"axes", std::vector<std::int64_t>{2}}, {"keepdims", std::int64_t{0}}})
      .node("Gemm", {"pooled", "w3", "b3"}, {"logits"}, {}, "head")
      .node("Sigmoid", {"logits"}, {"scores"})
      .output("scores");
  return rt.build(b);
}

// A window of three noisy sensor channels with a drift.
canary::Tensor sensor_window(std::mt19937& rng, std::int64_t n, std::int64_t t) {
  std::normal_distribution<float> noise(0.0f, 0.2f);
  std::vector<float> v(static_cast<std::size_t>(n * 3 * t));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < 3; ++c)
      for (std::int64_t k = 0; k < t; ++k)
        v[static_cast<std::size_t>((i * 3 + c) * t + k)] =
            std::sin(0.1f * static_cast<float>(k) + static_cast<float>(c)) + 0.01f * static_cast<float>(i) + noise(rng);
  return canary::Tensor::from_vector(v, {n, 3, t});
}

double max_abs_diff(const canary::Tensor& f32, const canary::Tensor& f64) {
  double worst = 0.0;
  for (std::int64_t i = 0; i < f32.numel(); ++i)
    worst = std::max(worst, std::abs(f32.element_as_double(i) - f64.element_as_double(i)));
  return worst;
}

int run(const Args& args) {
  canary::Runtime rt;
  canary::Model model = args.model_path.empty() ? build_sensor_net(rt) : rt.load(args.model_path);
  if (args.print_model) std::printf("%s\n", model.to_text().c_str());
  for (const auto& in : model.inputs()) std::printf("input  %s\n", in.to_string().c_str());
  for (const auto& out : model.outputs()) std::printf("output %s\n", out.to_string().c_str());

  canary::Session session = model.session();
  canary::Session reference = model.reference_session();
  std::mt19937 rng(args.seed);
  std::uniform_int_distribution<std::int64_t> batch(1, 16), window(8, 256);
  double worst = 0.0;
  for (int call = 0; call < args.calls; ++call) {
    // Most calls use the nominal shape; some arrive odd-sized, as real traffic does.
    const bool odd = call % 5 == 4;
    const std::int64_t n = odd ? batch(rng) : 8, t = odd ? window(rng) : 128;
    canary::NamedTensors in{{"x", sensor_window(rng, n, t)}};
    auto out = session.run(in);
    auto ref = reference.run(in);
    worst = std::max(worst, max_abs_diff(out.at("scores"), ref.at("scores")));
  }
  std::printf("calls %d, max |f32 - f64 reference| = %.3g\n", args.calls, worst);

  // A malformed call gets a typed error naming what was wrong; the session keeps serving.
  try {
    session.run({{"x", canary::Tensor::empty(canary::DType::F32, {4, 5, 64})}});
  } catch (const canary::Error& e) {
    std::printf("rejected bad call: %s\n", e.what());
  }
  const canary::Stats& st = session.stats();
  std::printf("stats: %llu calls, %llu failed, %llu instructions, %llu distinct shapes\n",
              static_cast<unsigned long long>(st.calls), static_cast<unsigned long long>(st.failed_calls),
              static_cast<unsigned long long>(st.instructions_executed),
              static_cast<unsigned long long>(st.distinct_shapes));
  for (const auto& in : st.input_shapes) std::printf("input %s: %zu distinct shapes\n", in.input.c_str(), in.shapes.size());
  return worst < 1e-4 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const canary::Error& e) {
    std::fprintf(stderr, "canary_quickstart: %s\n", e.what());
    return 2;
  }
}

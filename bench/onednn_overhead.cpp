// Overhead of running a oneDNN-backed op through Canary: a Session running a
// one-node model versus the same oneDNN primitive executed directly on
// preallocated memory, for MatMul 256x256x256, Conv1d [8,32,256] -> 64 (k3,
// pad 1) and LSTM T=16 B=4 I=H=64 (forward, Y and Y_h). The two are timed
// alternately (A B A B ...) and each figure is the median per-call time over
// the rounds. For Canary it also prints the first and second call of a fresh
// session (1st-call creates the primitive, 2nd-call hits the cache; one
// sample each), and the median over five unseen input shapes of the first
// call at that shape (a new primitive) and of the call repeating it.
//
//   canary_bench_onednn_overhead [--rounds R] [--calls C]
//
// Runs on one thread: the program re-executes itself with OMP_NUM_THREADS=1
// when that is not already set, and the sessions use intra_op_threads = 1.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "canary/canary.h"

namespace {

using Clock = std::chrono::steady_clock;
using canary::DType;
using canary::Tensor;

struct Args {
  int rounds = 15;
  int calls = 50;
};

// Reads --rounds and --calls.
Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--rounds") a.rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (k == "--calls") a.calls = std::max(1, std::atoi(argv[i + 1]));
  }
  return a;
}

// A tensor of the given shape with uniform values in [-1, 1].
Tensor random_tensor(std::mt19937& rng, std::vector<std::int64_t> shape) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// Microseconds taken by one call of f.
double time_once_us(const std::function<void()>& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// Median of v.
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A oneDNN primitive with its arguments bound to preallocated memory.
struct DirectPrimitive {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::primitive primitive;
  std::unordered_map<int, dnnl::memory> args;

  // Allocates and fills (touches) a memory for each argument descriptor.
  void bind(const std::vector<std::pair<int, dnnl::memory::desc>>& descs) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (const auto& [arg, md] : descs) {
      dnnl::memory m(md, engine);
      float* p = static_cast<float*>(m.get_data_handle());
      for (std::size_t i = 0; i < md.get_size() / sizeof(float); ++i) p[i] = dist(rng);
      args.emplace(arg, m);
    }
  }
  // Executes once and waits for completion.
  void run() {
    primitive.execute(stream, args);
    stream.wait();
  }
};

// A row-major f32 descriptor.
dnnl::memory::desc plain(const dnnl::memory::dims& dims) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

// One benchmark case: a model with input dim `var` free, its inputs at two shapes, and the direct primitive.
struct Case {
  std::string name;
  std::optional<canary::Model> model;  // set by the setup function
  canary::NamedTensors inputs;
  std::vector<canary::NamedTensors> new_shape_inputs;  // one per shape not seen before
  DirectPrimitive direct;
};

// MatMul x [M, 256] by a constant [256, 256].
void setup_matmul(Case& c, const canary::Runtime& rt, std::mt19937& rng) {
  canary::ModelBuilder b("matmul");
  b.input("x", DType::F32, {"M", 256}).constant("w", random_tensor(rng, {256, 256}));
  b.node("MatMul", {"x", "w"}, {"y"}).output("y");
  c.model = rt.build(b);
  c.inputs = {{"x", random_tensor(rng, {256, 256})}};
  for (std::int64_t m = 250; m < 255; ++m) c.new_shape_inputs.push_back({{"x", random_tensor(rng, {m, 256})}});
  const auto a = plain({256, 256}), w = plain({256, 256}), y = plain({256, 256});
  c.direct.primitive = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, w, y), c.direct.engine));
  c.direct.bind({{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, y}});
}

// Conv1d x [8, 32, W] with 64 filters of width 3, pads 1, bias.
void setup_conv(Case& c, const canary::Runtime& rt, std::mt19937& rng) {
  canary::ModelBuilder b("conv");
  b.input("x", DType::F32, {8, 32, "W"}).constant("w", random_tensor(rng, {64, 32, 3}));
  b.constant("b", random_tensor(rng, {64}));
  b.node("Conv", {"x", "w", "b"}, {"y"}, {{"kernel_shape", std::vector<std::int64_t>{3}},
                                           {"pads", std::vector<std::int64_t>{1, 1}}});
  b.output("y");
  c.model = rt.build(b);
  c.inputs = {{"x", random_tensor(rng, {8, 32, 256})}};
  for (std::int64_t w = 250; w < 255; ++w) c.new_shape_inputs.push_back({{"x", random_tensor(rng, {8, 32, w})}});
  const auto x = plain({8, 32, 256}), w = plain({64, 32, 3}), bias = plain({64}), y = plain({8, 64, 256});
  const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, x,
                                          w, bias, y, {1}, {0}, {1}, {1});
  c.direct.primitive = dnnl::convolution_forward(dnnl::convolution_forward::primitive_desc(d, c.direct.engine));
  c.direct.bind({{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, y}});
}

// Forward LSTM over x [T, 4, 64] with hidden 64, bias, outputs Y and Y_h.
void setup_lstm(Case& c, const canary::Runtime& rt, std::mt19937& rng) {
  canary::ModelBuilder b("lstm");
  b.input("x", DType::F32, {"T", 4, 64}).constant("w", random_tensor(rng, {1, 256, 64}));
  b.constant("r", random_tensor(rng, {1, 256, 64})).constant("b", random_tensor(rng, {1, 512}));
  b.node("LSTM", {"x", "w", "r", "b"}, {"y", "y_h"}, {{"hidden_size", std::int64_t{64}}});
  b.output("y").output("y_h");
  c.model = rt.build(b);
  c.inputs = {{"x", random_tensor(rng, {16, 4, 64})}};
  for (std::int64_t t = 11; t < 16; ++t) c.new_shape_inputs.push_back({{"x", random_tensor(rng, {t, 4, 64})}});
  const auto x = plain({16, 4, 64}), state = plain({1, 1, 4, 64}), wl = plain({1, 1, 64, 4, 64});
  const auto bias = plain({1, 1, 4, 64}), y = plain({16, 4, 64});
  const dnnl::lstm_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::rnn_direction::unidirectional_left2right,
                                   x, state, state, wl, wl, bias, y, state, state);
  c.direct.primitive = dnnl::lstm_forward(dnnl::lstm_forward::primitive_desc(d, c.direct.engine));
  c.direct.bind({{DNNL_ARG_SRC_LAYER, x}, {DNNL_ARG_SRC_ITER, state}, {DNNL_ARG_SRC_ITER_C, state},
                 {DNNL_ARG_WEIGHTS_LAYER, wl}, {DNNL_ARG_WEIGHTS_ITER, wl}, {DNNL_ARG_BIAS, bias},
                 {DNNL_ARG_DST_LAYER, y}, {DNNL_ARG_DST_ITER, state}, {DNNL_ARG_DST_ITER_C, state}});
}

// Times one case and prints its row.
void run_case(Case& c, const Args& args) {
  // The direct primitive runs first, untimed, so that oneDNN's process-wide lazy
  // set-up (JIT GEMM kernels generated on a first execute, tens of ms for the
  // gemm-based Conv) is not counted in Canary's first call.
  c.direct.run();
  canary::Session session = c.model->session();
  const double first = time_once_us([&] { session.run(c.inputs); });
  const double second = time_once_us([&] { session.run(c.inputs); });
  std::vector<double> canary_us, direct_us;
  for (int r = 0; r < args.rounds; ++r) {
    canary_us.push_back(time_once_us([&] {
                          for (int i = 0; i < args.calls; ++i) session.run(c.inputs);
                        }) / args.calls);
    direct_us.push_back(time_once_us([&] {
                          for (int i = 0; i < args.calls; ++i) c.direct.run();
                        }) / args.calls);
  }
  std::vector<double> new_us, repeat_us;
  for (const canary::NamedTensors& in : c.new_shape_inputs) {
    new_us.push_back(time_once_us([&] { session.run(in); }));
    repeat_us.push_back(time_once_us([&] { session.run(in); }));
  }
  const double new_shape = median(new_us), new_shape_repeat = median(repeat_us);
  const double a = median(canary_us), d = median(direct_us);
  std::printf("%-8s %10.1f %10.1f %8.3f %8.1f %10.1f %10.1f %10.1f %10.1f\n", c.name.c_str(), a, d, a / d, a - d,
              first, second, new_shape, new_shape_repeat);
}

}  // namespace

int main(int argc, char** argv) {
  const char* omp = std::getenv("OMP_NUM_THREADS");
  if (omp == nullptr || std::strcmp(omp, "1") != 0) {
    setenv("OMP_NUM_THREADS", "1", 1);
    execv("/proc/self/exe", argv);
    std::perror("re-executing with OMP_NUM_THREADS=1 failed; continuing");
  }
  const Args args = parse_args(argc, argv);
  canary::Options options;
  options.intra_op_threads = 1;
  const canary::Runtime rt(options);
  std::mt19937 rng(1);
  std::vector<Case> cases(3);
  cases[0].name = "MatMul";
  cases[1].name = "Conv1d";
  cases[2].name = "LSTM";
  setup_matmul(cases[0], rt, rng);
  setup_conv(cases[1], rt, rng);
  setup_lstm(cases[2], rt, rng);
  std::printf("one thread; %d rounds of %d calls, alternating Canary and direct; times in microseconds\n",
              args.rounds, args.calls);
  std::printf("%-8s %10s %10s %8s %8s %10s %10s %10s %10s\n", "op", "canary", "direct", "ratio", "extra",
              "1st-call", "2nd-call", "new-shape", "new-rep");
  for (Case& c : cases) run_case(c, args);
  return 0;
}

// The shape_profile target: bytes -> a JIT shape profile file
// (JitOptions::profile_path, jit/profile_store.h) that a model loads at
// start, then calls at several shapes. A profile is advice: whatever the
// file holds, the model must load, every call must agree with the fp64
// reference, and a file it cannot use must be reported (a Profile event
// saying it starts without it), never crash or corrupt a trace.
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

#include "canary/canary.h"
#include "tests/fuzz/fuzz_targets.h"

namespace canary::fuzz {
namespace {

// Two anchors' worth of dims to learn about: a matmul chain over [N, T] and
// a Loop whose body sees per-iteration shapes.
const char* kProfiledModel = R"(canary v1
graph main(x: f32[N, T], w: f32[T, 3], n: i64[]) -> (y, z, acc) {
  const go: bool[] = [true]
  h = MatMul(x, w)
  r = Relu(h)
  y = Softmax(r) {axis = -1}
  z = Tanh(x)
  acc: f32[N, 3] = Loop(n, go, r) {
    body = graph step(i: i64[], c: bool[], a: f32[N, 3]) -> (c, next) {
      next = Add(a, r)
    }
  } "steps"
}
)";

// A profile file of its own for this process (removed with what the model writes next to it).
struct ProfileFile {
  std::string path;
  explicit ProfileFile(std::string_view bytes) {
    static std::atomic<int> counter{0};
    path = (std::filesystem::temp_directory_path() /
            ("canary-fuzz-profile-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".txt"))
               .string();
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  ~ProfileFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    std::filesystem::remove(path + ".tmp", ec);
  }
};

Tensor filled(std::vector<std::int64_t> shape, float seed) {
  Tensor t = Tensor::empty(DType::F32, shape);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::sin(seed + 0.37f * static_cast<float>(i));
  return t;
}

// The first difference of an output from the reference beyond f32 rounding, or "".
std::string compare(const NamedTensors& got, const NamedTensors& want) {
  for (const auto& [name, w] : want) {
    const Tensor& g = got.at(name);
    if (g.shape() != w.shape()) return "output '" + name + "' has shape " + g.type_string() + ", not " + w.type_string();
    for (std::int64_t i = 0; i < w.numel(); ++i) {
      const double a = g.element_as_double(i), b = w.element_as_double(i);
      if (!(std::abs(a - b) <= 1e-4 * std::abs(b) + 1e-5))
        return "output '" + name + "' element " + std::to_string(i) + " is " + std::to_string(a) + ", the reference " +
               std::to_string(b);
    }
  }
  return "";
}

// Synchronous compiles after two visits, so a few calls reach compiled code.
Options profiled_options(const std::string& path) {
  Options options;
  options.jit.profile_path = path;
  options.jit.synchronous = true;
  options.jit.hot_threshold = 2;
  return options;
}

}  // namespace

std::string learned_shape_profile() {
  const ProfileFile file("");
  {
    const Runtime runtime(profiled_options(file.path));
    const Model model = runtime.load_text(kProfiledModel, "profiled.cnr");
    Session session = model.session();
    for (std::int64_t n : {2, 2, 2, 5, 7, 3, 9})
      session.run({{"x", filled({n, 4}, 1.0f)}, {"w", filled({4, 3}, 0.5f)}, {"n", Tensor::scalar<std::int64_t>(2)}});
  }  // the model writes what it learned when it goes
  std::ifstream in(file.path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

FuzzResult fuzz_shape_profile(std::string_view bytes) {
  const ProfileFile file(bytes);
  return run_guarded([&]() -> FuzzResult {
    const Runtime runtime(profiled_options(file.path));
    const Model model = runtime.load_text(kProfiledModel, "profiled.cnr");
    Session session = model.session(), reference = model.reference_session();
    const std::int64_t shapes[][2] = {{2, 4}, {2, 4}, {2, 4}, {5, 4}, {5, 7}, {1, 7}, {3, 16}, {3, 16}};
    for (const auto& [n, t] : shapes) {
      const NamedTensors in{{"x", filled({n, t}, static_cast<float>(n + t))},
                            {"w", filled({t, 3}, 0.5f)},
                            {"n", Tensor::scalar<std::int64_t>(3)}};
      const std::string diff = compare(session.run(in), reference.run(in));
      if (!diff.empty())
        return FuzzResult::finding("with the fuzzed profile, a call at [" + std::to_string(n) + ", " +
                                   std::to_string(t) + "] disagrees with the reference: " + diff);
    }
    for (const Event& e : model.events())
      if (e.kind == EventKind::Profile && e.message.find("starting without it") != std::string::npos)
        return FuzzResult::rejected(e.message);
    return FuzzResult::accepted();
  });
}

}  // namespace canary::fuzz

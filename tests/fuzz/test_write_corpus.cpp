// Writes the generated part of the seed corpus into tests/fuzz/corpus/. A
// hidden test case, run only by name when the seeds need remaking:
//   canary_fuzz_tests "[.write-corpus]"
// It writes: text_format seeds (the ONNX fixtures printed in the text format,
// and generated graphs with a Loop, an If, MatMul, reductions and data
// movement), npy seeds (every dtype in header versions 1.0, 2.0 and 3.0, a
// big-endian file, a scalar and an empty array) and graph_stream plans. The
// rest of the corpus is copies of tests/data (see tests/fuzz/README.md).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "cli/npy.h"
#include "graph/onnx_import.h"
#include "graph/text_format.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/jit_differential/random_graph.h"

using canary::DType;
using canary::Tensor;
namespace fs = std::filesystem;

namespace {

// Writes bytes to tests/fuzz/corpus/<target>/<name>.
void write_seed(const std::string& target, const std::string& name, const std::string& bytes) {
  const fs::path dir = fs::path(CANARY_FUZZ_DIR) / "corpus" / target;
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out);
}

// The ONNX fixtures of tests/data/onnx, printed in the text format, except
// those longer than the text_format target's -max_len (scripts/fuzz.sh):
// the trained torch models, whose text is mostly their weights.
void write_printed_onnx_fixtures() {
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(CANARY_TEST_DATA_DIR) / "onnx")) {
    const fs::path model = e.path() / "model.onnx";
    if (!fs::exists(model)) continue;
    const std::string text = canary::graph::print_graph(*canary::graph::import_onnx_file(model.string()));
    if (text.size() > 16384) continue;
    write_seed("text_format", "onnx_" + e.path().filename().string() + ".cnr", text);
  }
}

// The first seed below 1000 whose graph has a feature, per feature.
void write_generated_graphs() {
  using canary::differential::GraphFeatures;
  const std::vector<std::pair<std::string, std::function<bool(const GraphFeatures&)>>> wanted = {
      {"loop", [](const GraphFeatures& f) { return f.loop_over_t; }},
      {"if_in_loop", [](const GraphFeatures& f) { return f.if_in_loop; }},
      {"if", [](const GraphFeatures& f) { return f.if_node; }},
      {"matmul", [](const GraphFeatures& f) { return f.matmul; }},
      {"reduction_softmax", [](const GraphFeatures& f) { return f.reduction && f.softmax; }},
      {"layer_norm", [](const GraphFeatures& f) { return f.layer_norm; }},
      {"data_movement", [](const GraphFeatures& f) { return f.data_movement && f.broadcast; }},
  };
  for (const auto& [name, has] : wanted) {
    for (std::uint64_t seed = 0; seed < 1000; ++seed) {
      const canary::differential::RandomGraph g = canary::differential::generate_random_graph(seed);
      if (!has(g.features)) continue;
      write_seed("text_format", "generated_" + name + ".cnr", g.text);
      break;
    }
  }
}

// A 2x3 tensor of each dtype.
std::vector<std::pair<std::string, Tensor>> npy_tensors() {
  return {
      {"f32", Tensor::from_vector<float>({1.5f, -2, 0, 3, -0.0f, 7}, {2, 3})},
      {"f64", Tensor::from_vector<double>({1.5, -2, 0, 3, 1e300, 7}, {2, 3})},
      {"i64", Tensor::from_vector<std::int64_t>({1, -2, 0, 3, INT64_MAX, 7}, {2, 3})},
      {"i32", Tensor::from_vector<std::int32_t>({1, -2, 0, 3, INT32_MIN, 7}, {2, 3})},
      {"bool", Tensor::from_vector<bool>({true, false, false, true, true, false}, {2, 3})},
  };
}

// Every dtype in versions 1.0, 2.0 and 3.0 (3.0 is 2.0 with a UTF-8 header:
// the same bytes but the version), a big-endian file, a scalar, an empty array.
void write_npy_seeds() {
  for (const auto& [name, t] : npy_tensors()) {
    write_seed("npy", name + "_v1.npy", canary::cli::encode_npy(t, 1));
    std::string v2 = canary::cli::encode_npy(t, 2);
    write_seed("npy", name + "_v2.npy", v2);
    v2[6] = '\x03';
    write_seed("npy", name + "_v3.npy", v2);
  }
  std::string big = canary::cli::encode_npy(Tensor::from_vector<std::int32_t>({1, 256}, {2}), 1);
  big.replace(big.find("<i4"), 3, ">i4");
  big.replace(big.size() - 8, 8, std::string("\0\0\0\1\0\0\1\0", 8));
  write_seed("npy", "i32_big_endian.npy", big);
  write_seed("npy", "f32_scalar.npy", canary::cli::encode_npy(Tensor::scalar<float>(2.5f)));
  write_seed("npy", "f32_empty_0x3.npy", canary::cli::encode_npy(Tensor::empty(DType::F32, {0, 3})));
}

// A plan's bytes (stream_plan.h): seed, flags, call count, then the calls.
std::string plan_bytes(std::uint64_t seed, std::uint8_t flags, const std::string& calls, std::size_t count) {
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes += static_cast<char>((seed >> (8 * i)) & 0xFF);
  bytes += static_cast<char>(flags);
  bytes += static_cast<char>(count - 1);
  return bytes + calls;
}

// Bytes from a list of byte values.
std::string bytes_of(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s += static_cast<char>(v);
  return s;
}

// Plans over graphs with a Loop, an If and MatMul: small shapes held and
// changed, N = 0 and 1, the range maxima, NaN/Inf inputs with value canaries.
void write_graph_stream_seeds() {
  using canary::differential::generate_random_graph;
  std::uint64_t loop = 0, branch = 0, matmul = 0;
  while (!generate_random_graph(loop).features.loop_over_t) ++loop;
  while (!generate_random_graph(branch).features.if_node) ++branch;
  while (!generate_random_graph(matmul).features.matmul) ++matmul;
  // N=3 C=3 T=5; the same shape again; N=5.
  const std::string small = bytes_of({4, 3, 2, 4, 1, 0x11}) + bytes_of({0, 2, 0x12}) + bytes_of({1, 5, 0, 0x13});
  // N=0; N=1; N, C and T at their maxima; back to the first shape.
  const std::string edges = bytes_of({1, 0xf0, 0, 1}) + bytes_of({1, 0xf1, 0, 2}) +
                            bytes_of({4, 0xf3, 0xf3, 0xf3, 0, 3}) + bytes_of({5, 0, 4});
  write_seed("graph_stream", "loop_small_shapes", plan_bytes(loop, 0, small + small, 6));
  write_seed("graph_stream", "if_n0_n1_maxima", plan_bytes(branch, 1, edges, 4));
  write_seed("graph_stream", "matmul_nan_canaries", plan_bytes(matmul, 6, small + edges, 6));
  write_seed("graph_stream", "seed0_one_call", plan_bytes(0, 0, "", 1));
}

// Shape profiles: what the target's model learns, the same with its facts
// dropped (a version-1 file), one for another model, and the bare header.
void write_shape_profile_seeds() {
  const std::string learned = canary::fuzz::learned_shape_profile();
  REQUIRE(learned.rfind("canary-jit-profile 2 ", 0) == 0);
  write_seed("shape_profile", "learned", learned);
  const std::string header = learned.substr(0, learned.find('\n') + 1);
  write_seed("shape_profile", "header_only", header);
  std::string v1 = "canary-jit-profile 1" + header.substr(std::string("canary-jit-profile 2").size());
  std::istringstream lines(learned.substr(header.size()));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("symbolic ", 0) == 0) line = line.substr(0, line.find(' ', line.find(' ', 9) + 1));
    v1 += line + "\n";
  }
  write_seed("shape_profile", "version_1", v1);
  write_seed("shape_profile", "other_model", "canary-jit-profile 2 1:2:0\nanchor 5 entry tier 1\n");
}

}  // namespace

TEST_CASE("fuzz corpus: write the generated seeds", "[.write-corpus]") {
  write_printed_onnx_fixtures();
  write_generated_graphs();
  write_npy_seeds();
  write_graph_stream_seeds();
  write_shape_profile_seeds();
}

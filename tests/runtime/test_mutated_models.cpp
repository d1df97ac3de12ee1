// Mutated fixtures: every committed ONNX fixture (tests/data/onnx), damaged
// the ways a broken exporter or a corrupted file damages a model (flipped
// bytes, a cut-off file, edited attribute values, dims, element types and op
// types, nodes duplicated, dropped or fed the wrong inputs), must load and
// run or be refused with a canary::Error: never a crash, a hang or another
// exception. Seeded, with a fixed number of mutants per fixture, so a
// failure names the fixture and the mutation and replays exactly.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "canary/canary.h"
#include "tests/runtime/onnx_test_data.h"

using namespace onnx_test_data;
namespace fs = std::filesystem;

namespace {

constexpr int kMutantsPerFixture = 40;

std::size_t pick(std::mt19937& rng, std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }

// Values an edited integer takes: the usual suspects of overflow and off-by-one.
std::int64_t hostile_int(std::mt19937& rng) {
  static const std::int64_t values[] = {0, -1, 1, 2, 3, 7, 64, 1000000, -1000000, std::int64_t{1} << 31,
                                        std::int64_t{1} << 40, INT64_MAX, INT64_MIN};
  return values[pick(rng, std::size(values))];
}

// One mutation of the model's protobuf; its description, or "" when the
// model has nothing of that kind to mutate.
std::string mutate_proto(onnx::ModelProto& m, int kind, std::mt19937& rng) {
  onnx::GraphProto& g = *m.mutable_graph();
  const int nodes = g.node_size();
  switch (kind) {
    case 0: {  // an attribute's int, ints or float
      if (nodes == 0) return "";
      onnx::NodeProto& n = *g.mutable_node(static_cast<int>(pick(rng, nodes)));
      if (n.attribute_size() == 0) return "";
      onnx::AttributeProto& a = *n.mutable_attribute(static_cast<int>(pick(rng, n.attribute_size())));
      const std::int64_t v = hostile_int(rng);
      if (a.has_i()) a.set_i(v);
      else if (a.ints_size() > 0) a.set_ints(static_cast<int>(pick(rng, a.ints_size())), v);
      else if (a.has_f()) a.set_f(static_cast<float>(v));
      else return "";
      return "attribute '" + a.name() + "' of node " + n.op_type() + " set to " + std::to_string(v);
    }
    case 1: {  // a declared dim of an input or output
      auto* values = pick(rng, 2) == 0 ? g.mutable_input() : g.mutable_output();
      if (values->empty()) return "";
      onnx::ValueInfoProto& v = *values->Mutable(static_cast<int>(pick(rng, values->size())));
      auto* shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
      if (shape->dim_size() == 0) return "";
      const std::int64_t d = hostile_int(rng);
      shape->mutable_dim(static_cast<int>(pick(rng, shape->dim_size())))->set_dim_value(d);
      return "a dim of '" + v.name() + "' set to " + std::to_string(d);
    }
    case 2: {  // an op type
      if (nodes == 0) return "";
      static const char* ops[] = {"Relu", "MatMul", "Conv", "Loop", "Reshape", "Gather", "Softmax", "NoSuchOp", ""};
      onnx::NodeProto& n = *g.mutable_node(static_cast<int>(pick(rng, nodes)));
      const std::string op = ops[pick(rng, std::size(ops))];
      n.set_op_type(op);
      return "a node's op type set to '" + op + "'";
    }
    case 3: {  // an input's element type
      if (g.input_size() == 0) return "";
      const int type = static_cast<int>(pick(rng, 17));
      onnx::ValueInfoProto& v = *g.mutable_input(static_cast<int>(pick(rng, g.input_size())));
      v.mutable_type()->mutable_tensor_type()->set_elem_type(type);
      return "input '" + v.name() + "' element type set to " + std::to_string(type);
    }
    case 4: {  // a node duplicated (its outputs defined twice)
      if (nodes == 0) return "";
      *g.add_node() = g.node(static_cast<int>(pick(rng, nodes)));
      return "a node duplicated";
    }
    case 5: {  // a node dropped (its outputs never defined)
      if (nodes == 0) return "";
      g.mutable_node()->DeleteSubrange(static_cast<int>(pick(rng, nodes)), 1);
      return "a node dropped";
    }
    default: {  // a node input rewired to another value, or to itself
      if (nodes == 0) return "";
      onnx::NodeProto& n = *g.mutable_node(static_cast<int>(pick(rng, nodes)));
      if (n.input_size() == 0 || n.output_size() == 0) return "";
      const onnx::NodeProto& other = g.node(static_cast<int>(pick(rng, nodes)));
      const std::string to = other.output_size() > 0 ? other.output(0) : n.output(0);
      n.set_input(static_cast<int>(pick(rng, n.input_size())), to);
      return "an input of node " + n.op_type() + " rewired to '" + to + "'";
    }
  }
}

// One mutant of the file's bytes: raw damage, or an edit of its protobuf.
std::string mutant(const std::string& bytes, std::mt19937& rng, std::string& what) {
  const int kind = static_cast<int>(pick(rng, 9));
  if (kind == 7) {  // flipped bytes
    std::string out = bytes;
    const int flips = 1 + static_cast<int>(pick(rng, 8));
    for (int i = 0; i < flips; ++i) out[pick(rng, out.size())] ^= static_cast<char>(1 + pick(rng, 255));
    what = std::to_string(flips) + " bytes flipped";
    return out;
  }
  if (kind == 8) {  // a cut-off file
    const std::size_t keep = pick(rng, bytes.size());
    what = "cut to " + std::to_string(keep) + " of " + std::to_string(bytes.size()) + " bytes";
    return bytes.substr(0, keep);
  }
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(bytes));
  what = mutate_proto(m, kind, rng);
  if (what.empty()) return "";
  return m.SerializeAsString();
}

// Limits that keep a mutant whose sizes or trip counts went wild quick and small.
canary::Options bounded_options() {
  canary::Options o;
  o.max_tensor_bytes = std::size_t{64} << 20;
  o.max_loop_iterations = 4096;
  o.jit.synchronous = true;
  o.jit.hot_threshold = 1;
  return o;
}

// Loads the mutant and runs the fixture's first data set on it twice (the
// second call compiled); true when it ran, false when a canary::Error refused it.
bool load_and_run(const std::string& path, const std::vector<NamedTensor>& inputs) {
  try {
    const canary::Runtime rt(bounded_options());
    const canary::Model model = rt.load(path);
    canary::Session session = model.session();
    canary::NamedTensors in;
    for (const NamedTensor& t : inputs) in.emplace(t.name, t.value);
    for (int call = 0; call < 2; ++call) session.run(in);
    return true;
  } catch (const canary::Error&) {
    return false;
  }
}

}  // namespace

TEST_CASE("mutated fixtures: every mutant of every ONNX fixture runs or is refused with a canary::Error",
          "[unit][api][errors]") {
  const fs::path scratch = fs::temp_directory_path() / ("canary-mutants-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  int ran = 0, refused = 0;
  for (const std::string& name : case_names()) {
    const fs::path dir = fixtures_root() / name;
    std::ifstream in(dir / "model.onnx", std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::vector<DataSet> sets = read_data_sets(dir);
    const std::vector<NamedTensor> inputs = sets.empty() ? std::vector<NamedTensor>{} : sets.front().inputs;
    std::mt19937 rng(static_cast<std::uint32_t>(std::hash<std::string>{}(name)));
    for (int k = 0; k < kMutantsPerFixture; ++k) {
      std::string what;
      const std::string bytes_k = mutant(bytes, rng, what);
      if (bytes_k.empty() && what.empty()) continue;  // nothing of that kind to mutate
      const fs::path path = scratch / (name + "_" + std::to_string(k) + ".onnx");
      std::ofstream(path, std::ios::binary).write(bytes_k.data(), static_cast<std::streamsize>(bytes_k.size()));
      INFO(name << " mutant " << k << ": " << what);
      bool ok = false;
      CHECK_NOTHROW(ok = load_and_run(path.string(), inputs));
      (ok ? ran : refused) += 1;
      fs::remove(path);
    }
  }
  fs::remove_all(scratch);
  // Both outcomes occur: mutants that still make sense run, the rest are refused.
  CHECK(ran > 0);
  CHECK(refused > 0);
  WARN(ran << " mutants ran, " << refused << " were refused with a canary::Error");
}

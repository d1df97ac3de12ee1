// Differential tests on the committed ONNX fixtures (tests/data/onnx, written
// by tests/fixtures/make_onnx_fixtures.py): every data set of every case runs
// through Runtime::load + Session (oneDNN f32 path) and reference_session
// (f64 path); outputs must match the independently computed expected outputs
// (PyTorch eager or float64 NumPy) within the case's stated tolerance.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "canary/canary.h"
#include "graph/onnx_import.h"
#include "graph/op_kind.h"
#include "tests/runtime/onnx_test_data.h"

using canary::DType;
using canary::Tensor;
using namespace onnx_test_data;

namespace {

// |actual - expected| <= abs + rel * |expected|, element by element.
struct Tolerance {
  double rel = 0;
  double abs = 0;
};

// Tolerances of one case: for the Session (model precision) and for the reference session (f64).
struct CaseTolerance {
  Tolerance session;
  Tolerance reference;
};

// Expected outputs from float64 NumPy, rounded to f32: the reference path
// differs from them by the f32 rounding (6e-8 relative); the f32 path adds
// its own accumulation error over sums of at most a few hundred terms.
constexpr CaseTolerance kNumpyTolerance{{1e-5, 1e-6}, {1e-6, 1e-7}};
// Expected outputs from PyTorch in f32 (the exporter's own results): 1e-4
// relative, with a small absolute floor for outputs near zero.
constexpr CaseTolerance kTorchTolerance{{1e-4, 1e-6}, {1e-4, 1e-6}};

// How far one output is from its expectation.
struct Deviation {
  double max_abs = 0;      // largest |actual - expected|
  double max_rel = 0;      // largest |actual - expected| / |expected| over nonzero expected
  double worst_ratio = 0;  // largest |actual - expected| / (abs + rel * |expected|); <= 1 passes
};

// Element-wise deviation of actual from expected under tolerance tol (shapes already equal).
Deviation deviation(const Tensor& actual, const Tensor& expected, Tolerance tol) {
  Deviation dev;
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    double e = expected.element_as_double(i);
    double a = actual.element_as_double(i);
    // Equal values (infinities of one sign included) and NaN against NaN match exactly;
    // any other pair with a non-finite member is infinitely far apart.
    bool same = a == e || (std::isnan(a) && std::isnan(e));
    double diff = same ? 0.0 : (std::isfinite(a) && std::isfinite(e) ? std::abs(a - e) : INFINITY);
    dev.max_abs = std::max(dev.max_abs, diff);
    if (e != 0 && std::isfinite(e)) dev.max_rel = std::max(dev.max_rel, diff / std::abs(e));
    double bound = tol.abs + tol.rel * std::abs(e);
    if (diff > 0) dev.worst_ratio = std::max(dev.worst_ratio, bound > 0 ? diff / bound : INFINITY);
  }
  return dev;
}

// The dtype a session yields for an expected output: f32 becomes f64 in the reference path.
DType produced_dtype(DType expected, bool reference) {
  return reference && expected == DType::F32 ? DType::F64 : expected;
}

// Checks every expected output of one data set against what the session returned.
void check_outputs(const canary::NamedTensors& got, const DataSet& set, Tolerance tol, bool reference) {
  for (const NamedTensor& want : set.outputs) {
    INFO("output '" << want.name << "' of " << set.dir.filename().string() << " via "
                    << (reference ? "reference_session (f64)" : "session (f32)"));
    auto it = got.find(want.name);
    REQUIRE(it != got.end());
    const Tensor& actual = it->second;
    CHECK(actual.dtype() == produced_dtype(want.value.dtype(), reference));
    REQUIRE(actual.shape() == want.value.shape());
    // Integers and bools must match exactly.
    Tolerance bound = canary::is_floating(want.value.dtype()) ? tol : Tolerance{};
    Deviation dev = deviation(actual, want.value, bound);
    INFO("max abs error " << dev.max_abs << ", max rel error " << dev.max_rel << " (tolerance rel " << bound.rel
                          << ", abs " << bound.abs << ")");
    CHECK(dev.worst_ratio <= 1.0);
  }
}

// Loads tests/data/onnx/<name>/model.onnx and runs each data set through one
// Session and one reference session, so later sets reuse a session at new dims.
void check_case(const std::string& name, CaseTolerance tol) {
  INFO("ONNX fixture case '" << name << "'");
  std::filesystem::path dir = fixtures_root() / name;
  canary::Model model = canary::Runtime().load((dir / "model.onnx").string());
  std::vector<DataSet> sets = read_data_sets(dir);
  REQUIRE(!sets.empty());
  canary::Session session = model.session();
  canary::Session reference = model.reference_session();
  for (const DataSet& set : sets) {
    canary::NamedTensors inputs;
    for (const NamedTensor& in : set.inputs) inputs.emplace(in.name, in.value);
    REQUIRE(inputs.size() == model.inputs().size());
    check_outputs(session.run(inputs), set, tol.session, false);
    check_outputs(reference.run(inputs), set, tol.reference, true);
  }
}

// The cases this file tests, with their tolerances.
const std::vector<std::pair<std::string, CaseTolerance>>& tested_cases() {
  static const std::vector<std::pair<std::string, CaseTolerance>> cases = {
      {"torch_conv_net", kTorchTolerance},
      {"torch_lstm_classifier", kTorchTolerance},
      {"elementwise_binary", kNumpyTolerance},
      {"comparison", kNumpyTolerance},
      {"unary", kNumpyTolerance},
      {"math_unary", kNumpyTolerance},
      {"logic_mod", kNumpyTolerance},
      {"linear", kNumpyTolerance},
      {"conv", kNumpyTolerance},
      {"pool_norm", kNumpyTolerance},
      {"reductions", kNumpyTolerance},
      {"reductions_extra", kNumpyTolerance},
      {"gather_elements", kNumpyTolerance},
      {"cumsum_trilu_hardmax_size", kNumpyTolerance},
      {"activations_trig", kNumpyTolerance},
      {"xor_isnan_isinf", kNumpyTolerance},
      {"resize_modes", kNumpyTolerance},
      {"layout_index_ops", kNumpyTolerance},
      {"conv_transpose", kNumpyTolerance},
      {"scatter_gather_nd", kNumpyTolerance},
      {"rnn_lrn", kNumpyTolerance},
      {"classifier_heads", kNumpyTolerance},
      {"layer_norm", kNumpyTolerance},
      {"shape_ops", kNumpyTolerance},
      {"indexing", kNumpyTolerance},
      {"generators_layout", kNumpyTolerance},
      {"lstm", kNumpyTolerance},
      {"gru", kNumpyTolerance},
      {"scan", kNumpyTolerance},
      {"loop_rnn", kNumpyTolerance},
      {"loop_while", kNumpyTolerance},
      {"if_branch", kNumpyTolerance},
  };
  return cases;
}

// The tolerance of a listed case.
CaseTolerance tolerance_of(const std::string& name) {
  for (const auto& [case_name, tol] : tested_cases()) {
    if (case_name == name) return tol;
  }
  FAIL("case '" << name << "' has no tolerance in tested_cases()");
  return {};
}

// Adds the op kinds of every node of g and of its subgraphs to ops.
void collect_ops(const canary::graph::Graph& g, std::set<canary::graph::OpKind>& ops) {
  for (const canary::graph::Node& node : g.nodes()) {
    ops.insert(node.op);
    for (const auto& [attr_name, value] : node.attrs) {
      if (const auto* sub = std::get_if<std::shared_ptr<canary::graph::Graph>>(&value)) collect_ops(**sub, ops);
    }
  }
}

}  // namespace

TEST_CASE("onnx fixtures: every case directory is tested", "[unit][onnx][differential]") {
  std::vector<std::string> on_disk = case_names();
  std::vector<std::string> listed;
  for (const auto& entry : tested_cases()) listed.push_back(entry.first);
  std::sort(listed.begin(), listed.end());
  CHECK(on_disk == listed);
}

TEST_CASE("onnx fixtures: the models use every op the importer accepts", "[unit][onnx][differential]") {
  std::set<canary::graph::OpKind> used;
  for (const std::string& name : case_names()) {
    collect_ops(*canary::graph::import_onnx_file((fixtures_root() / name / "model.onnx").string()), used);
  }
  std::vector<std::string> missing;
  for (int k = 0; k < canary::graph::kOpKindCount; ++k) {
    auto op = static_cast<canary::graph::OpKind>(k);
    // Gelu exists from opset 20, past the importer's opsets 13 to 17.
    if (op == canary::graph::OpKind::Gelu || used.count(op)) continue;
    missing.emplace_back(canary::graph::op_name(op));
  }
  INFO("ops no fixture covers: extend tests/fixtures/make_onnx_fixtures.py");
  CHECK(missing == std::vector<std::string>{});
}

TEST_CASE("onnx fixtures: PyTorch Conv1d net, dynamic batch and time", "[unit][onnx][differential]") {
  check_case("torch_conv_net", tolerance_of("torch_conv_net"));
}

TEST_CASE("onnx fixtures: PyTorch 2-layer LSTM classifier, dynamic batch and time", "[unit][onnx][differential]") {
  check_case("torch_lstm_classifier", tolerance_of("torch_lstm_classifier"));
}

TEST_CASE("onnx fixtures: per-op models against NumPy", "[unit][onnx][differential]") {
  for (const char* name : {"elementwise_binary", "comparison", "unary", "math_unary", "logic_mod", "linear", "conv",
                           "pool_norm", "reductions", "reductions_extra", "classifier_heads", "layer_norm", "shape_ops", "indexing", "gather_elements", "cumsum_trilu_hardmax_size", "activations_trig", "xor_isnan_isinf", "resize_modes", "layout_index_ops", "conv_transpose", "scatter_gather_nd", "rnn_lrn", "generators_layout", "lstm",
                           "gru", "scan"}) {
    SECTION(name) { check_case(name, tolerance_of(name)); }
  }
}

TEST_CASE("onnx fixtures: control flow (Loop RNN, while-Loop, If) against NumPy", "[unit][onnx][differential]") {
  for (const char* name : {"loop_rnn", "loop_while", "if_branch"}) {
    SECTION(name) { check_case(name, tolerance_of(name)); }
  }
}

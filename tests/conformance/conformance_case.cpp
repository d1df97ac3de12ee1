// Runs one case of ONNX's backend node suite (a directory holding
// model.onnx and test_data_set_<k>/input_<j>.pb, output_<j>.pb) through
// Canary in three configurations and prints one verdict line:
//
//   pass
//   refused: <error kind>: <message>     Canary refused the model or an input
//                                        with its typed canary::Error
//   unsupported-dtype: <ONNX dtype>      an input or output Canary's tensors
//                                        cannot represent
//   wrong: <config> output <j>: <what>   an output differs from the expected one
//   error: <message>                     the case directory cannot be read
//
// The configurations: "interpreter" (JIT off), "jit" (synchronous compiles
// after one visit, the inputs run kJitCalls times so the compiled trace
// runs too; every call is compared), and "reference" (the fp64 reference
// session, Model::reference_session). Outputs are compared as ONNX's
// backend tests compare them: floats within atol + rtol |expected| (rtol
// 1e-3, atol 1e-7) with NaN where NaN is expected and infinities equal,
// integers and bools exactly, dtype and shape equal (the reference may
// return f64 where f32 is expected). A wrong answer outranks a refusal.
//
// Exit status: 0 for pass, refused and unsupported-dtype; 1 for wrong; 2 for
// error. Anything else (a signal, an uncaught exception) is a crash, so
// exceptions other than canary::Error are deliberately not caught.
// Usage: canary_conformance_case <case directory>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "canary/canary.h"
#include "graph/onnx_import_internal.h"  // tensor_from_onnx: the importer's TensorProto conversion

namespace {

namespace fs = std::filesystem;
using canary::DType;
using canary::Tensor;

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;
constexpr int kJitCalls = 4;

// A problem with the case directory itself (not with Canary).
struct CaseError {
  std::string message;
};

// The message on one line: control characters and backslashes escaped.
std::string one_line(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Every occurrence of `from` replaced by `to`.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CaseError{"cannot open " + path.string()};
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The paths "<prefix>_0<suffix>", "<prefix>_1<suffix>", ... that exist in dir.
std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix, const std::string& suffix) {
  std::vector<fs::path> paths;
  for (int k = 0;; ++k) {
    fs::path p = dir / (prefix + "_" + std::to_string(k) + suffix);
    if (!fs::exists(p)) break;
    paths.push_back(p);
  }
  return paths;
}

std::string onnx_type_name(int elem_type) {
  if (onnx::TensorProto_DataType_IsValid(elem_type)) {
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto::DataType>(elem_type));
  }
  return "element type " + std::to_string(elem_type);
}

bool representable(int elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::BOOL:
      return true;
    default:
      return false;
  }
}

// What a graph input or output holds when it is not a tensor ("sequence"), or "".
std::string non_tensor_kind(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      return "";
    case onnx::TypeProto::kSequenceType:
      return "sequence";
    case onnx::TypeProto::kMapType:
      return "map";
    case onnx::TypeProto::kOptionalType:
      return "optional";
    case onnx::TypeProto::kSparseTensorType:
      return "sparse tensor";
    default:
      return "value kind " + std::to_string(static_cast<int>(type.value_case()));
  }
}

struct NamedValue {
  std::string name;
  Tensor value;
};

struct DataSet {
  std::vector<NamedValue> inputs, outputs;
};

// The case as read from its directory.
struct Case {
  fs::path dir;
  onnx::ModelProto model;
  std::string unsupported_dtype;  // the first unrepresentable dtype, if any
  std::string non_tensor;         // the first non-tensor graph input or output ("sequence"), if any
  std::vector<DataSet> data_sets;
};

// Reads one .pb TensorProto; `name` is the graph input or output it belongs to.
NamedValue read_tensor(const fs::path& path, const std::string& graph_name) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(read_file(path))) throw CaseError{path.string() + " is not a TensorProto"};
  std::string name = proto.name().empty() ? graph_name : proto.name();
  try {
    return NamedValue{name, canary::graph::onnx_import::tensor_from_onnx(proto, "'" + name + "'")};
  } catch (const canary::Error& e) {
    throw CaseError{path.string() + ": " + e.detail()};
  }
}

// The element types of the graph's inputs and outputs and of the data files.
void check_dtypes(Case& c, const std::vector<std::vector<fs::path>>& data_files) {
  auto note = [&c](int elem_type) {
    if (c.unsupported_dtype.empty() && !representable(elem_type)) c.unsupported_dtype = onnx_type_name(elem_type);
  };
  for (const auto* values : {&c.model.graph().input(), &c.model.graph().output()}) {
    for (const onnx::ValueInfoProto& v : *values) {
      std::string kind = non_tensor_kind(v.type());
      if (!kind.empty()) {
        if (c.non_tensor.empty()) c.non_tensor = kind;
      } else {
        note(v.type().tensor_type().elem_type());
      }
    }
  }
  if (!c.non_tensor.empty()) return;  // the data files are not TensorProtos
  for (const std::vector<fs::path>& files : data_files) {
    for (const fs::path& p : files) {
      onnx::TensorProto proto;
      if (!proto.ParseFromString(read_file(p))) throw CaseError{p.string() + " is not a TensorProto"};
      note(proto.data_type());
    }
  }
}

Case read_case(const fs::path& dir) {
  Case c;
  c.dir = dir;
  if (!c.model.ParseFromString(read_file(dir / "model.onnx"))) throw CaseError{"model.onnx is not a ModelProto"};
  std::vector<fs::path> set_dirs = numbered(dir, "test_data_set", "");
  if (set_dirs.empty()) throw CaseError{"no test_data_set_0"};
  std::vector<std::vector<fs::path>> files;
  for (const fs::path& d : set_dirs) {
    files.push_back(numbered(d, "input", ".pb"));
    files.push_back(numbered(d, "output", ".pb"));
  }
  check_dtypes(c, files);
  if (!c.unsupported_dtype.empty() || !c.non_tensor.empty()) return c;
  const onnx::GraphProto& g = c.model.graph();
  for (std::size_t s = 0; s < set_dirs.size(); ++s) {
    DataSet set;
    const std::vector<fs::path>& in = files[2 * s];
    const std::vector<fs::path>& out = files[2 * s + 1];
    if (in.size() > static_cast<std::size_t>(g.input_size()) || out.size() != static_cast<std::size_t>(g.output_size())) {
      throw CaseError{set_dirs[s].string() + ": " + std::to_string(in.size()) + " inputs and " +
                      std::to_string(out.size()) + " outputs for a graph of " + std::to_string(g.input_size()) +
                      " and " + std::to_string(g.output_size())};
    }
    for (std::size_t j = 0; j < in.size(); ++j) set.inputs.push_back(read_tensor(in[j], g.input(static_cast<int>(j)).name()));
    for (std::size_t j = 0; j < out.size(); ++j) {
      set.outputs.push_back(read_tensor(out[j], g.output(static_cast<int>(j)).name()));
    }
    c.data_sets.push_back(std::move(set));
  }
  return c;
}

// "[1, 2, 0]": the multi-index of flat element i of a tensor of this shape.
std::string index_string(const canary::Shape& shape, std::int64_t i) {
  canary::Shape index(shape.size());
  for (std::size_t a = shape.size(); a-- > 0;) {
    std::int64_t d = std::max<std::int64_t>(shape[a], 1);
    index[a] = i % d;
    i /= d;
  }
  return canary::shape_to_string(index);
}

std::string number(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

// Empty when `actual` matches `expected`; otherwise what differs.
std::string compare(const Tensor& actual, const Tensor& expected, bool f64_for_f32) {
  bool dtype_ok = actual.dtype() == expected.dtype() ||
                  (f64_for_f32 && expected.dtype() == DType::F32 && actual.dtype() == DType::F64);
  if (!dtype_ok) return "dtype " + actual.type_string() + ", expected " + expected.type_string();
  if (actual.shape() != expected.shape()) return "shape " + actual.type_string() + ", expected " + expected.type_string();
  const std::int64_t n = expected.numel();
  if (!canary::is_floating(expected.dtype())) {
    // Exact: integers compared in their own type (i64 beyond 2^53 included).
    std::int64_t differing = 0, first = -1;
    for (std::int64_t i = 0; i < n; ++i) {
      bool same = false;
      switch (expected.dtype()) {
        case DType::I64: same = actual.data<std::int64_t>()[i] == expected.data<std::int64_t>()[i]; break;
        case DType::I32: same = actual.data<std::int32_t>()[i] == expected.data<std::int32_t>()[i]; break;
        case DType::Bool: same = actual.data<bool>()[i] == expected.data<bool>()[i]; break;
        default: break;
      }
      if (!same) {
        ++differing;
        if (first < 0) first = i;
      }
    }
    if (differing == 0) return "";
    return std::to_string(differing) + " of " + std::to_string(n) + " elements differ, first at index " +
           index_string(expected.shape(), first) + " (got " + number(actual.element_as_double(first)) +
           ", expected " + number(expected.element_as_double(first)) + ")";
  }
  // Mismatched NaN or infinity positions, and the largest finite difference.
  std::int64_t differing = 0, worst = -1, non_finite = -1;
  double worst_diff = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    double a = actual.element_as_double(i), e = expected.element_as_double(i);
    if (std::isnan(e) || std::isnan(a) || std::isinf(e) || std::isinf(a)) {
      bool same = (std::isnan(e) && std::isnan(a)) || a == e;
      if (!same) {
        ++differing;
        if (non_finite < 0) non_finite = i;
      }
      continue;
    }
    double diff = std::fabs(a - e);
    if (diff <= kAtol + kRtol * std::fabs(e)) continue;
    ++differing;
    if (diff > worst_diff) {
      worst_diff = diff;
      worst = i;
    }
  }
  if (differing == 0) return "";
  auto at = [&](std::int64_t i) {
    return "index " + index_string(expected.shape(), i) + " (got " + number(actual.element_as_double(i)) +
           ", expected " + number(expected.element_as_double(i)) + ")";
  };
  std::string text = std::to_string(differing) + " of " + std::to_string(n) + " elements outside rtol 1e-3 atol 1e-7";
  if (non_finite >= 0) text += ", NaN/Inf positions differ at " + at(non_finite);
  if (worst >= 0) text += ", max abs diff " + number(worst_diff) + " at " + at(worst);
  return text;
}

// The verdict of one case; the first refusal and the first wrong answer win.
struct Verdict {
  std::optional<canary::Error> refusal;
  std::string wrong;
  std::uint64_t jit_compiled_entries = 0;

  void refuse(const canary::Error& e) {
    if (!refusal) refusal = e;
  }
};

canary::NamedTensors inputs_of(const DataSet& set) {
  canary::NamedTensors in;
  for (const NamedValue& v : set.inputs) in[v.name] = v.value.clone();
  return in;
}

// Runs every data set once on the session (kJitCalls times for "jit") and
// compares the outputs; stops at the first refusal or wrong answer.
void run_config(const std::string& config, canary::Session& session, const Case& c, Verdict& verdict) {
  const bool jit = config == "jit";
  const bool reference = config == "reference";
  for (std::size_t s = 0; s < c.data_sets.size(); ++s) {
    const DataSet& set = c.data_sets[s];
    for (int call = 1; call <= (jit ? kJitCalls : 1); ++call) {
      canary::NamedTensors out;
      try {
        out = session.run(inputs_of(set));
      } catch (const canary::Error& e) {
        verdict.refuse(e);
        return;
      }
      for (std::size_t j = 0; j < set.outputs.size(); ++j) {
        const NamedValue& expected = set.outputs[j];
        auto it = out.find(expected.name);
        std::string what = it == out.end() ? "missing from the result" : compare(it->second, expected.value, reference);
        if (what.empty()) continue;
        std::string where = config;
        if (c.data_sets.size() > 1) where += " data set " + std::to_string(s);
        if (jit) where += " call " + std::to_string(call);
        if (verdict.wrong.empty()) verdict.wrong = where + " output " + std::to_string(j) + " '" + expected.name + "': " + what;
        return;
      }
    }
  }
}

int run_case(const fs::path& dir) {
  Case c = read_case(dir);
  if (!c.unsupported_dtype.empty()) {
    std::cout << "unsupported-dtype: " << c.unsupported_dtype << "\n";
    return 0;
  }
  // Messages name the model by the path it was loaded from; the case's
  // directory is dropped so verdicts do not depend on where cases live.
  const std::string model_path = (dir / "model.onnx").string();
  auto refused = [&](const canary::Error& e) {
    std::string detail = replace_all(e.detail(), dir.string() + "/", "");
    std::cout << "refused: " << canary::error_kind_name(e.kind()) << ": " << one_line(detail) << "\n";
    return 0;
  };

  canary::Options interpreter_options;
  interpreter_options.jit.enabled = false;
  // As tests/jit_differential does: tier up after one visit, by visits only, compiling inline.
  canary::Options jit_options;
  jit_options.jit.enabled = true;
  jit_options.jit.synchronous = true;
  jit_options.jit.hot_threshold = 1;
  jit_options.jit.hot_time_us = 0;

  canary::Runtime interpreter_runtime(interpreter_options), jit_runtime(jit_options);
  std::optional<canary::Model> interpreter_model, jit_model;
  try {
    interpreter_model = interpreter_runtime.load(model_path);
    jit_model = jit_runtime.load(model_path);
  } catch (const canary::Error& e) {
    return refused(e);
  }
  if (!c.non_tensor.empty()) {
    // Canary took a model whose inputs or outputs are not tensors.
    std::cout << "unsupported-dtype: " << c.non_tensor << "\n";
    return 0;
  }

  Verdict verdict;
  {
    canary::Session s = interpreter_model->session();
    run_config("interpreter", s, c, verdict);
  }
  {
    canary::Session s = jit_model->session();
    run_config("jit", s, c, verdict);
    verdict.jit_compiled_entries = s.stats().jit.compiled_entries;
  }
  {
    canary::Session s = interpreter_model->reference_session();
    run_config("reference", s, c, verdict);
  }
  // Not part of the verdict: whether compiled code ran (the driver counts it).
  std::cerr << "jit-compiled-entries: " << verdict.jit_compiled_entries << "\n";
  if (!verdict.wrong.empty()) {
    std::cout << "wrong: " << one_line(replace_all(verdict.wrong, dir.string() + "/", "")) << "\n";
    return 1;
  }
  if (verdict.refusal) return refused(*verdict.refusal);
  std::cout << "pass\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " <case directory>\n";
    return 2;
  }
  try {
    fs::path dir = fs::path(argv[1]).lexically_normal();
    if (!dir.has_filename()) dir = dir.parent_path();  // "case/" -> "case"
    return run_case(dir);
  } catch (const CaseError& e) {
    std::cout << "error: " << one_line(e.message) << "\n";
    return 2;
  }
}

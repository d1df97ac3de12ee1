// Reads ONNX backend-test data sets (serialized TensorProtos) into canary Tensors.
#include "tests/runtime/onnx_test_data.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace onnx_test_data {
namespace {

namespace fs = std::filesystem;
using canary::DType;
using canary::Tensor;

// The canary dtype of an ONNX element type.
DType dtype_of_proto(const onnx::TensorProto& proto) {
  switch (proto.data_type()) {
    case onnx::TensorProto::FLOAT: return DType::F32;
    case onnx::TensorProto::DOUBLE: return DType::F64;
    case onnx::TensorProto::INT64: return DType::I64;
    case onnx::TensorProto::INT32: return DType::I32;
    case onnx::TensorProto::BOOL: return DType::Bool;
    default:
      throw std::runtime_error("tensor '" + proto.name() + "': unsupported ONNX element type " +
                               std::to_string(proto.data_type()));
  }
}

// Copies the typed repeated field of the proto into the tensor, element by element.
template <typename T, typename Field>
void copy_typed(const Field& field, Tensor& t, const std::string& name) {
  if (field.size() != t.numel()) {
    throw std::runtime_error("tensor '" + name + "': " + std::to_string(field.size()) + " values for " +
                             std::to_string(t.numel()) + " elements");
  }
  T* out = t.data<T>();
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
}

// Fills the tensor from the proto's typed field for its dtype.
void copy_typed_fields(const onnx::TensorProto& proto, Tensor& t) {
  switch (t.dtype()) {
    case DType::F32: return copy_typed<float>(proto.float_data(), t, proto.name());
    case DType::F64: return copy_typed<double>(proto.double_data(), t, proto.name());
    case DType::I64: return copy_typed<std::int64_t>(proto.int64_data(), t, proto.name());
    case DType::I32: return copy_typed<std::int32_t>(proto.int32_data(), t, proto.name());
    case DType::Bool: return copy_typed<bool>(proto.int32_data(), t, proto.name());
  }
}

// The k of a "<prefix>_<k>" name, or -1 when the name has another form.
int index_after(const std::string& name, const std::string& prefix) {
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return -1;
  std::string digits = name.substr(prefix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return -1;
  return std::stoi(digits);
}

// The entries of dir named "<prefix>_<k><suffix>", ordered by k; k must run 0, 1, 2, ...
std::vector<fs::path> numbered_entries(const fs::path& dir, const std::string& prefix, const std::string& suffix) {
  std::vector<std::pair<int, fs::path>> found;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    int k = index_after(name.substr(0, name.size() - suffix.size()), prefix + "_");
    if (k >= 0) found.emplace_back(k, e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> paths;
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (found[i].first != static_cast<int>(i)) throw std::runtime_error(dir.string() + ": " + prefix + " numbering has a gap");
    paths.push_back(found[i].second);
  }
  return paths;
}

}  // namespace

// tests/data/onnx.
fs::path fixtures_root() { return fs::path(CANARY_TEST_DATA_DIR) / "onnx"; }

// The sorted sub-directory names of fixtures_root().
std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(fixtures_root())) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Dims, dtype and values of the proto as a Tensor.
Tensor tensor_from_proto(const onnx::TensorProto& proto) {
  DType dtype = dtype_of_proto(proto);
  canary::Shape shape(proto.dims().begin(), proto.dims().end());
  Tensor t = Tensor::empty(dtype, shape);
  if (!proto.has_raw_data()) {
    copy_typed_fields(proto, t);
    return t;
  }
  if (proto.raw_data().size() != t.nbytes()) {
    throw std::runtime_error("tensor '" + proto.name() + "': raw_data holds " + std::to_string(proto.raw_data().size()) +
                             " bytes, expected " + std::to_string(t.nbytes()));
  }
  if (t.nbytes() > 0) std::memcpy(t.raw(), proto.raw_data().data(), t.nbytes());
  return t;
}

// Parses the file as a TensorProto.
NamedTensor read_tensor_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes.str())) throw std::runtime_error(path.string() + " is not a TensorProto");
  if (proto.name().empty()) throw std::runtime_error(path.string() + ": the TensorProto has no name");
  return NamedTensor{proto.name(), tensor_from_proto(proto)};
}

// Reads test_data_set_0, test_data_set_1, ... of the case.
std::vector<DataSet> read_data_sets(const fs::path& case_dir) {
  std::vector<DataSet> sets;
  for (const fs::path& dir : numbered_entries(case_dir, "test_data_set", "")) {
    DataSet set{dir, {}, {}};
    for (const fs::path& p : numbered_entries(dir, "input", ".pb")) set.inputs.push_back(read_tensor_file(p));
    for (const fs::path& p : numbered_entries(dir, "output", ".pb")) set.outputs.push_back(read_tensor_file(p));
    sets.push_back(std::move(set));
  }
  return sets;
}

}  // namespace onnx_test_data

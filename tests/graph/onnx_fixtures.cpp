// Builders of ONNX ModelProtos for the importer's tests.
#include "tests/graph/onnx_fixtures.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

namespace onnx_fixtures {

// A value with elem type and dims (size, dim_param, or "?" for unknown).
onnx::ValueInfoProto value(const std::string& name, int elem_type, const std::vector<DimSpec>& dims) {
  onnx::ValueInfoProto v = unshaped(name, elem_type);
  auto* shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
  for (const DimSpec& d : dims) {
    auto* dim = shape->add_dim();
    if (const auto* size = std::get_if<std::int64_t>(&d))
      dim->set_dim_value(*size);
    else if (std::get<std::string>(d) != "?")
      dim->set_dim_param(std::get<std::string>(d));
  }
  return v;
}

// A value with an element type and no shape.
onnx::ValueInfoProto unshaped(const std::string& name, int elem_type) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  v.mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  return v;
}

// One attribute of each kind.
onnx::AttributeProto attr_int(const std::string& name, std::int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}
onnx::AttributeProto attr_float(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}
onnx::AttributeProto attr_string(const std::string& name, const std::string& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}
onnx::AttributeProto attr_ints(const std::string& name, const std::vector<std::int64_t>& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (std::int64_t x : v) a.add_ints(x);
  return a;
}
onnx::AttributeProto attr_floats(const std::string& name, const std::vector<float>& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOATS);
  for (float x : v) a.add_floats(x);
  return a;
}
onnx::AttributeProto attr_strings(const std::string& name, const std::vector<std::string>& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRINGS);
  for (const std::string& x : v) a.add_strings(x);
  return a;
}
onnx::AttributeProto attr_graph(const std::string& name, const onnx::GraphProto& g) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::GRAPH);
  *a.mutable_g() = g;
  return a;
}

// A node of the default domain.
onnx::NodeProto node(const std::string& op, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs, const std::vector<onnx::AttributeProto>& attrs,
                     const std::string& name) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (const std::string& in : inputs) n.add_input(in);
  for (const std::string& out : outputs) n.add_output(out);
  for (const onnx::AttributeProto& a : attrs) *n.add_attribute() = a;
  return n;
}

namespace {

// A tensor header: name, element type, dims.
onnx::TensorProto tensor_header(const std::string& name, int elem_type, const std::vector<std::int64_t>& dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(elem_type);
  for (std::int64_t d : dims) t.add_dims(d);
  return t;
}

}  // namespace

// Tensors in the typed fields.
onnx::TensorProto f32_tensor(const std::string& name, const std::vector<std::int64_t>& dims,
                             const std::vector<float>& v) {
  onnx::TensorProto t = tensor_header(name, kFloat, dims);
  for (float x : v) t.add_float_data(x);
  return t;
}
onnx::TensorProto f64_tensor(const std::string& name, const std::vector<std::int64_t>& dims,
                             const std::vector<double>& v) {
  onnx::TensorProto t = tensor_header(name, kDouble, dims);
  for (double x : v) t.add_double_data(x);
  return t;
}
onnx::TensorProto i64_tensor(const std::string& name, const std::vector<std::int64_t>& dims,
                             const std::vector<std::int64_t>& v) {
  onnx::TensorProto t = tensor_header(name, kInt64, dims);
  for (std::int64_t x : v) t.add_int64_data(x);
  return t;
}
onnx::TensorProto i32_tensor(const std::string& name, const std::vector<std::int64_t>& dims,
                             const std::vector<std::int32_t>& v) {
  onnx::TensorProto t = tensor_header(name, kInt32, dims);
  for (std::int32_t x : v) t.add_int32_data(x);
  return t;
}
onnx::TensorProto bool_tensor(const std::string& name, const std::vector<std::int64_t>& dims,
                              const std::vector<int>& v) {
  onnx::TensorProto t = tensor_header(name, kBool, dims);
  for (int x : v) t.add_int32_data(x);
  return t;
}

// A tensor whose bytes are raw_data.
onnx::TensorProto raw_tensor(const std::string& name, int elem_type, const std::vector<std::int64_t>& dims,
                             const void* data, std::size_t bytes) {
  onnx::TensorProto t = tensor_header(name, elem_type, dims);
  t.set_raw_data(std::string(static_cast<const char*>(data), bytes));
  return t;
}

// A graph from its parts.
onnx::GraphProto graph(const std::string& name, const std::vector<onnx::NodeProto>& nodes,
                       const std::vector<onnx::ValueInfoProto>& inputs,
                       const std::vector<onnx::ValueInfoProto>& outputs,
                       const std::vector<onnx::TensorProto>& initializers) {
  onnx::GraphProto g;
  g.set_name(name);
  for (const auto& n : nodes) *g.add_node() = n;
  for (const auto& v : inputs) *g.add_input() = v;
  for (const auto& v : outputs) *g.add_output() = v;
  for (const auto& t : initializers) *g.add_initializer() = t;
  return g;
}

// A model importing the default domain at `opset`.
onnx::ModelProto model(const onnx::GraphProto& g, std::int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("canary-tests");
  auto* id = m.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  *m.mutable_graph() = g;
  return m;
}

// The serialized model.
std::string bytes(const onnx::ModelProto& m) {
  std::string out;
  m.SerializeToString(&out);
  return out;
}

// Writes a uniquely named temp file whose name ends with `stem`.
std::string write_temp_file(const std::string& stem, const std::string& contents) {
  static std::atomic<int> counter{0};
  std::filesystem::path p = std::filesystem::temp_directory_path() /
                            ("canary_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + stem);
  std::ofstream(p, std::ios::binary) << contents;
  return p.string();
}

}  // namespace onnx_fixtures

// Builders of ONNX ModelProtos for the importer's tests: values, nodes,
// attributes, tensors, graphs and models, written in C++ (no Python needed).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace onnx_fixtures {

// A dimension: a size, a dim_param name, or "?" for an unknown dim.
using DimSpec = std::variant<std::int64_t, std::string>;

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kDouble = onnx::TensorProto::DOUBLE;
constexpr int kInt64 = onnx::TensorProto::INT64;
constexpr int kInt32 = onnx::TensorProto::INT32;
constexpr int kBool = onnx::TensorProto::BOOL;
constexpr int kFloat16 = onnx::TensorProto::FLOAT16;

// A tensor value with a shape.
onnx::ValueInfoProto value(const std::string& name, int elem_type, const std::vector<DimSpec>& dims);
// A tensor value with an element type but no shape (unknown rank).
onnx::ValueInfoProto unshaped(const std::string& name, int elem_type);

onnx::AttributeProto attr_int(const std::string& name, std::int64_t v);
onnx::AttributeProto attr_float(const std::string& name, float v);
onnx::AttributeProto attr_string(const std::string& name, const std::string& v);
onnx::AttributeProto attr_ints(const std::string& name, const std::vector<std::int64_t>& v);
onnx::AttributeProto attr_floats(const std::string& name, const std::vector<float>& v);
onnx::AttributeProto attr_strings(const std::string& name, const std::vector<std::string>& v);
onnx::AttributeProto attr_graph(const std::string& name, const onnx::GraphProto& g);

onnx::NodeProto node(const std::string& op, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs, const std::vector<onnx::AttributeProto>& attrs = {},
                     const std::string& name = "");

// Tensors in the typed fields (float_data, double_data, int64_data, int32_data).
onnx::TensorProto f32_tensor(const std::string& name, const std::vector<std::int64_t>& dims,
                             const std::vector<float>& v);
onnx::TensorProto f64_tensor(const std::string& name, const std::vector<std::int64_t>& dims,
                             const std::vector<double>& v);
onnx::TensorProto i64_tensor(const std::string& name, const std::vector<std::int64_t>& dims,
                             const std::vector<std::int64_t>& v);
onnx::TensorProto i32_tensor(const std::string& name, const std::vector<std::int64_t>& dims,
                             const std::vector<std::int32_t>& v);
onnx::TensorProto bool_tensor(const std::string& name, const std::vector<std::int64_t>& dims,
                              const std::vector<int>& v);
// A tensor whose bytes go into raw_data (little-endian, as on this machine).
onnx::TensorProto raw_tensor(const std::string& name, int elem_type, const std::vector<std::int64_t>& dims,
                             const void* data, std::size_t bytes);

onnx::GraphProto graph(const std::string& name, const std::vector<onnx::NodeProto>& nodes,
                       const std::vector<onnx::ValueInfoProto>& inputs,
                       const std::vector<onnx::ValueInfoProto>& outputs,
                       const std::vector<onnx::TensorProto>& initializers = {});
onnx::ModelProto model(const onnx::GraphProto& g, std::int64_t opset = 13);
std::string bytes(const onnx::ModelProto& m);
// Writes bytes to a fresh file in the temp directory whose name ends with
// `stem` ("mlp.onnx") and returns its path.
std::string write_temp_file(const std::string& stem, const std::string& contents);

// --- models used by several tests --------------------------------------
// y = relu(x @ W + b), x f32["batch size", 2], W [2, 3], b [3].
onnx::ModelProto mlp_model();
// y = Conv1d(x [1, 1, T], kernel [1, 0, -1], bias 0.5, pads 1).
onnx::ModelProto conv1d_model();
// y = Reshape(x [N, 4, 6], Concat(Unsqueeze(Gather(Shape(x), 0)), [24])): [N, 24].
onnx::ModelProto shape_chain_model();
// Loop of M = 3 steps adding the outer x to a carried sum, also scanning it.
onnx::ModelProto loop_model();
// If c then x + 1 else x * 2 (branches read the outer x).
onnx::ModelProto if_model();
// Scan: running sum over the rows of xs [T, 2], final sum and every partial sum.
onnx::ModelProto scan_model();
// LSTM, hidden size 1, activations given explicitly, over x [T, 1, 1].
onnx::ModelProto lstm_model();
// If nodes nested `depth` levels deep.
onnx::ModelProto nested_if_model(int depth);

}  // namespace onnx_fixtures

// Reads ONNX backend-test data sets (test_data_set_<k>/input_<i>.pb and
// output_<j>.pb, each a serialized onnx.TensorProto) into canary Tensors.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <vector>

#include "canary/tensor.h"

namespace onnx_test_data {

struct NamedTensor {
  std::string name;  // the TensorProto's name: the graph input or output it belongs to
  canary::Tensor value;
};

struct DataSet {
  std::filesystem::path dir;
  std::vector<NamedTensor> inputs;   // input_0.pb, input_1.pb, ... in order
  std::vector<NamedTensor> outputs;  // output_0.pb, ... in order
};

// The directory holding one sub-directory per case (tests/data/onnx).
std::filesystem::path fixtures_root();
// The case directories under fixtures_root(), sorted by name.
std::vector<std::string> case_names();

// A tensor with the proto's dims and values (raw_data or the typed fields);
// f32, f64, i64, i32 and bool only. Throws std::runtime_error otherwise.
canary::Tensor tensor_from_proto(const onnx::TensorProto& proto);
// Parses one .pb file holding a serialized TensorProto.
NamedTensor read_tensor_file(const std::filesystem::path& path);
// Every test_data_set_<k> of a case directory, in increasing k.
std::vector<DataSet> read_data_sets(const std::filesystem::path& case_dir);

}  // namespace onnx_test_data

// Limits the ONNX importer enforces before trusting a file: its size before
// reading it, and the range and type of Scan's num_scan_inputs.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

#include "canary/error.h"
#include "graph/onnx_import.h"
#include "tests/graph/onnx_fixtures.h"
#include "tests/graph/onnx_import_checks.h"

using namespace onnx_fixtures;
using canary::Error;
using canary::ErrorKind;
using canary::graph::import_onnx;
using canary::graph::import_onnx_file;

namespace {

// The Error(Model) message importing the bytes throws.
std::string model_error(const onnx::ModelProto& m) { return canary::test::import_error(bytes(m), "scan.onnx"); }

// The running-sum Scan model with its num_scan_inputs attribute replaced by a.
onnx::ModelProto scan_with(const onnx::AttributeProto& a) {
  onnx::ModelProto m = scan_model();
  onnx::NodeProto* scan = m.mutable_graph()->mutable_node(0);
  for (onnx::AttributeProto& existing : *scan->mutable_attribute())
    if (existing.name() == "num_scan_inputs") existing = a;
  return m;
}

}  // namespace

TEST_CASE("onnx file: a file over 2 GiB is rejected by size before it is read", "[unit][onnx]") {
  // A sparse file: its size is 2^31 bytes but it occupies no disk or memory.
  const std::string path = write_temp_file("huge.onnx", "");
  std::filesystem::resize_file(path, std::uintmax_t{1} << 31);
  std::string message;
  try {
    import_onnx_file(path);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Model);
    message = e.what();
  }
  std::filesystem::remove(path);
  CHECK_THAT(message, Catch::Contains(path));
  CHECK_THAT(message, Catch::Contains("2147483648 bytes"));
  CHECK_THAT(message, Catch::Contains("2 GiB"));
}

TEST_CASE("onnx file: a missing file and a directory give Error(Model)", "[unit][onnx]") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string missing = dir + "/canary_no_such_model_file.onnx";
  for (const std::string& path : {missing, dir}) {
    try {
      import_onnx_file(path);
      FAIL("expected a canary::Error for " << path);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Model);
      CHECK_THAT(std::string(e.what()), Catch::Contains(path));
    }
  }
}

TEST_CASE("onnx file: a file read by size imports like its bytes", "[unit][onnx]") {
  const std::string path = write_temp_file("limits_mlp.onnx", bytes(mlp_model()));
  auto g = import_onnx_file(path);
  std::filesystem::remove(path);
  REQUIRE(g != nullptr);
  CHECK(g->inputs().size() == 1);
  CHECK(g->outputs().size() == 1);
}

TEST_CASE("onnx: truncated bytes of a valid model give Error(Model) naming the source", "[unit][onnx]") {
  const std::string data = bytes(mlp_model());
  try {
    import_onnx(data.substr(0, data.size() / 2), "cut.onnx");
    FAIL("expected a canary::Error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Model);
    CHECK_THAT(std::string(e.what()), Catch::Contains("cut.onnx"));
  }
}

TEST_CASE("onnx: Scan num_scan_inputs out of range is Error(Model)", "[unit][onnx][control]") {
  for (std::int64_t n : {std::numeric_limits<std::int64_t>::min(), std::int64_t{-1}, std::int64_t{3},
                         std::numeric_limits<std::int64_t>::max()}) {
    const std::string message = model_error(scan_with(attr_int("num_scan_inputs", n)));
    CHECK_THAT(message, Catch::Contains("num_scan_inputs"));
    CHECK_THAT(message, Catch::Contains(std::to_string(n)));
  }
}

TEST_CASE("onnx: Scan num_scan_inputs of a non-INT type is Error(Model)", "[unit][onnx][control]") {
  const std::string as_float = model_error(scan_with(attr_float("num_scan_inputs", 1.0f)));
  CHECK_THAT(as_float, Catch::Contains("num_scan_inputs"));
  CHECK_THAT(as_float, Catch::Contains("expected INT"));
  const std::string as_ints = model_error(scan_with(attr_ints("num_scan_inputs", {1})));
  CHECK_THAT(as_ints, Catch::Contains("expected INT"));
}

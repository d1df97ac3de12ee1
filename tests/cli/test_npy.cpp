// .npy reading and writing: round trips of every dtype and header version,
// numpy's exact bytes, and malformed files rejected with a clear Error(Input).
#include <catch2/catch.hpp>

#include <cstring>

#include "canary/error.h"
#include "cli/npy.h"
#include "cli/npy_header.h"
#include "cli_process.h"

using canary::DType;
using canary::Tensor;
using canary::cli::encode_npy;
using canary::cli::parse_npy;

namespace {

// numpy.save(np.array([[1, 2, 3], [4, 5, 6]], dtype='<f4')): 128 header bytes, then 24 data bytes.
std::string numpy_f32_2x3() {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  std::string bytes = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict;
  bytes.append(127 - bytes.size(), ' ');
  bytes += '\n';
  const float values[] = {1, 2, 3, 4, 5, 6};
  bytes.append(reinterpret_cast<const char*>(values), sizeof values);
  return bytes;
}

// The message of the Error(Input) that parsing `bytes` throws ("" when none).
std::string parse_error(const std::string& bytes) {
  try {
    parse_npy(bytes, "bad.npy");
  } catch (const canary::Error& e) {
    CHECK(e.kind() == canary::ErrorKind::Input);
    return e.what();
  }
  return "";
}

// A .npy file of `data` bytes with the given dict, version 1.0, unpadded.
std::string npy_with_dict(const std::string& dict, const std::string& data) {
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(dict.size() & 0xFF);
  bytes += static_cast<char>(dict.size() >> 8);
  return bytes + dict + data;
}

}  // namespace

TEST_CASE("npy: numpy's exact bytes decode to the array and encode back identically", "[unit][npy]") {
  const std::string bytes = numpy_f32_2x3();
  REQUIRE(bytes.size() == 152);
  const Tensor t = parse_npy(bytes, "a.npy");
  CHECK(t.dtype() == DType::F32);
  CHECK(t.shape() == canary::Shape{2, 3});
  for (int i = 0; i < 6; ++i) CHECK(t.data<float>()[i] == static_cast<float>(i + 1));
  CHECK(encode_npy(t) == bytes);
}

TEST_CASE("npy: every dtype round-trips through both header versions", "[unit][npy]") {
  const std::vector<Tensor> tensors = {
      Tensor::from_vector<float>({1.5f, -2.25f, 3e-8f}, {3}),
      Tensor::from_vector<double>({1e300, -0.5, 2.0, 4.0}, {2, 2}),
      Tensor::from_vector<std::int64_t>({-(std::int64_t{1} << 40), 7}, {2, 1}),
      Tensor::from_vector<std::int32_t>({-3, 0, 2147483647}, {1, 3}),
      Tensor::from_vector<bool>({true, false, true}, {3}),
      Tensor::scalar<float>(42.0f),
      Tensor::empty(DType::F32, {0, 5}),
  };
  for (int version : {1, 2}) {
    for (const Tensor& t : tensors) {
      const std::string bytes = encode_npy(t, version);
      CHECK(static_cast<int>(bytes[6]) == version);
      const std::size_t prefix = version == 1 ? 10 : 12;
      CHECK((bytes.size() - t.nbytes()) % 64 == 0);  // header padded to 64 bytes
      CHECK(bytes[bytes.size() - t.nbytes() - 1] == '\n');
      CHECK(bytes.size() > prefix);
      const Tensor back = parse_npy(bytes, "t.npy");
      CHECK(back.dtype() == t.dtype());
      CHECK(back.shape() == t.shape());
      REQUIRE(back.nbytes() == t.nbytes());
      CHECK(std::memcmp(back.raw(), t.raw(), t.nbytes()) == 0);
    }
  }
}

TEST_CASE("npy: header version 2.0 and 3.0 use a 4-byte header length", "[unit][npy]") {
  const std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n";
  const std::int32_t values[] = {7, -9};
  for (char major : {'\x02', '\x03'}) {
    std::string bytes = std::string("\x93NUMPY", 6) + major + '\0';
    bytes += static_cast<char>(dict.size());
    bytes += std::string(3, '\0');
    bytes += dict;
    bytes.append(reinterpret_cast<const char*>(values), sizeof values);
    const Tensor t = parse_npy(bytes, "v.npy");
    CHECK(t.dtype() == DType::I32);
    CHECK(t.shape() == canary::Shape{2});
    CHECK(t.data<std::int32_t>()[0] == 7);
    CHECK(t.data<std::int32_t>()[1] == -9);
  }
}

TEST_CASE("npy: big-endian data is byte-swapped, scalars and Python 2 dims parse", "[unit][npy]") {
  const std::string be_one = std::string("\x3f\xf0\0\0\0\0\0\0", 8);  // 1.0 as big-endian f64
  const Tensor t = parse_npy(npy_with_dict("{'descr': '>f8', 'fortran_order': False, 'shape': (), }", be_one), "b.npy");
  CHECK(t.rank() == 0);
  CHECK(t.data<double>()[0] == 1.0);
  const Tensor u = parse_npy(npy_with_dict("{\"shape\": (1L, 2L), \"fortran_order\": False, \"descr\": \"|b1\"}",
                                           std::string("\x01\x00", 2)),
                             "c.npy");
  CHECK(u.shape() == canary::Shape{1, 2});
  CHECK(u.data<bool>()[0]);
  CHECK_FALSE(u.data<bool>()[1]);
}

TEST_CASE("npy: malformed files name the file and what is wrong", "[unit][npy]") {
  const std::string good = numpy_f32_2x3();
  CHECK_THAT(parse_error("NUMPY"), Catch::Contains("bad.npy") && Catch::Contains("too short"));
  CHECK_THAT(parse_error("PK\x03\x04 this is a zip file"), Catch::Contains("magic"));
  std::string v9 = good;
  v9[6] = 9;
  CHECK_THAT(parse_error(v9), Catch::Contains("unsupported .npy version 9.0"));
  CHECK_THAT(parse_error(good.substr(0, 60)), Catch::Contains("truncated header"));
  CHECK_THAT(parse_error(good.substr(0, 150)), Catch::Contains("truncated data") && Catch::Contains("24 bytes"));
  CHECK_THAT(parse_error(good + "xyz"), Catch::Contains("3 unexpected bytes"));
  CHECK_THAT(parse_error(npy_with_dict("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", "abcd")),
             Catch::Contains("Fortran"));
  CHECK_THAT(parse_error(npy_with_dict("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", "ab")),
             Catch::Contains("dtype '<u2' is not supported"));
  CHECK_THAT(parse_error(npy_with_dict("{'descr': '<f4', 'fortran_order': False}", "")),
             Catch::Contains("'descr', 'fortran_order' and 'shape'"));
  CHECK_THAT(parse_error(npy_with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", "")),
             Catch::Contains("non-negative integer dim"));
  CHECK_THAT(parse_error(npy_with_dict("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (), }", "")),
             Catch::Contains("True or False"));
}

TEST_CASE("npy: files are written and read back; a missing file is an input error", "[unit][npy]") {
  canary::test::ScratchDir dir;
  const Tensor t = Tensor::from_vector<std::int64_t>({1, 2, 3, 4, 5, 6}, {3, 2});
  canary::cli::write_npy(dir.file("t.npy"), t);
  const Tensor back = canary::cli::read_npy(dir.file("t.npy"));
  CHECK(back.shape() == canary::Shape{3, 2});
  CHECK(back.data<std::int64_t>()[5] == 6);
  CHECK_THROWS_WITH(canary::cli::read_npy(dir.file("missing.npy")),
                    Catch::Contains("missing.npy") && Catch::Contains("cannot open"));
  CHECK_THROWS_WITH(canary::cli::read_npy(dir.path().string()), Catch::Contains("is a directory"));
}

TEST_CASE("npy: the header dict prints as numpy writes it", "[unit][npy]") {
  CHECK(canary::cli::format_npy_header("<f8", {}) == "{'descr': '<f8', 'fortran_order': False, 'shape': (), }");
  CHECK(canary::cli::format_npy_header("|b1", {5}) == "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }");
  CHECK(canary::cli::format_npy_header("<i8", {2, 0, 3}) ==
        "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 0, 3), }");
}

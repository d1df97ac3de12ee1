// .npy reading and writing for the training exchange.
#include "samples/flowmeter/npy_io.h"

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace flowmeter {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

// The header dict, padded with spaces so data starts on a 64-byte boundary.
std::string make_header(const std::string& descr, const std::vector<std::int64_t>& shape) {
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i) dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string header(kMagic, 6);
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(dict.size() & 0xff);
  header += static_cast<char>((dict.size() >> 8) & 0xff);
  return header + dict;
}

// Writes header and raw little-endian bytes.
template <typename T>
void write_array(const std::string& path, const std::string& descr, const std::vector<T>& values,
                 const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (auto d : shape) count *= d;
  if (count != static_cast<std::int64_t>(values.size()))
    throw std::runtime_error(path + ": shape holds " + std::to_string(count) + " values, got " + std::to_string(values.size()));
  std::ofstream out(path, std::ios::binary);
  const std::string header = make_header(descr, shape);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(T)));
  if (!out) throw std::runtime_error(path + ": cannot write");
}

// The quoted value after `key` in the header dict.
std::string dict_field(const std::string& dict, const std::string& key) {
  const auto at = dict.find("'" + key + "':");
  if (at == std::string::npos) throw std::runtime_error("npy header lacks '" + key + "'");
  return dict.substr(at + key.size() + 3);
}

// Parses "(3, 7, 60)" at the start of the shape field.
std::vector<std::int64_t> parse_shape(const std::string& field) {
  std::vector<std::int64_t> shape;
  const auto open = field.find('('), close = field.find(')');
  std::string inner = field.substr(open + 1, close - open - 1);
  for (std::size_t pos = 0; pos < inner.size();) {
    const auto comma = inner.find(',', pos);
    const std::string item = inner.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoll(item));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return shape;
}

// Copies `count` little-endian elements of T into doubles.
template <typename T>
void read_values(std::ifstream& in, std::int64_t count, std::vector<double>& out) {
  std::vector<T> raw(static_cast<std::size_t>(count));
  in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size() * sizeof(T)));
  out.assign(raw.begin(), raw.end());
}

}  // namespace

// f32 as '<f4'.
void write_npy(const std::string& path, const std::vector<float>& values, const std::vector<std::int64_t>& shape) {
  write_array(path, "<f4", values, shape);
}
// f64 as '<f8'.
void write_npy(const std::string& path, const std::vector<double>& values, const std::vector<std::int64_t>& shape) {
  write_array(path, "<f8", values, shape);
}
// i32 as '<i4'.
void write_npy(const std::string& path, const std::vector<std::int32_t>& values, const std::vector<std::int64_t>& shape) {
  write_array(path, "<i4", values, shape);
}

// Reads version 1.0 headers of C-order f4/f8/i4 arrays.
NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char preamble[10];
  if (!in.read(preamble, 10) || std::memcmp(preamble, kMagic, 6) != 0 || preamble[6] != 1)
    throw std::runtime_error(path + ": not a version 1.0 .npy file");
  const std::size_t header_len = static_cast<unsigned char>(preamble[8]) | (static_cast<unsigned char>(preamble[9]) << 8);
  std::string dict(header_len, ' ');
  in.read(dict.data(), static_cast<std::streamsize>(header_len));
  NpyArray a;
  a.dtype = dict_field(dict, "descr").substr(2, 3);
  if (dict_field(dict, "fortran_order").find("False") != 1) throw std::runtime_error(path + ": Fortran order is not supported");
  a.shape = parse_shape(dict_field(dict, "shape"));
  std::int64_t count = 1;
  for (auto d : a.shape) count *= d;
  if (a.dtype == "<f4") read_values<float>(in, count, a.values);
  else if (a.dtype == "<f8") read_values<double>(in, count, a.values);
  else if (a.dtype == "<i4") read_values<std::int32_t>(in, count, a.values);
  else throw std::runtime_error(path + ": dtype " + a.dtype + " is not supported (f4, f8, i4)");
  if (!in) throw std::runtime_error(path + ": file ends before its " + std::to_string(count) + " values");
  return a;
}

}  // namespace flowmeter

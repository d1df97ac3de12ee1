// The .npy format: magic, version, a Python-dict header padded to 64 bytes, raw data.
#include "samples/vehicle/npy_writer.h"

#include <fstream>
#include <stdexcept>

namespace vehicle {
namespace {

// "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }" padded with spaces and a newline.
std::string npy_header(const char* descr, const std::vector<std::int64_t>& shape) {
  std::string dims;
  for (std::int64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.erase(dims.size() - 2);  // one-element tuples keep the trailing comma
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  return header;
}

// Writes magic, version 1.0, header length, header and the bytes.
void write_raw(const std::string& path, const char* descr, const std::vector<std::int64_t>& shape, const void* data,
               std::size_t bytes) {
  const std::string header = npy_header(descr, shape);
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path);
  const unsigned char preamble[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.write(reinterpret_cast<const char*>(preamble), 8);
  const unsigned char length[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                   static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char*>(length), 2);
  out << header;
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw std::runtime_error("short write to " + path);
}

// Checks that the value count matches the shape.
template <typename T>
void check_count(const std::string& path, const std::vector<T>& values, const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (std::int64_t d : shape) count *= d;
  if (count != static_cast<std::int64_t>(values.size()))
    throw std::runtime_error(path + ": " + std::to_string(values.size()) + " values for a shape of " +
                             std::to_string(count));
}

}  // namespace

// float64 '<f8'.
void write_npy(const std::string& path, const std::vector<double>& values, const std::vector<std::int64_t>& shape) {
  check_count(path, values, shape);
  write_raw(path, "<f8", shape, values.data(), values.size() * sizeof(double));
}

// float32 '<f4'.
void write_npy(const std::string& path, const std::vector<float>& values, const std::vector<std::int64_t>& shape) {
  check_count(path, values, shape);
  write_raw(path, "<f4", shape, values.data(), values.size() * sizeof(float));
}

// int64 '<i8'.
void write_npy(const std::string& path, const std::vector<std::int64_t>& values, const std::vector<std::int64_t>& shape) {
  check_count(path, values, shape);
  write_raw(path, "<i8", shape, values.data(), values.size() * sizeof(std::int64_t));
}

}  // namespace vehicle

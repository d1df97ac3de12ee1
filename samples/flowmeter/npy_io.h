// Reads and writes NumPy .npy files (format 1.0, C order, little endian) of
// f32, f64 and i32 arrays: how the training script and the app exchange data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flowmeter {

// An array read from a .npy file, converted to double.
struct NpyArray {
  std::string dtype;  // "<f4", "<f8" or "<i4"
  std::vector<std::int64_t> shape;
  std::vector<double> values;
};

// Writes values with the given shape; throws std::runtime_error naming the path on failure.
void write_npy(const std::string& path, const std::vector<float>& values, const std::vector<std::int64_t>& shape);
void write_npy(const std::string& path, const std::vector<double>& values, const std::vector<std::int64_t>& shape);
void write_npy(const std::string& path, const std::vector<std::int32_t>& values, const std::vector<std::int64_t>& shape);

// Reads an f4, f8 or i4 array; throws std::runtime_error naming the path and what was wrong.
NpyArray read_npy(const std::string& path);

}  // namespace flowmeter

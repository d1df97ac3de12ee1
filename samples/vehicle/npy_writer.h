// Writes NumPy .npy files (format 1.0, little-endian, C order) for the training script.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vehicle {

// Writes a float64 array of the given shape; throws std::runtime_error when the file cannot be written.
void write_npy(const std::string& path, const std::vector<double>& values, const std::vector<std::int64_t>& shape);
// Writes a float32 array.
void write_npy(const std::string& path, const std::vector<float>& values, const std::vector<std::int64_t>& shape);
// Writes an int64 array.
void write_npy(const std::string& path, const std::vector<std::int64_t>& values, const std::vector<std::int64_t>& shape);

}  // namespace vehicle

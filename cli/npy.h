// NumPy .npy files: reading and writing tensors in the format numpy.save writes.
//
// Supported: dtypes '<f4' (f32), '<f8' (f64), '<i8' (i64), '<i4' (i32) and
// '|b1' (bool), either byte order ('<', '>', '=', '|'); C order only; header
// versions 1.0, 2.0 and 3.0 (UTF-8 header). Anything else is an
// Error(Input) naming the file and what is wrong with it.
#pragma once

#include <string>
#include <string_view>

#include "canary/tensor.h"

namespace canary::cli {

// Decodes the bytes of a .npy file; `source` names the file in messages.
Tensor parse_npy(std::string_view bytes, const std::string& source);

// Encodes a tensor as a .npy file. major_version 1 or 2 forces the header
// version; 0 picks 1.0 unless the header needs more than 65535 bytes.
std::string encode_npy(const Tensor& tensor, int major_version = 0);

// Reads a .npy file; Error(Input) when it cannot be read or is malformed.
Tensor read_npy(const std::string& path);

// Writes a .npy file; Error(Resource) when it cannot be written.
void write_npy(const std::string& path, const Tensor& tensor);

}  // namespace canary::cli

// The .npy header: the Python dict literal that describes dtype, order and shape.
#pragma once

#include <string>
#include <string_view>

#include "canary/tensor.h"

namespace canary::cli {

struct NpyHeader {
  std::string descr;           // "<f4", "|b1", ...
  bool fortran_order = false;
  Shape shape;
};

// Parses "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }".
// Error(Input) naming `source` and the offending position for anything else.
NpyHeader parse_npy_header(std::string_view text, const std::string& source);

// The dict numpy writes for a C-order array, without padding:
// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }".
std::string format_npy_header(std::string_view descr, const Shape& shape);

}  // namespace canary::cli

// Writing a call's outputs as NAME.npy files into the --output-dir folder.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "canary/canary.h"

namespace canary::cli {

// A file name for a graph output: characters outside [A-Za-z0-9._-] become '_'.
std::string output_file_name(std::string_view output_name);

// Creates `dir` if needed and writes one NAME.npy per output; returns the paths written.
std::vector<std::string> write_outputs(const std::string& dir, const NamedTensors& outputs);

}  // namespace canary::cli

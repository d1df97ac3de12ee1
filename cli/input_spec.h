// Input sources as the user writes them: NAME=FILE.npy, NAME=random[:DIMS], or a folder of NAME.npy files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "canary/tensor.h"

namespace canary::cli {

// One input of one call.
struct InputSource {
  enum class Kind { File, Random };
  std::string name;
  Kind kind = Kind::File;
  std::string path;           // File: the .npy path (resolved against the base folder)
  std::optional<Shape> dims;  // Random: nullopt = the model's declared shape (must be static)
  std::string origin;         // where it was written, for messages: "--input", "calls.txt:3"
};

// Parses "NAME=FILE.npy", "NAME=random" or "NAME=random:4x16" ("random:scalar"
// is rank 0). A relative FILE is resolved against base_dir. Error(Input)
// naming `origin` when the text is malformed.
InputSource parse_input_source(std::string_view text, const std::string& origin,
                               const std::filesystem::path& base_dir);

// Parses "4x16" or "4,16"; "" and "scalar" give rank 0.
Shape parse_dims(std::string_view text, const std::string& origin);

// Every NAME.npy file in a folder, as File sources sorted by name.
std::vector<InputSource> list_input_folder(const std::filesystem::path& dir, const std::string& origin);

// `base` with the sources of `over` added; a name in both takes `over`'s source.
std::vector<InputSource> merge_sources(std::vector<InputSource> base, const std::vector<InputSource>& over);

}  // namespace canary::cli

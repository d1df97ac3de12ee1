// Output files: safe names and one .npy per graph output.
#include "cli/output_files.h"

#include <cctype>
#include <filesystem>

#include "cli/npy.h"

namespace canary::cli {

std::string output_file_name(std::string_view output_name) {
  std::string name;
  for (char c : output_name) {
    const bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    name += safe ? c : '_';
  }
  if (name.empty() || name == "." || name == "..") name = "_" + name;
  return name + ".npy";
}

std::vector<std::string> write_outputs(const std::string& dir, const NamedTensors& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::Resource, "cannot create output folder '" + dir + "': " + ec.message());
  std::vector<std::string> written;
  for (const auto& [name, tensor] : outputs) {
    const std::string path = (std::filesystem::path(dir) / output_file_name(name)).string();
    write_npy(path, tensor);
    written.push_back(path);
  }
  return written;
}

}  // namespace canary::cli

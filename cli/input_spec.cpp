// Parsing input sources (NAME=FILE.npy, NAME=random:DIMS) and listing input folders.
#include "cli/input_spec.h"

#include <algorithm>
#include <charconv>

#include "canary/error.h"

namespace canary::cli {

namespace {

// Throws Error(Input) naming the file or option at fault.
[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw Error(ErrorKind::Input, origin + ": " + what);
}

constexpr std::string_view kRandom = "random";

}  // namespace

Shape parse_dims(std::string_view text, const std::string& origin) {
  Shape shape;
  if (text.empty() || text == "scalar") return shape;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t sep = text.find_first_of("x,", pos);
    const std::string_view part = text.substr(pos, sep == std::string_view::npos ? sep : sep - pos);
    std::int64_t dim = -1;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), dim);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || dim < 0)
      fail(origin, "bad dims '" + std::string(text) + "': expected non-negative integers separated by 'x', e.g. 4x16");
    shape.push_back(dim);
    if (shape.size() > kMaxTensorRank) fail(origin, "more than " + std::to_string(kMaxTensorRank) + " dims");
    if (sep == std::string_view::npos) break;
    pos = sep + 1;
  }
  return shape;
}

InputSource parse_input_source(std::string_view text, const std::string& origin,
                               const std::filesystem::path& base_dir) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
    fail(origin, "bad input '" + std::string(text) + "': expected NAME=FILE.npy or NAME=random:DIMS");
  InputSource s;
  s.name = std::string(text.substr(0, eq));
  s.origin = origin;
  const std::string_view value = text.substr(eq + 1);
  if (value == kRandom || (value.substr(0, kRandom.size() + 1) == "random:")) {
    s.kind = InputSource::Kind::Random;
    if (value.size() > kRandom.size()) s.dims = parse_dims(value.substr(kRandom.size() + 1), origin);
    return s;
  }
  s.kind = InputSource::Kind::File;
  const std::filesystem::path path(value);
  s.path = (path.is_relative() && !base_dir.empty() ? base_dir / path : path).string();
  return s;
}

std::vector<InputSource> list_input_folder(const std::filesystem::path& dir, const std::string& origin) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) fail(origin, "'" + dir.string() + "' is not a folder");
  std::vector<InputSource> sources;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".npy") continue;
    InputSource s;
    s.name = entry.path().stem().string();
    s.path = entry.path().string();
    s.origin = origin;
    sources.push_back(std::move(s));
  }
  if (ec) fail(origin, "cannot list '" + dir.string() + "': " + ec.message());
  if (sources.empty()) fail(origin, "'" + dir.string() + "' holds no .npy files");
  std::sort(sources.begin(), sources.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return sources;
}

std::vector<InputSource> merge_sources(std::vector<InputSource> base, const std::vector<InputSource>& over) {
  for (const InputSource& s : over) {
    auto it = std::find_if(base.begin(), base.end(), [&](const InputSource& b) { return b.name == s.name; });
    if (it != base.end()) *it = s;
    else base.push_back(s);
  }
  return base;
}

}  // namespace canary::cli

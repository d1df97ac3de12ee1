// Stream files: comments, tokens, "*N" repeats and folders, one call per line.
#include "cli/stream_file.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "canary/error.h"

namespace canary::cli {

namespace {

constexpr std::int64_t kMaxRepeat = 1'000'000;

// Whitespace-separated tokens of one line, comment removed.
std::vector<std::string_view> tokens_of(std::string_view line) {
  line = line.substr(0, line.find('#'));
  std::vector<std::string_view> tokens;
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t start = line.find_first_not_of(" \t\r", pos);
    if (start == std::string_view::npos) break;
    const std::size_t end = line.find_first_of(" \t\r", start);
    tokens.push_back(line.substr(start, end == std::string_view::npos ? end : end - start));
    pos = end == std::string_view::npos ? line.size() : end;
  }
  return tokens;
}

// The N of a "*N" token.
std::int64_t parse_repeat(std::string_view token, const std::string& origin) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(token.data() + 1, token.data() + token.size(), n);
  if (ec != std::errc() || end != token.data() + token.size() || n < 1 || n > kMaxRepeat)
    throw Error(ErrorKind::Input, origin + ": bad repeat '" + std::string(token) + "': expected *N with 1 <= N <= " +
                                      std::to_string(kMaxRepeat));
  return n;
}

// The sources of one line: folders first, then NAME=... tokens over them.
std::vector<InputSource> sources_of(const std::vector<std::string_view>& tokens, const std::string& origin,
                                    const std::filesystem::path& base_dir, std::int64_t& repeat) {
  std::vector<InputSource> folders, named;
  for (std::string_view token : tokens) {
    if (token.front() == '*') {
      repeat = parse_repeat(token, origin);
    } else if (token.find('=') == std::string_view::npos) {
      const std::filesystem::path dir(token);
      folders = merge_sources(folders, list_input_folder(dir.is_relative() ? base_dir / dir : dir, origin));
    } else {
      InputSource s = parse_input_source(token, origin, base_dir);
      for (const InputSource& prev : named)
        if (prev.name == s.name) throw Error(ErrorKind::Input, origin + ": input '" + s.name + "' given twice");
      named.push_back(std::move(s));
    }
  }
  return merge_sources(std::move(folders), named);
}

}  // namespace

std::vector<CallSpec> parse_stream(std::string_view text, const std::string& source,
                                   const std::filesystem::path& base_dir) {
  std::vector<CallSpec> calls;
  std::size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    const std::vector<std::string_view> tokens = tokens_of(line);
    if (tokens.empty()) continue;
    const std::string origin = source + ":" + std::to_string(line_no);
    std::int64_t repeat = 1;
    std::vector<InputSource> sources = sources_of(tokens, origin, base_dir, repeat);
    if (sources.empty()) throw Error(ErrorKind::Input, origin + ": a call line needs at least one input");
    for (std::int64_t i = 0; i < repeat; ++i) calls.push_back({sources, origin});
  }
  return calls;
}

std::vector<CallSpec> read_stream_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::Input, "cannot open stream file '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  std::vector<CallSpec> calls =
      parse_stream(text.str(), path, std::filesystem::path(path).parent_path());
  if (calls.empty()) throw Error(ErrorKind::Input, "stream file '" + path + "' has no calls");
  return calls;
}

}  // namespace canary::cli

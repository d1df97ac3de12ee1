// Running the built `canary` binary as a subprocess, and scratch folders for its files.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace canary::test {

struct CliResult {
  int status = -1;  // exit status (128 + signal when killed by one)
  std::string out;  // stdout
  std::string err;  // stderr
};

// A fresh folder under the system temp dir, removed when destroyed.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Runs CANARY_CLI_PATH with `args` (each passed as one argument) and the
// environment assignments `env` ("NAME=value"); captures stdout and stderr.
CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

// A committed fixture: CANARY_TEST_DATA_DIR/relative.
std::string fixture(const std::string& relative);

// Writes text to a file.
void write_text(const std::string& path, const std::string& text);

// Reads a whole file ("" when it does not exist).
std::string read_text(const std::string& path);

// The number of lines of `text`.
std::size_t line_count(const std::string& text);

}  // namespace canary::test

// Subprocess runs of the canary binary through /bin/sh with captured output; scratch folders.
#include "cli_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace canary::test {

namespace {

// A shell word: single-quoted, with embedded quotes escaped.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

ScratchDir::ScratchDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("canary_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  ScratchDir io;
  std::string cmd = "env OMP_NUM_THREADS=1";
  for (const std::string& e : env) cmd += " " + shell_quote(e);
  cmd += " " + shell_quote(CANARY_CLI_PATH);
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote(io.file("out")) + " 2>" + shell_quote(io.file("err")) + " </dev/null";
  const int raw = std::system(cmd.c_str());
  CliResult r;
  if (raw != -1 && WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  else if (raw != -1 && WIFSIGNALED(raw)) r.status = 128 + WTERMSIG(raw);
  r.out = read_text(io.file("out"));
  r.err = read_text(io.file("err"));
  return r;
}

std::string fixture(const std::string& relative) { return std::string(CANARY_TEST_DATA_DIR) + "/" + relative; }

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t line_count(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  if (!text.empty() && text.back() != '\n') ++n;
  return n;
}

}  // namespace canary::test

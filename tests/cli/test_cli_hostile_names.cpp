// A model whose names carry terminal escape sequences, a bell and bytes that
// are not UTF-8, through every CLI verb: nothing it prints or writes holds
// those bytes raw, the JSON and the trace stay valid, and the names as the
// CLI prints them are the names it takes back.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_process.h"

using nlohmann::json;
using namespace canary::test;

namespace {

// The names below use no legitimate non-ASCII text, so any byte outside
// printable ASCII (newlines and tabs aside) leaked from them.
bool plain_ascii(const std::string& text) {
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && b != '\n' && b != '\t') || b >= 0x7f) return false;
  }
  return true;
}

// Input `x ESC[31m`, node `ESC]0;t BEL` (sets a terminal's title), value
// `h BEL`, output `y 0xff`, in the text format's escapes.
const char* kHostileModel = R"(canary v1
graph main(`x\x1b[31m`: f32[N, 4]) -> (`y\xff`) {
  `h\x07` = Relu(`x\x1b[31m`) "node\x1b]0;t\x07"
  `y\xff` = Tanh(`h\x07`)
}
)";

// The input as the CLI prints it, which is also how it is given back.
const std::string kInput = "x\\x1b[31m";

}  // namespace

TEST_CASE("cli hostile names: run, inspect, explain and dot print escapes, never the raw bytes", "[unit][cli][errors]") {
  ScratchDir dir;
  const std::string model = dir.file("hostile.cnr");
  write_text(model, kHostileModel);
  const std::string in = kInput + "=random:2x4";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", model, "-i", in, "--repeat", "12", "--hot", "2", "--sync-compile"},
        std::vector<std::string>{"inspect", model, "-i", in, "--repeat", "12", "--hot", "2", "--sync-compile",
                                 "--listing", "--passes"},
        std::vector<std::string>{"explain", model, "-i", in, "--repeat", "12", "--hot", "2", "--sync-compile"},
        std::vector<std::string>{"dot", model}}) {
    const CliResult r = run_cli(args);
    INFO(args[0] << ": " << r.err);
    CHECK(r.status == 0);
    CHECK(plain_ascii(r.out));
    CHECK(plain_ascii(r.err));
  }
  const CliResult run = run_cli({"run", model, "-i", in});
  CHECK_THAT(run.out, Catch::Contains("y\\xff"));
  const CliResult dot = run_cli({"dot", model});
  CHECK_THAT(dot.out, Catch::Contains("node\\\\x1b]0;t\\\\x07"));  // DOT escapes the backslash itself
}

TEST_CASE("cli hostile names: --json and --chrome-trace stay valid JSON", "[unit][cli][errors]") {
  ScratchDir dir;
  const std::string model = dir.file("hostile.cnr");
  write_text(model, kHostileModel);
  const CliResult r = run_cli({"inspect", model, "-i", kInput + "=random:2x4", "--repeat", "8", "--hot", "2",
                               "--sync-compile", "--json", "--chrome-trace", dir.file("t.json")});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(plain_ascii(r.out));
  const json doc = json::parse(r.out);
  CHECK_THAT(doc.dump(), Catch::Contains("x\\\\x1b[31m"));  // the escape's backslash, escaped by JSON
  const std::string trace = read_text(dir.file("t.json"));
  CHECK(plain_ascii(trace));
  CHECK(json::parse(trace)["traceEvents"].is_array());
}

TEST_CASE("cli hostile names: an error naming a hostile input is escaped", "[unit][cli][errors]") {
  ScratchDir dir;
  const std::string model = dir.file("hostile.cnr");
  write_text(model, kHostileModel);
  const CliResult r = run_cli({"run", model, "-i", kInput + "=random:2x5"});
  CHECK(r.status != 0);
  CHECK(plain_ascii(r.err));
  CHECK_THAT(r.err, Catch::Contains("x\\x1b[31m"));
}

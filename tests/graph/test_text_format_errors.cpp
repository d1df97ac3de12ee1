// Malformed graph text: every error is canary::Error(Model) with
// "source:line:col: " and what was expected versus found; hostile bytes never
// crash or hang the parser.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "canary/error.h"
#include "graph/text_format.h"

using namespace canary;
using namespace canary::graph;

namespace {

// The detail of the Error(Model) that parsing throws; fails if none is thrown.
std::string parse_error(const std::string& text) {
  try {
    parse_graph(text, "bad.cnr");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Model);
    return e.detail();
  }
  FAIL("no error for:\n" << text);
  return {};
}

// Requires the error to be at line:col and to contain a piece of text.
void require_error(const std::string& text, const std::string& where, const std::string& piece) {
  std::string detail = parse_error(text);
  INFO(detail);
  CHECK(detail.rfind("bad.cnr:" + where + ": ", 0) == 0);
  CHECK(detail.find(piece) != std::string::npos);
}

const std::string kHead = "canary v1\n";

// Parses text; only canary::Error may come out.
void parse_or_model_error(const std::string& text) {
  try {
    parse_graph(text, "fuzz");
  } catch (const Error& e) {
    (void)e;
  }
}

// Contents of a test data file.
std::string read_data(const std::string& name) {
  std::ifstream in(std::string(CANARY_TEST_DATA_DIR) + "/" + name, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("text format errors: structure", "[unit][text_format]") {
  require_error("graph main() -> () {}", "1:1", "expected 'canary v1' at the start, found 'graph'");
  require_error(kHead + "graph main(x: f32[2]) -> (y) {\n  y = Foo(x)\n}", "3:7", "unknown op 'Foo'");
  require_error(kHead + "graph main(x: f32[2]) -> (y) {\n  y = Relu(z)\n}", "3:12", "undefined value 'z'");
  require_error(kHead + "graph main(x: f32[2]) -> (y) {\n  y = Relu(x)\n  y = Relu(x)\n}", "4:3", "duplicate name 'y'");
  require_error(kHead + "graph main(x: f32[2], x: f32[2]) -> (x) {\n}", "2:23", "duplicate name 'x'");
  require_error(kHead + "graph main(x: f32[2]) -> (y) {\n  y = Relu(x)\n", "4:1", "unterminated block");
  require_error(kHead + "graph main(x: f32[2]) -> (x) {\n}\n}", "4:1", "expected end of input");
  require_error(kHead + "graph main(x: f32[2]) -> (x) captures (x) {\n}", "2:30", "main graph cannot capture");
  require_error(kHead + "graph main(x: f32[2]) -> (y) {\n  y = Relu(x) {a = 1, a = 2}\n}", "3:23", "duplicate attribute 'a'");
  require_error(kHead + "graph main(x: f32[2]) -> (y) {\n  y = Relu(x) $\n}", "3:15", "unexpected character '$'");
  require_error(kHead + "graph main(x: f32[2]) -> (y) {\n  y Relu(x)\n}", "3:5", "expected '=' after the node outputs, found 'Relu'");
}

TEST_CASE("text format errors: types, literals and numbers", "[unit][text_format]") {
  require_error(kHead + "graph main(x: f16[2]) -> (x) {\n}", "2:15", "unknown dtype 'f16'");
  require_error(kHead + "graph main(x: f32[N +]) -> (x) {\n}", "2:19", "bad dimension 'N +'");
  require_error(kHead + "graph main(x: f32[2,]) -> (x) {\n}", "2:21", "expected a dimension, found ']'");
  require_error(kHead + "graph main(x: f32[2]) -> (y) {\n  y = Relu(x) \"abc\n}", "3:15", "unterminated string");
  require_error(kHead + "graph main(x: f32[2]) -> (y) {\n  y = Relu(x) \"a\\qb\"\n}", "3:17", "unknown escape '\\q'");
  require_error(kHead + "graph main() -> (c) {\n  const c: f32[2, 2] = [1, 2, 3]\n}", "3:24", "needs 4 elements, found 3");
  require_error(kHead + "graph main() -> (c) {\n  const c: i32[1] = [2147483648]\n}", "3:22", "out of range for i32 element");
  require_error(kHead + "graph main() -> (c) {\n  const c: i64[1] = [-9223372036854775809]\n}", "3:22", "out of range");
  require_error(kHead + "graph main() -> (c) {\n  const c: f32[1] = [1e39]\n}", "3:22", "out of range for f32");
  require_error(kHead + "graph main() -> (c) {\n  const c: bool[1] = [1]\n}", "3:23", "expected 'true' or 'false', found number 1");
  require_error(kHead + "graph main() -> (c) {\n  const c: f32[N] = [1]\n}", "3:16", "constant shapes are integers");
  require_error(kHead + "graph main(x: f32[2]) -> (y) {\n  y = Softmax(x) {axis = 99999999999999999999}\n}", "3:26",
                "out of range");
  require_error(kHead + "graph main() -> (c) {\n  const c: f32[1] = [1.5e]\n}", "3:22", "malformed number");
}

TEST_CASE("text format errors: symbols, nesting, inference and files", "[unit][text_format]") {
  require_error(kHead + "symbols {\n  N in [5, 3]\n}\ngraph main() -> () {\n}", "3:5", "empty range [5, 3]");
  require_error(kHead + "symbols {\n  K == 3\n  K in [4, 9]\n}\ngraph main() -> () {\n}", "3:5", "outside the range [4, 9]");
  require_error(kHead + "symbols {\n  N in [1, 2]\n", "4:1", "unterminated block");
  std::string deep = kHead + "graph main(x: f32[2], n: i64[]) -> (x) {\n";
  for (int i = 0; i < 100; ++i) deep += "y = Loop(n, _, x) {body = graph b(i: i64[], c: bool[], h: f32[2]) -> (c, h) {\n";
  try {
    parse_graph(deep, "bad.cnr");
    FAIL("100 nested Loop bodies parsed");
  } catch (const Error& e) {
    // Over ImportLimits::max_depth (test_import_limits.cpp covers other limits).
    CHECK(e.kind() == ErrorKind::Resource);
    CHECK_THAT(std::string(e.what()), Catch::Contains("nest deeper than 64 levels"));
  }
  std::string parens = kHead + "graph main(x: f32[" + std::string(1000, '(') + "N" + std::string(1000, ')') + "]) -> (x) {}";
  CHECK(parse_error(parens).find("nested too deeply") != std::string::npos);
  // A graph that parses but does not type-check keeps the inference error's
  // kind (a shape error here) and names the source and the node.
  try {
    parse_graph(kHead + "graph main(a: f32[2, 3], b: f32[4, 5]) -> (c) {\n  c = MatMul(a, b) \"mm\"\n}", "bad.cnr");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Shape);
    CHECK(e.detail().rfind("bad.cnr: ", 0) == 0);
    CHECK(e.detail().find("'mm'") != std::string::npos);
  }
  try {
    load_graph_file("/nonexistent/model.cnr");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Model);
    CHECK(e.detail().find("/nonexistent/model.cnr") != std::string::npos);
  }
}

TEST_CASE("text format errors: truncations and byte mutations only raise Error", "[unit][text_format]") {
  for (const char* file : {"mlp.cnr", "conv1d.cnr", "rnn_loop.cnr", "if_select.cnr"}) {
    std::string text = read_data(file);
    REQUIRE(!text.empty());
    for (std::size_t cut = 0; cut < text.size(); cut += 7) parse_or_model_error(text.substr(0, cut));
    std::uint32_t state = 12345;
    const std::string bytes = "()[]{},:=-%#\"`_\\\n x0.e9";
    for (int round = 0; round < 400; ++round) {
      std::string mutated = text;
      for (int k = 0; k < 3; ++k) {
        state = state * 1664525u + 1013904223u;
        std::size_t at = (state >> 8) % mutated.size();
        char with = (state & 1) ? bytes[(state >> 4) % bytes.size()] : static_cast<char>(state >> 24);
        mutated[at] = with;
      }
      parse_or_model_error(mutated);
    }
  }
  SUCCEED("no crash, no hang, no foreign exception");
}

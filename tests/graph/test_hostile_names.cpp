// Names from a hostile model (terminal escape sequences, bells, bytes that are
// not UTF-8, bidirectional overrides) never reach a message or a listing raw:
// runtime/core/printable.h escapes them, canary::Error escapes every message,
// and the graph keeps names printable while still finding a value by the
// name as written.
#include <catch2/catch.hpp>

#include <string>

#include "canary/error.h"
#include "graph/dot_export.h"
#include "graph/onnx_import.h"
#include "graph/text_format.h"
#include "runtime/core/printable.h"
#include "tests/graph/onnx_fixtures.h"
#include "tests/graph/onnx_import_checks.h"

using namespace onnx_fixtures;
using canary::Error;
using canary::ErrorKind;
using canary::is_printable;
using canary::printable;

namespace {

// An oracle independent of printable(): plain ASCII text with newlines and
// tabs as its only control bytes (the hostile names below use no legitimate
// non-ASCII text, so anything above 0x7e leaked from them).
bool plain_ascii(const std::string& text) {
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && b != '\n' && b != '\t') || b >= 0x7f) return false;
  }
  return true;
}

const std::string kEsc = "x\x1b[31mred\x1b[0m";   // recolours a terminal
const std::string kBell = "h\x07";                  // rings it
const std::string kBadUtf8 = std::string("y\xff\xc3");  // not UTF-8 (a stray byte, a cut sequence)
const std::string kTitle = "node\x1b]0;pwned\x07";  // sets the window title

}  // namespace

TEST_CASE("printable: controls, DEL and bytes that are not UTF-8 become \\xHH; C1 and bidi marks \\uHHHH",
          "[unit][errors]") {
  CHECK(printable("conv1/Relu_output_0") == "conv1/Relu_output_0");
  CHECK(printable("a\\b") == "a\\b");  // clean text, backslashes included, is left alone
  CHECK(printable(kEsc) == "x\\x1b[31mred\\x1b[0m");
  CHECK(printable("bell\x07 del\x7f tab\t") == "bell\\x07 del\\x7f tab\\x09");
  CHECK(printable("two\nlines") == "two\\x0alines");
  CHECK(printable("two\nlines", true) == "two\nlines");
  CHECK(printable(std::string("nul\0end", 7)) == "nul\\x00end");
  // UTF-8 stays when it is valid: é, 中, an emoji.
  CHECK(printable("caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80");
  // Invalid: a stray continuation, a cut sequence, an overlong '/', a surrogate, a lead byte past U+10FFFF.
  CHECK(printable("\x80") == "\\x80");
  CHECK(printable("\xc3") == "\\xc3");
  CHECK(printable("\xe4\xb8") == "\\xe4\\xb8");
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");
  CHECK(printable("\xf5\x80\x80\x80") == "\\xf5\\x80\\x80\\x80");
  // A cut sequence does not swallow the ASCII after it.
  CHECK(printable("\xe4\xb8z") == "\\xe4\\xb8z");
  // C1 CSI (a terminal reads it as ESC [) and a right-to-left override.
  CHECK(printable("\xc2\x9b" "31m") == "\\u009b31m");
  CHECK(printable("abc\xe2\x80\xae" "cba") == "abc\\u202ecba");
  CHECK(is_printable("plain"));
  CHECK_FALSE(is_printable(kEsc));
  CHECK(is_printable(printable(kEsc)));
  CHECK(is_printable(printable(kBadUtf8)));
  CHECK(printable(printable(kTitle)) == printable(kTitle));  // escaping twice changes nothing
}

TEST_CASE("Error: a message quoting hostile bytes is escaped in what() and detail(), newlines kept",
          "[unit][errors]") {
  const Error e(ErrorKind::Model, "node '" + kTitle + "' (Relu): bad\nsecond line " + kBadUtf8);
  const std::string what = e.what();
  CHECK(plain_ascii(what));
  CHECK(plain_ascii(e.detail()));
  CHECK_THAT(what, Catch::Contains("node 'node\\x1b]0;pwned\\x07' (Relu)"));
  CHECK_THAT(what, Catch::Contains("bad\nsecond line y\\xff\\xc3"));
  CHECK(what == "model error: " + e.detail());
}

TEST_CASE("hostile names: an ONNX model's names are kept printable, found as written, and listed safely",
          "[unit][onnx][errors]") {
  const onnx::ModelProto m = model(graph(kTitle,
                                         {node("Relu", {kEsc}, {kBell}, {}, kTitle),
                                          node("Tanh", {kBell}, {kBadUtf8}, {}, "\xe2\x80\xae" "evil")},
                                         {value(kEsc, kFloat, {"N", 4})}, {value(kBadUtf8, kFloat, {"N", 4})}));
  const auto g = canary::graph::import_onnx(bytes(m), "hostile.onnx");
  // The name as written and the printable name both find the value; the value carries the printable one.
  REQUIRE(g->find_value(kEsc));
  REQUIRE(g->find_value(printable(kEsc)));
  CHECK(g->find_value(kEsc) == g->find_value(printable(kEsc)));
  CHECK(g->value(*g->find_value(kBadUtf8)).name == "y\\xff\\xc3");
  CHECK(g->name == "node\\x1b]0;pwned\\x07");
  CHECK(g->node(canary::graph::NodeId{0}).name == "node\\x1b]0;pwned\\x07");
  CHECK(g->node(canary::graph::NodeId{1}).name == "\\u202eevil");
  const std::string text = canary::graph::print_graph(*g);
  const std::string dot = canary::graph::export_dot(*g, {});
  CHECK(plain_ascii(text));
  CHECK(plain_ascii(dot));
  // The printed text parses back to the same graph.
  CHECK(canary::graph::print_graph(*canary::graph::parse_graph(text, "<printed>")) == text);
}

TEST_CASE("hostile names: import errors that quote an op type, a node or a file name are escaped",
          "[unit][onnx][errors]") {
  const onnx::ModelProto unknown = model(graph("g", {node("Foo\x1b[2J", {"x"}, {"y"}, {}, kTitle)},
                                               {value("x", kFloat, {2})}, {value("y", kFloat, {2})}));
  const std::string message = canary::test::import_error(bytes(unknown), "evil\x1b[1m.onnx");
  CHECK(plain_ascii(message));
  CHECK_THAT(message, Catch::Contains("Foo\\x1b[2J"));
  CHECK_THAT(message, Catch::Contains("evil\\x1b[1m.onnx"));
}

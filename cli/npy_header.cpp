// The .npy header dict: a small parser for the Python literal numpy writes, and its printer.
#include "cli/npy_header.h"

#include <cctype>
#include <cstdint>
#include <limits>

#include "canary/error.h"

namespace canary::cli {

namespace {

// A cursor over the header text that reports errors with the file name and offset.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  // Reads the whole dict.
  NpyHeader parse() {
    NpyHeader h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        h.descr = parse_string();
        seen_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = parse_bool();
        seen_order = true;
      } else if (key == "shape") {
        h.shape = parse_tuple();
        seen_shape = true;
      } else {
        fail("unknown key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') ++pos_;
      else if (peek() != '}') fail("expected ',' or '}'");
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the header dict");
    if (!seen_descr || !seen_order || !seen_shape)
      fail_plain("the header dict must have the keys 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  // The current character, or NUL at the end.
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  // Skips whitespace.
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Consumes `c` after optional whitespace, or fails.
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  // A quoted string, single or double quotes, no escapes.
  std::string parse_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }

  // True or False.
  bool parse_bool() {
    skip_space();
    for (const bool value : {true, false}) {
      const std::string_view word = value ? "True" : "False";
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail("expected True or False");
  }

  // A non-negative integer, optionally with Python 2's 'L' suffix.
  std::int64_t parse_dim() {
    skip_space();
    if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("expected a non-negative integer dim");
    std::int64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      const int digit = text_[pos_++] - '0';
      if (v > (std::numeric_limits<std::int64_t>::max() - digit) / 10) fail("dim does not fit in int64");
      v = v * 10 + digit;
    }
    if (peek() == 'L') ++pos_;
    return v;
  }

  // "()", "(3,)", "(2, 3)".
  Shape parse_tuple() {
    expect('(');
    Shape shape;
    for (;;) {
      skip_space();
      if (peek() == ')') break;
      shape.push_back(parse_dim());
      if (shape.size() > kMaxTensorRank) fail("more than " + std::to_string(kMaxTensorRank) + " dims");
      skip_space();
      if (peek() == ',') ++pos_;
      else if (peek() != ')') fail("expected ',' or ')' in the shape");
    }
    ++pos_;
    return shape;
  }

  // Fails with the current offset.
  [[noreturn]] void fail(const std::string& what) const {
    fail_plain(what + " at header offset " + std::to_string(pos_));
  }

  // Fails with Error(Input) naming the file.
  [[noreturn]] void fail_plain(const std::string& what) const {
    throw Error(ErrorKind::Input, "'" + source_ + "': bad .npy header: " + what);
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

}  // namespace

NpyHeader parse_npy_header(std::string_view text, const std::string& source) {
  return HeaderParser(text, source).parse();
}

std::string format_npy_header(std::string_view descr, const Shape& shape) {
  std::string s = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + "), }";
}

}  // namespace canary::cli

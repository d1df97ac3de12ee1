// Parsing of symbolic dimension text (the syntax Dim::to_string prints).
//
// Grammar (Python precedence: unary minus binds tighter than * and //, which
// are left-associative and bind tighter than + and -):
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '//') unary)*
//   unary   := '-' unary | primary
//   primary := integer | identifier | ('max' | 'min') '(' expr ',' expr ')'
//            | '(' expr ')'
#include <cctype>
#include <string>

#include "canary/error.h"
#include "graph/symbolic.h"

namespace canary::graph {
namespace {

// Recursive-descent parser over one dimension's text.
class DimParser {
 public:
  explicit DimParser(std::string_view text) : text_(text) {}

  // Parses the whole text as one expression.
  Dim parse_all() {
    Dim d = parse_expr();
    skip_space();
    if (pos_ < text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return d;
  }

 private:
  // Throws a model error naming the text and the position.
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorKind::Model, "cannot parse dimension '" + std::string(text_) + "' at position " +
                                      std::to_string(pos_) + ": " + what);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Consumes the token when it comes next (after spaces).
  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  // Requires the token to come next.
  void expect(std::string_view token) {
    if (!accept(token)) fail("expected '" + std::string(token) + "'");
  }

  // expr := term (('+' | '-') term)*
  Dim parse_expr() {
    Dim d = parse_term();
    for (;;) {
      if (accept("+")) {
        d = d + parse_term();
      } else if (accept("-")) {
        d = d - parse_term();
      } else {
        return d;
      }
    }
  }

  // term := unary (('*' | '//') unary)*
  Dim parse_term() {
    Dim d = parse_unary();
    for (;;) {
      if (accept("//")) {
        d = floor_div(d, parse_unary());
      } else if (accept("*")) {
        d = d * parse_unary();
      } else {
        return d;
      }
    }
  }

  // unary := '-' unary | primary
  Dim parse_unary() {
    if (accept("-")) {
      skip_space();
      if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        return Dim(parse_integer(true));
      }
      return Dim(0) - parse_unary();
    }
    return parse_primary();
  }

  // primary := integer | identifier | max/min call | '(' expr ')'
  Dim parse_primary() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end of text");
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) return Dim(parse_integer(false));
    if (c == '(') {
      ++pos_;
      Dim d = parse_expr();
      expect(")");
      return d;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return parse_name();
    fail("unexpected '" + std::string(1, c) + "'");
  }

  // An identifier, or a max/min call when followed by '('.
  Dim parse_name() {
    std::size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    std::string_view name = text_.substr(start, pos_ - start);
    if (name == "max" || name == "min") {
      std::size_t after = pos_;
      if (accept("(")) {
        Dim a = parse_expr();
        expect(",");
        Dim b = parse_expr();
        expect(")");
        return name == "max" ? max(a, b) : min(a, b);
      }
      pos_ = after;
    }
    return Dim::symbol(name);
  }

  // A decimal literal; `negative` allows the magnitude of INT64_MIN.
  std::int64_t parse_integer(bool negative) {
    std::size_t start = pos_;
    std::uint64_t limit = negative ? (std::uint64_t{1} << 63) : static_cast<std::uint64_t>(INT64_MAX);
    std::uint64_t v = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      std::uint64_t digit = static_cast<std::uint64_t>(text_[pos_] - '0');
      if (v > (limit - digit) / 10) {
        pos_ = start;
        fail("integer out of range");
      }
      v = v * 10 + digit;
      ++pos_;
    }
    return negative ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

// Parses a dimension; throws canary::Error(Model) naming the text and position.
Dim parse_dim(std::string_view text) { return DimParser(text).parse_all(); }

}  // namespace canary::graph

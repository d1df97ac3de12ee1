// The pull lexer of the graph text format: tokens, strings with escapes,
// comments, and the raw text of dimension expressions.
#include "graph/text_format_lexer.h"

#include <cstdio>

#include "canary/error.h"

namespace canary::graph::text {
namespace {

// Deepest parenthesis nesting accepted inside one dimension expression.
constexpr int kMaxDimDepth = 32;
// Longest dimension expression accepted, in bytes.
constexpr std::size_t kMaxDimLength = 1024;

bool is_ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c) || c == '.'; }

// A byte shown in a message: itself when printable, else \xHH.
std::string show_byte(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string(1, c);
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", u);
  return buf;
}

// Value of a hexadecimal digit, or -1.
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// How a token kind is named in "expected X" messages.
const char* token_kind_name(TokenKind kind) {
  switch (kind) {
    case TokenKind::End: return "end of input";
    case TokenKind::Ident: return "a name";
    case TokenKind::QuotedName: return "a quoted name";
    case TokenKind::String: return "a string";
    case TokenKind::Number: return "a number";
    case TokenKind::LParen: return "'('";
    case TokenKind::RParen: return "')'";
    case TokenKind::LBracket: return "'['";
    case TokenKind::RBracket: return "']'";
    case TokenKind::LBrace: return "'{'";
    case TokenKind::RBrace: return "'}'";
    case TokenKind::Comma: return "','";
    case TokenKind::Colon: return "':'";
    case TokenKind::Equal: return "'='";
    case TokenKind::EqualEqual: return "'=='";
    case TokenKind::Arrow: return "'->'";
    case TokenKind::Percent: return "'%'";
    case TokenKind::Minus: return "'-'";
  }
  return "?";
}

// How a token is named in "expected X, found Y" messages.
std::string describe_token(const Token& token) {
  std::string shown = token.text.size() > 40 ? token.text.substr(0, 40) + "..." : token.text;
  std::string safe;
  for (char c : shown) safe += show_byte(c);
  switch (token.kind) {
    case TokenKind::Ident: return "'" + safe + "'";
    case TokenKind::QuotedName: return "`" + safe + "`";
    case TokenKind::String: return "string \"" + safe + "\"";
    case TokenKind::Number: return "number " + safe;
    default: return token_kind_name(token.kind);
  }
}

Lexer::Lexer(std::string_view text, std::string_view source) : text_(text), source_(source) {}

// "source:line:col" of a byte offset.
std::string Lexer::location(std::size_t offset) const {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return source_ + ":" + std::to_string(line) + ":" + std::to_string(col);
}

// Throws canary::Error(Model) "source:line:col: message".
void Lexer::fail_at(std::size_t offset, const std::string& message) const {
  throw Error(ErrorKind::Model, location(offset) + ": " + message);
}

// The next token without consuming it.
const Token& Lexer::peek() {
  if (!ahead_[0]) ahead_[0] = lex();
  return *ahead_[0];
}

// The token after the next one.
const Token& Lexer::peek_second() {
  peek();
  if (!ahead_[1]) ahead_[1] = lex();
  return *ahead_[1];
}

// Consumes and returns the next token.
Token Lexer::next() {
  peek();
  Token t = std::move(*ahead_[0]);
  ahead_[0] = std::move(ahead_[1]);
  ahead_[1].reset();
  return t;
}

// Forgets looked-ahead tokens, moving back to the first one's start.
void Lexer::rewind_lookahead() {
  if (ahead_[0]) pos_ = ahead_[0]->offset;
  ahead_[0].reset();
  ahead_[1].reset();
}

// Skips blanks, newlines and '#' comments.
void Lexer::skip_space_and_comments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      return;
    }
  }
}

// Lexes one token at the current position.
Token Lexer::lex() {
  skip_space_and_comments();
  Token t;
  t.offset = pos_;
  if (pos_ >= text_.size()) return t;
  char c = text_[pos_];
  if (is_ident_start(c)) {
    std::size_t start = pos_;
    while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
    t.kind = TokenKind::Ident;
    t.text = std::string(text_.substr(start, pos_ - start));
    return t;
  }
  if (is_digit(c)) return lex_number();
  if (c == '"') return lex_quoted('"', TokenKind::String);
  if (c == '`') return lex_quoted('`', TokenKind::QuotedName);
  auto two = [&](char second) { return pos_ + 1 < text_.size() && text_[pos_ + 1] == second; };
  auto single = [&](TokenKind kind, std::size_t length) {
    t.kind = kind;
    t.text = std::string(text_.substr(pos_, length));
    pos_ += length;
    return t;
  };
  switch (c) {
    case '(': return single(TokenKind::LParen, 1);
    case ')': return single(TokenKind::RParen, 1);
    case '[': return single(TokenKind::LBracket, 1);
    case ']': return single(TokenKind::RBracket, 1);
    case '{': return single(TokenKind::LBrace, 1);
    case '}': return single(TokenKind::RBrace, 1);
    case ',': return single(TokenKind::Comma, 1);
    case ':': return single(TokenKind::Colon, 1);
    case '%': return single(TokenKind::Percent, 1);
    case '=': return two('=') ? single(TokenKind::EqualEqual, 2) : single(TokenKind::Equal, 1);
    case '-': return two('>') ? single(TokenKind::Arrow, 2) : single(TokenKind::Minus, 1);
    default: break;
  }
  fail_at(pos_, "unexpected character '" + show_byte(c) + "'");
}

// Lexes an unsigned number: digits, an optional fraction and exponent.
Token Lexer::lex_number() {
  Token t;
  t.kind = TokenKind::Number;
  t.offset = pos_;
  std::size_t start = pos_;
  auto digits = [&] {
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
  };
  digits();
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    digits();
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    std::size_t exp_start = pos_;
    digits();
    if (pos_ == exp_start) fail_at(start, "malformed number: exponent without digits");
  }
  if (pos_ < text_.size() && (is_ident_char(text_[pos_]))) {
    fail_at(start, "malformed number: unexpected '" + show_byte(text_[pos_]) + "' after digits");
  }
  t.text = std::string(text_.substr(start, pos_ - start));
  return t;
}

// Lexes a "string" or `quoted name` with \\ \" \` \n \t \r \xHH escapes.
Token Lexer::lex_quoted(char quote, TokenKind kind) {
  Token t;
  t.kind = kind;
  t.offset = pos_;
  const char* what = kind == TokenKind::String ? "string" : "quoted name";
  ++pos_;
  while (true) {
    if (pos_ >= text_.size() || text_[pos_] == '\n') fail_at(t.offset, std::string("unterminated ") + what);
    char c = text_[pos_++];
    if (c == quote) return t;
    if (c != '\\') {
      t.text += c;
      continue;
    }
    if (pos_ >= text_.size()) fail_at(t.offset, std::string("unterminated ") + what);
    char e = text_[pos_++];
    switch (e) {
      case '\\': t.text += '\\'; break;
      case '"': t.text += '"'; break;
      case '`': t.text += '`'; break;
      case 'n': t.text += '\n'; break;
      case 't': t.text += '\t'; break;
      case 'r': t.text += '\r'; break;
      case 'x': {
        int hi = pos_ < text_.size() ? hex_value(text_[pos_]) : -1;
        int lo = pos_ + 1 < text_.size() ? hex_value(text_[pos_ + 1]) : -1;
        if (hi < 0 || lo < 0) fail_at(pos_ - 2, "escape \\x needs two hexadecimal digits");
        t.text += static_cast<char>(hi * 16 + lo);
        pos_ += 2;
        break;
      }
      default: fail_at(pos_ - 2, "unknown escape '\\" + show_byte(e) + "' in " + what);
    }
  }
}

// Consumes the raw text of one dimension expression up to ',' or ']' at depth 0.
std::string_view Lexer::take_dim_text(std::size_t& offset) {
  rewind_lookahead();
  skip_space_and_comments();
  offset = pos_;
  int depth = 0;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (depth == 0 && (c == ',' || c == ']')) break;
    if (c == '\n' || c == '#' || c == '[' || c == '{' || c == '}' || c == '"' || c == '`') break;
    if (c == '(' && ++depth > kMaxDimDepth) fail_at(pos_, "dimension expression nested too deeply");
    if (c == ')' && --depth < 0) break;
    if (pos_ - offset >= kMaxDimLength) fail_at(offset, "dimension expression too long");
    ++pos_;
  }
  std::string_view raw = text_.substr(offset, pos_ - offset);
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\r')) raw.remove_suffix(1);
  return raw;
}

}  // namespace canary::graph::text

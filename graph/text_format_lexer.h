// Tokens of the graph text format and the pull lexer that produces them
// (internal to canary_graph).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace canary::graph::text {

enum class TokenKind {
  End,
  Ident,       // [A-Za-z_][A-Za-z0-9_.]*
  QuotedName,  // `any name` (text holds the decoded name)
  String,      // "text" (text holds the decoded bytes)
  Number,      // 12, 1.5, 1e-05 (no sign; text holds the lexeme)
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Equal,
  EqualEqual,
  Arrow,
  Percent,
  Minus,
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;
  std::size_t offset = 0;  // byte offset of the token's first character
};

// How a token is named in "expected X, found Y" messages.
std::string describe_token(const Token& token);
// How a token kind is named in "expected X" messages.
const char* token_kind_name(TokenKind kind);

class Lexer {
 public:
  Lexer(std::string_view text, std::string_view source);

  // The next token without consuming it.
  const Token& peek();
  // The token after the next one, without consuming either.
  const Token& peek_second();
  // Consumes and returns the next token.
  Token next();

  // Consumes the raw text of one dimension expression: everything up to a ','
  // or ']' at parenthesis depth 0 (not consumed). Sets `offset` to its start.
  std::string_view take_dim_text(std::size_t& offset);

  // Throws canary::Error(Model) "source:line:col: message" for a byte offset.
  [[noreturn]] void fail_at(std::size_t offset, const std::string& message) const;
  // "source:line:col" of a byte offset.
  std::string location(std::size_t offset) const;
  std::string_view source() const { return source_; }

 private:
  Token lex();
  void skip_space_and_comments();
  Token lex_quoted(char quote, TokenKind kind);
  Token lex_number();
  void rewind_lookahead();

  std::string_view text_;
  std::string source_;
  std::size_t pos_ = 0;
  std::optional<Token> ahead_[2];
};

}  // namespace canary::graph::text

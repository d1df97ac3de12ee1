// Parsing the `symbols` block: one item per symbol, in declaration order,
// with the constraint clauses SymbolTable::describe() prints.
#include <limits>
#include <variant>

#include "canary/error.h"
#include "graph/text_format_parser.h"

namespace canary::graph::text {
namespace {

// One constraint clause of a symbol item.
struct SymbolClause {
  enum class Kind { Range, Divisor, Equal } kind;
  std::int64_t lo = 0, hi = 0;
  std::variant<std::string, std::int64_t> other;  // for Equal
  std::size_t offset = 0;
};

// One item: a symbol and its clauses.
struct SymbolItem {
  std::string name;
  std::size_t offset;
  std::vector<SymbolClause> clauses;
};

// Applies one clause to the table; contradictions become located Model errors.
void apply_clause(SymbolTable& table, const std::string& name, const SymbolClause& c, const Lexer& lex) {
  try {
    switch (c.kind) {
      case SymbolClause::Kind::Range: table.set_range(name, c.lo, c.hi); break;
      case SymbolClause::Kind::Divisor: table.set_divisor(name, c.lo); break;
      case SymbolClause::Kind::Equal: {
        const auto* other = std::get_if<std::string>(&c.other);
        Dim rhs = other ? Dim::symbol(*other) : Dim(std::get<std::int64_t>(c.other));
        table.assert_equal(Dim::symbol(name), rhs, "symbols");
        break;
      }
    }
  } catch (const Error& e) {
    lex.fail_at(c.offset, "symbol '" + name + "': " + e.detail());
  }
}

}  // namespace

// symbols := 'symbols' '{' (NAME clause*)* '}'
// clause  := 'in' '[' int ',' int ']' | '%' int | '==' (NAME | int)
// All item names are declared first, in order, so the declaration order (and
// with it each equality class's representative) is restored; then the clauses
// are applied (see below).
void TextParser::parse_symbols_block() {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  lex_.next();
  Token open = expect(TokenKind::LBrace, "'{' after 'symbols'");
  std::vector<SymbolItem> items;
  while (!accept(TokenKind::RBrace)) {
    if (lex_.peek().kind == TokenKind::End) {
      lex_.fail_at(lex_.peek().offset, "unterminated block: expected '}' to close 'symbols' opened at " +
                                           lex_.location(open.offset) + ", found end of input");
    }
    Token name = expect(TokenKind::Ident, "a symbol name or '}'");
    SymbolItem item{name.text, name.offset, {}};
    while (true) {
      SymbolClause clause;
      clause.offset = lex_.peek().offset;
      if (at_word("in") && lex_.peek_second().kind == TokenKind::LBracket) {
        lex_.next();
        lex_.next();
        clause.kind = SymbolClause::Kind::Range;
        clause.lo = parse_int(kMin, kMax, "range bound");
        expect(TokenKind::Comma, "',' between the range bounds");
        clause.hi = parse_int(kMin, kMax, "range bound");
        expect(TokenKind::RBracket, "']' after the range");
      } else if (accept(TokenKind::Percent)) {
        clause.kind = SymbolClause::Kind::Divisor;
        clause.lo = parse_int(1, kMax, "divisor");
      } else if (accept(TokenKind::EqualEqual)) {
        clause.kind = SymbolClause::Kind::Equal;
        if (lex_.peek().kind == TokenKind::Ident) {
          clause.other = lex_.next().text;
        } else {
          clause.other = parse_int(kMin, kMax, "symbol value");
        }
      } else {
        break;
      }
      item.clauses.push_back(std::move(clause));
    }
    items.push_back(std::move(item));
  }
  for (const SymbolItem& item : items) {
    try {
      symbols_->declare(item.name);
      for (const SymbolClause& c : item.clauses) {
        const auto* other = std::get_if<std::string>(&c.other);
        if (c.kind == SymbolClause::Kind::Equal && other) symbols_->declare(*other);
      }
    } catch (const Error& e) {
      lex_.fail_at(item.offset, "bad symbol name '" + item.name + "': " + e.detail());
    }
  }
  // Ranges and divisors first, then symbol equalities, then fixed values: a
  // fixed value applied before `K == N` would turn it into `K == 3` instead
  // of joining the classes.
  for (int phase = 0; phase < 3; ++phase) {
    for (const SymbolItem& item : items) {
      for (const SymbolClause& c : item.clauses) {
        bool is_symbol = std::holds_alternative<std::string>(c.other);
        int clause_phase = c.kind != SymbolClause::Kind::Equal ? 0 : (is_symbol ? 1 : 2);
        if (clause_phase == phase) apply_clause(*symbols_, item.name, c, lex_);
      }
    }
  }
}

}  // namespace canary::graph::text

// Symbolic dimensions: constants, named symbols and the arithmetic between them,
// kept in a canonical simplified form so that equal expressions compare equal.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace canary::graph {

struct DimExpr;  // immutable canonical expression node (symbolic.cpp)

// Values given to symbols at run time, by symbol name.
using Bindings = std::map<std::string, std::int64_t, std::less<>>;

// A dimension: a constant or an expression over named symbols. Immutable and
// cheap to copy. Construction always simplifies: Dim(3) + Dim(4) is the
// constant 7, (T + 2 - 3) // 1 + 1 is T, and so on.
class Dim {
 public:
  Dim() : Dim(std::int64_t{0}) {}
  Dim(std::int64_t value);  // NOLINT: implicit from a constant on purpose
  Dim(int value) : Dim(static_cast<std::int64_t>(value)) {}
  static Dim symbol(std::string_view name);

  bool is_constant() const;
  // The constant value; only valid when is_constant().
  std::int64_t value() const;
  // True for a bare symbol (not an expression).
  bool is_symbol() const;
  // The symbol's name; only valid when is_symbol().
  const std::string& symbol_name() const;
  // Every symbol name the expression mentions, sorted, without duplicates.
  std::vector<std::string> symbols() const;

  // Value under the bindings; nullopt when a symbol is unbound or a floor
  // division by zero happens.
  std::optional<std::int64_t> evaluate(const Bindings& bindings) const;
  // Replaces symbols by other dims (used to apply equalities and bindings).
  Dim substitute(const std::map<std::string, Dim, std::less<>>& replacement) const;

  // Canonical text in the syntax parse_dim accepts: "T", "2*N + 1",
  // "(T - 3) // 2 + 1", "max(N, M)".
  std::string to_string() const;

  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  // Floor division (rounds toward negative infinity, like Python's //).
  friend Dim floor_div(const Dim& a, const Dim& b);
  // Ceiling division, expressed as -((-a) // b).
  friend Dim ceil_div(const Dim& a, const Dim& b);
  // a / b when the division is exact term by term: b a non-zero constant
  // dividing a's constant and every coefficient, or b a monomial (c * the
  // product of some atoms) and a one too, with b's atoms among a's and c
  // dividing a's coefficient (4*T*N / (2*T) is 2*N). nullopt otherwise,
  // including where a is a multiple of b only for some values of its symbols.
  friend std::optional<Dim> exact_quotient(const Dim& a, const Dim& b);
  friend Dim max(const Dim& a, const Dim& b);
  friend Dim min(const Dim& a, const Dim& b);
  // Structural equality of canonical forms (no symbol equalities applied;
  // SymbolTable::equal applies them).
  friend bool operator==(const Dim& a, const Dim& b);
  friend bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }

  const std::shared_ptr<const DimExpr>& expr() const { return expr_; }
  explicit Dim(std::shared_ptr<const DimExpr> expr) : expr_(std::move(expr)) {}

 private:
  std::shared_ptr<const DimExpr> expr_;
};

using DimVector = std::vector<Dim>;

// "[N, 3, (T - 3) // 2 + 1]".
std::string dims_to_string(const DimVector& dims);

// Parses the syntax Dim::to_string prints: integers, identifiers
// ([A-Za-z_][A-Za-z0-9_]*), + - *, // (floor division), max(a, b), min(a, b),
// parentheses. Throws canary::Error(Model) naming the text and the position.
Dim parse_dim(std::string_view text);

// What is known about one symbol. Equality with another symbol is kept as a
// union-find in SymbolTable; equality with a constant as `value`.
struct SymbolConstraints {
  std::int64_t min = 0;
  std::int64_t max = INT64_MAX;
  std::int64_t divisor = 1;  // the value must be a multiple of this
};

// All symbols of one model (a graph and its subgraphs share one table).
class SymbolTable {
 public:
  // Declares a symbol (idempotent) and returns it.
  Dim declare(std::string_view name);
  // A new symbol whose name starts with the prefix and is unused so far.
  Dim fresh(std::string_view prefix = "s");
  bool contains(std::string_view name) const;
  // Declared names in declaration order.
  const std::vector<std::string>& names() const { return order_; }

  // Constraints. Each throws canary::Error(Shape) when it contradicts what is
  // already known (an empty range, a constant outside the range, ...).
  void set_range(std::string_view name, std::int64_t lo, std::int64_t hi);
  void set_divisor(std::string_view name, std::int64_t divisor);
  // Records a == b for two dims: symbol == symbol joins their classes,
  // symbol == constant fixes the class's value. Other expressions are checked
  // for equality after substitution and throw Error(Shape) if provably unequal.
  void assert_equal(const Dim& a, const Dim& b, std::string_view context);

  // The representative symbol of name's equality class.
  std::string representative(std::string_view name) const;
  // Constraints of the class of name (intersected over the class).
  SymbolConstraints constraints(std::string_view name) const;
  // The constant the class is fixed to, if any.
  std::optional<std::int64_t> fixed_value(std::string_view name) const;

  // Rewrites a dim using the equalities known so far (symbols → representative
  // or fixed constant) and simplifies.
  Dim canonical(const Dim& d) const;
  bool equal(const Dim& a, const Dim& b) const { return canonical(a) == canonical(b); }

  // Binds a symbol to a run-time value after checking its constraints and any
  // earlier binding of its equality class; throws canary::Error(Shape) naming
  // the symbol, the value and the violated constraint.
  void bind(Bindings& bindings, std::string_view name, std::int64_t value) const;

  // Text of the constraints in the text format's `symbols` line syntax:
  // "T in [1, 4096] % 4", "M == N", "K == 3".
  std::vector<std::string> describe() const;

 private:
  struct Entry {
    std::string parent;  // union-find parent name (itself when a root)
    SymbolConstraints constraints;
    std::optional<std::int64_t> value;
  };
  const Entry& root_entry(std::string_view name) const;
  Entry& root_entry(std::string_view name);
  std::string find(std::string_view name) const;
  // find() without allocating: a view of the representative's key in entries_
  // (or of `name` itself when it is undeclared). For the per-call bind().
  std::string_view find_view(std::string_view name) const;
  void merge(const std::string& a, const std::string& b, std::string_view context);
  void fix_value(const std::string& name, std::int64_t value, std::string_view context);

  std::map<std::string, Entry, std::less<>> entries_;
  std::vector<std::string> order_;
  std::int64_t next_fresh_ = 0;
};

}  // namespace canary::graph

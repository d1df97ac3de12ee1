// Symbolic dimensions: the canonical expression form, its arithmetic, printing
// and evaluation.
//
// Canonical form. Every Dim is a linear form
//     constant + c1*a1 + c2*a2 + ...
// with non-zero integer coefficients over distinct atoms, sorted by atom kind
// (symbols, products, max, min, floor divisions) and then by the atom's text.
// An atom is a symbol, a product of two or more non-product atoms (sorted, with
// repeats), max(a, b) / min(a, b) (operands sorted by text), or a // b.
// Construction simplifies:
//   - constants fold everywhere; like terms are collected (N - N = 0);
//   - products distribute over sums, so polynomials are in expanded form;
//   - max/min of constants, of equal operands, or of operands whose difference
//     is a constant fold to one operand; a constant shared by both operands is
//     pulled out: max(T + 1, N + 1) = max(N, T) + 1;
//   - a // c for a constant c: c == 1 gives a; c < 0 gives (-a) // (-c);
//     constants fold with floor semantics (-7 // 2 = -4); multiples of c are
//     moved out of the numerator so every remaining coefficient and the
//     constant lie in [0, c): (2*T + 5) // 2 = T + 2 and (T - 1) // 2 + 1 =
//     (T + 1) // 2; a common factor of the remaining coefficients and c is
//     divided out ((2*T + 3) // 4 = (T + 1) // 2); (a // c1 + k) // c2 =
//     (a + k*c1) // (c1*c2);
//   - ceil_div(a, c) for a constant c > 0 is (a + c - 1) // c, otherwise
//     -((-a) // b).
// Division by the constant 0 is kept symbolic ("T // 0"); evaluate() returns
// nullopt for it, as for any division by a value that evaluates to 0.
// Equality is equality of the canonical text, which parse_dim reads back to
// the same form.
#include "graph/symbolic.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>

#include "canary/error.h"

namespace canary::graph {

enum class AtomKind : std::uint8_t { Symbol, Product, Max, Min, FloorDiv };

struct DimAtom;
using AtomPtr = std::shared_ptr<const DimAtom>;

// One non-constant building block of a linear form.
struct DimAtom {
  AtomKind kind = AtomKind::Symbol;
  std::string name;              // Symbol
  std::vector<AtomPtr> factors;  // Product: two or more non-product atoms, sorted
  Dim lhs, rhs;                  // FloorDiv (numerator, denominator), Max, Min
  std::string key;               // canonical text; sort key within a kind
};

struct DimTerm {
  std::int64_t coeff;
  AtomPtr atom;
};

// constant + sum(coeff * atom), terms sorted, no zero coefficients.
struct DimExpr {
  std::int64_t constant = 0;
  std::vector<DimTerm> terms;
  std::string text;
};

namespace {

// Throws the error for dimension arithmetic that leaves int64.
[[noreturn]] void throw_overflow() {
  throw Error(ErrorKind::Resource, "symbolic dimension arithmetic overflows int64");
}

// a + b, throwing on overflow.
std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw_overflow();
  return r;
}

// a * b, throwing on overflow.
std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw_overflow();
  return r;
}

// Floor division of constants (b != 0), rounding toward negative infinity.
std::int64_t floor_div_const(std::int64_t a, std::int64_t b) {
  if (b == -1) return checked_mul(a, -1);
  std::int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

// Remainder matching floor_div_const: the result has the sign of b.
std::int64_t floor_mod_const(std::int64_t a, std::int64_t b) {
  if (b == -1) return 0;
  return a - floor_div_const(a, b) * b;
}

// Ordering of atoms inside a linear form or a product.
bool atom_less(const AtomPtr& a, const AtomPtr& b) {
  if (a->kind != b->kind) return a->kind < b->kind;
  return a->key < b->key;
}

// Text of an atom used as a factor of a product or after a coefficient.
std::string factor_text(const DimAtom& atom) {
  return atom.kind == AtomKind::FloorDiv ? "(" + atom.key + ")" : atom.key;
}

// Magnitude of a coefficient as text (safe for INT64_MIN).
std::string magnitude_text(std::int64_t v) {
  std::uint64_t m = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  return std::to_string(m);
}

// Canonical text of a linear form.
std::string linear_text(std::int64_t constant, const std::vector<DimTerm>& terms) {
  if (terms.empty()) return std::to_string(constant);
  std::string out;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const DimTerm& t = terms[i];
    bool negative = t.coeff < 0;
    if (i == 0) {
      if (negative) out += "-";
    } else {
      out += negative ? " - " : " + ";
    }
    bool unit = t.coeff == 1 || t.coeff == -1;
    if (unit && !(i == 0 && negative)) {
      out += t.atom->key;
    } else if (unit) {
      out += factor_text(*t.atom);
    } else {
      out += magnitude_text(t.coeff) + "*" + factor_text(*t.atom);
    }
  }
  if (constant != 0) out += (constant < 0 ? " - " : " + ") + magnitude_text(constant);
  return out;
}

// Builds an immutable Dim from a constant and sorted terms.
Dim make_dim(std::int64_t constant, std::vector<DimTerm> terms) {
  auto e = std::make_shared<DimExpr>();
  e->constant = constant;
  e->terms = std::move(terms);
  e->text = linear_text(e->constant, e->terms);
  return Dim(std::shared_ptr<const DimExpr>(std::move(e)));
}

// Accumulates coefficient * atom terms, collecting like terms.
class LinearBuilder {
 public:
  explicit LinearBuilder(std::int64_t constant = 0) : constant_(constant) {}
  void add_constant(std::int64_t c) { constant_ = checked_add(constant_, c); }
  // Adds coeff * atom.
  void add(std::int64_t coeff, const AtomPtr& atom) {
    auto [it, inserted] = terms_.try_emplace({atom->kind, atom->key}, DimTerm{0, atom});
    it->second.coeff = checked_add(it->second.coeff, coeff);
  }
  // Adds scale * d.
  void add_scaled(std::int64_t scale, const Dim& d) {
    add_constant(checked_mul(scale, d.expr()->constant));
    for (const DimTerm& t : d.expr()->terms) add(checked_mul(scale, t.coeff), t.atom);
  }
  Dim build() const {
    std::vector<DimTerm> terms;
    for (const auto& [key, term] : terms_) {
      if (term.coeff != 0) terms.push_back(term);
    }
    return make_dim(constant_, std::move(terms));
  }

 private:
  std::int64_t constant_;
  std::map<std::pair<AtomKind, std::string>, DimTerm> terms_;
};

// A Dim that is exactly one atom.
Dim atom_dim(AtomPtr atom) { return make_dim(0, {DimTerm{1, std::move(atom)}}); }

// The atom when d is exactly one atom with coefficient 1; null otherwise.
const DimAtom* lone_atom(const Dim& d) {
  const DimExpr& e = *d.expr();
  if (e.constant != 0 || e.terms.size() != 1 || e.terms[0].coeff != 1) return nullptr;
  return e.terms[0].atom.get();
}

// Whether d prints without parentheses as an operand of //.
bool is_simple_operand(const Dim& d) {
  if (d.is_constant()) return d.value() >= 0;
  const DimAtom* a = lone_atom(d);
  return a && (a->kind == AtomKind::Symbol || a->kind == AtomKind::Max || a->kind == AtomKind::Min);
}

// Text of an operand of //, parenthesised unless simple.
std::string operand_text(const Dim& d) {
  return is_simple_operand(d) ? d.to_string() : "(" + d.to_string() + ")";
}

// A new symbol atom.
AtomPtr symbol_atom(std::string_view name) {
  auto a = std::make_shared<DimAtom>();
  a->kind = AtomKind::Symbol;
  a->name = std::string(name);
  a->key = a->name;
  return a;
}

// A new floor-division, max or min atom over two canonical operands.
AtomPtr binary_atom(AtomKind kind, const Dim& lhs, const Dim& rhs) {
  auto a = std::make_shared<DimAtom>();
  a->kind = kind;
  a->lhs = lhs;
  a->rhs = rhs;
  if (kind == AtomKind::FloorDiv) {
    a->key = operand_text(lhs) + " // " + operand_text(rhs);
  } else {
    a->key = std::string(kind == AtomKind::Max ? "max(" : "min(") + lhs.to_string() + ", " +
             rhs.to_string() + ")";
  }
  return a;
}

// Appends the non-product factors of an atom.
void append_factors(const AtomPtr& atom, std::vector<AtomPtr>& out) {
  if (atom->kind == AtomKind::Product) {
    out.insert(out.end(), atom->factors.begin(), atom->factors.end());
  } else {
    out.push_back(atom);
  }
}

// The product atom x*y (flattened and sorted).
AtomPtr product_atom(const AtomPtr& x, const AtomPtr& y) {
  auto a = std::make_shared<DimAtom>();
  a->kind = AtomKind::Product;
  append_factors(x, a->factors);
  append_factors(y, a->factors);
  std::sort(a->factors.begin(), a->factors.end(), atom_less);
  for (std::size_t i = 0; i < a->factors.size(); ++i) {
    if (i) a->key += "*";
    a->key += factor_text(*a->factors[i]);
  }
  return a;
}

// The atom a // c for a reduced numerator, merging (x // c1 + k) // c into
// (x + k*c1) // (c1*c) since x // c1 + k == (x + k*c1) // c1.
Dim floor_div_atom(std::int64_t constant, std::vector<DimTerm> terms, std::int64_t c) {
  if (terms.size() == 1 && terms[0].coeff == 1) {
    const DimAtom& inner = *terms[0].atom;
    if (inner.kind == AtomKind::FloorDiv && inner.rhs.is_constant() && inner.rhs.value() > 0) {
      std::int64_t c1 = inner.rhs.value();
      return floor_div(inner.lhs + Dim(checked_mul(constant, c1)), Dim(checked_mul(c1, c)));
    }
  }
  return atom_dim(binary_atom(AtomKind::FloorDiv, make_dim(constant, std::move(terms)), Dim(c)));
}

// Floor division by a positive constant c > 1 of a non-constant numerator.
Dim floor_div_positive(const Dim& a, std::int64_t c) {
  const DimExpr& e = *a.expr();
  LinearBuilder quotient(floor_div_const(e.constant, c));
  std::int64_t rest_constant = floor_mod_const(e.constant, c);
  std::vector<DimTerm> rest;
  std::int64_t g = c;
  for (const DimTerm& t : e.terms) {
    quotient.add(floor_div_const(t.coeff, c), t.atom);
    std::int64_t r = floor_mod_const(t.coeff, c);
    if (r != 0) {
      rest.push_back({r, t.atom});
      g = std::gcd(g, r);
    }
  }
  Dim q = quotient.build();
  if (rest.empty()) return q;
  if (g > 1) {
    for (DimTerm& t : rest) t.coeff /= g;
    return q + floor_div(make_dim(rest_constant / g, std::move(rest)), Dim(c / g));
  }
  return q + floor_div_atom(rest_constant, std::move(rest), c);
}

// max or min of two canonical dims.
Dim extremum(AtomKind kind, const Dim& a, const Dim& b) {
  bool is_max = kind == AtomKind::Max;
  Dim diff = a - b;
  if (diff.is_constant()) return (diff.value() >= 0) == is_max ? a : b;
  std::int64_t ca = a.expr()->constant;
  if (ca != 0 && ca == b.expr()->constant) {
    return extremum(kind, a - Dim(ca), b - Dim(ca)) + Dim(ca);
  }
  bool swap = b.to_string() < a.to_string();
  return atom_dim(binary_atom(kind, swap ? b : a, swap ? a : b));
}

// Collects the symbol names an expression mentions.
void collect_symbols(const Dim& d, std::set<std::string>& out);

// Collects the symbol names an atom mentions.
void collect_atom_symbols(const DimAtom& a, std::set<std::string>& out) {
  switch (a.kind) {
    case AtomKind::Symbol:
      out.insert(a.name);
      break;
    case AtomKind::Product:
      for (const AtomPtr& f : a.factors) collect_atom_symbols(*f, out);
      break;
    default:
      collect_symbols(a.lhs, out);
      collect_symbols(a.rhs, out);
  }
}

void collect_symbols(const Dim& d, std::set<std::string>& out) {
  for (const DimTerm& t : d.expr()->terms) collect_atom_symbols(*t.atom, out);
}

// Optional-aware checked arithmetic for evaluation.
std::optional<std::int64_t> eval_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<std::int64_t> eval_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Value of an atom under bindings.
std::optional<std::int64_t> evaluate_atom(const DimAtom& a, const Bindings& bindings) {
  switch (a.kind) {
    case AtomKind::Symbol: {
      auto it = bindings.find(a.name);
      if (it == bindings.end()) return std::nullopt;
      return it->second;
    }
    case AtomKind::Product: {
      std::optional<std::int64_t> r = 1;
      for (const AtomPtr& f : a.factors) {
        auto v = evaluate_atom(*f, bindings);
        if (!v) return std::nullopt;
        r = eval_mul(*r, *v);
        if (!r) return std::nullopt;
      }
      return r;
    }
    default:
      break;
  }
  auto l = a.lhs.evaluate(bindings);
  auto r = a.rhs.evaluate(bindings);
  if (!l || !r) return std::nullopt;
  if (a.kind == AtomKind::Max) return std::max(*l, *r);
  if (a.kind == AtomKind::Min) return std::min(*l, *r);
  if (*r == 0 || (*r == -1 && *l == INT64_MIN)) return std::nullopt;
  return floor_div_const(*l, *r);
}

// Rewrites an atom with symbols replaced.
Dim substitute_atom(const AtomPtr& a, const std::map<std::string, Dim, std::less<>>& repl) {
  switch (a->kind) {
    case AtomKind::Symbol: {
      auto it = repl.find(a->name);
      return it == repl.end() ? atom_dim(a) : it->second;
    }
    case AtomKind::Product: {
      Dim r(1);
      for (const AtomPtr& f : a->factors) r = r * substitute_atom(f, repl);
      return r;
    }
    case AtomKind::Max:
      return max(a->lhs.substitute(repl), a->rhs.substitute(repl));
    case AtomKind::Min:
      return min(a->lhs.substitute(repl), a->rhs.substitute(repl));
    case AtomKind::FloorDiv:
      break;
  }
  return floor_div(a->lhs.substitute(repl), a->rhs.substitute(repl));
}

// Whether text is an identifier ([A-Za-z_][A-Za-z0-9_]*).
bool is_identifier(std::string_view text) {
  if (text.empty()) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!alpha(text[0])) return false;
  return std::all_of(text.begin(), text.end(),
                     [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); });
}

}  // namespace

// A constant dimension.
Dim::Dim(std::int64_t value) : expr_(make_dim(value, {}).expr_) {}

// A bare symbol; the name must be an identifier.
Dim Dim::symbol(std::string_view name) {
  if (!is_identifier(name)) {
    throw Error(ErrorKind::Model, "invalid symbol name '" + std::string(name) + "'");
  }
  return atom_dim(symbol_atom(name));
}

// True when the expression has no symbols.
bool Dim::is_constant() const { return expr_->terms.empty(); }

// The constant value (internal error when not constant).
std::int64_t Dim::value() const {
  if (!is_constant()) throw Error(ErrorKind::Internal, "Dim::value() on non-constant " + to_string());
  return expr_->constant;
}

// True for a bare symbol.
bool Dim::is_symbol() const {
  const DimAtom* a = lone_atom(*this);
  return a && a->kind == AtomKind::Symbol;
}

// The name of a bare symbol (internal error otherwise).
const std::string& Dim::symbol_name() const {
  if (!is_symbol()) throw Error(ErrorKind::Internal, "Dim::symbol_name() on non-symbol " + to_string());
  return expr_->terms[0].atom->name;
}

// Sorted, unique symbol names mentioned.
std::vector<std::string> Dim::symbols() const {
  std::set<std::string> names;
  collect_symbols(*this, names);
  return {names.begin(), names.end()};
}

// Value under bindings, or nullopt.
std::optional<std::int64_t> Dim::evaluate(const Bindings& bindings) const {
  std::optional<std::int64_t> r = expr_->constant;
  for (const DimTerm& t : expr_->terms) {
    auto v = evaluate_atom(*t.atom, bindings);
    if (!v) return std::nullopt;
    auto scaled = eval_mul(t.coeff, *v);
    if (!scaled) return std::nullopt;
    r = eval_add(*r, *scaled);
    if (!r) return std::nullopt;
  }
  return r;
}

// Replaces symbols by dims and re-simplifies.
Dim Dim::substitute(const std::map<std::string, Dim, std::less<>>& replacement) const {
  Dim r(expr_->constant);
  for (const DimTerm& t : expr_->terms) r = r + Dim(t.coeff) * substitute_atom(t.atom, replacement);
  return r;
}

// Canonical text.
std::string Dim::to_string() const { return expr_->text; }

// Sum.
Dim operator+(const Dim& a, const Dim& b) {
  LinearBuilder out;
  out.add_scaled(1, a);
  out.add_scaled(1, b);
  return out.build();
}

// Difference.
Dim operator-(const Dim& a, const Dim& b) {
  LinearBuilder out;
  out.add_scaled(1, a);
  out.add_scaled(-1, b);
  return out.build();
}

// Product, distributed over both sums.
Dim operator*(const Dim& a, const Dim& b) {
  const DimExpr& x = *a.expr();
  const DimExpr& y = *b.expr();
  LinearBuilder out(checked_mul(x.constant, y.constant));
  for (const DimTerm& t : x.terms) out.add(checked_mul(t.coeff, y.constant), t.atom);
  for (const DimTerm& t : y.terms) out.add(checked_mul(t.coeff, x.constant), t.atom);
  for (const DimTerm& s : x.terms) {
    for (const DimTerm& t : y.terms) out.add(checked_mul(s.coeff, t.coeff), product_atom(s.atom, t.atom));
  }
  return out.build();
}

// Floor division (see the file comment for the simplifications).
Dim floor_div(const Dim& a, const Dim& b) {
  if (!b.is_constant() || b.value() == 0) return atom_dim(binary_atom(AtomKind::FloorDiv, a, b));
  std::int64_t c = b.value();
  if (c < 0) return floor_div(Dim(0) - a, Dim(checked_mul(c, -1)));
  if (c == 1) return a;
  if (a.is_constant()) return Dim(floor_div_const(a.value(), c));
  return floor_div_positive(a, c);
}

namespace {

// The atoms of a monomial's atom: itself, or a product's factors (sorted by key).
std::vector<AtomPtr> monomial_factors(const AtomPtr& atom) {
  if (atom->kind == AtomKind::Product) return atom->factors;
  return {atom};
}

// a / b for monomials a = ca * A and b = cb * B (A, B products of atoms):
// exact when cb divides ca and B's atoms are among A's.
std::optional<Dim> monomial_quotient(const DimTerm& a, const DimTerm& b) {
  if (b.coeff == 0 || a.coeff % b.coeff != 0) return std::nullopt;
  std::vector<AtomPtr> rest = monomial_factors(a.atom);
  for (const AtomPtr& f : monomial_factors(b.atom)) {
    auto it = std::find_if(rest.begin(), rest.end(), [&](const AtomPtr& r) { return r->key == f->key; });
    if (it == rest.end()) return std::nullopt;
    rest.erase(it);
  }
  Dim q(a.coeff / b.coeff);
  for (const AtomPtr& r : rest) q = q * atom_dim(r);
  return q;
}

}  // namespace

std::optional<Dim> exact_quotient(const Dim& a, const Dim& b) {
  if (a == b && !(b.is_constant() && b.value() == 0)) return Dim(1);
  const DimExpr& x = *a.expr();
  const DimExpr& y = *b.expr();
  if (b.is_constant()) {
    const std::int64_t c = b.value();
    if (c == 0 || x.constant % c != 0) return std::nullopt;
    for (const DimTerm& t : x.terms)
      if (t.coeff % c != 0) return std::nullopt;
    return floor_div(a, b);  // exact, so floor division divides every term
  }
  if (x.constant != 0 || y.constant != 0 || x.terms.size() != 1 || y.terms.size() != 1) return std::nullopt;
  return monomial_quotient(x.terms[0], y.terms[0]);
}

// Ceiling division.
Dim ceil_div(const Dim& a, const Dim& b) {
  if (b.is_constant() && b.value() > 0) return floor_div(a + Dim(b.value() - 1), b);
  return Dim(0) - floor_div(Dim(0) - a, b);
}

// Maximum.
Dim max(const Dim& a, const Dim& b) { return extremum(AtomKind::Max, a, b); }

// Minimum.
Dim min(const Dim& a, const Dim& b) { return extremum(AtomKind::Min, a, b); }

// Structural equality of canonical forms.
bool operator==(const Dim& a, const Dim& b) {
  return a.expr_ == b.expr_ || a.expr_->text == b.expr_->text;
}

// "[N, 3, (T + 1) // 2]".
std::string dims_to_string(const DimVector& dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ", ";
    out += dims[i].to_string();
  }
  return out + "]";
}

}  // namespace canary::graph

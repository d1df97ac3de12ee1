// The symbol table: equality classes of symbols (union-find), their range and
// divisibility constraints, fixed values, and checked run-time binding.
//
// Invariants: constraints and the fixed value of a class live on its root
// entry. The root of a class is always its earliest-declared member, so
// describe() lists a representative before the symbols equal to it.
#include <algorithm>
#include <numeric>

#include "canary/error.h"
#include "graph/symbolic.h"

namespace canary::graph {
namespace {

// "[lo, hi]".
std::string range_text(const SymbolConstraints& c) {
  return "[" + std::to_string(c.min) + ", " + std::to_string(c.max) + "]";
}

// The smallest multiple of d that is >= lo, or nullopt past INT64_MAX.
std::optional<std::int64_t> first_multiple_at_least(std::int64_t lo, std::int64_t d) {
  std::int64_t q = lo / d;
  if (q * d < lo) ++q;
  std::int64_t r;
  if (__builtin_mul_overflow(q, d, &r)) return std::nullopt;
  return r;
}

// The least common multiple of two positive divisors; Error(Shape) naming the
// symbol when it leaves int64 (std::lcm is undefined there).
std::int64_t combined_divisor(std::string_view name, std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a / std::gcd(a, b), b, &r)) {
    throw Error(ErrorKind::Shape, "symbol '" + std::string(name) + "': divisors " + std::to_string(a) + " and " +
                                      std::to_string(b) + " have no common multiple within int64");
  }
  return r;
}

// Throws a shape error for a symbol whose constraints admit no value.
void check_satisfiable(std::string_view name, const SymbolConstraints& c) {
  auto first = first_multiple_at_least(c.min, c.divisor);
  if (c.min > c.max || !first || *first > c.max) {
    throw Error(ErrorKind::Shape, "symbol '" + std::string(name) + "' has no possible value: range " +
                                      range_text(c) + " with divisor " + std::to_string(c.divisor));
  }
}

// True when value meets the range and divisor (what violation() explains otherwise).
bool satisfies(std::int64_t value, const SymbolConstraints& c) {
  return value >= c.min && value <= c.max && value % c.divisor == 0;
}

// Why value violates the constraints; empty when it satisfies them.
std::string violation(std::int64_t value, const SymbolConstraints& c) {
  if (value < c.min || value > c.max) return "outside the range " + range_text(c);
  if (value % c.divisor != 0) return "not a multiple of " + std::to_string(c.divisor);
  return {};
}

}  // namespace

// Declares a symbol (idempotent).
Dim SymbolTable::declare(std::string_view name) {
  Dim d = Dim::symbol(name);  // validates the name
  if (!contains(name)) {
    entries_.emplace(std::string(name), Entry{std::string(name), {}, std::nullopt});
    order_.emplace_back(name);
  }
  return d;
}

// Declares a new symbol named prefix + number.
Dim SymbolTable::fresh(std::string_view prefix) {
  for (;;) {
    std::string name = std::string(prefix) + std::to_string(next_fresh_++);
    if (!contains(name)) return declare(name);
  }
}

bool SymbolTable::contains(std::string_view name) const { return entries_.find(name) != entries_.end(); }

// The root name of name's class (name itself when undeclared).
std::string SymbolTable::find(std::string_view name) const { return std::string(find_view(name)); }

std::string_view SymbolTable::find_view(std::string_view name) const {
  std::string_view current = name;
  for (;;) {
    auto it = entries_.find(current);
    if (it == entries_.end()) return current;
    if (it->second.parent == it->first) return it->first;
    current = it->second.parent;
  }
}

const SymbolTable::Entry& SymbolTable::root_entry(std::string_view name) const {
  return entries_.at(find(name));
}

SymbolTable::Entry& SymbolTable::root_entry(std::string_view name) {
  declare(name);
  return entries_.at(find(name));
}

// Intersects the class's range with [lo, hi].
void SymbolTable::set_range(std::string_view name, std::int64_t lo, std::int64_t hi) {
  if (lo > hi) {
    throw Error(ErrorKind::Shape, "symbol '" + std::string(name) + "': empty range [" +
                                      std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  Entry& root = root_entry(name);
  SymbolConstraints c = root.constraints;
  c.min = std::max(c.min, lo);
  c.max = std::min(c.max, hi);
  check_satisfiable(name, c);
  if (root.value && !violation(*root.value, c).empty()) {
    throw Error(ErrorKind::Shape, "symbol '" + std::string(name) + "' == " + std::to_string(*root.value) +
                                      " is " + violation(*root.value, c));
  }
  root.constraints = c;
}

// Requires the class's value to be a multiple of divisor.
void SymbolTable::set_divisor(std::string_view name, std::int64_t divisor) {
  if (divisor <= 0) {
    throw Error(ErrorKind::Shape,
                "symbol '" + std::string(name) + "': divisor must be positive, got " + std::to_string(divisor));
  }
  Entry& root = root_entry(name);
  SymbolConstraints c = root.constraints;
  c.divisor = combined_divisor(name, c.divisor, divisor);
  check_satisfiable(name, c);
  if (root.value && !violation(*root.value, c).empty()) {
    throw Error(ErrorKind::Shape, "symbol '" + std::string(name) + "' == " + std::to_string(*root.value) +
                                      " is " + violation(*root.value, c));
  }
  root.constraints = c;
}

// Joins the classes of a and b; the earlier-declared root stays the root.
void SymbolTable::merge(const std::string& a, const std::string& b, std::string_view context) {
  declare(a);
  declare(b);
  std::string ra = find(a), rb = find(b);
  if (ra == rb) return;
  auto index = [&](const std::string& n) { return std::find(order_.begin(), order_.end(), n) - order_.begin(); };
  if (index(rb) < index(ra)) std::swap(ra, rb);
  Entry& keep = entries_.at(ra);
  Entry& gone = entries_.at(rb);
  SymbolConstraints c = keep.constraints;
  c.min = std::max(c.min, gone.constraints.min);
  c.max = std::min(c.max, gone.constraints.max);
  std::string both = std::string(context) + ": " + a + " == " + b;
  try {
    c.divisor = combined_divisor(ra, c.divisor, gone.constraints.divisor);
  } catch (const Error& e) {
    throw Error(ErrorKind::Shape, both + ": " + e.detail());
  }
  if (keep.value && gone.value && *keep.value != *gone.value) {
    throw Error(ErrorKind::Shape, both + " contradicts " + ra + " == " + std::to_string(*keep.value) +
                                      " and " + rb + " == " + std::to_string(*gone.value));
  }
  std::optional<std::int64_t> value = keep.value ? keep.value : gone.value;
  try {
    check_satisfiable(ra, c);
  } catch (const Error& e) {
    throw Error(ErrorKind::Shape, both + ": " + e.detail());
  }
  if (value && !violation(*value, c).empty()) {
    throw Error(ErrorKind::Shape, both + ": value " + std::to_string(*value) + " is " + violation(*value, c));
  }
  keep.constraints = c;
  keep.value = value;
  gone.parent = ra;
}

// Fixes the class of name to a constant.
void SymbolTable::fix_value(const std::string& name, std::int64_t value, std::string_view context) {
  Entry& root = root_entry(name);
  std::string what = std::string(context) + ": " + name + " == " + std::to_string(value);
  if (root.value && *root.value != value) {
    throw Error(ErrorKind::Shape, what + " contradicts " + name + " == " + std::to_string(*root.value));
  }
  std::string why = violation(value, root.constraints);
  if (!why.empty()) throw Error(ErrorKind::Shape, what + ": " + std::to_string(value) + " is " + why + " of " + name);
  root.value = value;
}

// Records a == b after canonicalising both sides. A constant difference must be
// 0; c*S + k == 0 fixes S to -k/c (an error when c does not divide k);
// c*(S - R) == 0 joins S and R; anything else is left unrecorded.
void SymbolTable::assert_equal(const Dim& a, const Dim& b, std::string_view context) {
  Dim ca = canonical(a), cb = canonical(b);
  Dim diff = ca - cb;
  auto fail = [&] {
    std::string known = (ca != a || cb != b) ? " (known: " + ca.to_string() + " == " + cb.to_string() + ")" : "";
    throw Error(ErrorKind::Shape,
                std::string(context) + ": " + a.to_string() + " == " + b.to_string() + " cannot hold" + known);
  };
  if (diff.is_constant()) {
    if (diff.value() != 0) fail();
    return;
  }
  std::vector<std::string> names = diff.symbols();
  Dim k = diff.substitute({{names[0], Dim(0)}});
  if (names.size() == 1 && k.is_constant()) {
    // diff == c*S + k for an integer c: S = -k / c.
    Dim s = Dim::symbol(names[0]);
    Dim c = diff.substitute({{names[0], Dim(1)}}) - k;
    if (!c.is_constant() || diff != c * s + k) return;
    if (k.value() % c.value() != 0) fail();
    fix_value(names[0], -k.value() / c.value(), context);
    return;
  }
  if (names.size() == 2) {
    // diff == c*(S - R): S == R.
    Dim s = Dim::symbol(names[0]), r = Dim::symbol(names[1]);
    Dim c = diff.substitute({{names[0], Dim(1)}, {names[1], Dim(0)}});
    if (c.is_constant() && c.value() != 0 && diff == c * (s - r)) merge(names[0], names[1], context);
  }
}

// The representative symbol of name's class.
std::string SymbolTable::representative(std::string_view name) const { return find(name); }

// The constraints of name's class (defaults when undeclared).
SymbolConstraints SymbolTable::constraints(std::string_view name) const {
  return contains(name) ? root_entry(name).constraints : SymbolConstraints{};
}

// The constant name's class is fixed to, if any.
std::optional<std::int64_t> SymbolTable::fixed_value(std::string_view name) const {
  return contains(name) ? root_entry(name).value : std::nullopt;
}

// Rewrites symbols to their representative or fixed value.
Dim SymbolTable::canonical(const Dim& d) const {
  std::map<std::string, Dim, std::less<>> replacement;
  for (const std::string& name : d.symbols()) {
    if (!contains(name)) continue;
    const Entry& root = root_entry(name);
    if (root.value) {
      replacement.emplace(name, Dim(*root.value));
    } else if (root.parent != name) {
      replacement.emplace(name, Dim::symbol(root.parent));
    }
  }
  return replacement.empty() ? d : d.substitute(replacement);
}

// Checks a run-time value against name's class and binds every member of it.
// Runs on every call for every symbolic input dim, so the happy path builds
// no strings: messages are composed only when a check fails.
void SymbolTable::bind(Bindings& bindings, std::string_view name, std::int64_t value) const {
  const auto head = [&] { return "symbol '" + std::string(name) + "' = " + std::to_string(value); };
  std::string_view root_name = name;
  if (contains(name)) {
    root_name = find_view(name);
    const Entry& root = entries_.find(root_name)->second;
    if (!satisfies(value, root.constraints))
      throw Error(ErrorKind::Shape, head() + " is " + violation(value, root.constraints));
    if (root.value && *root.value != value) {
      throw Error(ErrorKind::Shape, head() + " but " + std::string(name) + " == " + std::to_string(*root.value));
    }
  }
  // Other members of name's class must agree (and are bound too).
  const auto is_member = [&](const std::string& m) { return m != name && find_view(m) == root_name; };
  for (const std::string& m : order_) {
    if (!is_member(m)) continue;
    auto it = bindings.find(m);
    if (it != bindings.end() && it->second != value) {
      throw Error(ErrorKind::Shape, head() + " but " + std::string(name) + " == " + m + " and " + m + " = " +
                                        std::to_string(it->second));
    }
  }
  auto self = bindings.find(name);
  if (self != bindings.end() && self->second != value) {
    throw Error(ErrorKind::Shape, head() + " but it is already bound to " + std::to_string(self->second));
  }
  if (self == bindings.end()) bindings.emplace(std::string(name), value);
  for (const std::string& m : order_)
    if (is_member(m)) bindings.insert_or_assign(m, value);
}

// One line per constraint, in declaration order of the symbols:
//   "T in [1, 4096]"       range (printed when not the default [0, INT64_MAX])
//   "T in [1, 4096] % 4"   range and divisor
//   "T % 4"                divisor only
//   "M == N"               M is equal to N, the representative of its class
//   "K == 3"               the class of K is fixed to 3
// Range, divisor and value lines name the representative; a representative
// always comes before the members equal to it, so reading the lines back in
// order rebuilds the same table.
std::vector<std::string> SymbolTable::describe() const {
  std::vector<std::string> lines;
  const SymbolConstraints defaults;
  for (const std::string& name : order_) {
    const Entry& e = entries_.at(name);
    if (e.parent != name) {
      lines.push_back(name + " == " + find(name));
      continue;
    }
    const SymbolConstraints& c = e.constraints;
    bool has_range = c.min != defaults.min || c.max != defaults.max;
    std::string line = name;
    if (has_range) line += " in " + range_text(c);
    if (c.divisor != 1) line += " % " + std::to_string(c.divisor);
    if (line != name) lines.push_back(line);
    if (e.value) lines.push_back(name + " == " + std::to_string(*e.value));
  }
  return lines;
}

}  // namespace canary::graph

// GraphWriter basics: fresh names, dim tags and their sizes, broadcasting of
// tags, emitting nodes and constants, and choosing visible values.
#include "tests/jit_differential/graph_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace canary::differential {
namespace {

// The shortest text that parses back to exactly the same f32.
std::string float_text(float v) {
  if (v == 0.0f) return "0";
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

// "[2, 3]" for a constant shape.
std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// True for a tag made of digits only.
bool is_digits(const std::string& tag) {
  return !tag.empty() && std::all_of(tag.begin(), tag.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

GraphWriter::GraphWriter(std::uint64_t seed, RandomGraph& graph, ClipBounds clip_bounds)
    : rng_(seed), graph_(graph), clip_bounds_(clip_bounds) {
  graph_.seed = seed;
}

// A new unique value name.
std::string GraphWriter::fresh(const std::string& prefix) { return prefix + std::to_string(counter_++); }

// The smallest size a dim tag can take at run time.
std::int64_t GraphWriter::dim_min(const std::string& tag) const {
  if (is_digits(tag)) return std::stoll(tag);
  if (tag == "N") return 0;
  if (tag == "C" || tag == "T") return 1;
  auto it = derived_min_.find(tag);
  return it == derived_min_.end() ? 0 : it->second;
}

// The largest size a dim tag can take at run time.
std::int64_t GraphWriter::dim_max(const std::string& tag) const {
  if (is_digits(tag)) return std::stoll(tag);
  if (tag == "N") return kMaxN;
  if (tag == "C") return kMaxC;
  if (tag == "T") return kMaxT;
  auto it = derived_max_.find(tag);
  return it == derived_max_.end() ? std::numeric_limits<std::int64_t>::max() / 4 : it->second;
}

// True for a dim that is never empty and small enough to reduce over.
bool GraphWriter::reducible(const std::string& tag) const { return dim_min(tag) >= 1 && dim_max(tag) <= 24; }

// True when every dim can be written in a type annotation.
bool GraphWriter::is_basic(const Dims& dims) {
  return std::all_of(dims.begin(), dims.end(), [](const std::string& d) { return d == "N" || d == "C" || d == "T" || is_digits(d); });
}

// The NumPy broadcast of two tag lists, or nullopt when a pair differs and neither is "1".
std::optional<Dims> GraphWriter::broadcast(const Dims& a, const Dims& b) {
  std::size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (std::size_t k = 0; k < rank; ++k) {
    const std::string* x = k < rank - a.size() ? nullptr : &a[k - (rank - a.size())];
    const std::string* y = k < rank - b.size() ? nullptr : &b[k - (rank - b.size())];
    if (!x) out[k] = *y;
    else if (!y) out[k] = *x;
    else if (*x == *y || *y == "1") out[k] = *x;
    else if (*x == "1") out[k] = *y;
    else return std::nullopt;
  }
  return out;
}

// Appends one indented statement.
void GraphWriter::line(Scope& scope, const std::string& text) {
  scope.text += std::string(static_cast<std::size_t>(2 * scope.indent), ' ') + text + "\n";
}

// Counts a use of a value (values never used become outputs).
void GraphWriter::note_use(const std::string& name) {
  if (!name.empty() && name != "_") ++uses_[name];
}

// Emits `name = op(args) {attrs} "node_name"` and registers the result in the scope.
Val GraphWriter::emit(Scope& scope, const std::string& op, const std::vector<std::string>& args, const std::string& attrs,
                      const Dims& dims, const Bound& bound, const std::string& node_name) {
  Val v{fresh("v"), dims, bound, false};
  std::string s = v.name + " = " + op + "(";
  for (std::size_t i = 0; i < args.size(); ++i) {
    s += (i ? ", " : "") + args[i];
    note_use(args[i]);
  }
  s += ")";
  if (!attrs.empty()) s += " {" + attrs + "}";
  if (!node_name.empty()) s += " \"" + node_name + "\"";
  line(scope, s);
  scope.values.push_back(v);
  ++graph_.features.ops;
  return v;
}

// Emits an f32 constant and returns its name.
std::string GraphWriter::const_f32(Scope& scope, const std::vector<std::int64_t>& shape, const std::vector<float>& values) {
  std::string name = fresh("k");
  std::string data;
  for (std::size_t i = 0; i < values.size(); ++i) data += (i ? ", " : "") + float_text(values[i]);
  line(scope, "const " + name + ": f32" + shape_text(shape) + " = [" + data + "]");
  return name;
}

// Emits an i64 constant and returns its name.
std::string GraphWriter::const_i64(Scope& scope, const std::vector<std::int64_t>& shape,
                                   const std::vector<std::int64_t>& values) {
  std::string name = fresh("k");
  line(scope, "const " + name + ": i64" + shape_text(shape) + " = " + shape_text(values));
  return name;
}

// Emits an f32 scalar constant.
std::string GraphWriter::const_scalar(Scope& scope, float value) { return const_f32(scope, {}, {value}); }

// The argument for a Clip bound the generated graph leaves absent: "_", or
// in the unsaturated twin an explicit infinity, so that an infinity reaching
// the Clip passes through instead of becoming the f32 limit. Uses no
// randomness, so both writers make the same choices.
std::string GraphWriter::absent_clip_bound(Scope& scope, bool upper) {
  if (clip_bounds_ == ClipBounds::AsGenerated) return "_";
  std::string name = "unbounded" + std::to_string(unbounded_counter_++);
  line(scope, "const " + name + ": f32[] = [" + (upper ? "inf" : "-inf") + "]");
  return name;
}

// A constant in [lo, hi]: mostly a multiple of 1/16, sometimes three decimals.
float GraphWriter::random_constant(double lo, double hi) {
  double x = rng_.uniform(lo, hi);
  if (rng_.chance(0.7)) return static_cast<float>(std::round(x * 16.0) / 16.0);
  return static_cast<float>(std::round(x * 1000.0) / 1000.0);
}

// Every value visible in a scope: the enclosing scopes' first, then its own.
std::vector<Val> GraphWriter::visible(const Scope& scope) const {
  std::vector<const Scope*> chain;
  for (const Scope* s = &scope; s; s = s->parent) chain.push_back(s);
  std::vector<Val> out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) out.insert(out.end(), (*it)->values.begin(), (*it)->values.end());
  return out;
}

}  // namespace canary::differential

// Checking the types written on node outputs against shape inference.
//
// Inference names unknown dims with fresh symbols (s0, s1, ...). A printed
// model already declares the fresh symbols of the inference that produced it,
// so re-inference picks other names. Where an inferred dim is a symbol that
// inference just created, the written dim names it instead: the fresh symbol
// is replaced by the written dim everywhere, and when no fresh symbol is left
// in any type the symbol table is restored to its state before inference plus
// the constraints inference added to the other symbols.
#include <map>
#include <set>

#include "canary/error.h"
#include "graph/text_format_parser.h"

namespace canary::graph::text {
namespace {

using Substitution = std::map<std::string, Dim, std::less<>>;

// The symbols the table declares that `before` did not.
std::set<std::string> new_symbols(const SymbolTable& after, const SymbolTable& before) {
  std::set<std::string> names;
  for (const std::string& n : after.names()) {
    if (!before.contains(n)) names.insert(n);
  }
  return names;
}

// Applies a substitution to a type.
ValueType substituted(const ValueType& t, const Substitution& s) {
  ValueType out{t.dtype, {}};
  for (const Dim& d : t.shape) out.shape.push_back(d.substitute(s));
  return out;
}

// Applies a substitution to every value type and known dims of a graph tree.
void substitute_everywhere(Graph& g, const Substitution& s) {
  for (std::uint32_t i = 0; i < g.values().size(); ++i) {
    ValueInfo& v = g.value(ValueId{i});
    v.type = substituted(v.type, s);
    if (v.known_dims) {
      for (Dim& d : *v.known_dims) d = d.substitute(s);
    }
  }
  for (const Node& node : g.nodes()) {
    for (const auto& [name, attr] : node.attrs) {
      if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr)) {
        if (*sub) substitute_everywhere(**sub, s);
      }
    }
  }
}

// The table before inference plus what inference learnt about old symbols.
SymbolTable restored_table(const SymbolTable& before, const SymbolTable& after, const std::set<std::string>& fresh) {
  SymbolTable table = before;
  const SymbolConstraints defaults;
  for (const std::string& name : after.names()) {
    if (fresh.count(name)) continue;
    SymbolConstraints c = after.constraints(name);
    if (c.min != defaults.min || c.max != defaults.max) table.set_range(name, c.min, c.max);
    if (c.divisor != 1) table.set_divisor(name, c.divisor);
    std::string rep = after.representative(name);
    if (rep != name && !fresh.count(rep)) table.assert_equal(Dim::symbol(name), Dim::symbol(rep), "inference");
    if (auto v = after.fixed_value(name)) table.assert_equal(Dim::symbol(name), Dim(*v), "inference");
  }
  return table;
}

// True when a type or known dims anywhere in the graph tree mention a symbol of the set.
bool mentions_any(const Graph& g, const std::set<std::string>& names) {
  auto dims_mention = [&](const DimVector& dims) {
    for (const Dim& d : dims) {
      for (const std::string& s : d.symbols()) {
        if (names.count(s)) return true;
      }
    }
    return false;
  };
  for (const ValueInfo& v : g.values()) {
    if (dims_mention(v.type.shape) || (v.known_dims && dims_mention(*v.known_dims))) return true;
  }
  for (const Node& node : g.nodes()) {
    for (const auto& [name, attr] : node.attrs) {
      const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr);
      if (sub && *sub && mentions_any(**sub, names)) return true;
    }
  }
  return false;
}

}  // namespace

// Checks every written type against inference (see the file comment).
void TextParser::check_annotations(Graph& g, const SymbolTable& before) {
  std::set<std::string> fresh = new_symbols(*symbols_, before);
  Substitution mapping;
  for (const Annotation& a : annotations_) {
    const ValueType& inferred = a.graph->value(a.value).type;
    if (inferred.rank() != a.type.rank()) continue;  // reported below
    for (int k = 0; k < inferred.rank(); ++k) {
      const Dim& d = inferred.shape[static_cast<std::size_t>(k)];
      if (d.is_symbol() && fresh.count(d.symbol_name()) && !mapping.count(d.symbol_name())) {
        mapping.emplace(d.symbol_name(), a.type.shape[static_cast<std::size_t>(k)]);
      }
    }
  }
  if (!mapping.empty()) substitute_everywhere(g, mapping);
  for (const Annotation& a : annotations_) {
    const ValueInfo& v = a.graph->value(a.value);
    bool same = v.type.dtype == a.type.dtype && v.type.rank() == a.type.rank();
    for (int k = 0; same && k < a.type.rank(); ++k) {
      same = symbols_->equal(v.type.shape[static_cast<std::size_t>(k)], a.type.shape[static_cast<std::size_t>(k)]);
    }
    if (!same) {
      lex_.fail_at(a.offset, "value '" + v.name + "' is written as " + a.type.to_string() + " but inferred as " +
                                 v.type.to_string());
    }
  }
  if (fresh.empty() || mentions_any(g, fresh)) return;
  try {
    *symbols_ = restored_table(before, *symbols_, fresh);
  } catch (const Error& e) {
    throw Error(ErrorKind::Model, std::string(lex_.source()) + ": symbol constraints after inference: " + e.detail());
  }
}

}  // namespace canary::graph::text

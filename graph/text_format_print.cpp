// Printing graphs in the text format: version line, symbols block, graph
// definitions with constants, nodes, attributes and nested subgraphs.
#include <cstdio>
#include <map>
#include <set>

#include "graph/text_format.h"
#include "graph/text_format_numbers.h"

namespace canary::graph {
namespace {

// Tensors with more elements than this are wrapped, this many per line.
constexpr std::int64_t kElementsPerLine = 16;

bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '.'; }

// Text between quotes with \\ \" \` \n \t \r and \xHH escapes.
std::string quoted(std::string_view s, char quote) {
  std::string out(1, quote);
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == quote) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

// A value, graph or attribute name: bare when it lexes as one, else `quoted`.
std::string name_text(std::string_view name) {
  bool plain = !name.empty() && is_name_start(name[0]) && name != "_" && name != "const";
  for (char c : name) plain = plain && is_name_char(c);
  return plain ? std::string(name) : quoted(name, '`');
}

// "f32[N, 3]" with dims in parse_dim syntax.
std::string type_text(const ValueType& t) {
  std::string out(dtype_name(t.dtype));
  out += '[';
  for (std::size_t i = 0; i < t.shape.size(); ++i) out += (i ? ", " : "") + t.shape[i].to_string();
  return out + ']';
}

// One element of a tensor.
std::string element_text(const Tensor& t, std::int64_t i) {
  switch (t.dtype()) {
    case DType::F32: return text::format_f32(t.data<float>()[i]);
    case DType::F64: return text::format_f64(t.data<double>()[i]);
    case DType::I64: return std::to_string(t.data<std::int64_t>()[i]);
    case DType::I32: return std::to_string(t.data<std::int32_t>()[i]);
    case DType::Bool: return t.data<bool>()[i] ? "true" : "false";
  }
  return "?";
}

// "f32[2, 3]" of a tensor (an undefined tensor prints as an empty one).
std::string tensor_type_text(const Tensor& t) {
  if (!t.defined()) return std::string(dtype_name(t.dtype())) + "[0]";
  return std::string(dtype_name(t.dtype())) + shape_to_string(t.shape());
}

// Elements per line of a wrapped tensor: a row of the last dim when short.
std::int64_t elements_per_line(const Tensor& t) {
  std::int64_t last = t.rank() >= 2 ? t.shape().back() : 0;
  return last >= 2 && last <= kElementsPerLine ? last : kElementsPerLine;
}

// "[1, 2, 3]", wrapped for long tensors at the given indent.
std::string tensor_data_text(const Tensor& t, int indent) {
  std::int64_t n = t.defined() ? t.numel() : 0;
  bool wrap = n > kElementsPerLine;
  std::int64_t per_line = elements_per_line(t);
  std::string pad(static_cast<std::size_t>(indent + 4), ' ');
  std::string out = "[";
  for (std::int64_t i = 0; i < n; ++i) {
    if (i) out += ",";
    if (wrap && i % per_line == 0) {
      out += "\n" + pad;
    } else if (i) {
      out += " ";
    }
    out += element_text(t, i);
  }
  if (wrap) out += "\n" + std::string(static_cast<std::size_t>(indent), ' ');
  return out + "]";
}

class Printer {
 public:
  std::string out;

  // The whole model.
  void print_model(const Graph& g) {
    out += "canary v1\n";
    print_symbols(g);
    print_graph_def(g, nullptr, 0);
    out += "\n";
  }

 private:
  void line(int indent, const std::string& text) { out += std::string(static_cast<std::size_t>(indent), ' ') + text + "\n"; }

  // Symbols in declaration order with describe()'s clauses, then symbols the
  // types use without declaring them.
  void print_symbols(const Graph& g) {
    const SymbolTable& table = g.symbols();
    std::map<std::string, std::vector<std::string>, std::less<>> lines;
    for (const std::string& l : table.describe()) lines[l.substr(0, l.find(' '))].push_back(l);
    std::vector<std::string> names = table.names();
    std::set<std::string> known(names.begin(), names.end());
    collect_undeclared(g, known, names);
    if (names.empty()) return;
    out += "symbols {\n";
    for (const std::string& n : names) {
      auto it = lines.find(n);
      if (it == lines.end()) {
        line(2, n);
      } else {
        for (const std::string& l : it->second) line(2, l);
      }
    }
    out += "}\n";
  }

  // Appends symbols used in types of the graph tree but not declared.
  static void collect_undeclared(const Graph& g, std::set<std::string>& known, std::vector<std::string>& names) {
    for (const ValueInfo& v : g.values()) {
      for (const Dim& d : v.type.shape) {
        for (const std::string& s : d.symbols()) {
          if (known.insert(s).second) names.push_back(s);
        }
      }
    }
    for (const Node& node : g.nodes()) {
      for (const auto& [name, attr] : node.attrs) {
        if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr); sub && *sub) collect_undeclared(**sub, known, names);
      }
    }
  }

  // "graph name(inputs) -> (outputs) captures (...) {" body "}".
  void print_graph_def(const Graph& g, const Graph* parent, int indent) {
    out += "graph " + name_text(g.name) + "(";
    for (std::size_t i = 0; i < g.inputs().size(); ++i) {
      const ValueInfo& v = g.value(g.inputs()[i]);
      out += (i ? ", " : "") + name_text(v.name) + ": " + type_text(v.type);
    }
    out += ") -> (";
    for (std::size_t i = 0; i < g.outputs().size(); ++i) out += (i ? ", " : "") + name_text(g.value(g.outputs()[i]).name);
    out += ")";
    if (!g.captures().empty() && parent) {
      out += " captures (";
      for (std::size_t i = 0; i < g.captures().size(); ++i) {
        const Capture& c = g.captures()[i];
        const std::string& local = g.value(c.local).name;
        const std::string& outer = parent->value(c.outer).name;
        out += (i ? ", " : "") + name_text(local) + (local == outer ? "" : " = " + name_text(outer));
      }
      out += ")";
    }
    out += " {\n";
    for (ValueId c : g.constants()) {
      const ValueInfo& v = g.value(c);
      line(indent + 2, "const " + name_text(v.name) + ": " + tensor_type_text(*v.constant) + " = " +
                           tensor_data_text(*v.constant, indent + 2));
    }
    for (const Node& node : g.nodes()) print_node(g, node, indent + 2);
    out += std::string(static_cast<std::size_t>(indent), ' ') + "}";
  }

  // "a: f32[N], _ = Op(x, _) {attrs} "name"".
  void print_node(const Graph& g, const Node& node, int indent) {
    out += std::string(static_cast<std::size_t>(indent), ' ');
    for (std::size_t i = 0; i < node.outputs.size(); ++i) {
      out += i ? ", " : "";
      if (!node.outputs[i].valid()) {
        out += "_";
        continue;
      }
      const ValueInfo& v = g.value(node.outputs[i]);
      out += name_text(v.name) + ": " + type_text(v.type);
    }
    if (!node.outputs.empty()) out += " = ";
    out += std::string(op_name(node.op)) + "(";
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      out += i ? ", " : "";
      out += node.inputs[i].valid() ? name_text(g.value(node.inputs[i]).name) : "_";
    }
    out += ")";
    if (!node.attrs.empty()) print_attributes(g, node.attrs, indent);
    if (!node.name.empty()) out += " " + quoted(node.name, '"');
    out += "\n";
  }

  // "{a = 1, b = [1, 2]}", one per line when a subgraph is among them.
  void print_attributes(const Graph& g, const Attributes& attrs, int indent) {
    bool multiline = false;
    for (const auto& [name, value] : attrs) multiline = multiline || attr_type_of(value) == AttrType::Graph;
    out += " {";
    bool first = true;
    for (const auto& [name, value] : attrs) {
      out += first ? "" : ",";
      out += multiline ? "\n" + std::string(static_cast<std::size_t>(indent + 2), ' ') : (first ? "" : " ");
      out += name_text(name) + " = ";
      print_attr_value(g, value, indent + 2);
      first = false;
    }
    if (multiline) out += "\n" + std::string(static_cast<std::size_t>(indent), ' ');
    out += "}";
  }

  // One attribute value.
  void print_attr_value(const Graph& g, const AttrValue& value, int indent) {
    switch (attr_type_of(value)) {
      case AttrType::Int: out += std::to_string(std::get<std::int64_t>(value)); return;
      case AttrType::Float: out += text::format_float_attr(std::get<double>(value)); return;
      case AttrType::String: out += quoted(std::get<std::string>(value), '"'); return;
      case AttrType::Ints: {
        const auto& v = std::get<std::vector<std::int64_t>>(value);
        out += "[";
        for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
        out += "]";
        return;
      }
      case AttrType::Floats: {
        const auto& v = std::get<std::vector<double>>(value);
        out += v.empty() ? "floats [" : "[";
        for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + text::format_float_attr(v[i]);
        out += "]";
        return;
      }
      case AttrType::Tensor: {
        const Tensor& t = std::get<Tensor>(value);
        out += tensor_type_text(t) + " " + tensor_data_text(t, indent);
        return;
      }
      case AttrType::Graph: {
        const auto& sub = std::get<std::shared_ptr<Graph>>(value);
        if (sub) print_graph_def(*sub, &g, indent);
        return;
      }
    }
  }
};

}  // namespace

// Prints a whole model.
std::string print_graph(const Graph& g) {
  Printer printer;
  printer.print_model(g);
  return printer.out;
}

}  // namespace canary::graph

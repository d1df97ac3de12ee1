// The recursive-descent parser of the graph text format (internal to
// canary_graph): structure in text_format_parse.cpp, types/tensors/attributes
// in text_format_parse_literals.cpp, the symbols block in
// text_format_parse_symbols.cpp, annotation checks in text_format_annotations.cpp.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "graph/import_limits.h"
#include "graph/text_format_lexer.h"

namespace canary::graph::text {

// A type written on a node output, to be checked after shape inference.
struct Annotation {
  Graph* graph;
  ValueId value;
  ValueType type;
  std::size_t offset;
};

// The names visible while parsing one graph: its own values, then the
// enclosing graphs' (reached through captures).
struct Scope {
  Graph* graph;
  const Scope* parent;
  int depth;
};

class TextParser {
 public:
  TextParser(std::string_view text, std::string_view source, const ImportLimits& limits = {});
  // Parses the whole text; runs shape inference and checks the written types
  // against it when `infer` is set.
  std::shared_ptr<Graph> parse_model(bool infer);

 private:
  // --- structure (text_format_parse.cpp) --------------------------------
  void parse_version();
  std::shared_ptr<Graph> parse_graph_def(const Scope* parent, int depth);
  void parse_graph_inputs(Graph& g);
  void parse_captures(Scope& scope);
  void parse_body(Scope& scope);
  void parse_statement(Scope& scope);
  void parse_constant(Scope& scope);
  void parse_node(Scope& scope);
  void count_node(std::size_t offset);
  std::vector<ValueId> parse_call_inputs(Scope& scope);
  ValueId resolve(const Scope& scope, const std::string& name, std::size_t offset);
  std::string parse_name(const char* what);
  void run_inference(Graph& g);

  // --- literals (text_format_parse_literals.cpp) -------------------------
  ValueType parse_type();
  DType parse_dtype_name();
  Dim parse_one_dim();
  void declare_symbols(const ValueType& type);
  Shape parse_constant_shape();
  Tensor parse_tensor_data(DType dtype, const Shape& shape, std::size_t offset);
  Attributes parse_attributes(const Scope& scope);
  AttrValue parse_attr_value(const Scope& scope);
  AttrValue parse_attr_list(bool floats_only);
  std::int64_t parse_int(std::int64_t lo, std::int64_t hi, const char* what);
  double parse_double();
  float parse_float();

  // --- symbols block (text_format_parse_symbols.cpp) ----------------------
  void parse_symbols_block();

  // --- annotations (text_format_annotations.cpp) --------------------------
  void check_annotations(Graph& g, const SymbolTable& before);

  // --- tokens -----------------------------------------------------------
  Token expect(TokenKind kind, const char* what);
  bool accept(TokenKind kind);
  bool at_word(std::string_view word);
  [[noreturn]] void fail_expected(const std::string& what);

  Lexer lex_;
  std::shared_ptr<SymbolTable> symbols_;
  std::vector<Annotation> annotations_;
  ImportLimits limits_;
  std::size_t nodes_ = 0;  // nodes and constants parsed so far, in every graph
};

}  // namespace canary::graph::text

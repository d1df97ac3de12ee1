// Parsing the structure of the graph text format: the version line, graph
// definitions, statements, name resolution with captures, and the entry points.
#include <fstream>
#include <set>
#include <sstream>

#include "canary/error.h"
#include "graph/op_registry.h"
#include "graph/text_format.h"
#include "graph/text_format_parser.h"

namespace canary::graph {
namespace text {

TextParser::TextParser(std::string_view text, std::string_view source, const ImportLimits& limits)
    : lex_(text, source), symbols_(std::make_shared<SymbolTable>()), limits_(limits) {}

// model := 'canary' 'v1' symbols_block? 'graph' graph_def END
std::shared_ptr<Graph> TextParser::parse_model(bool infer) {
  parse_version();
  if (at_word("symbols")) parse_symbols_block();
  if (!at_word("graph")) fail_expected("'graph'");
  lex_.next();
  std::shared_ptr<Graph> g = parse_graph_def(nullptr, 0);
  if (lex_.peek().kind != TokenKind::End) fail_expected("end of input after the main graph");
  if (infer) run_inference(*g);
  return g;
}

// Reads the "canary v1" line.
void TextParser::parse_version() {
  if (!at_word("canary")) fail_expected("'canary v1' at the start");
  lex_.next();
  const Token& version = lex_.peek();
  if (version.kind != TokenKind::Ident || version.text != "v1") fail_expected("version 'v1'");
  lex_.next();
}

// graph_def := name '(' inputs ')' '->' '(' outputs ')' captures? '{' body '}'
std::shared_ptr<Graph> TextParser::parse_graph_def(const Scope* parent, int depth) {
  check_nesting_depth(limits_, depth, lex_.location(lex_.peek().offset));
  auto g = std::make_shared<Graph>(parse_name("a graph name"), symbols_);
  Scope scope{g.get(), parent, depth};
  expect(TokenKind::LParen, "'(' before the graph inputs");
  parse_graph_inputs(*g);
  expect(TokenKind::Arrow, "'->' before the graph outputs");
  expect(TokenKind::LParen, "'(' before the graph outputs");
  std::vector<std::pair<std::string, std::size_t>> outputs;
  if (!accept(TokenKind::RParen)) {
    do {
      std::size_t offset = lex_.peek().offset;
      outputs.emplace_back(parse_name("an output name"), offset);
    } while (accept(TokenKind::Comma));
    expect(TokenKind::RParen, "',' or ')' after a graph output");
  }
  if (at_word("captures")) {
    if (!parent) lex_.fail_at(lex_.peek().offset, "the main graph cannot capture values");
    lex_.next();
    parse_captures(scope);
  }
  parse_body(scope);
  for (const auto& [name, offset] : outputs) g->add_output(resolve(scope, name, offset));
  return g;
}

// inputs := (name ':' type (',' name ':' type)*)? ')'
void TextParser::parse_graph_inputs(Graph& g) {
  if (accept(TokenKind::RParen)) return;
  do {
    std::size_t offset = lex_.peek().offset;
    std::string name = parse_name("an input name");
    if (g.find_value(name)) lex_.fail_at(offset, "duplicate name '" + name + "'");
    expect(TokenKind::Colon, "':' and a type after the input name");
    ValueType type = parse_type();
    g.add_input(name, std::move(type));
  } while (accept(TokenKind::Comma));
  expect(TokenKind::RParen, "',' or ')' after a graph input");
}

// captures := 'captures' '(' (local ('=' outer)? (',' ...)*)? ')'
void TextParser::parse_captures(Scope& scope) {
  expect(TokenKind::LParen, "'(' after 'captures'");
  if (accept(TokenKind::RParen)) return;
  do {
    std::size_t offset = lex_.peek().offset;
    std::string local = parse_name("a captured name");
    std::string outer = local;
    if (accept(TokenKind::Equal)) outer = parse_name("the captured outer name");
    if (scope.graph->find_value(local)) lex_.fail_at(offset, "duplicate name '" + local + "'");
    ValueId outer_id = resolve(*scope.parent, outer, offset);
    scope.graph->add_capture(local, scope.parent->graph->value(outer_id).type, outer_id);
  } while (accept(TokenKind::Comma));
  expect(TokenKind::RParen, "',' or ')' after a captured name");
}

// body := '{' statement* '}'
void TextParser::parse_body(Scope& scope) {
  Token open = expect(TokenKind::LBrace, "'{' to open the graph body");
  while (lex_.peek().kind != TokenKind::RBrace) {
    if (lex_.peek().kind == TokenKind::End) {
      lex_.fail_at(lex_.peek().offset, "unterminated block: expected '}' to close graph '" + scope.graph->name +
                                           "' opened at " + lex_.location(open.offset) + ", found end of input");
    }
    parse_statement(scope);
  }
  lex_.next();
}

// statement := 'const' constant | node
void TextParser::parse_statement(Scope& scope) {
  if (at_word("const")) {
    lex_.next();
    parse_constant(scope);
  } else {
    parse_node(scope);
  }
}

// constant := name ':' dtype '[' ints ']' '=' '[' elements ']'
void TextParser::parse_constant(Scope& scope) {
  std::size_t offset = lex_.peek().offset;
  count_node(offset);
  std::string name = parse_name("a constant name");
  if (scope.graph->find_value(name)) lex_.fail_at(offset, "duplicate name '" + name + "'");
  expect(TokenKind::Colon, "':' and a type after the constant name");
  DType dtype = parse_dtype_name();
  Shape shape = parse_constant_shape();
  expect(TokenKind::Equal, "'=' before the constant's elements");
  Tensor value = parse_tensor_data(dtype, shape, offset);
  scope.graph->add_constant(name, std::move(value));
}

namespace {

// One output slot of a node statement.
struct OutputSlot {
  std::string name;  // empty when absent ('_')
  std::size_t offset;
  std::optional<ValueType> type;
};

}  // namespace

// node := (outputs '=')? OpName '(' inputs ')' attributes? string?
void TextParser::parse_node(Scope& scope) {
  count_node(lex_.peek().offset);
  std::vector<OutputSlot> slots;
  bool bare_call = lex_.peek().kind == TokenKind::Ident && lex_.peek_second().kind == TokenKind::LParen;
  if (!bare_call) {
    do {
      OutputSlot slot{"", lex_.peek().offset, std::nullopt};
      if (at_word("_")) {
        lex_.next();
      } else {
        slot.name = parse_name("an output name or 'const'");
        if (accept(TokenKind::Colon)) slot.type = parse_type();
      }
      slots.push_back(std::move(slot));
    } while (accept(TokenKind::Comma));
    expect(TokenKind::Equal, "'=' after the node outputs");
  }
  Token op_token = expect(TokenKind::Ident, "an op name");
  std::optional<OpKind> op = find_op(op_token.text);
  if (!op) lex_.fail_at(op_token.offset, "unknown op '" + op_token.text + "'");
  expect(TokenKind::LParen, "'(' after the op name");
  std::vector<ValueId> inputs = parse_call_inputs(scope);
  Attributes attrs;
  if (lex_.peek().kind == TokenKind::LBrace) attrs = parse_attributes(scope);
  std::string node_name;
  if (lex_.peek().kind == TokenKind::String) node_name = lex_.next().text;
  std::set<std::string> seen;
  std::vector<std::string> names;
  for (const OutputSlot& slot : slots) {
    if (!slot.name.empty() && (scope.graph->find_value(slot.name) || !seen.insert(slot.name).second)) {
      lex_.fail_at(slot.offset, "duplicate name '" + slot.name + "'");
    }
    names.push_back(slot.name);
  }
  NodeId id = scope.graph->add_node(*op, node_name, std::move(inputs), names, std::move(attrs));
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (!slots[i].type) continue;
    ValueId v = scope.graph->node(id).outputs[i];
    scope.graph->value(v).type = *slots[i].type;
    annotations_.push_back(Annotation{scope.graph, v, *slots[i].type, slots[i].offset});
  }
}

// Counts a node or constant against ImportLimits::max_nodes.
void TextParser::count_node(std::size_t offset) { check_node_count(limits_, ++nodes_, lex_.location(offset)); }

// inputs := (('_' | name) (',' ...)*)? ')'
std::vector<ValueId> TextParser::parse_call_inputs(Scope& scope) {
  std::vector<ValueId> inputs;
  if (accept(TokenKind::RParen)) return inputs;
  do {
    std::size_t offset = lex_.peek().offset;
    if (at_word("_")) {
      lex_.next();
      inputs.push_back(ValueId::none());
    } else {
      inputs.push_back(resolve(scope, parse_name("an input name or '_'"), offset));
    }
  } while (accept(TokenKind::Comma));
  expect(TokenKind::RParen, "',' or ')' after a node input");
  return inputs;
}

// Finds a name in the scope; a name of an enclosing graph becomes a capture.
ValueId TextParser::resolve(const Scope& scope, const std::string& name, std::size_t offset) {
  if (auto v = scope.graph->find_value(name)) return *v;
  if (!scope.parent) lex_.fail_at(offset, "undefined value '" + name + "'");
  ValueId outer = resolve(*scope.parent, name, offset);
  return scope.graph->add_capture(name, scope.parent->graph->value(outer).type, outer);
}

// name := Ident (not '_') | QuotedName (not empty)
std::string TextParser::parse_name(const char* what) {
  const Token& t = lex_.peek();
  bool ok = (t.kind == TokenKind::Ident && t.text != "_") || (t.kind == TokenKind::QuotedName && !t.text.empty());
  if (!ok) fail_expected(what);
  return lex_.next().text;
}

// Runs shape inference, then checks the written types against it.
void TextParser::run_inference(Graph& g) {
  SymbolTable before = *symbols_;
  try {
    infer_shapes(g);
  } catch (const Error& e) {
    // Keep the kind: a shape that does not fit is a shape error wherever it is found.
    throw Error(e.kind(), std::string(lex_.source()) + ": " + e.detail());
  }
  check_annotations(g, before);
}

// Consumes a token of the kind or fails naming what was expected.
Token TextParser::expect(TokenKind kind, const char* what) {
  if (lex_.peek().kind != kind) fail_expected(what);
  return lex_.next();
}

// Consumes a token of the kind if it is next.
bool TextParser::accept(TokenKind kind) {
  if (lex_.peek().kind != kind) return false;
  lex_.next();
  return true;
}

// True when the next token is the identifier `word`.
bool TextParser::at_word(std::string_view word) {
  const Token& t = lex_.peek();
  return t.kind == TokenKind::Ident && t.text == word;
}

// Fails at the next token: "expected X, found Y".
void TextParser::fail_expected(const std::string& what) {
  const Token& t = lex_.peek();
  lex_.fail_at(t.offset, "expected " + what + ", found " + describe_token(t));
}

}  // namespace text

// Parses a model and runs shape inference.
std::shared_ptr<Graph> parse_graph(std::string_view text, std::string_view source_name, const ImportLimits& limits) {
  text::TextParser parser(text, source_name, limits);
  return parser.parse_model(true);
}

// Parses a model without shape inference.
std::shared_ptr<Graph> parse_graph_uninferred(std::string_view text, std::string_view source_name,
                                              const ImportLimits& limits) {
  text::TextParser parser(text, source_name, limits);
  return parser.parse_model(false);
}

// Reads and parses a file.
std::shared_ptr<Graph> load_graph_file(const std::string& path, const ImportLimits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Model, "cannot read graph file '" + path + "'");
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) throw Error(ErrorKind::Model, "cannot read graph file '" + path + "'");
  return parse_graph(contents.str(), path, limits);
}

}  // namespace canary::graph

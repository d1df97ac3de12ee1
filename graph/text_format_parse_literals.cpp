// Parsing the literals of the graph text format: value types with symbolic
// dims, numbers, constant tensors and node attributes.
#include <limits>

#include "canary/error.h"
#include "graph/text_format_numbers.h"
#include "graph/text_format_parser.h"

namespace canary::graph::text {
namespace {

// True for the spelled-out float words.
bool is_float_word(const Token& t) { return t.kind == TokenKind::Ident && (t.text == "inf" || t.text == "nan"); }

}  // namespace

// type := dtype '[' (dim (',' dim)*)? ']'   (dims in parse_dim syntax)
ValueType TextParser::parse_type() {
  ValueType type;
  type.dtype = parse_dtype_name();
  expect(TokenKind::LBracket, "'[' after the dtype");
  if (accept(TokenKind::RBracket)) return type;
  do {
    type.shape.push_back(parse_one_dim());
  } while (accept(TokenKind::Comma));
  expect(TokenKind::RBracket, "',' or ']' after a dimension");
  declare_symbols(type);
  return type;
}

// dtype := 'f32' | 'f64' | 'i64' | 'i32' | 'bool'
DType TextParser::parse_dtype_name() {
  const Token& t = lex_.peek();
  std::optional<DType> dtype = t.kind == TokenKind::Ident ? parse_dtype(t.text) : std::nullopt;
  if (!dtype) {
    if (t.kind == TokenKind::Ident) lex_.fail_at(t.offset, "unknown dtype '" + t.text + "' (expected f32, f64, i64, i32 or bool)");
    fail_expected("a dtype (f32, f64, i64, i32 or bool)");
  }
  lex_.next();
  return *dtype;
}

// One dimension expression, handed to parse_dim.
Dim TextParser::parse_one_dim() {
  std::size_t offset = 0;
  std::string text(lex_.take_dim_text(offset));
  if (text.empty()) fail_expected("a dimension");
  Dim d;
  try {
    d = parse_dim(text);
  } catch (const std::exception& e) {
    const auto* err = dynamic_cast<const Error*>(&e);
    lex_.fail_at(offset, "bad dimension '" + text + "': " + (err ? err->detail() : std::string(e.what())));
  }
  if (d.is_constant() && d.value() < 0) lex_.fail_at(offset, "negative dimension " + text);
  return d;
}

// Declares every symbol a type mentions (idempotent).
void TextParser::declare_symbols(const ValueType& type) {
  for (const Dim& d : type.shape) {
    for (const std::string& name : d.symbols()) symbols_->declare(name);
  }
}

// shape := '[' (int (',' int)*)? ']'   (constant tensors: integers only)
Shape TextParser::parse_constant_shape() {
  expect(TokenKind::LBracket, "'[' and the constant's shape");
  Shape shape;
  if (accept(TokenKind::RBracket)) return shape;
  do {
    if (lex_.peek().kind != TokenKind::Number) fail_expected("an integer dimension (constant shapes are integers)");
    shape.push_back(parse_int(0, std::numeric_limits<std::int64_t>::max(), "dimension"));
  } while (accept(TokenKind::Comma));
  expect(TokenKind::RBracket, "',' or ']' after a dimension");
  return shape;
}

// data := '[' (element (',' element)*)? ']', with exactly numel(shape) elements.
Tensor TextParser::parse_tensor_data(DType dtype, const Shape& shape, std::size_t offset) {
  Token open = expect(TokenKind::LBracket, "'[' and the tensor's elements");
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<std::int64_t> i64;
  std::vector<std::int32_t> i32;
  std::vector<bool> b;
  std::int64_t count = 0;
  if (lex_.peek().kind != TokenKind::RBracket) {
    do {
      switch (dtype) {
        case DType::F32: f32.push_back(parse_float()); break;
        case DType::F64: f64.push_back(parse_double()); break;
        case DType::I64:
          i64.push_back(parse_int(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), "i64 element"));
          break;
        case DType::I32:
          i32.push_back(static_cast<std::int32_t>(
              parse_int(std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max(), "i32 element")));
          break;
        case DType::Bool: {
          if (!at_word("true") && !at_word("false")) fail_expected("'true' or 'false'");
          b.push_back(lex_.next().text == "true");
          break;
        }
      }
      ++count;
    } while (accept(TokenKind::Comma));
  }
  expect(TokenKind::RBracket, "',' or ']' after a tensor element");
  std::int64_t numel = 1;
  for (std::int64_t d : shape) {
    if (__builtin_mul_overflow(numel, d, &numel)) lex_.fail_at(offset, "tensor shape " + shape_to_string(shape) + " is too large");
  }
  if (count != numel) {
    lex_.fail_at(open.offset, "tensor of type " + std::string(dtype_name(dtype)) + shape_to_string(shape) + " needs " +
                                  std::to_string(numel) + " elements, found " + std::to_string(count));
  }
  switch (dtype) {
    case DType::F32: return Tensor::from_vector(f32, shape);
    case DType::F64: return Tensor::from_vector(f64, shape);
    case DType::I64: return Tensor::from_vector(i64, shape);
    case DType::I32: return Tensor::from_vector(i32, shape);
    case DType::Bool: return Tensor::from_vector(b, shape);
  }
  lex_.fail_at(offset, "unsupported dtype");
}

// int := '-'? Number, within [lo, hi].
std::int64_t TextParser::parse_int(std::int64_t lo, std::int64_t hi, const char* what) {
  std::size_t offset = lex_.peek().offset;
  bool negative = accept(TokenKind::Minus);
  if (lex_.peek().kind != TokenKind::Number) fail_expected(std::string("an integer ") + what);
  Token t = lex_.next();
  std::uint64_t magnitude = 0;
  NumberStatus status = parse_magnitude(t.text, magnitude);
  if (status == NumberStatus::Malformed) lex_.fail_at(t.offset, std::string("expected an integer ") + what + ", found number " + t.text);
  std::string shown = (negative ? "-" : "") + t.text;
  auto out_of_range = [&] {
    lex_.fail_at(offset, "number " + shown + " out of range for " + what + " [" + std::to_string(lo) + ", " +
                             std::to_string(hi) + "]");
  };
  if (status == NumberStatus::OutOfRange) out_of_range();
  if (!negative) {
    if (magnitude > static_cast<std::uint64_t>(hi)) out_of_range();
    return static_cast<std::int64_t>(magnitude);
  }
  if (magnitude == 0) return 0;
  // -(lo + 1) + 1 computed without overflow: the largest magnitude allowed.
  std::uint64_t limit = lo >= 0 ? 0 : static_cast<std::uint64_t>(-(lo + 1)) + 1;
  if (magnitude > limit) out_of_range();
  std::int64_t value = -static_cast<std::int64_t>(magnitude - 1) - 1;
  if (value < lo || value > hi) out_of_range();
  return value;
}

// f64 := '-'? (Number | 'inf' | 'nan')
double TextParser::parse_double() {
  std::size_t offset = lex_.peek().offset;
  bool negative = accept(TokenKind::Minus);
  const Token& t = lex_.peek();
  if (t.kind != TokenKind::Number && !is_float_word(t)) fail_expected("a number");
  double v = 0;
  NumberStatus status = parse_f64(t.text, v);
  if (status != NumberStatus::Ok) lex_.fail_at(offset, "number " + t.text + " out of range for f64");
  lex_.next();
  return negative ? -v : v;
}

// f32 := '-'? (Number | 'inf' | 'nan'), rounded once to the nearest float.
float TextParser::parse_float() {
  std::size_t offset = lex_.peek().offset;
  bool negative = accept(TokenKind::Minus);
  const Token& t = lex_.peek();
  if (t.kind != TokenKind::Number && !is_float_word(t)) fail_expected("a number");
  float v = 0;
  NumberStatus status = parse_f32(t.text, v);
  if (status != NumberStatus::Ok) lex_.fail_at(offset, "number " + t.text + " out of range for f32");
  lex_.next();
  return negative ? -v : v;
}

// attributes := '{' (name '=' value (',' name '=' value)*)? '}'
Attributes TextParser::parse_attributes(const Scope& scope) {
  expect(TokenKind::LBrace, "'{'");
  Attributes attrs;
  if (accept(TokenKind::RBrace)) return attrs;
  do {
    std::size_t offset = lex_.peek().offset;
    std::string name = parse_name("an attribute name");
    if (attrs.count(name)) lex_.fail_at(offset, "duplicate attribute '" + name + "'");
    expect(TokenKind::Equal, "'=' after the attribute name");
    attrs.emplace(std::move(name), parse_attr_value(scope));
  } while (accept(TokenKind::Comma));
  expect(TokenKind::RBrace, "',' or '}' after an attribute");
  return attrs;
}

// value := int | float | string | list | 'ints' list | 'floats' list
//        | dtype shape data | 'graph' graph_def
AttrValue TextParser::parse_attr_value(const Scope& scope) {
  const Token& t = lex_.peek();
  const Token& second = lex_.peek_second();
  if (t.kind == TokenKind::Minus || t.kind == TokenKind::Number) {
    const Token& number = t.kind == TokenKind::Minus ? second : t;
    if (number.kind == TokenKind::Number && !looks_like_float(number.text)) {
      return parse_int(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), "int attribute");
    }
    return parse_double();
  }
  if (t.kind == TokenKind::String) return lex_.next().text;
  if (t.kind == TokenKind::LBracket) return parse_attr_list(false);
  if (is_float_word(t)) return parse_double();
  if (t.kind == TokenKind::Ident && t.text == "graph") {
    lex_.next();
    return parse_graph_def(&scope, scope.depth + 1);
  }
  if (t.kind == TokenKind::Ident && second.kind == TokenKind::LBracket) {
    if (t.text == "floats" || t.text == "ints") {
      bool floats = t.text == "floats";
      std::size_t list_offset = second.offset;
      lex_.next();
      AttrValue list = parse_attr_list(floats);
      if (!floats && std::holds_alternative<std::vector<double>>(list)) {
        lex_.fail_at(list_offset, "expected integers in an 'ints' list");
      }
      return list;
    }
    std::size_t offset = t.offset;
    DType dtype = parse_dtype_name();
    Shape shape = parse_constant_shape();
    return parse_tensor_data(dtype, shape, offset);
  }
  fail_expected("an attribute value (number, string, list, tensor or graph)");
}

// list := '[' (number (',' number)*)? ']'; floats when any element is a float.
AttrValue TextParser::parse_attr_list(bool floats_only) {
  expect(TokenKind::LBracket, "'['");
  std::vector<std::pair<bool, Token>> items;
  bool any_float = floats_only;
  if (lex_.peek().kind != TokenKind::RBracket) {
    do {
      bool negative = accept(TokenKind::Minus);
      const Token& t = lex_.peek();
      if (t.kind != TokenKind::Number && !is_float_word(t)) fail_expected("a number");
      any_float = any_float || is_float_word(t) || looks_like_float(t.text);
      items.emplace_back(negative, lex_.next());
    } while (accept(TokenKind::Comma));
  }
  expect(TokenKind::RBracket, "',' or ']' after a list element");
  std::vector<std::int64_t> ints;
  std::vector<double> doubles;
  for (const auto& [negative, token] : items) {
    if (any_float) {
      double v = 0;
      if (parse_f64(token.text, v) != NumberStatus::Ok) lex_.fail_at(token.offset, "number " + token.text + " out of range for f64");
      doubles.push_back(negative ? -v : v);
      continue;
    }
    std::uint64_t m = 0;
    NumberStatus status = parse_magnitude(token.text, m);
    std::uint64_t limit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
    if (status != NumberStatus::Ok || m > limit) lex_.fail_at(token.offset, "number " + token.text + " out of range for int64");
    ints.push_back(negative ? (m == 0 ? 0 : -static_cast<std::int64_t>(m - 1) - 1) : static_cast<std::int64_t>(m));
  }
  if (any_float) return doubles;
  return ints;
}

}  // namespace canary::graph::text

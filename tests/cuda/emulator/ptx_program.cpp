// Parsing the PTX subset of ptx_program.h: a lexer with line numbers, then
// the module header, the entry's parameters, declarations, labels and
// instructions. Labels are resolved once the whole body is read.
#include "tests/cuda/emulator/ptx_program.h"

#include <cctype>
#include <charconv>
#include <cstring>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace canary::ptx_emulator {
namespace {

struct Token {
  std::string text;
  int line = 0;
};

// Thrown inside the parser, turned into parse_program's error.
struct ParseError : std::runtime_error {
  ParseError(int line, const std::string& what) : std::runtime_error("line " + std::to_string(line) + ": " + what) {}
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' || c == '%'; }

// Splits text into words (opcodes, registers, names, numbers) and single
// punctuation characters; comments are dropped.
std::vector<Token> lex(const std::string& text) {
  std::vector<Token> out;
  int line = 1;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (text.compare(i, 2, "/*") == 0) {
      const std::size_t end = text.find("*/", i + 2);
      if (end == std::string::npos) throw ParseError(line, "unterminated comment");
      for (std::size_t k = i; k < end; ++k) line += text[k] == '\n';
      i = end + 2;
    } else if (word_char(c)) {
      std::size_t j = i;
      while (j < text.size() && word_char(text[j])) ++j;
      out.push_back({text.substr(i, j - i), line});
      i = j;
    } else if (std::strchr(",;:(){}[]<>+-@!", c) != nullptr) {
      out.push_back({std::string(1, c), line});
      ++i;
    } else {
      throw ParseError(line, std::string("unexpected character '") + c + "'");
    }
  }
  return out;
}

// How an instruction's operands are laid out after its opcode.
enum class Form : std::uint8_t {
  Unary,     // d, a
  Binary,    // d, a, b
  Ternary,   // d, a, b, c
  Load,      // d, [addr]
  Load4,     // {d0, d1, d2, d3}, [addr]
  Store,     // [addr], a
  Store4,    // [addr], {a0, a1, a2, a3}
  Branch,    // label
  Nothing,   // no operands
  Barrier,   // one immediate (the barrier id)
  Shuffle,   // d, a, b, c, membermask
};

struct Decoded {
  Op op;
  Form form;
};

const std::unordered_map<std::string, Decoded>& opcode_table() {
  static const std::unordered_map<std::string, Decoded> table = {
      {"mov.u32", {Op::Mov32, Form::Unary}}, {"mov.b32", {Op::Mov32, Form::Unary}},
      {"mov.s32", {Op::Mov32, Form::Unary}}, {"mov.f32", {Op::Mov32, Form::Unary}},
      {"mov.u64", {Op::Mov64, Form::Unary}}, {"mov.b64", {Op::Mov64, Form::Unary}},
      {"ld.param.u32", {Op::LdParam32, Form::Load}}, {"ld.param.s32", {Op::LdParam32, Form::Load}},
      {"ld.param.b32", {Op::LdParam32, Form::Load}}, {"ld.param.f32", {Op::LdParam32, Form::Load}},
      {"ld.param.u64", {Op::LdParam64, Form::Load}}, {"ld.param.s64", {Op::LdParam64, Form::Load}},
      {"ld.param.b64", {Op::LdParam64, Form::Load}},
      {"cvta.to.global.u64", {Op::Cvta, Form::Unary}},
      {"ld.global.f32", {Op::LdGlobalF32, Form::Load}}, {"ld.global.nc.f32", {Op::LdGlobalF32, Form::Load}},
      {"ld.global.v4.f32", {Op::LdGlobalV4F32, Form::Load4}},
      {"ld.global.nc.v4.f32", {Op::LdGlobalV4F32, Form::Load4}},
      {"st.global.f32", {Op::StGlobalF32, Form::Store}}, {"st.global.v4.f32", {Op::StGlobalV4F32, Form::Store4}},
      {"ld.shared.f32", {Op::LdSharedF32, Form::Load}}, {"st.shared.f32", {Op::StSharedF32, Form::Store}},
      {"red.global.or.b32", {Op::RedGlobalOr32, Form::Store}},
      {"add.u32", {Op::Add32, Form::Binary}}, {"add.s32", {Op::Add32, Form::Binary}},
      {"sub.u32", {Op::Sub32, Form::Binary}}, {"sub.s32", {Op::Sub32, Form::Binary}},
      {"mul.lo.u32", {Op::MulLo32, Form::Binary}}, {"mul.lo.s32", {Op::MulLo32, Form::Binary}},
      {"mul.hi.u32", {Op::MulHiU32, Form::Binary}},
      {"mad.lo.u32", {Op::MadLo32, Form::Ternary}}, {"mad.lo.s32", {Op::MadLo32, Form::Ternary}},
      {"shl.b32", {Op::Shl32, Form::Binary}}, {"shr.u32", {Op::ShrU32, Form::Binary}},
      {"shr.b32", {Op::ShrU32, Form::Binary}}, {"shr.s32", {Op::ShrS32, Form::Binary}},
      {"and.b32", {Op::And32, Form::Binary}}, {"or.b32", {Op::Or32, Form::Binary}},
      {"add.s64", {Op::Add64, Form::Binary}}, {"add.u64", {Op::Add64, Form::Binary}},
      {"sub.s64", {Op::Sub64, Form::Binary}}, {"sub.u64", {Op::Sub64, Form::Binary}},
      {"mul.lo.s64", {Op::MulLo64, Form::Binary}}, {"mul.lo.u64", {Op::MulLo64, Form::Binary}},
      {"mad.lo.s64", {Op::MadLo64, Form::Ternary}}, {"mad.lo.u64", {Op::MadLo64, Form::Ternary}},
      {"mul.wide.u32", {Op::MulWideU32, Form::Binary}}, {"shl.b64", {Op::Shl64, Form::Binary}},
      {"cvt.u64.u32", {Op::CvtU64U32, Form::Unary}},
      {"add.rn.f32", {Op::AddF32, Form::Binary}}, {"add.f32", {Op::AddF32, Form::Binary}},
      {"sub.rn.f32", {Op::SubF32, Form::Binary}}, {"sub.f32", {Op::SubF32, Form::Binary}},
      {"mul.rn.f32", {Op::MulF32, Form::Binary}}, {"mul.f32", {Op::MulF32, Form::Binary}},
      {"fma.rn.f32", {Op::FmaF32, Form::Ternary}}, {"div.rn.f32", {Op::DivF32, Form::Binary}},
      {"div.full.f32", {Op::DivApproxF32, Form::Binary}}, {"div.approx.f32", {Op::DivApproxF32, Form::Binary}},
      {"rcp.rn.f32", {Op::RcpF32, Form::Unary}}, {"rcp.approx.f32", {Op::RcpApproxF32, Form::Unary}},
      {"sqrt.rn.f32", {Op::SqrtF32, Form::Unary}}, {"ex2.approx.f32", {Op::Ex2ApproxF32, Form::Unary}},
      {"lg2.approx.f32", {Op::Lg2ApproxF32, Form::Unary}}, {"abs.f32", {Op::AbsF32, Form::Unary}},
      {"neg.f32", {Op::NegF32, Form::Unary}}, {"min.f32", {Op::MinF32, Form::Binary}},
      {"max.f32", {Op::MaxF32, Form::Binary}}, {"copysign.f32", {Op::CopysignF32, Form::Binary}},
      {"cvt.rni.f32.f32", {Op::CvtRniF32, Form::Unary}}, {"cvt.rpi.f32.f32", {Op::CvtRpiF32, Form::Unary}},
      {"cvt.rmi.f32.f32", {Op::CvtRmiF32, Form::Unary}}, {"cvt.rzi.f32.f32", {Op::CvtRziF32, Form::Unary}},
      {"cvt.rni.s32.f32", {Op::CvtRniS32F32, Form::Unary}}, {"cvt.rn.f32.s32", {Op::CvtRnF32S32, Form::Unary}},
      {"selp.b32", {Op::SelpB32, Form::Ternary}}, {"selp.f32", {Op::SelpB32, Form::Ternary}},
      {"selp.u32", {Op::SelpB32, Form::Ternary}}, {"selp.s32", {Op::SelpB32, Form::Ternary}},
      {"testp.notanumber.f32", {Op::TestpNan, Form::Unary}}, {"testp.finite.f32", {Op::TestpFinite, Form::Unary}},
      {"or.pred", {Op::OrPred, Form::Binary}}, {"and.pred", {Op::AndPred, Form::Binary}},
      {"not.pred", {Op::NotPred, Form::Unary}},
      {"bra", {Op::Bra, Form::Branch}}, {"bra.uni", {Op::Bra, Form::Branch}}, {"ret", {Op::Ret, Form::Nothing}},
      {"bar.sync", {Op::BarSync, Form::Barrier}}, {"shfl.sync.bfly.b32", {Op::ShflBfly, Form::Shuffle}},
  };
  return table;
}

// setp.<cmp>.<type>: the comparison and the op for its type, or false.
bool decode_setp(const std::string& opcode, Decoded* out, Cmp* cmp) {
  static const std::map<std::string, Cmp> cmps = {
      {"eq", Cmp::Eq},   {"ne", Cmp::Ne},   {"lt", Cmp::Lt},   {"le", Cmp::Le},   {"gt", Cmp::Gt},
      {"ge", Cmp::Ge},   {"equ", Cmp::Equ}, {"neu", Cmp::Neu}, {"ltu", Cmp::Ltu}, {"leu", Cmp::Leu},
      {"gtu", Cmp::Gtu}, {"geu", Cmp::Geu}, {"num", Cmp::Num}, {"nan", Cmp::Nan}};
  if (opcode.rfind("setp.", 0) != 0) return false;
  const std::size_t dot = opcode.find('.', 5);
  if (dot == std::string::npos) return false;
  const auto c = cmps.find(opcode.substr(5, dot - 5));
  const std::string type = opcode.substr(dot + 1);
  if (c == cmps.end()) return false;
  const bool float_only = c->second >= Cmp::Equ;
  if (type == "f32") *out = {Op::SetpF32, Form::Binary};
  else if ((type == "u32" || type == "b32") && !float_only) *out = {Op::SetpU32, Form::Binary};
  else if (type == "s32" && !float_only) *out = {Op::SetpS32, Form::Binary};
  else return false;
  *cmp = c->second;
  return true;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Program parse() {
    while (!at_end()) {
      const Token t = next();
      if (t.text == ".version" || t.text == ".address_size") {
        next();  // "7.8" and "64" are one word each
      } else if (t.text == ".target") {
        next();
        while (peek().text == ",") {
          next();
          next();
        }
      } else if (t.text == ".visible" || t.text == ".entry") {
        if (t.text == ".visible") expect(".entry");
        if (!program_.entry.empty()) throw ParseError(t.line, "a second .entry (the emulator runs one kernel per module)");
        parse_entry();
      } else {
        throw ParseError(t.line, "unexpected '" + t.text + "' at module level");
      }
    }
    if (program_.entry.empty()) throw ParseError(last_line(), "no .entry in the module");
    return std::move(program_);
  }

 private:
  bool at_end() const { return pos_ >= tokens_.size(); }
  int last_line() const { return tokens_.empty() ? 1 : tokens_.back().line; }
  const Token& peek() const {
    static const Token end{"<end of module>", 0};
    return at_end() ? end : tokens_[pos_];
  }
  Token next() {
    if (at_end()) throw ParseError(last_line(), "unexpected end of module");
    return tokens_[pos_++];
  }
  void expect(const char* text) {
    const Token t = next();
    if (t.text != text) throw ParseError(t.line, std::string("expected '") + text + "', found '" + t.text + "'");
  }

  static int type_bytes(const Token& t) {
    if (t.text == ".u32" || t.text == ".s32" || t.text == ".b32" || t.text == ".f32") return 4;
    if (t.text == ".u64" || t.text == ".s64" || t.text == ".b64") return 8;
    throw ParseError(t.line, "unsupported parameter type '" + t.text + "'");
  }

  std::int64_t integer(const Token& t) {
    std::int64_t v = 0;
    const char* begin = t.text.data();
    const char* end = begin + t.text.size();
    int base = 10;
    if (t.text.size() > 2 && (t.text[1] == 'x' || t.text[1] == 'X')) {
      begin += 2;
      base = 16;
    }
    const auto r = std::from_chars(begin, end, v, base);
    if (r.ec != std::errc() || r.ptr != end) throw ParseError(t.line, "expected an integer, found '" + t.text + "'");
    return v;
  }

  void parse_entry() {
    program_.entry = next().text;
    expect("(");
    while (peek().text != ")") {
      expect(".param");
      Param p;
      p.bytes = type_bytes(next());
      p.name = next().text;
      program_.param_bytes = (program_.param_bytes + p.bytes - 1) / p.bytes * p.bytes;
      p.offset = program_.param_bytes;
      program_.param_bytes += p.bytes;
      symbols_[p.name] = {Space::Param, p.offset};
      program_.params.push_back(p);
      if (peek().text == ",") next();
    }
    expect(")");
    expect("{");
    while (peek().text != "}") parse_statement();
    expect("}");
    resolve_labels();
  }

  enum class Space : std::uint8_t { Param, Shared };
  struct Symbol {
    Space space;
    int offset;
  };

  void parse_statement() {
    const Token t = next();
    if (t.text == ".reg") return parse_registers();
    if (t.text == ".shared") return parse_shared();
    if (peek().text == ":") {
      next();
      if (labels_.count(t.text)) throw ParseError(t.line, "label '" + t.text + "' defined twice");
      labels_[t.text] = static_cast<int>(program_.code.size());
      return;
    }
    Instruction in;
    in.line = t.line;
    Token opcode = t;
    if (t.text == "@") {
      if (peek().text == "!") {
        next();
        in.guard_negated = true;
      }
      in.guard = register_slot(next());
      opcode = next();
    }
    parse_instruction(opcode, in);
    program_.code.push_back(in);
  }

  // .reg .<type> %<prefix><<count>>;
  void parse_registers() {
    next();  // the type: every register is a 64-bit slot
    const Token name = next();
    if (name.text.size() < 2 || name.text[0] != '%') throw ParseError(name.line, "expected a register name");
    expect("<");
    const std::int64_t count = integer(next());
    expect(">");
    expect(";");
    if (count < 0 || count > (1 << 20)) throw ParseError(name.line, "bad register count");
    const std::string prefix = name.text.substr(1);
    if (banks_.count(prefix)) throw ParseError(name.line, "registers %" + prefix + " declared twice");
    banks_[prefix] = {program_.registers, static_cast<int>(count)};
    program_.registers += static_cast<int>(count);
  }

  // .shared [.align N] .<type> name[count];
  void parse_shared() {
    int align = 4;
    Token t = next();
    if (t.text == ".align") {
      align = static_cast<int>(integer(next()));
      t = next();
    }
    if (t.text != ".f32" && t.text != ".u32" && t.text != ".b32") throw ParseError(t.line, "unsupported shared type '" + t.text + "'");
    const Token name = next();
    expect("[");
    const std::int64_t count = integer(next());
    expect("]");
    expect(";");
    if (align <= 0 || count < 0 || count > (1 << 16)) throw ParseError(name.line, "bad shared declaration");
    program_.shared_bytes = (program_.shared_bytes + align - 1) / align * align;
    symbols_[name.text] = {Space::Shared, program_.shared_bytes};
    program_.shared_bytes += static_cast<int>(count) * 4;
  }

  int register_slot(const Token& t) {
    if (t.text.size() < 2 || t.text[0] != '%') throw ParseError(t.line, "expected a register, found '" + t.text + "'");
    std::size_t digits = t.text.size();
    while (digits > 1 && std::isdigit(static_cast<unsigned char>(t.text[digits - 1]))) --digits;
    const auto bank = banks_.find(t.text.substr(1, digits - 1));
    if (bank == banks_.end() || digits == t.text.size())
      throw ParseError(t.line, "undeclared register '" + t.text + "'");
    const std::int64_t index = integer(Token{t.text.substr(digits), t.line});
    if (index >= bank->second.count) throw ParseError(t.line, "register '" + t.text + "' beyond its declaration");
    return bank->second.base + static_cast<int>(index);
  }

  Operand value_operand() {
    Operand o;
    Token t = next();
    bool negative = false;
    if (t.text == "-") {
      negative = true;
      t = next();
    }
    if (std::isdigit(static_cast<unsigned char>(t.text[0]))) {
      o.kind = Operand::Kind::Imm;
      if (t.text.size() == 10 && (t.text[1] == 'f' || t.text[1] == 'F')) {
        o.imm = static_cast<std::uint64_t>(integer(Token{"0x" + t.text.substr(2), t.line}));
        if (negative) o.imm ^= 0x80000000u;
      } else {
        const std::int64_t v = integer(t);
        o.imm = static_cast<std::uint64_t>(negative ? -v : v);
      }
      return o;
    }
    if (negative) throw ParseError(t.line, "'-' before a non-number");
    static const std::map<std::string, Special> specials = {{"%tid.x", Special::TidX},
                                                            {"%ntid.x", Special::NtidX},
                                                            {"%ctaid.x", Special::CtaidX},
                                                            {"%nctaid.x", Special::NctaidX},
                                                            {"%laneid", Special::LaneId}};
    if (auto s = specials.find(t.text); s != specials.end()) {
      o.kind = Operand::Kind::Special;
      o.special = s->second;
      return o;
    }
    if (t.text[0] == '%') {
      o.kind = Operand::Kind::Reg;
      o.reg = register_slot(t);
      return o;
    }
    const auto symbol = symbols_.find(t.text);
    if (symbol == symbols_.end() || symbol->second.space != Space::Shared)
      throw ParseError(t.line, "unknown operand '" + t.text + "'");
    o.kind = Operand::Kind::Imm;  // a shared variable's address
    o.imm = static_cast<std::uint64_t>(symbol->second.offset);
    return o;
  }

  int destination() { return register_slot(next()); }

  Operand address_operand(bool param_space) {
    expect("[");
    Operand o;
    o.kind = Operand::Kind::Address;
    const Token base = next();
    if (base.text[0] == '%') {
      o.reg = register_slot(base);
    } else {
      const auto symbol = symbols_.find(base.text);
      const Space want = param_space ? Space::Param : Space::Shared;
      if (symbol == symbols_.end() || symbol->second.space != want)
        throw ParseError(base.line, "unknown " + std::string(param_space ? "parameter" : "shared variable") + " '" +
                                        base.text + "'");
      o.symbol = true;
      o.imm = static_cast<std::uint64_t>(symbol->second.offset);
    }
    if (peek().text == "+" || peek().text == "-") {
      const bool minus = next().text == "-";
      o.offset = integer(next()) * (minus ? -1 : 1);
    }
    expect("]");
    return o;
  }

  void comma() { expect(","); }

  void parse_instruction(const Token& opcode, Instruction& in) {
    Decoded d{};
    if (const auto it = opcode_table().find(opcode.text); it != opcode_table().end()) d = it->second;
    else if (!decode_setp(opcode.text, &d, &in.cmp))
      throw ParseError(opcode.line, "unsupported instruction '" + opcode.text + "'");
    in.op = d.op;
    const bool param = d.op == Op::LdParam32 || d.op == Op::LdParam64;
    switch (d.form) {
      case Form::Unary:
      case Form::Binary:
      case Form::Ternary: {
        in.dst[0] = destination();
        const int sources = d.form == Form::Unary ? 1 : d.form == Form::Binary ? 2 : 3;
        for (int i = 0; i < sources; ++i) {
          comma();
          in.src[i] = value_operand();
        }
        break;
      }
      case Form::Load:
        in.dst[0] = destination();
        comma();
        in.address = address_operand(param);
        break;
      case Form::Load4:
        expect("{");
        for (int i = 0; i < 4; ++i) {
          if (i > 0) comma();
          in.dst[i] = destination();
        }
        expect("}");
        comma();
        in.address = address_operand(false);
        break;
      case Form::Store:
        in.address = address_operand(false);
        comma();
        in.src[0] = value_operand();
        break;
      case Form::Store4:
        in.address = address_operand(false);
        comma();
        expect("{");
        for (int i = 0; i < 4; ++i) {
          if (i > 0) comma();
          in.src[i] = value_operand();
        }
        expect("}");
        break;
      case Form::Branch: {
        const Token label = next();
        in.src[0].kind = Operand::Kind::Label;
        pending_labels_.push_back({program_.code.size(), label});
        break;
      }
      case Form::Nothing:
        break;
      case Form::Barrier:
        in.src[0] = value_operand();
        if (in.src[0].kind != Operand::Kind::Imm || in.src[0].imm != 0)
          throw ParseError(opcode.line, "only bar.sync 0 is supported");
        break;
      case Form::Shuffle:
        in.dst[0] = destination();
        for (int i = 0; i < 4; ++i) {
          comma();
          in.src[i] = value_operand();
        }
        break;
    }
    expect(";");
  }

  void resolve_labels() {
    for (const auto& [index, label] : pending_labels_) {
      const auto it = labels_.find(label.text);
      if (it == labels_.end()) throw ParseError(label.line, "undefined label '" + label.text + "'");
      program_.code[index].src[0].target = it->second;
    }
    // A kernel that runs off its end returns.
    Instruction ret;
    ret.line = last_line();
    program_.code.push_back(ret);
  }

  struct Bank {
    int base;
    int count;
  };

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  Program program_;
  std::map<std::string, Bank> banks_;
  std::map<std::string, Symbol> symbols_;
  std::map<std::string, int> labels_;
  std::vector<std::pair<std::size_t, Token>> pending_labels_;
};

}  // namespace

bool parse_program(const std::string& text, Program* out, std::string* error) {
  try {
    *out = Parser(lex(text)).parse();
    return true;
  } catch (const ParseError& e) {
    *error = e.what();
    return false;
  }
}

}  // namespace canary::ptx_emulator

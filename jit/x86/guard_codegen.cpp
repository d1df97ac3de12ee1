// Guard code: validates a GuardSet's ordering, emits it as one leaf x86-64
// function (SysV: headers in rdi, symbols in rsi) with an AsmJit Assembler
// and installs it in the code cache under the set's canonical text.
#include "jit/x86/guard_codegen.h"

#include <cstddef>
#include <limits>
#include <vector>

#include <asmjit/x86.h>

#include "jit/x86/cached_emission.h"

namespace canary::jit::x86 {

namespace {

namespace ax = asmjit::x86;

static_assert(sizeof(TensorHeader) == 32, "guard code indexes headers in 32-byte steps");
constexpr std::int32_t kDataOffset = offsetof(TensorHeader, data);
constexpr std::int32_t kDimsOffset = offsetof(TensorHeader, dims);
constexpr std::int32_t kRankOffset = offsetof(TensorHeader, rank);
constexpr std::int32_t kDTypeOffset = offsetof(TensorHeader, dtype);
// Bounds that keep every displacement within a signed 32-bit field.
constexpr std::uint32_t kMaxTensors = 1u << 24;
constexpr std::uint32_t kMaxIndex = 1u << 26;

// Whether the guard reads dims[axis] (of tensor, and of tensor2 for DimsEqual).
bool reads_dims(GuardKind k) {
  return k != GuardKind::Rank && k != GuardKind::DType && k != GuardKind::Aligned;
}

// True for a positive power of two.
bool is_power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// "guard 3 (DimEquals on tensor 1): " prefix for validation errors.
std::string guard_label(std::size_t i, const Guard& g) {
  return "guard " + std::to_string(i) + " (kind " + std::to_string(static_cast<int>(g.kind)) + " on tensor " +
         std::to_string(g.tensor) + "): ";
}

// Checks a dim read of tensor t at axis against the Rank guards seen so far.
bool check_dim_read(std::uint32_t t, std::uint32_t axis, const std::vector<std::int64_t>& known_rank,
                    std::string& why) {
  if (axis >= kMaxIndex) {
    why = "axis " + std::to_string(axis) + " out of range";
    return false;
  }
  if (known_rank[t] <= static_cast<std::int64_t>(axis)) {
    why = "reads dim" + std::to_string(axis) + " of tensor " + std::to_string(t) +
          " without an earlier Rank guard of that tensor above " + std::to_string(axis);
    return false;
  }
  return true;
}

// Checks the value constraints of one guard kind.
bool check_values(const GuardSet& set, const Guard& g, std::string& why) {
  if (g.kind == GuardKind::DimDivisible && g.value <= 0) {
    why = "divisor " + std::to_string(g.value) + " is not positive";
    return false;
  }
  if (g.kind == GuardKind::Aligned && !is_power_of_two(g.value)) {
    why = "alignment " + std::to_string(g.value) + " is not a power of two";
    return false;
  }
  if (g.kind == GuardKind::CaptureDim &&
      (g.value < 0 || g.value >= static_cast<std::int64_t>(set.num_symbols) || g.value >= kMaxIndex)) {
    why = "symbol slot " + std::to_string(g.value) + " outside 0.." + std::to_string(set.num_symbols);
    return false;
  }
  return true;
}

// Checks indices, values and that no guard reads dims its tensor may lack.
bool validate_guard_set(const GuardSet& set, std::string& error) {
  if (set.num_tensors > kMaxTensors) {
    error = "guard set has " + std::to_string(set.num_tensors) + " tensors, more than supported";
    return false;
  }
  std::vector<std::int64_t> known_rank(set.num_tensors, -1);
  for (std::size_t i = 0; i < set.guards.size(); ++i) {
    const Guard& g = set.guards[i];
    std::string why;
    bool ok = g.tensor < set.num_tensors && (g.kind != GuardKind::DimsEqual || g.tensor2 < set.num_tensors);
    if (!ok) why = "tensor index outside 0.." + std::to_string(set.num_tensors);
    if (ok && reads_dims(g.kind)) ok = check_dim_read(g.tensor, g.axis, known_rank, why);
    if (ok && g.kind == GuardKind::DimsEqual) ok = check_dim_read(g.tensor2, g.axis2, known_rank, why);
    if (ok) ok = check_values(set, g, why);
    if (!ok) {
      error = guard_label(i, g) + why;
      return false;
    }
    if (g.kind == GuardKind::Rank) known_rank[g.tensor] = g.value;
  }
  return true;
}

// Canonical text of a guard set: the cache key.
std::string guard_set_key(const GuardSet& set) {
  std::string key = "guards/v1 t" + std::to_string(set.num_tensors) + " s" + std::to_string(set.num_symbols);
  for (const Guard& g : set.guards) {
    key += ';';
    key += std::to_string(static_cast<int>(g.kind)) + ',' + std::to_string(g.tensor) + ',' + std::to_string(g.axis);
    key += ',' + std::to_string(g.tensor2) + ',' + std::to_string(g.axis2) + ',' + std::to_string(g.value);
    key += ',' + std::to_string(g.value2);
  }
  return key;
}

// True when v fits a sign-extended 32-bit immediate.
bool fits_imm32(std::int64_t v) {
  return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
}

// Emits the x86 body of one guard set.
class GuardEmitter {
 public:
  explicit GuardEmitter(ax::Assembler& a) : a_(a) {}

  // Emits the whole function: checks in order, success return, fail stubs.
  void emit_function(const GuardSet& set) {
    std::vector<asmjit::Label> fails;
    for (std::size_t i = 0; i < set.guards.size(); ++i) fails.push_back(a_.newLabel());
    asmjit::Label done = a_.newLabel();
    for (std::size_t i = 0; i < set.guards.size(); ++i) emit_guard(set.guards[i], fails[i]);
    a_.xor_(ax::eax, ax::eax);
    a_.bind(done);
    a_.ret();
    for (std::size_t i = 0; i < set.guards.size(); ++i) {
      a_.bind(fails[i]);
      a_.mov(ax::eax, static_cast<std::uint32_t>(i + 1));
      a_.jmp(done);
    }
  }

 private:
  // Field at `offset` of headers[t].
  static ax::Mem header_field(std::uint32_t t, std::int32_t offset) {
    return ax::qword_ptr(ax::rdi, static_cast<std::int32_t>(t) * 32 + offset);
  }

  // rax = headers[t].dims[axis], via `dims_reg`.
  void load_dim(const ax::Gp& out, const ax::Gp& dims_reg, std::uint32_t t, std::uint32_t axis) {
    a_.mov(dims_reg, header_field(t, kDimsOffset));
    a_.mov(out, ax::qword_ptr(dims_reg, static_cast<std::int32_t>(axis) * 8));
  }

  // cmp op, value (through r11 when value needs 64 bits).
  template <typename Op>
  void compare(const Op& op, std::int64_t value) {
    if (fits_imm32(value)) {
      a_.cmp(op, asmjit::Imm(value));
    } else {
      a_.mov(ax::r11, asmjit::Imm(value));
      a_.cmp(op, ax::r11);
    }
  }

  // Jumps to `fail` unless (reg & mask) == 0.
  void test_mask(const ax::Gp& reg, std::int64_t mask, const asmjit::Label& fail) {
    if (mask == 0) return;
    if (fits_imm32(mask)) {
      a_.test(reg, asmjit::Imm(mask));
    } else {
      a_.mov(ax::r11, asmjit::Imm(mask));
      a_.test(reg, ax::r11);
    }
    a_.jnz(fail);
  }

  // Jumps to `fail` unless rax % divisor == 0.
  void emit_divisible(std::int64_t divisor, const asmjit::Label& fail) {
    if (is_power_of_two(divisor)) {
      test_mask(ax::rax, divisor - 1, fail);
      return;
    }
    a_.mov(ax::rcx, asmjit::Imm(divisor));
    a_.cqo(ax::rdx, ax::rax);
    a_.idiv(ax::rdx, ax::rax, ax::rcx);
    a_.test(ax::rdx, ax::rdx);
    a_.jnz(fail);
  }

  // Emits one guard's check, branching to `fail` when it does not hold.
  void emit_guard(const Guard& g, const asmjit::Label& fail) {
    switch (g.kind) {
      case GuardKind::Rank:
        compare(header_field(g.tensor, kRankOffset), g.value);
        a_.jne(fail);
        return;
      case GuardKind::DType:
        compare(header_field(g.tensor, kDTypeOffset), g.value);
        a_.jne(fail);
        return;
      case GuardKind::DimEquals:
        load_dim(ax::rax, ax::r8, g.tensor, g.axis);
        compare(ax::rax, g.value);
        a_.jne(fail);
        return;
      case GuardKind::DimRange:
        load_dim(ax::rax, ax::r8, g.tensor, g.axis);
        compare(ax::rax, g.value);
        a_.jl(fail);
        compare(ax::rax, g.value2);
        a_.jg(fail);
        return;
      case GuardKind::DimDivisible:
        load_dim(ax::rax, ax::r8, g.tensor, g.axis);
        emit_divisible(g.value, fail);
        return;
      case GuardKind::DimsEqual:
        load_dim(ax::rax, ax::r8, g.tensor, g.axis);
        load_dim(ax::rdx, ax::r9, g.tensor2, g.axis2);
        a_.cmp(ax::rax, ax::rdx);
        a_.jne(fail);
        return;
      case GuardKind::Aligned:
        a_.mov(ax::rax, header_field(g.tensor, kDataOffset));
        test_mask(ax::rax, g.value - 1, fail);
        return;
      case GuardKind::CaptureDim:
        load_dim(ax::rax, ax::r8, g.tensor, g.axis);
        a_.mov(ax::qword_ptr(ax::rsi, static_cast<std::int32_t>(g.value) * 8), ax::rax);
        return;
    }
  }

  ax::Assembler& a_;
};

}  // namespace

// Validates, then finds or emits and installs the guard function.
CompiledGuards compile_guards(const GuardSet& set, CodeCache& cache, std::string& error) {
  static_assert(kDataOffset == 0 && kDimsOffset == 8 && kRankOffset == 16 && kDTypeOffset == 24);
  if (!validate_guard_set(set, error)) return {};
  auto emit = [&](asmjit::CodeHolder& code, std::string&) {
    ax::Assembler a(&code);
    GuardEmitter(a).emit_function(set);
    a.finalize();
    return true;
  };
  std::shared_ptr<const CodeBlock> block = emit_cached(cache, guard_set_key(set), "guard function", emit, error);
  if (!block) return {};
  CompiledGuards out;
  out.fn = reinterpret_cast<GuardFn>(const_cast<void*>(block->entry()));
  out.code = std::move(block);
  return out;
}

}  // namespace canary::jit::x86

// Tests of the x86 elementwise kernel generator against the reference
// evaluator on every tier this CPU runs: random DAGs, strides and row ranges
// (bit-exact for arithmetic, within a bound for transcendentals), special
// values, the value canary, tails next to an unmapped page, and caching.
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "jit/fused_kernel.h"
#include "jit/x86/elementwise_codegen.h"

namespace x86 = canary::jit::x86;
using canary::jit::EwNode;
using canary::jit::EwOp;
using canary::jit::FusedArgs;
using canary::jit::FusedElementwiseSpec;
using canary::jit::MathMode;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
const std::int64_t kD2Values[] = {1, 3, 7, 8, 15, 16, 17, 33, 1000, 1027};
// Written to every output element before a run: rows outside the range keep it.
const std::uint32_t kSentinelBits = 0x7fbadbadu;

std::uint32_t bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

float sentinel() {
  float v;
  std::memcpy(&v, &kSentinelBits, sizeof v);
  return v;
}

// The tiers this CPU can run.
std::vector<x86::Isa> host_tiers() {
  std::vector<x86::Isa> tiers;
  for (x86::Isa isa : {x86::Isa::Scalar, x86::Isa::Avx2, x86::Isa::Avx512})
    if (x86::host_supports(isa)) tiers.push_back(isa);
  return tiers;
}

EwNode input(std::uint16_t k) { return EwNode{EwOp::Input, 0, 0, k, 0.0f, 0.0f}; }
EwNode op(EwOp o, std::uint16_t a, std::uint16_t b = 0, float imm0 = 0.0f, float imm1 = 0.0f) {
  return EwNode{o, a, b, 0, imm0, imm1};
}

// Iteration space, input strides and the rows one call computes.
struct Layout {
  std::int64_t d0 = 1, d1 = 1, d2 = 1;
  std::vector<std::int64_t> strides;  // stride0, stride1 per input
  std::int64_t row_begin = 0, row_end = 1;
};

// Elements input k must hold so every read of the layout is in bounds.
std::int64_t input_extent(const FusedElementwiseSpec& s, const Layout& l, std::size_t k) {
  const std::int64_t last = (l.d0 - 1) * l.strides[2 * k] + (l.d1 - 1) * l.strides[2 * k + 1];
  return last + (s.inner_broadcast[k] ? 1 : l.d2);
}

// Inputs plus one set of outputs per evaluator, filled with the sentinel.
struct Buffers {
  std::vector<std::vector<float>> inputs;
  std::vector<std::vector<float>> outputs;

  Buffers(const FusedElementwiseSpec& s, const Layout& l) {
    inputs.resize(s.num_inputs);
    for (std::size_t k = 0; k < s.num_inputs; ++k) inputs[k].resize(input_extent(s, l, k));
    outputs.assign(s.outputs.size(), std::vector<float>(l.d0 * l.d1 * l.d2, sentinel()));
  }
};

// Runs fn (or the reference when fn is null) over the layout's rows into out.
std::uint32_t run(canary::jit::FusedFn fn, const FusedElementwiseSpec& s, const Layout& l,
                  const std::vector<std::vector<float>>& inputs, std::vector<std::vector<float>>& outputs) {
  std::vector<const float*> in;
  std::vector<float*> out;
  for (const auto& v : inputs) in.push_back(v.data());
  for (auto& v : outputs) out.push_back(v.data());
  FusedArgs args;
  args.inputs = in.data();
  args.outputs = out.data();
  args.strides = l.strides.data();
  args.dims[0] = s.exact_dims ? 999 : l.d0;  // exact variants must not read dims
  args.dims[1] = s.exact_dims ? 999 : l.d1;
  args.dims[2] = s.exact_dims ? 999 : l.d2;
  args.row_begin = l.row_begin;
  args.row_end = l.row_end;
  return fn ? fn(&args) : canary::jit::evaluate_fused_reference(s, args);
}

// True when got matches want: the same bits, both NaN, or (tolerance > 0)
// within tolerance relative plus tolerance / 2 absolute (float formulas such
// as 1 + erf(x) cancel near zero), with equal infinities.
bool matches(float got, float want, double tolerance) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (bits(got) == bits(want)) return true;
  if (tolerance == 0.0 || std::isinf(want) || std::isinf(got)) return false;
  const double diff = std::fabs(static_cast<double>(got) - want);
  return diff <= tolerance * std::fabs(static_cast<double>(want)) + tolerance / 2;
}

// Compiles s for isa, runs it and the reference on the same inputs and
// checks outputs (all elements, rows outside the range included) and result.
void check_against_reference(const FusedElementwiseSpec& s, x86::Isa isa, const Layout& l,
                             const std::vector<std::vector<float>>& inputs, double tolerance) {
  x86::CodeCache cache(1 << 20);
  std::string error;
  const x86::CompiledElementwise k = x86::compile_elementwise(s, isa, cache, error);
  INFO("isa " << x86::isa_name(isa) << ", d = " << l.d0 << "x" << l.d1 << "x" << l.d2 << ", rows " << l.row_begin
              << ".." << l.row_end << ", spec: " << s.key());
  REQUIRE(error.empty());
  REQUIRE(k.fn != nullptr);
  Buffers want_buf(s, l), got_buf(s, l);
  const std::uint32_t want = run(nullptr, s, l, inputs, want_buf.outputs);
  const std::uint32_t got = run(k.fn, s, l, inputs, got_buf.outputs);
  CHECK(got == want);
  for (std::size_t o = 0; o < s.outputs.size(); ++o) {
    for (std::size_t i = 0; i < want_buf.outputs[o].size(); ++i) {
      const float g = got_buf.outputs[o][i], w = want_buf.outputs[o][i];
      if (bits(w) == kSentinelBits ? bits(g) == kSentinelBits : matches(g, w, tolerance)) continue;
      FAIL_CHECK("output " << o << " element " << i << ": got " << g << " (0x" << std::hex << bits(g)
                           << "), want " << w << " (0x" << bits(w) << ")");
      return;
    }
  }
}

// Random specs, layouts and data from one seeded generator.
class CaseMaker {
 public:
  explicit CaseMaker(unsigned seed) : rng_(seed) {}

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  // A node index in [from, to).
  std::uint16_t pick_node(std::size_t from, std::size_t to) {
    return static_cast<std::uint16_t>(from + static_cast<std::size_t>(pick(static_cast<int>(to - from))));
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  // A DAG of 1..12 nodes over 1..4 inputs, drawing from `ops`.
  FusedElementwiseSpec spec(const std::vector<EwOp>& ops) {
    FusedElementwiseSpec s;
    s.num_inputs = static_cast<std::uint16_t>(1 + pick(4));
    for (std::uint16_t k = 0; k < s.num_inputs; ++k) s.inner_broadcast.push_back(chance(0.3));
    const int total = 1 + pick(12);
    for (int i = 0; i < total; ++i) {
      const auto at = static_cast<std::uint16_t>(i);
      if (i == 0 || chance(0.2)) s.nodes.push_back(input(static_cast<std::uint16_t>(pick(s.num_inputs))));
      else s.nodes.push_back(node(ops[pick(static_cast<int>(ops.size()))], at));
    }
    s.outputs = {static_cast<std::uint16_t>(total - 1)};
    for (int extra = pick(3); extra > 0; --extra) s.outputs.push_back(static_cast<std::uint16_t>(pick(total)));
    s.check_non_finite = chance(0.5);
    if (chance(0.4)) {
      // Range canaries on some outputs: results are bit-exact here, so the
      // kernel's range bit must equal the reference's.
      std::uniform_real_distribution<float> bound(-3.0f, 3.0f);
      for (std::size_t k = 0; k < s.outputs.size(); ++k) {
        if (!chance(0.7)) {
          s.output_ranges.push_back(std::nullopt);
          continue;
        }
        const float a = bound(rng_), b = bound(rng_);
        s.output_ranges.push_back(canary::jit::ValueRange{std::min(a, b), std::max(a, b)});
      }
    }
    return s;
  }

  // A layout with the given d2, random d0/d1, strides (0 included) and rows.
  Layout layout(const FusedElementwiseSpec& s, std::int64_t d2) {
    Layout l;
    l.d0 = 1 + pick(3);
    l.d1 = 1 + pick(3);
    l.d2 = d2;
    for (std::size_t k = 0; k < s.num_inputs; ++k) {
      const std::int64_t row = s.inner_broadcast[k] ? 1 : d2;
      const std::int64_t s1 = chance(0.25) ? 0 : row + pick(3);
      const std::int64_t s0 = chance(0.25) ? 0 : s1 * l.d1 + pick(5) + (s1 == 0 ? row : 0);
      l.strides.push_back(s0);
      l.strides.push_back(s1);
    }
    const std::int64_t rows = l.d0 * l.d1;
    l.row_begin = pick(static_cast<int>(rows));
    l.row_end = l.row_begin + 1 + pick(static_cast<int>(rows - l.row_begin));
    if (chance(0.3)) l.row_begin = 0, l.row_end = rows;
    return l;
  }

  // Values in [-lo, hi] with occasional NaN, Inf, zeros, denormals, ties and huge values.
  float value(float lo, float hi, bool specials) {
    if (specials && chance(0.05)) {
      const float s[] = {kNaN, kInf, -kInf, 0.0f, -0.0f, 1e-40f, -1e-40f, 2.5f, -0.5f, 3e38f, -3e38f, 1.5f};
      return s[pick(12)];
    }
    return std::uniform_real_distribution<float>(lo, hi)(rng_);
  }

  void fill(std::vector<std::vector<float>>& inputs, float lo, float hi, bool specials) {
    for (auto& v : inputs)
      for (float& x : v) x = value(lo, hi, specials);
  }

 private:
  // A random node with operands among nodes [0, at).
  EwNode node(EwOp o, std::uint16_t at) {
    const auto a = static_cast<std::uint16_t>(pick(at)), b = static_cast<std::uint16_t>(pick(at));
    const float imms[] = {0.0f, -0.0f, 0.5f, -1.5f, 2.0f, 0.2f, 1e-3f, 6.0f, -4.0f};
    const float imm0 = imms[pick(9)], imm1 = imms[pick(9)];
    if (o == EwOp::Gelu) return op(o, a, 0, static_cast<float>(pick(2)));
    return op(o, a, b, imm0, imm1);
  }

  std::mt19937 rng_;
};

const std::vector<EwOp> kArithmeticOps = {
    EwOp::Add,  EwOp::Sub,        EwOp::Mul,   EwOp::Div,  EwOp::Max,   EwOp::Min,       EwOp::Neg,
    EwOp::Abs,  EwOp::Sqrt,       EwOp::Relu,  EwOp::Reciprocal, EwOp::Floor, EwOp::Ceil, EwOp::Round,
    EwOp::LeakyRelu, EwOp::HardSigmoid, EwOp::HardSwish, EwOp::Clip, EwOp::Constant};

// A spec computing `o` on input 0 (optionally inner-broadcast).
FusedElementwiseSpec unary_spec(EwOp o, float imm0 = 0.0f, float imm1 = 0.0f) {
  FusedElementwiseSpec s;
  s.nodes = {input(0), op(o, 0, 0, imm0, imm1)};
  s.num_inputs = 1;
  s.inner_broadcast = {false};
  s.outputs = {1};
  return s;
}

// A [rows, 1, d2] contiguous layout with one input.
Layout contiguous(std::int64_t rows, std::int64_t d2, std::size_t num_inputs = 1) {
  Layout l;
  l.d0 = rows;
  l.d2 = d2;
  for (std::size_t k = 0; k < num_inputs; ++k) l.strides.insert(l.strides.end(), {d2, 0});
  l.row_end = rows;
  return l;
}

// Memory whose last element sits right before a PROT_NONE page.
class GuardedFloats {
 public:
  explicit GuardedFloats(std::size_t count) {
    page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    data_bytes_ = (count * sizeof(float) + page_ - 1) / page_ * page_;
    base_ = mmap(nullptr, data_bytes_ + page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(base_ != MAP_FAILED);
    REQUIRE(mprotect(static_cast<char*>(base_) + data_bytes_, page_, PROT_NONE) == 0);
    data_ = reinterpret_cast<float*>(static_cast<char*>(base_) + data_bytes_) - count;
  }
  ~GuardedFloats() { munmap(base_, data_bytes_ + page_); }
  GuardedFloats(const GuardedFloats&) = delete;
  GuardedFloats& operator=(const GuardedFloats&) = delete;
  float* data() const { return data_; }

 private:
  std::size_t page_ = 0, data_bytes_ = 0;
  void* base_ = nullptr;
  float* data_ = nullptr;
};

}  // namespace

TEST_CASE("random arithmetic DAGs match the reference bit for bit on every tier", "[unit][jit][codegen]") {
  CaseMaker make(20240601);
  for (x86::Isa isa : host_tiers()) {
    for (int n = 0; n < 200; ++n) {
      FusedElementwiseSpec s = make.spec(kArithmeticOps);
      const std::int64_t d2 = kD2Values[n % 10];
      const Layout l = make.layout(s, d2);
      if (make.chance(0.5)) s.exact_dims = std::array<std::int64_t, 3>{l.d0, l.d1, l.d2};
      Buffers b(s, l);
      make.fill(b.inputs, -4.0f, 4.0f, true);
      check_against_reference(s, isa, l, b.inputs, 0.0);
    }
  }
}

// A random DAG over transcendentals that keeps errors within a few ulp:
// transcendentals of inputs, bounded-slope ones (tanh, sigmoid, erf) of those,
// then max/min/abs/neg/relu or a scaling by 2 (no cancellation).
FusedElementwiseSpec transcendental_spec(CaseMaker& make, MathMode math) {
  const EwOp any[] = {EwOp::Exp, EwOp::Log, EwOp::Tanh, EwOp::Sigmoid, EwOp::Erf, EwOp::Softplus, EwOp::Gelu};
  const EwOp bounded[] = {EwOp::Tanh, EwOp::Sigmoid, EwOp::Erf};
  const EwOp combine[] = {EwOp::Max, EwOp::Min, EwOp::Abs, EwOp::Neg, EwOp::Relu, EwOp::Mul};
  FusedElementwiseSpec s;
  s.math = math;
  s.num_inputs = static_cast<std::uint16_t>(1 + make.pick(2));
  for (std::uint16_t k = 0; k < s.num_inputs; ++k) {
    s.inner_broadcast.push_back(make.chance(0.2));
    s.nodes.push_back(input(k));
  }
  s.nodes.push_back(EwNode{EwOp::Constant, 0, 0, 0, 2.0f, 0.0f});
  const std::size_t first = s.nodes.size();
  for (int t = 1 + make.pick(3); t > 0; --t) {
    const EwOp o = any[make.pick(7)];
    const float mode = o == EwOp::Gelu ? static_cast<float>(make.pick(2)) : 0.0f;
    s.nodes.push_back(op(o, make.pick_node(0, s.num_inputs), 0, mode));
  }
  if (make.chance(0.5)) s.nodes.push_back(op(bounded[make.pick(3)], make.pick_node(first, s.nodes.size())));
  const std::size_t end = s.nodes.size();
  const EwOp c = combine[make.pick(6)];
  const std::uint16_t b = c == EwOp::Mul ? s.num_inputs : make.pick_node(first, end);  // Mul scales by 2
  s.nodes.push_back(op(c, make.pick_node(first, end), b));
  s.outputs = {static_cast<std::uint16_t>(end), make.pick_node(first, end)};
  s.check_non_finite = make.chance(0.5);
  return s;
}

TEST_CASE("random transcendental DAGs match the reference within the math mode's bound", "[unit][jit][codegen]") {
  CaseMaker make(7151);
  for (MathMode math : {MathMode::Exact, MathMode::Fast}) {
    const double tolerance = math == MathMode::Exact ? 1.5e-6 : 1e-4;
    for (x86::Isa isa : host_tiers()) {
      for (int n = 0; n < 60; ++n) {
        FusedElementwiseSpec s = transcendental_spec(make, math);
        const Layout l = make.layout(s, kD2Values[n % 10]);
        if (make.chance(0.5)) s.exact_dims = std::array<std::int64_t, 3>{l.d0, l.d1, l.d2};
        Buffers b(s, l);
        make.fill(b.inputs, -6.0f, 6.0f, true);
        check_against_reference(s, isa, l, b.inputs, tolerance);
      }
    }
  }
}

TEST_CASE("every transcendental op handles NaN, Inf, zeros, denormals and huge values", "[unit][jit][codegen]") {
  const std::vector<float> specials = {kNaN,  -kInf,  kInf,  -0.0f,  0.0f,  1e-40f, -1e-40f, 1e-20f, -1e-20f,
                                       0.5f,  -0.5f,  1.0f,  -1.0f,  3.0f,  -3.0f,  9.0f,    -9.0f,  20.0f,
                                       -20.0f, 88.0f, 88.8f, -87.0f, -104.0f, 1e30f, -1e30f, 3e38f, -3e38f};
  std::vector<FusedElementwiseSpec> specs;
  for (EwOp o : {EwOp::Exp, EwOp::Log, EwOp::Tanh, EwOp::Sigmoid, EwOp::Erf, EwOp::Softplus})
    specs.push_back(unary_spec(o));
  specs.push_back(unary_spec(EwOp::Gelu, 0.0f));
  specs.push_back(unary_spec(EwOp::Gelu, 1.0f));
  const auto n = static_cast<std::int64_t>(specials.size());
  for (MathMode math : {MathMode::Exact, MathMode::Fast}) {
    for (x86::Isa isa : host_tiers()) {
      for (FusedElementwiseSpec s : specs) {
        s.math = math;
        s.check_non_finite = true;
        Layout l = contiguous(1, n);
        check_against_reference(s, isa, l, {specials}, math == MathMode::Exact ? 1.5e-6 : 1e-4);
      }
    }
  }
}

TEST_CASE("every arithmetic op handles NaN, Inf, zeros and ties like the reference", "[unit][jit][codegen]") {
  const std::vector<float> specials = {kNaN,  -kInf, kInf,  -0.0f, 0.0f, 1e-40f, -1e-40f, 0.5f, -0.5f,
                                       1.5f,  2.5f,  -2.5f, 3.0f,  -7.25f, 1e30f, -3e38f, 6.0f, -1.5f, 1.0f};
  std::vector<FusedElementwiseSpec> specs;
  for (EwOp o : {EwOp::Neg, EwOp::Abs, EwOp::Sqrt, EwOp::Relu, EwOp::Reciprocal, EwOp::Floor, EwOp::Ceil,
                 EwOp::Round})
    specs.push_back(unary_spec(o));
  specs.push_back(unary_spec(EwOp::LeakyRelu, 0.1f));
  specs.push_back(unary_spec(EwOp::HardSigmoid, 0.2f, 0.5f));
  specs.push_back(unary_spec(EwOp::HardSigmoid, 0.5f, -0.0f));  // -0 * 0.5 + -0 is -0: becomes +0
  specs.push_back(unary_spec(EwOp::HardSwish, 1.0f / 6.0f, 0.5f));
  specs.push_back(unary_spec(EwOp::Clip, -1.5f, 2.0f));
  specs.push_back(unary_spec(EwOp::Clip, 2.0f, -1.0f));  // low > high: every non-NaN becomes high
  for (EwOp o : {EwOp::Add, EwOp::Sub, EwOp::Mul, EwOp::Div, EwOp::Max, EwOp::Min}) {
    FusedElementwiseSpec s;
    s.nodes = {input(0), input(1), op(o, 0, 1)};
    s.num_inputs = 2;
    s.inner_broadcast = {false, false};
    s.outputs = {2};
    specs.push_back(s);
  }
  // Every pair of specials: input 0 runs along d2, input 1 (inner-broadcast) along rows.
  const auto n = static_cast<std::int64_t>(specials.size());
  for (x86::Isa isa : host_tiers()) {
    for (FusedElementwiseSpec s : specs) {
      Layout l = contiguous(n, n);
      l.strides = {0, 0};
      std::vector<std::vector<float>> inputs(1, specials);
      if (s.num_inputs == 2) {
        s.inner_broadcast = {false, true};
        l.strides.insert(l.strides.end(), {1, 0});
        inputs.push_back(specials);
      }
      check_against_reference(s, isa, l, inputs, 0.0);
    }
  }
}

TEST_CASE("value canary returns 1 exactly when a computed output is non-finite", "[unit][jit][codegen]") {
  FusedElementwiseSpec s = unary_spec(EwOp::Reciprocal);
  s.check_non_finite = true;
  for (x86::Isa isa : host_tiers()) {
    for (std::int64_t d2 : {std::int64_t{7}, std::int64_t{16}, std::int64_t{33}}) {
      x86::CodeCache cache(1 << 20);
      std::string error;
      const auto k = x86::compile_elementwise(s, isa, cache, error);
      REQUIRE(k.fn != nullptr);
      Layout l = contiguous(3, d2);
      l.row_begin = 1;
      l.row_end = 2;
      std::vector<std::vector<float>> in(1, std::vector<float>(3 * d2, 2.0f));
      std::vector<std::vector<float>> out(1, std::vector<float>(3 * d2));
      INFO("isa " << x86::isa_name(isa) << " d2 " << d2);
      CHECK(run(k.fn, s, l, in, out) == 0);
      // A zero in row 0 (outside the rows computed) is not seen.
      in[0][d2 - 1] = 0.0f;
      CHECK(run(k.fn, s, l, in, out) == 0);
      // A zero at each position of row 1 makes an Inf there.
      for (std::int64_t j = 0; j < d2; ++j) {
        in[0][d2 + j] = 0.0f;
        CHECK(run(k.fn, s, l, in, out) == 1);
        in[0][d2 + j] = (j % 2) ? kNaN : 2.0f;  // odd positions keep a NaN, also non-finite
        CHECK(run(k.fn, s, l, in, out) == static_cast<std::uint32_t>(j % 2));
        in[0][d2 + j] = 2.0f;
      }
    }
  }
  // Without the flag the kernel returns 0 even with non-finite outputs.
  s.check_non_finite = false;
  x86::CodeCache cache(1 << 20);
  std::string error;
  const auto k = x86::compile_elementwise(s, x86::Isa::Avx2, cache, error);
  REQUIRE(k.fn != nullptr);
  std::vector<std::vector<float>> in(1, std::vector<float>(9, 0.0f));
  std::vector<std::vector<float>> out(1, std::vector<float>(9));
  CHECK(run(k.fn, s, contiguous(1, 9), in, out) == 0);
  CHECK(out[0][8] == kInf);
}

TEST_CASE("range canary reports an output outside its range at any position, never NaN", "[unit][jit][codegen]") {
  FusedElementwiseSpec s = unary_spec(EwOp::Abs);
  s.output_ranges = {canary::jit::ValueRange{0.0f, 1.0f}};
  for (const bool non_finite : {false, true}) {
    s.check_non_finite = non_finite;
    for (x86::Isa isa : host_tiers()) {
      for (std::int64_t d2 : {std::int64_t{7}, std::int64_t{16}, std::int64_t{33}}) {
        x86::CodeCache cache(1 << 20);
        std::string error;
        const auto k = x86::compile_elementwise(s, isa, cache, error);
        REQUIRE(k.fn != nullptr);
        Layout l = contiguous(3, d2);
        l.row_begin = 1;
        l.row_end = 2;
        std::vector<std::vector<float>> in(1, std::vector<float>(3 * d2, -1.0f));  // |x| = 1: on the bound
        std::vector<std::vector<float>> out(1, std::vector<float>(3 * d2));
        INFO("isa " << x86::isa_name(isa) << " d2 " << d2 << " non-finite canary " << non_finite);
        CHECK(run(k.fn, s, l, in, out) == 0);
        in[0][2 * d2] = 5.0f;  // row 2 is not computed
        CHECK(run(k.fn, s, l, in, out) == 0);
        const std::uint32_t inf_bits = non_finite ? canary::jit::kNonFiniteCanary : 0u;
        for (std::int64_t j = 0; j < d2; ++j) {
          float& x = in[0][d2 + j];
          x = 1.5f;
          CHECK(run(k.fn, s, l, in, out) == canary::jit::kRangeCanary);
          x = kNaN;  // not outside a range; the non-finite canary's
          CHECK(run(k.fn, s, l, in, out) == inf_bits);
          x = -kInf;  // |x| = +Inf: outside, and non-finite
          CHECK(run(k.fn, s, l, in, out) == (canary::jit::kRangeCanary | inf_bits));
          x = 0.25f;
          CHECK(run(k.fn, s, l, in, out) == 0);
        }
      }
    }
  }
}

TEST_CASE("range canary of a lower bound: an output below it is reported", "[unit][jit][codegen]") {
  FusedElementwiseSpec s = unary_spec(EwOp::Neg);
  s.output_ranges = {canary::jit::ValueRange{-2.0f, 4.0f}};
  for (x86::Isa isa : host_tiers()) {
    x86::CodeCache cache(1 << 20);
    std::string error;
    const auto k = x86::compile_elementwise(s, isa, cache, error);
    REQUIRE(k.fn != nullptr);
    std::vector<std::vector<float>> in(1, std::vector<float>(19, 1.0f));
    std::vector<std::vector<float>> out(1, std::vector<float>(19));
    INFO("isa " << x86::isa_name(isa));
    CHECK(run(k.fn, s, contiguous(1, 19), in, out) == 0);
    in[0][18] = 2.5f;  // -2.5 < -2, in the tail
    CHECK(run(k.fn, s, contiguous(1, 19), in, out) == canary::jit::kRangeCanary);
    in[0][18] = -3.5f;  // 3.5 <= 4
    CHECK(run(k.fn, s, contiguous(1, 19), in, out) == 0);
  }
}

TEST_CASE("tails never touch memory past the end of inputs and outputs", "[unit][jit][codegen]") {
  // y = max(a, b) * c with c inner-broadcast, all buffers ending at a guard page.
  FusedElementwiseSpec s;
  s.nodes = {input(0), input(1), op(EwOp::Max, 0, 1), input(2), op(EwOp::Mul, 2, 3)};
  s.num_inputs = 3;
  s.inner_broadcast = {false, false, true};
  s.outputs = {4};
  s.check_non_finite = true;
  for (x86::Isa isa : host_tiers()) {
    for (std::int64_t d2 : {std::int64_t{1}, std::int64_t{7}, std::int64_t{17}, std::int64_t{1027}}) {
      for (bool exact : {false, true}) {
        const std::int64_t rows = 3;
        s.exact_dims.reset();
        if (exact) s.exact_dims = std::array<std::int64_t, 3>{rows, 1, d2};
        x86::CodeCache cache(1 << 20);
        std::string error;
        const auto k = x86::compile_elementwise(s, isa, cache, error);
        REQUIRE(k.fn != nullptr);
        GuardedFloats a(rows * d2), b(rows * d2), c(rows), y(rows * d2);
        for (std::int64_t i = 0; i < rows * d2; ++i) {
          a.data()[i] = static_cast<float>(i % 13) - 6.0f;
          b.data()[i] = static_cast<float>(i % 5) - 2.0f;
        }
        for (std::int64_t r = 0; r < rows; ++r) c.data()[r] = static_cast<float>(r + 1);
        const float* in[] = {a.data(), b.data(), c.data()};
        float* out[] = {y.data()};
        const std::int64_t strides[] = {d2, 0, d2, 0, 1, 0};
        FusedArgs args;
        args.inputs = in;
        args.outputs = out;
        args.strides = strides;
        args.dims[0] = rows;
        args.dims[2] = d2;
        args.row_end = rows;
        CHECK(k.fn(&args) == 0);
        for (std::int64_t i = 0; i < rows * d2; ++i) {
          const float want = std::max(a.data()[i], b.data()[i]) * static_cast<float>(i / d2 + 1);
          if (y.data()[i] != want) FAIL_CHECK("isa " << x86::isa_name(isa) << " d2 " << d2 << " element " << i);
        }
      }
    }
  }
}

TEST_CASE("a spec compiles once per tier and then comes from the cache", "[unit][jit][codegen]") {
  FusedElementwiseSpec s = unary_spec(EwOp::Relu);
  x86::CodeCache cache(1 << 20);
  std::string error;
  const auto first = x86::compile_elementwise(s, x86::Isa::Avx2, cache, error);
  REQUIRE(first.fn != nullptr);
  CHECK(first.code_bytes > 0);
  const auto misses = cache.stats().misses;
  const auto second = x86::compile_elementwise(s, x86::Isa::Avx2, cache, error);
  CHECK(second.fn == first.fn);
  CHECK(second.code == first.code);
  CHECK(cache.stats().hits == 1);
  CHECK(cache.stats().misses == misses);
  CHECK(cache.stats().entries == 1);
  // Another tier or another spec is another kernel.
  const auto scalar = x86::compile_elementwise(s, x86::Isa::Scalar, cache, error);
  REQUIRE(scalar.fn != nullptr);
  CHECK(scalar.fn != first.fn);
  s.nodes[1].op = EwOp::Abs;
  const auto other = x86::compile_elementwise(s, x86::Isa::Avx2, cache, error);
  CHECK(other.fn != first.fn);
  CHECK(cache.stats().entries == 3);
}

TEST_CASE("compile_elementwise reports bad specs and cache refusals", "[unit][jit][codegen]") {
  x86::CodeCache cache(1 << 20);
  std::string error;
  FusedElementwiseSpec bad = unary_spec(EwOp::Neg);
  bad.nodes[1].a = 5;
  auto k = x86::compile_elementwise(bad, x86::Isa::Avx2, cache, error);
  CHECK(k.fn == nullptr);
  CHECK(k.code == nullptr);
  CHECK(error.find("node 1 (neg)") != std::string::npos);
  FusedElementwiseSpec unknown = unary_spec(EwOp::Neg);
  unknown.nodes[1].op = static_cast<EwOp>(99);
  error.clear();
  CHECK(x86::compile_elementwise(unknown, x86::Isa::Avx2, cache, error).fn == nullptr);
  CHECK(error.find("unknown op 99") != std::string::npos);
  x86::CodeCache tiny(0);
  error.clear();
  CHECK(x86::compile_elementwise(unary_spec(EwOp::Neg), x86::Isa::Avx2, tiny, error).fn == nullptr);
  CHECK_FALSE(error.empty());
  x86::inject_code_cache_failures(1);
  error.clear();
  CHECK(x86::compile_elementwise(unary_spec(EwOp::Abs), x86::Isa::Avx2, cache, error).fn == nullptr);
  CHECK(error.find("injected") != std::string::npos);
  CHECK(x86::compile_elementwise(unary_spec(EwOp::Abs), x86::Isa::Avx2, cache, error).fn != nullptr);
}

TEST_CASE("empty row ranges and zero-length rows compute nothing", "[unit][jit][codegen]") {
  FusedElementwiseSpec s = unary_spec(EwOp::Neg);
  s.check_non_finite = true;
  for (x86::Isa isa : host_tiers()) {
    x86::CodeCache cache(1 << 20);
    std::string error;
    const auto k = x86::compile_elementwise(s, isa, cache, error);
    REQUIRE(k.fn != nullptr);
    std::vector<std::vector<float>> in(1, std::vector<float>(8, kNaN));
    std::vector<std::vector<float>> out(1, std::vector<float>(8, 5.0f));
    Layout l = contiguous(1, 8);
    l.row_begin = l.row_end = 1;
    CHECK(run(k.fn, s, l, in, out) == 0);
    l = contiguous(1, 0);
    CHECK(run(k.fn, s, l, in, out) == 0);
    CHECK(out[0] == std::vector<float>(8, 5.0f));
  }
}

TEST_CASE("isa tiers: names, lanes and host detection", "[unit][jit][codegen]") {
  CHECK(x86::isa_name(x86::Isa::Avx512) == "avx512");
  CHECK(x86::isa_name(x86::Isa::Avx2) == "avx2");
  CHECK(x86::isa_name(x86::Isa::Scalar) == "scalar");
  CHECK(x86::isa_lanes(x86::Isa::Avx512) == 16);
  CHECK(x86::isa_lanes(x86::Isa::Avx2) == 8);
  CHECK(x86::isa_lanes(x86::Isa::Scalar) == 1);
  const auto best = x86::detect_host_isa();
  REQUIRE(best.has_value());  // the test machines have AVX2 and FMA
  CHECK(x86::host_supports(*best));
  CHECK(x86::host_supports(x86::Isa::Scalar));
  if (*best == x86::Isa::Avx2) CHECK_FALSE(x86::host_supports(x86::Isa::Avx512));
}

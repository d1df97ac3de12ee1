// Accuracy of the emitted vector math (jit/x86/vector_math.h) against the
// double-precision libm result rounded to float, in ulps, over a sweep of the
// whole float range (denormals included) and special values, for every Isa
// tier the host supports and both MathModes.
#include <asmjit/x86.h>

#include <catch2/catch.hpp>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <cstring>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "jit/x86/isa.h"
#include "jit/x86/vector_math.h"

namespace {

using canary::jit::MathMode;
using canary::jit::x86::Isa;
using canary::jit::x86::VecContext;
namespace ax = asmjit::x86;

using Emitter = std::function<void(VecContext&, const ax::Vec&, const ax::Vec&)>;
using KernelFn = void (*)(float* y, const float* x, std::size_t n);
using Reference = double (*)(double);

// Collects AsmJit's error messages so a failed build reports them.
struct ErrorRecorder : asmjit::ErrorHandler {
  std::string messages;
  void handleError(asmjit::Error, const char* message, asmjit::BaseEmitter*) override {
    messages += message;
    messages += '\n';
  }
};

// A compiled y[i] = f(x[i]) loop over n elements (n a multiple of the lanes).
class VecKernel {
 public:
  VecKernel(Isa isa, MathMode mode, const Emitter& emit, bool in_place = false, std::string* listing = nullptr) {
    code_.init(rt_.environment());
    code_.setErrorHandler(&errors_);
    asmjit::StringLogger logger;
    if (listing) code_.setLogger(&logger);
    ax::Compiler cc(&code_);
    cc.addDiagnosticOptions(asmjit::DiagnosticOptions::kValidateAssembler);
    emit_loop(cc, isa, mode, emit, in_place);
    cc.finalize();
    if (errors_.messages.empty()) rt_.add(&fn_, &code_);
    if (listing) *listing = logger.data();
    code_.setLogger(nullptr);
  }
  ~VecKernel() {
    if (fn_) rt_.release(fn_);
  }
  VecKernel(const VecKernel&) = delete;
  VecKernel& operator=(const VecKernel&) = delete;

  const std::string& errors() const { return errors_.messages; }
  void run(float* y, const float* x, std::size_t n) const { fn_(y, x, n); }

 private:
  // The loop: load (vmovss on the scalar tier), emit, store.
  static void emit_loop(ax::Compiler& cc, Isa isa, MathMode mode, const Emitter& emit, bool in_place) {
    auto* fn = cc.addFunc(asmjit::FuncSignatureT<void, float*, const float*, std::size_t>(asmjit::CallConvId::kHost));
    fn->frame().setAvxEnabled();
    if (isa == Isa::Avx512) fn->frame().setAvx512Enabled();
    ax::Gp y = cc.newIntPtr("y"), x = cc.newIntPtr("x"), n = cc.newUIntPtr("n"), i = cc.newUIntPtr("i");
    fn->setArg(0, y);
    fn->setArg(1, x);
    fn->setArg(2, n);
    VecContext ctx(cc, isa, mode);
    asmjit::Label loop = cc.newLabel(), done = cc.newLabel();
    cc.xor_(i, i);
    cc.bind(loop);
    cc.cmp(i, n);
    cc.jae(done);
    ax::Vec v = ctx.new_vec("v");
    ax::Vec r = in_place ? v : ctx.new_vec("r");
    if (isa == Isa::Scalar) cc.vmovss(v.as<ax::Xmm>(), ax::ptr(x, i, 2));
    else cc.vmovups(v, ax::ptr(x, i, 2));
    emit(ctx, r, v);
    if (isa == Isa::Scalar) cc.vmovss(ax::ptr(y, i, 2), r.as<ax::Xmm>());
    else cc.vmovups(ax::ptr(y, i, 2), r);
    cc.add(i, canary::jit::x86::isa_lanes(isa));
    cc.jmp(loop);
    cc.bind(done);
    cc.endFunc();
  }

  asmjit::JitRuntime rt_;
  asmjit::CodeHolder code_;
  ErrorRecorder errors_;
  KernelFn fn_ = nullptr;
};

// Distance in units in the last place, with both zeros equal and NaN == NaN.
std::int64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<std::int32_t>::max();
  auto ordered = [](float f) {
    const auto bits = std::bit_cast<std::int32_t>(f);
    return bits < 0 ? -static_cast<std::int64_t>(bits & 0x7fffffff) : static_cast<std::int64_t>(bits);
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// ---- double-precision references (the accurate formulas of each function)
double ref_exp(double x) { return std::exp(x); }
double ref_log(double x) { return std::log(x); }
double ref_tanh(double x) { return std::tanh(x); }
double ref_erf(double x) { return std::erf(x); }
double ref_sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x)); }
double ref_softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
// 0.5 x (1 + erf(x / sqrt 2)) written with erfc, which keeps the x < 0 tail accurate.
double ref_gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
// 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3).
double ref_gelu_tanh(double x) {
  const double u2 = 2.0 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
  if (x >= 0) return x / (1.0 + std::exp(-u2));
  const double e = std::exp(u2);
  return x * e / (1.0 + e);
}

// Float bit patterns around `v`: v and `radius` neighbours on each side.
void add_neighbours(std::vector<float>& out, float v, int radius) {
  const auto bits = std::bit_cast<std::uint32_t>(v);
  for (int d = -radius; d <= radius; ++d) out.push_back(std::bit_cast<float>(bits + static_cast<std::uint32_t>(d)));
}

// Every 4099th bit pattern of all 2^32, plus special values and thresholds.
std::vector<float> test_inputs(std::initializer_list<float> thresholds) {
  std::vector<float> xs;
  xs.reserve((1ull << 32) / 4099 + 4096);
  for (std::uint64_t b = 0; b < (1ull << 32); b += 4099) xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  const float denorm_min = std::numeric_limits<float>::denorm_min();
  const float denorm_max = std::bit_cast<float>(0x007fffffu);
  for (float v : {0.0f, denorm_min, denorm_max, FLT_MIN, FLT_MAX, 1.0f, 0.5f, 2.0f}) {
    add_neighbours(xs, v, 8);
    add_neighbours(xs, -v, 8);
  }
  for (float v : {INFINITY, -INFINITY, NAN, -NAN}) xs.push_back(v);
  for (float v : thresholds) add_neighbours(xs, v, 64);
  while (xs.size() % 16 != 0) xs.push_back(0.0f);
  return xs;
}

// The largest ulp error of `k` over xs, and where it occurs.
struct Accuracy {
  std::int64_t max_ulp = 0;
  float worst_x = 0, got = 0, want = 0;
};

Accuracy measure(const VecKernel& k, const std::vector<float>& xs, const std::vector<float>& want) {
  std::vector<float> ys(xs.size());
  k.run(ys.data(), xs.data(), xs.size());
  Accuracy acc;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const std::int64_t d = ulp_distance(ys[i], want[i]);
    if (d > acc.max_ulp) acc = {d, xs[i], ys[i], want[i]};
  }
  return acc;
}

std::vector<Isa> host_tiers() {
  std::vector<Isa> tiers;
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
    if (canary::jit::x86::host_supports(isa)) tiers.push_back(isa);
  return tiers;
}

std::string describe(float v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a (%.9g)", static_cast<double>(v), static_cast<double>(v));
  return buf;
}

// Checks `emit` against `ref` on every host tier: Exact within 4 ulp (the
// contract), Fast within fast_bound ulp (the bound vector_math.h documents).
void check_function(const Emitter& emit, Reference ref, std::int64_t fast_bound,
                    std::initializer_list<float> thresholds) {
  const std::vector<float> xs = test_inputs(thresholds);
  std::vector<float> want(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) want[i] = static_cast<float>(ref(static_cast<double>(xs[i])));
  for (Isa isa : host_tiers()) {
    for (MathMode mode : {MathMode::Exact, MathMode::Fast}) {
      const bool exact = mode == MathMode::Exact;
      VecKernel k(isa, mode, emit);
      INFO("tier " << canary::jit::x86::isa_name(isa) << ", " << (exact ? "exact" : "fast"));
      REQUIRE(k.errors() == "");
      const Accuracy acc = measure(k, xs, want);
      INFO("max " << acc.max_ulp << " ulp at x = " << describe(acc.worst_x) << ": got " << describe(acc.got)
                  << ", want " << describe(acc.want));
      CHECK(acc.max_ulp <= (exact ? 4 : fast_bound));
    }
  }
}

Emitter gelu_emitter(bool approximate_tanh) {
  return [approximate_tanh](VecContext& ctx, const ax::Vec& dst, const ax::Vec& src) {
    canary::jit::x86::emit_gelu(ctx, dst, src, approximate_tanh);
  };
}

}  // namespace

TEST_CASE("vector exp within its ulp bound over the float range", "[unit][jit][vecmath]") {
  check_function(canary::jit::x86::emit_exp, ref_exp, 5, {88.72283f, -87.33654f, -103.972f, 0.0f});
}

TEST_CASE("vector log within its ulp bound over the float range", "[unit][jit][vecmath]") {
  check_function(canary::jit::x86::emit_log, ref_log, 2, {1.0f, 0.70710677f, 1.4142135f, FLT_MIN});
}

TEST_CASE("vector tanh within its ulp bound over the float range", "[unit][jit][vecmath]") {
  check_function(canary::jit::x86::emit_tanh, ref_tanh, 2, {0.17328679f, 9.01f, -9.01f, 10.0f});
}

TEST_CASE("vector sigmoid within its ulp bound over the float range", "[unit][jit][vecmath]") {
  check_function(canary::jit::x86::emit_sigmoid, ref_sigmoid, 2, {-87.33654f, -88.72283f, -103.972f, 16.6355f});
}

TEST_CASE("vector softplus within its ulp bound over the float range", "[unit][jit][vecmath]") {
  check_function(canary::jit::x86::emit_softplus, ref_softplus, 3, {-87.33654f, -103.972f, 16.6355f, 0.0f});
}

TEST_CASE("vector erf within its ulp bound over the float range", "[unit][jit][vecmath]") {
  check_function(canary::jit::x86::emit_erf, ref_erf, 2, {0.5f, -0.5f, 3.92f, 4.0f});
}

TEST_CASE("vector gelu (erf form) within its ulp bound over the float range", "[unit][jit][vecmath]") {
  check_function(gelu_emitter(false), ref_gelu, 4, {0.70710677f, -0.70710677f, -13.2f, -14.5f});
}

TEST_CASE("vector gelu (tanh form) within its ulp bound over the float range", "[unit][jit][vecmath]") {
  check_function(gelu_emitter(true), ref_gelu_tanh, 214, {-1.0f, -9.5f, -10.5f, -11.0f});
}

namespace {

// f(x) for each x, computed by a kernel of the given tier and mode.
std::vector<float> evaluate(const Emitter& emit, Isa isa, MathMode mode, std::vector<float> xs, bool in_place = false) {
  const std::size_t n = xs.size();
  while (xs.size() % 16 != 0) xs.push_back(0.0f);
  std::vector<float> ys(xs.size());
  VecKernel k(isa, mode, emit, in_place);
  REQUIRE(k.errors() == "");
  k.run(ys.data(), xs.data(), xs.size());
  ys.resize(n);
  return ys;
}

// One special input and the exact result every tier and mode must give.
struct Special {
  float x;
  float y;
};

// Requires f(x) == y bit for bit (NaN: any NaN) on every tier in both modes.
void check_specials(const Emitter& emit, const std::vector<Special>& cases) {
  std::vector<float> xs;
  for (const Special& c : cases) xs.push_back(c.x);
  for (Isa isa : host_tiers()) {
    for (MathMode mode : {MathMode::Exact, MathMode::Fast}) {
      const std::vector<float> ys = evaluate(emit, isa, mode, xs);
      for (std::size_t i = 0; i < cases.size(); ++i) {
        INFO("tier " << canary::jit::x86::isa_name(isa) << ", x = " << describe(cases[i].x) << ", got "
                     << describe(ys[i]));
        if (std::isnan(cases[i].y))
          CHECK(std::isnan(ys[i]));
        else
          CHECK(std::bit_cast<std::uint32_t>(ys[i]) == std::bit_cast<std::uint32_t>(cases[i].y));
      }
    }
  }
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kDenormMin = std::numeric_limits<float>::denorm_min();

struct NamedEmitter {
  const char* name;
  Emitter emit;
};

std::vector<NamedEmitter> all_emitters() {
  using namespace canary::jit::x86;
  return {{"exp", emit_exp},       {"log", emit_log},         {"tanh", emit_tanh},
          {"sigmoid", emit_sigmoid}, {"softplus", emit_softplus}, {"erf", emit_erf},
          {"gelu", gelu_emitter(false)}, {"gelu_tanh", gelu_emitter(true)}};
}

}  // namespace

TEST_CASE("vector math special values: zeros, infinities, NaN, saturation", "[unit][jit][vecmath]") {
  using namespace canary::jit::x86;
  SECTION("exp") {
    check_specials(emit_exp, {{0.0f, 1.0f}, {-0.0f, 1.0f}, {-kInf, 0.0f}, {kInf, kInf}, {89.0f, kInf},
                              {-104.0f, 0.0f}, {-1000.0f, 0.0f}, {kNaN, kNaN}});
  }
  SECTION("log") {
    check_specials(emit_log, {{1.0f, 0.0f}, {0.0f, -kInf}, {-0.0f, -kInf}, {-1.0f, kNaN}, {-kInf, kNaN},
                              {kInf, kInf}, {kNaN, kNaN}, {2.0f, 0.693147182f}, {0.5f, -0.693147182f}});
  }
  SECTION("tanh") {
    check_specials(emit_tanh, {{0.0f, 0.0f}, {-0.0f, -0.0f}, {kInf, 1.0f}, {-kInf, -1.0f}, {20.0f, 1.0f},
                               {-20.0f, -1.0f}, {kDenormMin, kDenormMin}, {-kDenormMin, -kDenormMin}, {kNaN, kNaN}});
  }
  SECTION("sigmoid") {
    check_specials(emit_sigmoid, {{0.0f, 0.5f}, {kInf, 1.0f}, {-kInf, 0.0f}, {-200.0f, 0.0f}, {40.0f, 1.0f},
                                  {kNaN, kNaN}});
  }
  SECTION("softplus") {
    check_specials(emit_softplus, {{0.0f, 0.693147182f}, {kInf, kInf}, {-kInf, 0.0f}, {-200.0f, 0.0f},
                                   {100.0f, 100.0f}, {kNaN, kNaN}});
  }
  SECTION("erf") {
    check_specials(emit_erf, {{0.0f, 0.0f}, {-0.0f, -0.0f}, {kInf, 1.0f}, {-kInf, -1.0f}, {5.0f, 1.0f},
                              {-5.0f, -1.0f}, {kNaN, kNaN}});
  }
  SECTION("gelu, both forms") {
    // -inf gives NaN as 0.5 x (1 + erf(x / sqrt 2)) does (-inf * 0).
    const std::vector<Special> cases = {{0.0f, 0.0f}, {kInf, kInf},      {-kInf, kNaN},
                                        {-20.0f, -0.0f}, {30.0f, 30.0f}, {kNaN, kNaN}};
    check_specials(gelu_emitter(false), cases);
    check_specials(gelu_emitter(true), cases);
  }
}

TEST_CASE("vector math hand-computed values", "[unit][jit][vecmath]") {
  using namespace canary::jit::x86;
  // Values worked out by hand (series / known constants), rounded to float.
  struct Case {
    const char* name;
    Emitter emit;
    float x;
    double y;
  };
  const std::vector<Case> cases = {
      {"exp(1) = e", emit_exp, 1.0f, 2.718281828459045},
      {"exp(-1)", emit_exp, -1.0f, 0.36787944117144233},
      {"exp(-103) (denormal)", emit_exp, -103.0f, 1.8521167695179754e-45},  // rounds to denorm_min
      {"log(e)", emit_log, 2.7182817f, 0.99999996963214},
      {"log(denorm_min) = -149 ln2", emit_log, kDenormMin, -103.27892990343184},
      {"tanh(0.5)", emit_tanh, 0.5f, 0.46211715726000974},
      {"sigmoid(-1)", emit_sigmoid, -1.0f, 0.2689414213699951},
      {"softplus(1) = log(1 + e)", emit_softplus, 1.0f, 1.3132616875182228},
      {"erf(1)", emit_erf, 1.0f, 0.8427007929497149},
      {"gelu(1) = 0.5 (1 + erf(1/sqrt2))", gelu_emitter(false), 1.0f, 0.8413447460685429},
      {"gelu(-3) = -1.5 erfc(3/sqrt2)", gelu_emitter(false), -3.0f, -0.004049694094890287},
      {"gelu_tanh(1)", gelu_emitter(true), 1.0f, 0.8411919906082768},
  };
  for (const Case& c : cases) {
    for (Isa isa : host_tiers()) {
      const float got = evaluate(c.emit, isa, MathMode::Exact, {c.x})[0];
      INFO(c.name << " on " << isa_name(isa) << ": got " << describe(got));
      CHECK(ulp_distance(got, static_cast<float>(c.y)) <= 2);
    }
  }
}

TEST_CASE("vector math emitters accept dst == src", "[unit][jit][vecmath]") {
  std::vector<float> xs;
  for (std::uint64_t b = 0; b < (1ull << 32); b += 1048583) xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  for (const NamedEmitter& e : all_emitters()) {
    for (Isa isa : host_tiers()) {
      const std::vector<float> apart = evaluate(e.emit, isa, MathMode::Exact, xs);
      const std::vector<float> same = evaluate(e.emit, isa, MathMode::Exact, xs, true);
      INFO(e.name << " on " << canary::jit::x86::isa_name(isa));
      CHECK(std::memcmp(apart.data(), same.data(), apart.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("vector math on the Avx2 and Scalar tiers uses only VEX registers and instructions", "[unit][jit][vecmath]") {
  // No zmm, no k masks, no xmm16-31/ymm16-31, no AVX-512-only instructions.
  const std::regex evex(R"((x|y)mm(1[6-9]|2[0-9]|3[01])\b|zmm|\{k|\bk[0-7]\b|vscalef|vrcp14|vpternlog|vfixupimm|vgetexp|vgetmant|vblendm)");
  for (const NamedEmitter& e : all_emitters()) {
    for (Isa isa : {Isa::Scalar, Isa::Avx2}) {
      for (MathMode mode : {MathMode::Exact, MathMode::Fast}) {
        std::string listing;
        VecKernel k(isa, mode, e.emit, false, &listing);
        INFO(e.name << " on " << canary::jit::x86::isa_name(isa));
        REQUIRE(k.errors() == "");
        REQUIRE(listing.find(isa == Isa::Avx2 ? "ymm" : "xmm") != std::string::npos);
        std::smatch m;
        const bool found = std::regex_search(listing, m, evex);
        INFO("first EVEX-only use: " << (found ? m.str() : std::string()));
        CHECK_FALSE(found);
      }
    }
  }
}

// Energy: RAPL zone discovery and counters on a fake powercap tree, the work
// estimates of plans and of the interpreter, and the energy model.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>

#include "trace_recording.h"
#include "graph/text_format.h"
#include "jit/cost/energy.h"
#include "jit/trace_recorder.h"
#include "vm/compiler.h"
#include "vm/interpreter.h"

using namespace canary;
using namespace canary::jit;
using canary::jit::test::record;
using canary::jit::test::Recorded;
using namespace canary::jit::cost;
namespace fs = std::filesystem;

namespace {

// A powercap-like directory tree in the temp directory, removed at the end.
class FakePowercap {
 public:
  FakePowercap() {
    static std::atomic<int> counter{0};
    root_ = fs::temp_directory_path() /
            ("canary_rapl_" + std::to_string(::getpid()) + "_" + std::to_string(counter.fetch_add(1)));
    fs::create_directories(root_);
  }
  ~FakePowercap() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakePowercap(const FakePowercap&) = delete;
  FakePowercap& operator=(const FakePowercap&) = delete;

  std::string root() const { return root_.string(); }
  // Writes root/rel (creating its directories).
  void write(const std::string& rel, const std::string& text) const {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void mkdir(const std::string& rel) const { fs::create_directories(root_ / rel); }

 private:
  fs::path root_;
};

// Two packages, a DRAM subzone on package 0, and the entries a real tree has
// that are not zones to read (core subzone, flat duplicate, control type, mmio).
void write_two_packages(const FakePowercap& t) {
  t.write("intel-rapl:0/name", "package-0\n");
  t.write("intel-rapl:0/energy_uj", "1000000\n");
  t.write("intel-rapl:0/max_energy_range_uj", "262143328850\n");
  t.write("intel-rapl:0/intel-rapl:0:0/name", "core\n");
  t.write("intel-rapl:0/intel-rapl:0:0/energy_uj", "5\n");
  t.write("intel-rapl:0/intel-rapl:0:1/name", "dram\n");
  t.write("intel-rapl:0/intel-rapl:0:1/energy_uj", "2000\n");
  t.write("intel-rapl:0/intel-rapl:0:1/max_energy_range_uj", "65532610987\n");
  t.write("intel-rapl:1/name", "package-1\n");
  t.write("intel-rapl:1/energy_uj", "3000\n");
  t.write("intel-rapl:1/max_energy_range_uj", "262143328850\n");
  t.write("intel-rapl:0:1/name", "dram\n");
  t.write("intel-rapl:0:1/energy_uj", "999\n");
  t.mkdir("intel-rapl");
  t.write("intel-rapl-mmio:0/name", "package-0\n");
  t.write("intel-rapl-mmio:0/energy_uj", "7\n");
}

}  // namespace

TEST_CASE("RAPL discovery reads package zones and their DRAM subzones", "[unit][cost]") {
  FakePowercap t;
  write_two_packages(t);
  const RaplReader reader(t.root());
  REQUIRE(reader.readable());
  CHECK(reader.description() == "package-0 + dram-0 + package-1 (" + t.root() + ")");
  const RaplSample s = reader.read();
  CHECK(s.ok);
  CHECK(s.energy_uj == std::vector<std::uint64_t>{1000000, 2000, 3000});
}

TEST_CASE("RAPL joules are the summed counter increases", "[unit][cost]") {
  FakePowercap t;
  write_two_packages(t);
  const RaplReader reader(t.root());
  const RaplSample before = reader.read();
  t.write("intel-rapl:0/energy_uj", "1500000\n");
  t.write("intel-rapl:0/intel-rapl:0:1/energy_uj", "52000\n");
  t.write("intel-rapl:1/energy_uj", "4000\n");
  const RaplSample after = reader.read();
  // 500000 + 50000 + 1000 uJ.
  CHECK(reader.joules_between(before, after) == Approx(0.551));
  // A sample that is not ok gives 0.
  RaplSample bad = after;
  bad.ok = false;
  CHECK(reader.joules_between(before, bad) == 0.0);
}

TEST_CASE("RAPL counters that went down wrapped at their range", "[unit][cost]") {
  FakePowercap t;
  t.write("intel-rapl:0/name", "package-0\n");
  t.write("intel-rapl:0/energy_uj", "262143328000\n");
  t.write("intel-rapl:0/max_energy_range_uj", "262143328850\n");
  // No max_energy_range_uj: a 32-bit microjoule counter is assumed.
  t.write("intel-rapl:0/intel-rapl:0:0/name", "dram\n");
  t.write("intel-rapl:0/intel-rapl:0:0/energy_uj", "4294967000\n");
  const RaplReader reader(t.root());
  REQUIRE(reader.readable());
  const RaplSample before = reader.read();
  t.write("intel-rapl:0/energy_uj", "1000\n");
  t.write("intel-rapl:0/intel-rapl:0:0/energy_uj", "100\n");
  const RaplSample after = reader.read();
  // Package: 850 to the range then 1000; DRAM: 296 to 2^32 then 100.
  CHECK(reader.joules_between(before, after) == Approx((1850.0 + 396.0) * 1e-6));
}

TEST_CASE("a RAPL zone whose counter cannot be read leaves the reader not readable", "[unit][cost]") {
  SECTION("energy_uj is a directory") {
    FakePowercap t;
    t.write("intel-rapl:0/name", "package-0\n");
    t.mkdir("intel-rapl:0/energy_uj");
    const RaplReader reader(t.root());
    CHECK_FALSE(reader.readable());
    CHECK(reader.description() == "not readable: " + t.root() + "/intel-rapl:0/energy_uj: Is a directory");
    CHECK_FALSE(reader.read().ok);
    CHECK(reader.joules_between(reader.read(), reader.read()) == 0.0);
  }
  SECTION("the DRAM counter holds text") {
    FakePowercap t;
    write_two_packages(t);
    t.write("intel-rapl:0/intel-rapl:0:1/energy_uj", "n/a\n");
    const RaplReader reader(t.root());
    CHECK_FALSE(reader.readable());
    CHECK(reader.description() ==
          "not readable: " + t.root() + "/intel-rapl:0/intel-rapl:0:1/energy_uj: not a counter: \"n/a\"");
  }
  SECTION("energy_uj is missing") {
    FakePowercap t;
    t.write("intel-rapl:0/name", "package-0\n");
    const RaplReader reader(t.root());
    CHECK_FALSE(reader.readable());
    CHECK(reader.description() ==
          "not readable: " + t.root() + "/intel-rapl:0/energy_uj: No such file or directory");
  }
}

TEST_CASE("a root without RAPL zones is not readable and says why", "[unit][cost]") {
  FakePowercap t;
  t.mkdir("intel-rapl");
  const RaplReader empty(t.root());
  CHECK_FALSE(empty.readable());
  CHECK(empty.description() == "not readable: " + t.root() + " has no intel-rapl zones");
  const RaplReader missing(t.root() + "/absent");
  CHECK_FALSE(missing.readable());
  CHECK(missing.description() == "not readable: " + t.root() + "/absent: No such file or directory");
}

TEST_CASE("the default powercap root is probed without failing", "[unit][cost]") {
  const RaplReader reader("/sys/class/powercap");
  CHECK_FALSE(reader.description().empty());
  const RaplSample s = reader.read();
  CHECK(s.ok == reader.readable());
  if (!reader.readable()) {
    CHECK(reader.description().rfind("not readable: ", 0) == 0);
    CHECK(reader.joules_between(s, s) == 0.0);
  }
}

namespace {

const char* kChainWithMatMul = R"(canary v1
graph main(x: f32[N, 4], b: f32[4]) -> (y, u) {
  const w: f32[4, 4] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
  const half: f32[] = [0.5]
  s = Mul(x, half)
  t = Add(s, b)
  u = Tanh(t)
  m = MatMul(u, w)
  y = Relu(m)
}
)";

Recorded record_chain() {
  return record(kChainWithMatMul, {Tensor::empty(DType::F32, {3, 4}), Tensor::empty(DType::F32, {4})});
}

}  // namespace

TEST_CASE("interpreter work counts every op's operands", "[unit][cost]") {
  const Recorded r = record_chain();
  REQUIRE(r.trace.ops.size() == 5);
  const WorkEstimate w = estimate_interpreter_work(r.trace, *r.program);
  // x, s, t, u, m, y are [3, 4] f32 (48 bytes), b 16, half 4, w 64.
  // Mul 48+4+48, Add 48+16+48, Tanh 48+48, MatMul 48+64+48, Relu 48+48.
  CHECK(w.bytes_moved == 564.0);
  // 12 per elementwise op, MatMul 2 * 12 outputs * K=4.
  CHECK(w.flops == 144.0);
  CHECK(w.bytes_materialised == 240.0);
}

TEST_CASE("fused plans move only their groups' inputs and outputs", "[unit][cost]") {
  const Recorded r = record_chain();
  SECTION("Relu as a fused group after the MatMul") {
    PlanOptions po;
    po.contraction_epilogues = false;
    const Plan plan = plan_trace(*r.program, r.trace, {}, po);
    REQUIRE(plan.steps.size() == 3);
    const WorkEstimate w = estimate_work(plan, r.trace, *r.program);
    // Group {Mul, Add, Tanh}: x 48 + b 16 in, u 48 out; MatMul 160; group {Relu}: 48 + 48.
    CHECK(w.bytes_moved == 368.0);
    CHECK(w.flops == 144.0);  // the same arithmetic as the interpreter
    // u, m, y.
    CHECK(w.bytes_materialised == 144.0);
  }
  SECTION("Relu as the MatMul's epilogue, on a result too small for post-ops") {
    const Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    REQUIRE(plan.steps.size() == 2);
    REQUIRE(plan.steps[1].kind == StepKind::Contraction);
    const WorkEstimate w = estimate_work(plan, r.trace, *r.program);
    // 12 result elements: the MatMul stores m and the separate group reads
    // it, the same work as above.
    CHECK(w.bytes_moved == 368.0);
    CHECK(w.flops == 144.0);
    CHECK(w.bytes_materialised == 144.0);
  }
  SECTION("a product placed on the device crosses the bus; its epilogue runs as its group") {
    Plan plan = plan_trace(*r.program, r.trace, {}, PlanOptions{});
    REQUIRE(plan.steps.size() == 2);
    REQUIRE(plan.steps[1].kind == StepKind::Contraction);
    plan.steps[1].on_device = true;
    const WorkEstimate w = estimate_work(plan, r.trace, *r.program);
    CHECK(w.bytes_moved == 368.0);
    CHECK(w.device_bytes == 160.0);  // s 48 and w 64 over, m 48 back
  }
  SECTION("Relu as post-ops of a MatMul with a large result") {
    const Recorded big = record(R"(canary v1
graph main(x: f32[N, 4], w: f32[4, 16]) -> (y) {
  m = MatMul(x, w)
  y = Relu(m)
}
)",
                                {Tensor::empty(DType::F32, {32768, 4}), Tensor::empty(DType::F32, {4, 16})});
    const Plan plan = plan_trace(*big.program, big.trace, {}, PlanOptions{});
    REQUIRE(plan.steps.size() == 1);
    REQUIRE(plan.steps[0].kind == StepKind::Contraction);
    const WorkEstimate w = estimate_work(plan, big.trace, *big.program);
    // x 512 KiB and w 256 B in, y 2 MiB out once; Relu computes in the post-op.
    CHECK(w.bytes_moved == 524288.0 + 256.0 + 2097152.0);
    CHECK(w.bytes_materialised == 2097152.0);
    CHECK(w.flops == 2.0 * 524288.0 * 4.0 + 524288.0);
    // On the device the product runs alone: m is stored, then Relu's group reads it.
    Plan placed = plan;
    placed.steps[0].on_device = true;
    const WorkEstimate d = estimate_work(placed, big.trace, *big.program);
    CHECK(d.bytes_moved == 524288.0 + 256.0 + 2097152.0 + 2.0 * 2097152.0);
    CHECK(d.device_bytes == 524288.0 + 256.0 + 2097152.0);
  }
}

TEST_CASE("hoisted steps are not counted in the per-iteration work", "[unit][cost]") {
  const Recorded r = record_chain();
  PlanOptions po;
  po.contraction_epilogues = false;
  Plan plan = plan_trace(*r.program, r.trace, {}, po);
  REQUIRE(plan.steps.size() == 3);
  const WorkEstimate all = estimate_work(plan, r.trace, *r.program);
  plan.steps[1].hoisted = true;  // the MatMul: 160 bytes, 96 flops
  const WorkEstimate rest = estimate_work(plan, r.trace, *r.program);
  CHECK(rest.bytes_moved == all.bytes_moved - 160.0);
  CHECK(rest.flops == all.flops - 96.0);
  CHECK(rest.bytes_materialised == all.bytes_materialised - 48.0);
}

TEST_CASE("unfused plans do the interpreter's work", "[unit][cost]") {
  const Recorded r = record_chain();
  PlanOptions po;
  po.tier = Tier::Unfused;
  const Plan plan = plan_trace(*r.program, r.trace, {}, po);
  const WorkEstimate w = estimate_work(plan, r.trace, *r.program);
  CHECK(w.bytes_moved == 564.0);
  CHECK(w.flops == 144.0);
  CHECK(w.bytes_materialised == 240.0);
}

TEST_CASE("Gemm, Conv and LSTM flops count two per multiply-add", "[unit][cost]") {
  SECTION("Gemm [2, 3] x [3, 5]") {
    const Recorded r = record(R"(canary v1
graph main(a: f32[2, 3], b: f32[3, 5]) -> (y) {
  y = Gemm(a, b)
}
)",
                              {Tensor::empty(DType::F32, {2, 3}), Tensor::empty(DType::F32, {3, 5})});
    const WorkEstimate w = estimate_interpreter_work(r.trace, *r.program);
    CHECK(w.flops == 2.0 * 10 * 3);
    CHECK(w.bytes_moved == 4.0 * (6 + 15 + 10));
  }
  SECTION("Conv of 2 channels, kernel 3, into 3 channels") {
    const Recorded r = record(R"(canary v1
graph main(x: f32[1, 2, 8], w: f32[3, 2, 3]) -> (y) {
  y = Conv(x, w) {kernel_shape = [3], pads = [1, 1], strides = [2]}
}
)",
                              {Tensor::empty(DType::F32, {1, 2, 8}), Tensor::empty(DType::F32, {3, 2, 3})});
    const WorkEstimate w = estimate_interpreter_work(r.trace, *r.program);
    // Output [1, 3, 4]: 12 elements, each 2 channels x 3 taps.
    CHECK(w.flops == 2.0 * 12 * 6);
  }
  SECTION("LSTM over T = 2, N = 1, I = 3, H = 2") {
    const Recorded r = record(R"(canary v1
graph main(x: f32[2, 1, 3], w: f32[1, 8, 3], r: f32[1, 8, 2]) -> (y) {
  y = LSTM(x, w, r) {hidden_size = 2}
}
)",
                              {Tensor::empty(DType::F32, {2, 1, 3}), Tensor::empty(DType::F32, {1, 8, 3}),
                               Tensor::empty(DType::F32, {1, 8, 2})});
    const WorkEstimate w = estimate_interpreter_work(r.trace, *r.program);
    // 2 x 4 gates x T N H (I + H) = 2 * 4 * 2 * 1 * 2 * 5.
    CHECK(w.flops == 160.0);
  }
}

TEST_CASE("reshapes share buffers and count no work", "[unit][cost]") {
  const Recorded r = record(R"(canary v1
graph main(x: f32[2, 6]) -> (y) {
  const shape: i64[2] = [3, 4]
  y = Reshape(x, shape)
}
)",
                            {Tensor::empty(DType::F32, {2, 6})});
  const WorkEstimate w = estimate_interpreter_work(r.trace, *r.program);
  CHECK(w.bytes_moved == 0.0);
  CHECK(w.flops == 0.0);
  CHECK(w.bytes_materialised == 0.0);
}

TEST_CASE("modelled energy is core power by ISA times time plus bytes moved", "[unit][cost]") {
  WorkEstimate w;
  w.bytes_moved = 1e9;
  // 6 W x 1 ms + 20 pJ x 1e9 bytes = 0.006 + 0.02 J.
  CHECK(modelled_joules(w, x86::Isa::Avx512, 1e-3) == Approx(0.026));
  CHECK(modelled_joules(w, x86::Isa::Avx2, 1e-3) == Approx(0.025));
  CHECK(modelled_joules(w, x86::Isa::Scalar, 1e-3) == Approx(0.024));
  const WorkEstimate none;
  CHECK(modelled_joules(none, x86::Isa::Scalar, 1e-6) > 0.0);
  CHECK(modelled_joules(none, x86::Isa::Scalar, 1e-6) == Approx(4e-6));
  CHECK(modelled_joules(none, x86::Isa::Avx2, 0.0) == 0.0);
  CHECK(modelled_joules(none, x86::Isa::Avx2, -1.0) == 0.0);
}

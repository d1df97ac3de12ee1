// Offline validation of the emitted PTX: every spec of the differential
// catalog (every EwOp in both math modes, broadcast layouts, exact dims,
// multiple outputs, the value canary) assembles with the toolkit's ptxas;
// plus structural checks of the text that need no toolkit.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "jit/cuda/ptx_elementwise.h"
#include "jit/cuda/ptx_matmul.h"
#include "jit/cuda/ptx_row.h"
#include "tests/cuda/diff_cases.h"
#include "tests/cuda/matmul_cases.h"
#include "tests/cuda/row_cases.h"

namespace cuda = canary::jit::cuda;
namespace ct = canary::jit::cuda_test;
using canary::jit::MathMode;

namespace {

// The ptxas binary, or "" when the build found none or it is not on this machine.
std::string ptxas_path() {
  const std::string p = CANARY_PTXAS;
  struct stat st;
  if (p.empty() || p.find("NOTFOUND") != std::string::npos || stat(p.c_str(), &st) != 0) return {};
  return p;
}

struct PtxasResult {
  int status = -1;
  std::string log;
};

// Assembles `ptx` for `arch` and returns ptxas's exit status and output.
PtxasResult assemble(const std::string& ptxas, const std::string& ptx, const std::string& arch) {
  char path[] = "/tmp/canary_ptx_XXXXXX";
  const int fd = mkstemp(path);
  PtxasResult r;
  if (fd < 0) return PtxasResult{-1, "mkstemp failed"};
  close(fd);
  std::ofstream(path) << ptx;
  const std::string cmd = ptxas + " -arch=" + arch + " " + path + " -o /dev/null 2>&1";
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, p)) r.log += buf;
    r.status = pclose(p);
  }
  std::remove(path);
  return r;
}

}  // namespace

TEST_CASE("ptxas accepts the PTX of every differential spec for sm_90", "[unit][cuda]") {
  const std::string ptxas = ptxas_path();
  const auto cases = ct::differential_cases();
  REQUIRE(cases.size() > 40);
  if (ptxas.empty()) {
    WARN("skipped: ptxas not found (CANARY_PTXAS = '" << CANARY_PTXAS << "'); PTX only generated");
    for (const auto& c : cases) CHECK(cuda::emit_fused_ptx(c.spec).find(".entry canary_fused") != std::string::npos);
    return;
  }
  for (const auto& c : cases) {
    const PtxasResult r = assemble(ptxas, cuda::emit_fused_ptx(c.spec, "sm_90"), "sm_90");
    INFO(c.name << " (" << c.spec.key() << ")\n" << r.log);
    CHECK(r.status == 0);
  }
}

TEST_CASE("ptxas accepts sm_80 PTX for the transcendental chain and the canary", "[unit][cuda]") {
  const std::string ptxas = ptxas_path();
  if (ptxas.empty()) {
    WARN("skipped: ptxas not found (CANARY_PTXAS = '" << CANARY_PTXAS << "')");
    CHECK(cuda::emit_fused_ptx(ct::differential_cases().front().spec, "sm_80").find(".target sm_80") !=
          std::string::npos);
    return;
  }
  for (const auto& c : ct::differential_cases()) {
    if (c.name != "chain10 transc" && c.name != "log canary") continue;
    const PtxasResult r = assemble(ptxas, cuda::emit_fused_ptx(c.spec, "sm_80"), "sm_80");
    INFO(c.name << "\n" << r.log);
    CHECK(r.status == 0);
  }
}

TEST_CASE("ptxas accepts the PTX of every row-kernel case for sm_90 and sm_80", "[unit][cuda]") {
  const std::string ptxas = ptxas_path();
  const auto cases = ct::row_cases();
  REQUIRE(cases.size() > 25);
  if (ptxas.empty()) {
    WARN("skipped: ptxas not found (CANARY_PTXAS = '" << CANARY_PTXAS << "'); PTX only generated");
    for (const auto& c : cases) CHECK(cuda::emit_row_ptx(c.spec).find(".entry canary_row") != std::string::npos);
    return;
  }
  for (const auto& c : cases) {
    for (const char* arch : {"sm_90", "sm_80"}) {
      const PtxasResult r = assemble(ptxas, cuda::emit_row_ptx(c.spec, arch), arch);
      INFO(c.name << " for " << arch << " (" << c.spec.key() << ")\n" << r.log);
      CHECK(r.status == 0);
    }
  }
}

TEST_CASE("ptxas accepts the matmul kernel of every catalog spec for sm_90 and sm_80", "[unit][cuda]") {
  const std::string ptxas = ptxas_path();
  const auto cases = ct::matmul_cases();
  if (ptxas.empty()) {
    WARN("skipped: ptxas not found (CANARY_PTXAS = '" << CANARY_PTXAS << "'); PTX only generated");
    for (const auto& c : cases) CHECK(cuda::emit_matmul_ptx(c.spec).find(".entry canary_matmul") != std::string::npos);
    return;
  }
  for (const auto& c : cases) {
    for (const char* arch : {"sm_90", "sm_80"}) {
      const PtxasResult r = assemble(ptxas, cuda::emit_matmul_ptx(c.spec, arch), arch);
      INFO(c.name << " for " << arch << " (" << c.spec.key() << ")\n" << r.log);
      CHECK(r.status == 0);
    }
  }
}

TEST_CASE("Row PTX text: one fold per statistic, exact dims baked in, canary, scale and bias", "[unit][cuda]") {
  const auto cases = ct::row_cases();
  auto find = [&](const std::string& name) {
    for (const auto& c : cases)
      if (c.name == name) return c;
    FAIL("no case " << name);
    return cases.front();
  };
  auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  const std::string sum = cuda::emit_row_ptx(find("sum").spec);
  CHECK(count(sum, "bar.sync 0") == 2);  // one fold: partials written, then read
  CHECK(count(sum, "shfl.sync.bfly.b32") == 5);
  CHECK(sum.find(", [d2];") != std::string::npos);
  const std::string compensated = cuda::emit_row_ptx(find("sum compensated").spec);
  CHECK(count(compensated, "shfl.sync.bfly.b32") == 10);  // sums and compensations
  const std::string softmax = cuda::emit_row_ptx(find("softmax").spec);
  CHECK(count(softmax, "bar.sync 0") == 4);  // max, then the denominator
  const std::string ln = cuda::emit_row_ptx(find("layer_norm exact 2x3x777").spec);
  CHECK(count(ln, "bar.sync 0") == 4);  // mean, then the squared deviations
  CHECK(ln.find("[d2]") == std::string::npos);
  CHECK(ln.find(", 777;") != std::string::npos);
  CHECK(ln.find("[scale]") != std::string::npos);
  CHECK(ln.find("[bias]") != std::string::npos);
  CHECK(cuda::emit_row_ptx(find("layer_norm, variance below epsilon").spec).find("[scale]") == std::string::npos);
  CHECK(cuda::emit_row_ptx(find("softmax fast of x-scalar").spec).find("ex2.approx.f32") != std::string::npos);
  CHECK(softmax.find("ex2.approx") == std::string::npos);
  CHECK(softmax.find("red.global.or") == std::string::npos);
  CHECK(cuda::emit_row_ptx(find("softmax canary clean").spec).find("red.global.or.b32") != std::string::npos);
}

TEST_CASE("ptxas rejects malformed PTX, so the validation can fail", "[unit][cuda]") {
  const std::string ptxas = ptxas_path();
  if (ptxas.empty()) {
    WARN("skipped: ptxas not found");
    CHECK(ptxas.empty());
    return;
  }
  std::string ptx = cuda::emit_fused_ptx(ct::differential_cases().front().spec);
  ptx.replace(ptx.find("ret;"), 4, "bogus.instruction;");
  CHECK(assemble(ptxas, ptx, "sm_90").status != 0);
}

TEST_CASE("PTX text: header, parameters, symbolic and exact dims, math mode, canary", "[unit][cuda]") {
  const auto cases = ct::differential_cases();
  auto find = [&](const std::string& name) {
    for (const auto& c : cases)
      if (c.name == name) return c;
    FAIL("no case " << name);
    return cases.front();
  };
  const std::string bcast = cuda::emit_fused_ptx(find("a*b+c (dense,row,shared-d0)").spec, "sm_90");
  CHECK(bcast.find(".version 7.8\n.target sm_90\n.address_size 64") != std::string::npos);
  CHECK(bcast.find(".param .u64 in_2") != std::string::npos);
  CHECK(bcast.find(".param .s64 s1_2") != std::string::npos);
  CHECK(bcast.find(", [d1];") != std::string::npos);  // symbolic: dims are parameters
  CHECK(bcast.find(", [vector_ok];") != std::string::npos);
  CHECK(bcast.find("red.global.or") == std::string::npos);

  const std::string exact = cuda::emit_fused_ptx(find("chain10 exact dims").spec);
  CHECK(exact.find("[d2]") == std::string::npos);  // baked into the code
  CHECK(exact.find(", 1031;") != std::string::npos);
  CHECK(exact.find("ld.global.nc.v4.f32") != std::string::npos);  // the 4-wide loop

  CHECK(cuda::emit_fused_ptx(find("exp").spec).find("ex2.approx") == std::string::npos);
  CHECK(cuda::emit_fused_ptx(find("exp/fast").spec).find("ex2.approx.f32") != std::string::npos);
  CHECK(cuda::emit_fused_ptx(find("log/fast").spec).find("lg2.approx.f32") != std::string::npos);
  const std::string canary = cuda::emit_fused_ptx(find("log canary").spec);
  CHECK(canary.find("testp.finite.f32") != std::string::npos);
  CHECK(canary.find("red.global.or.b32") != std::string::npos);
}

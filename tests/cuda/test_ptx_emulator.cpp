// The PTX emulator itself (tests/cuda/emulator): it parses every module the
// backend emits, reports what it cannot run by line, computes what small
// hand-written kernels define, and turns out-of-bounds accesses, barriers
// after an exit and incomplete warps into launch faults instead of results.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "jit/cuda/ptx_elementwise.h"
#include "jit/cuda/ptx_matmul.h"
#include "jit/cuda/ptx_row.h"
#include "tests/cuda/diff_cases.h"
#include "tests/cuda/emulator/ptx_machine.h"
#include "tests/cuda/emulator/ptx_program.h"
#include "tests/cuda/matmul_cases.h"
#include "tests/cuda/row_cases.h"

namespace emu = canary::ptx_emulator;
namespace cuda = canary::jit::cuda;
namespace ct = canary::jit::cuda_test;

namespace {

// out[tid] = tid * 2 + ctaid * 1000 for `count` threads; out is the only parameter.
const char* kStoreKernel = R"(
.version 7.8
.target sm_90
.address_size 64
.visible .entry k(
	.param .u64 out,
	.param .u32 count
)
{
	.reg .b32 %r<6>;
	.reg .b64 %rd<4>;
	.reg .f32 %f<2>;
	.reg .pred %p<2>;
	ld.param.u64 %rd0, [out];
	ld.param.u32 %r4, [count];
	mov.u32 %r0, %tid.x;
	setp.ge.u32 %p0, %r0, %r4;
	@%p0 bra $done;
	mov.u32 %r1, %ctaid.x;
	mul.lo.u32 %r2, %r1, 1000;
	shl.b32 %r3, %r0, 1;
	add.u32 %r3, %r3, %r2;
	cvt.rn.f32.s32 %f0, %r3;
	mul.wide.u32 %rd1, %r0, 4;
	add.s64 %rd2, %rd0, %rd1;
	st.global.f32 [%rd2], %f0;
$done:
	ret;
}
)";

// Every lane adds its lane id over a butterfly; lane i writes the warp's total to out[i].
const char* kButterflyKernel = R"(
.version 7.8
.target sm_90
.address_size 64
.visible .entry k(
	.param .u64 out
)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	.reg .f32 %f<8>;
	ld.param.u64 %rd0, [out];
	mov.u32 %r0, %tid.x;
	cvt.rn.f32.s32 %f0, %r0;
	shfl.sync.bfly.b32 %f1, %f0, 16, 31, -1;
	add.rn.f32 %f0, %f0, %f1;
	shfl.sync.bfly.b32 %f1, %f0, 8, 31, -1;
	add.rn.f32 %f0, %f0, %f1;
	shfl.sync.bfly.b32 %f1, %f0, 4, 31, -1;
	add.rn.f32 %f0, %f0, %f1;
	shfl.sync.bfly.b32 %f1, %f0, 2, 31, -1;
	add.rn.f32 %f0, %f0, %f1;
	shfl.sync.bfly.b32 %f1, %f0, 1, 31, -1;
	add.rn.f32 %f0, %f0, %f1;
	mul.wide.u32 %rd1, %r0, 4;
	add.s64 %rd2, %rd0, %rd1;
	st.global.f32 [%rd2], %f0;
	ret;
}
)";

// Threads with tid >= 8 exit, the rest wait at a barrier that can never fill.
const char* kBarrierAfterExitKernel = R"(
.version 7.8
.target sm_90
.address_size 64
.visible .entry k()
{
	.reg .b32 %r<2>;
	.reg .pred %p<2>;
	mov.u32 %r0, %tid.x;
	setp.ge.u32 %p0, %r0, 8;
	@%p0 bra $out;
	bar.sync 0;
$out:
	ret;
}
)";

// One thread stores the bits of PTX's edge cases: min/max with signed zeros
// and NaN, copysign's operand order, cvt.rni.s32 saturation, NaN and ties,
// shifts by the width or more, ordered and unordered compares.
const char* kEdgeKernel = R"(
.version 7.8
.target sm_90
.address_size 64
.visible .entry k(
	.param .u64 out
)
{
	.reg .f32 %f<8>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<2>;
	.reg .pred %p<4>;
	ld.param.u64 %rd0, [out];
	mov.f32 %f0, 0f00000000;
	mov.f32 %f1, 0f80000000;
	mov.f32 %f2, 0f7FC00000;
	mov.f32 %f3, 0f3F800000;
	min.f32 %f4, %f0, %f1;
	st.global.f32 [%rd0+0], %f4;
	max.f32 %f4, %f1, %f0;
	st.global.f32 [%rd0+4], %f4;
	min.f32 %f4, %f2, %f3;
	st.global.f32 [%rd0+8], %f4;
	max.f32 %f4, %f2, %f2;
	st.global.f32 [%rd0+12], %f4;
	mov.f32 %f5, 0fBF800000;
	mov.f32 %f6, 0f40000000;
	copysign.f32 %f4, %f5, %f6;
	st.global.f32 [%rd0+16], %f4;
	mov.f32 %f7, 0f4F32D05E;
	cvt.rni.s32.f32 %r0, %f7;
	st.global.f32 [%rd0+20], %r0;
	cvt.rni.s32.f32 %r1, %f2;
	st.global.f32 [%rd0+24], %r1;
	mov.f32 %f7, 0f40200000;
	cvt.rni.s32.f32 %r2, %f7;
	st.global.f32 [%rd0+28], %r2;
	shl.b32 %r3, 1, 40;
	st.global.f32 [%rd0+32], %r3;
	mov.u32 %r4, -8;
	shr.s32 %r5, %r4, 40;
	st.global.f32 [%rd0+36], %r5;
	shr.u32 %r6, %r4, 32;
	st.global.f32 [%rd0+40], %r6;
	setp.lt.f32 %p0, %f2, %f3;
	selp.b32 %r7, 1, 0, %p0;
	st.global.f32 [%rd0+44], %r7;
	setp.ltu.f32 %p1, %f2, %f3;
	selp.b32 %r8, 1, 0, %p1;
	st.global.f32 [%rd0+48], %r8;
	ret;
}
)";

// Lane l shuffles its lane id with xor 16 and xor 8 in 16-lane segments
// (c = 0x101f, as __shfl_xor_sync with width 16 passes): a lane may read an
// earlier segment but gets its own value where the partner lies in a later
// one, so xor 16 gives l for l < 16 and l - 16 above; xor 8 stays inside.
const char* kSegmentKernel = R"(
.version 7.8
.target sm_90
.address_size 64
.visible .entry k(
	.param .u64 out
)
{
	.reg .b32 %r<6>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd0, [out];
	mov.u32 %r0, %tid.x;
	shfl.sync.bfly.b32 %r1, %r0, 16, 0x101f, -1;
	shfl.sync.bfly.b32 %r2, %r0, 8, 0x101f, -1;
	mul.wide.u32 %rd1, %r0, 8;
	add.s64 %rd2, %rd0, %rd1;
	st.global.f32 [%rd2], %r1;
	st.global.f32 [%rd2+4], %r2;
	ret;
}
)";

emu::Program parse_or_fail(const std::string& text) {
  emu::Program p;
  std::string error;
  const bool parsed = emu::parse_program(text, &p, &error);
  INFO(error);
  REQUIRE(parsed);
  return p;
}

// A parameter block of one pointer and optionally one u32.
std::vector<std::uint8_t> params(const void* pointer, std::uint32_t count = 0) {
  std::vector<std::uint8_t> block(12);
  const auto address = reinterpret_cast<std::uint64_t>(pointer);
  std::memcpy(block.data(), &address, 8);
  std::memcpy(block.data() + 8, &count, 4);
  return block;
}

// A range check accepting exactly the bytes of `v`.
emu::GlobalRangeCheck inside(const std::vector<float>& v) {
  const auto begin = reinterpret_cast<std::uint64_t>(v.data()), end = begin + 4 * v.size();
  return [begin, end](std::uint64_t a, std::uint64_t n) { return a >= begin && a + n <= end; };
}

}  // namespace

TEST_CASE("the PTX emulator parses every module the backend emits", "[unit][cuda]") {
  int modules = 0;
  auto parses = [&](const std::string& name, const std::string& text) {
    emu::Program p;
    std::string error;
    const bool parsed = emu::parse_program(text, &p, &error);
    INFO(name << ": " << error);
    CHECK(parsed);
    ++modules;
    return p;
  };
  for (const ct::DiffCase& c : ct::differential_cases())
    CHECK(parses(c.name, cuda::emit_fused_ptx(c.spec, "sm_90")).entry == cuda::kFusedEntryName);
  for (const ct::RowCase& c : ct::row_cases())
    CHECK(parses(c.name, cuda::emit_row_ptx(c.spec, "sm_90")).shared_bytes > 0);
  for (const ct::MatmulCase& c : ct::matmul_cases())
    CHECK(parses(c.name, cuda::emit_matmul_ptx(c.spec, "sm_90")).entry == cuda::kMatmulEntryName);
  CHECK(modules > 70);
}

TEST_CASE("the PTX emulator names the line of what it cannot parse", "[unit][cuda]") {
  std::string text = kStoreKernel;
  text.replace(text.find("shl.b32"), 7, "shl.b16");
  emu::Program p;
  std::string error;
  CHECK_FALSE(emu::parse_program(text, &p, &error));
  CHECK(error.find("line 21: unsupported instruction 'shl.b16'") != std::string::npos);

  std::string unlabeled = kStoreKernel;
  unlabeled.replace(unlabeled.find("$done;"), 6, "$nowhere;");
  CHECK_FALSE(emu::parse_program(unlabeled, &p, &error));
  CHECK(error.find("undefined label '$nowhere'") != std::string::npos);
  CHECK_FALSE(emu::parse_program(".version 7.8\n.target sm_90\n", &p, &error));
  CHECK(error.find("no .entry") != std::string::npos);
}

TEST_CASE("the PTX emulator runs every block and thread of a launch", "[unit][cuda]") {
  const emu::Program p = parse_or_fail(kStoreKernel);
  std::vector<float> out(40, -1.0f);
  emu::Launch launch{3, 64, params(out.data(), 40)};
  // Every block writes the same 40 slots; the last block's values remain.
  const emu::Outcome o = emu::run_kernel(p, launch, inside(out));
  INFO(o.message);
  REQUIRE(o.ok());
  for (std::uint32_t i = 0; i < 40; ++i) CHECK(out[i] == static_cast<float>(2 * i + 2000));
  CHECK(o.instructions > 3 * 64 * 5);
}

TEST_CASE("the PTX emulator faults on a store outside every allocation", "[unit][cuda]") {
  const emu::Program p = parse_or_fail(kStoreKernel);
  std::vector<float> out(40, -1.0f);
  emu::Launch launch{1, 64, params(out.data(), 41)};  // one thread too many
  const emu::Outcome o = emu::run_kernel(p, launch, inside(out));
  CHECK(o.fault == emu::Fault::IllegalAddress);
  CHECK(o.message.find("st.global of 4 bytes") != std::string::npos);
  CHECK(o.message.find("thread 40") != std::string::npos);
}

TEST_CASE("the PTX emulator exchanges shfl.sync.bfly values across a whole warp", "[unit][cuda]") {
  const emu::Program p = parse_or_fail(kButterflyKernel);
  std::vector<float> out(64, -1.0f);
  emu::Launch launch{1, 64, params(out.data())};
  const emu::Outcome o = emu::run_kernel(p, launch, inside(out));
  INFO(o.message);
  REQUIRE(o.ok());
  for (int i = 0; i < 32; ++i) CHECK(out[static_cast<std::size_t>(i)] == 496.0f);  // 0 + ... + 31
  for (int i = 32; i < 64; ++i) CHECK(out[static_cast<std::size_t>(i)] == 1520.0f);  // 32 + ... + 63

  emu::Launch partial{1, 48, params(out.data())};  // the second warp has 16 threads
  const emu::Outcome bad = emu::run_kernel(p, partial, inside(out));
  CHECK(bad.fault == emu::Fault::LaunchFailed);
  CHECK(bad.message.find("fewer than 32 threads") != std::string::npos);
}

TEST_CASE("the PTX emulator refuses a barrier that threads exited before", "[unit][cuda]") {
  const emu::Program p = parse_or_fail(kBarrierAfterExitKernel);
  const emu::Outcome o = emu::run_kernel(p, emu::Launch{1, 32, {}}, [](std::uint64_t, std::uint64_t) { return false; });
  CHECK(o.fault == emu::Fault::LaunchFailed);
  CHECK(o.message.find("after 24 threads of the block exited") != std::string::npos);
  // With every thread below 8 the barrier fills.
  CHECK(emu::run_kernel(p, emu::Launch{1, 8, {}}, [](std::uint64_t, std::uint64_t) { return false; }).ok());
}

TEST_CASE("the PTX emulator stops a kernel that never ends", "[unit][cuda]") {
  const emu::Program p = parse_or_fail(
      ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n$spin:\n\tbra $spin;\n}\n");
  const emu::Outcome o = emu::run_kernel(p, emu::Launch{1, 1, {}}, nullptr, 1000);
  CHECK(o.fault == emu::Fault::Timeout);
  CHECK(o.message.find("line 7") != std::string::npos);
}

TEST_CASE("the PTX emulator follows the ISA on signed zeros, NaN, saturation, shifts and compares", "[unit][cuda]") {
  const emu::Program p = parse_or_fail(kEdgeKernel);
  std::vector<float> out(13, 0.0f);
  const emu::Outcome o = emu::run_kernel(p, emu::Launch{1, 1, params(out.data())}, inside(out));
  INFO(o.message);
  REQUIRE(o.ok());
  std::vector<std::uint32_t> bits(out.size());
  std::memcpy(bits.data(), out.data(), 4 * out.size());
  CHECK(bits[0] == 0x80000000u);   // min(+0, -0) = -0
  CHECK(bits[1] == 0x00000000u);   // max(-0, +0) = +0
  CHECK(bits[2] == 0x3f800000u);   // min(NaN, 1) = 1
  CHECK(bits[3] == 0x7fffffffu);   // max(NaN, NaN) = the canonical NaN
  CHECK(bits[4] == 0xc0000000u);   // copysign(a = -1, b = 2) = -2: a's sign on b
  CHECK(bits[5] == 0x7fffffffu);   // cvt.rni.s32 of 3e9 saturates
  CHECK(bits[6] == 0u);            // ... of NaN is 0
  CHECK(bits[7] == 2u);            // ... of 2.5 rounds to even
  CHECK(bits[8] == 0u);            // shl.b32 by 40
  CHECK(bits[9] == 0xffffffffu);   // shr.s32 of -8 by 40 fills with the sign
  CHECK(bits[10] == 0u);           // shr.u32 by 32
  CHECK(bits[11] == 0u);           // setp.lt with a NaN is false
  CHECK(bits[12] == 1u);           // setp.ltu with a NaN is true
}

TEST_CASE("the PTX emulator bounds shfl.sync.bfly by the clamp's segments", "[unit][cuda]") {
  const emu::Program p = parse_or_fail(kSegmentKernel);
  std::vector<float> out(64, 0.0f);
  const emu::Outcome o = emu::run_kernel(p, emu::Launch{1, 32, params(out.data())}, inside(out));
  INFO(o.message);
  REQUIRE(o.ok());
  for (std::uint32_t lane = 0; lane < 32; ++lane) {
    std::uint32_t across = 0, within = 0;
    std::memcpy(&across, &out[2 * lane], 4);
    std::memcpy(&within, &out[2 * lane + 1], 4);
    INFO("lane " << lane);
    CHECK(across == (lane < 16 ? lane : lane - 16));
    CHECK(within == (lane ^ 8u));
  }
}

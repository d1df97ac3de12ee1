// The tiled matrix-product kernel of ptx_matmul.h, written out as PTX.
#include "jit/cuda/ptx_matmul.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "jit/cuda/ptx_builder.h"
#include "jit/cuda/ptx_elementwise.h"

namespace canary::jit::cuda {
namespace {

constexpr int kPerThread = 4;        // outputs per thread along each axis
constexpr int kThreadsPerAxis = 16;  // kMatmulTile / kPerThread
constexpr int kLoads = static_cast<int>(kMatmulTile * kMatmulSliceK / kMatmulThreads);  // per thread per operand
static_assert(kThreadsPerAxis * kPerThread == kMatmulTile);
static_assert(kThreadsPerAxis * kThreadsPerAxis == static_cast<int>(kMatmulThreads));
static_assert(kMatmulSliceK == kThreadsPerAxis, "a thread loads A's slice at k = tx");
constexpr int kTileBytes = static_cast<int>(kMatmulTile * kMatmulSliceK) * 4;

std::string reg(PtxF r) { return ptx_reg(r); }
std::string reg(PtxI r) { return ptx_reg(r); }
std::string reg(PtxL r) { return ptx_reg(r); }
std::string reg(PtxP r) { return ptx_reg(r); }

class MatmulEmitter {
 public:
  explicit MatmulEmitter(const MatmulSpec& spec) : spec_(spec) {}

  std::string body() {
    read_parameters();
    locate_block();
    prepare_staging();
    for (auto& row : acc_)
      for (PtxF& v : row) {
        v = b_.new_f();
        b_.emit("mov.f32 " + reg(v) + ", 0f00000000");
      }
    const PtxI k0 = b_.immediate_u32(0), step = b_.immediate_u32(static_cast<std::uint32_t>(kMatmulSliceK));
    b_.strided_loop(k0, k_, step, "kslice", [&] { emit_slice(k0); });
    store_results();
    return "\t.shared .align 16 .f32 canary_a_tile[" + std::to_string(kTileBytes / 4) + "];\n" +
           "\t.shared .align 16 .f32 canary_b_tile[" + std::to_string(kTileBytes / 4) + "];\n" + b_.declarations() +
           b_.body() + "\tret;\n";
  }

 private:
  void read_parameters() {
    a_ = b_.param_pointer("a");
    bmat_ = b_.param_pointer("b");
    if (spec_.has_bias) bias_ = b_.param_pointer("bias");
    c_ = b_.param_pointer("c");
    stride_a_ = b_.param_s64("stride_a");
    stride_b_ = b_.param_s64("stride_b");
    m_ = b_.param_u32("m");
    n_ = b_.param_u32("n");
    k_ = b_.param_u32("k");
  }

  // Which batch entry and tile this block computes, and the thread's place in it.
  void locate_block() {
    const PtxI tiles_n = b_.param_u32("tiles_n"), magic_n = b_.param_u32("magic_n"), shift_n = b_.param_u32("shift_n");
    const PtxI tiles_mn = b_.param_u32("tiles_mn"), magic_mn = b_.param_u32("magic_mn");
    const PtxI shift_mn = b_.param_u32("shift_mn");
    tid_ = b_.new_i();
    const PtxI block = b_.new_i();
    b_.emit("mov.u32 " + reg(tid_) + ", %tid.x");
    b_.emit("mov.u32 " + reg(block) + ", %ctaid.x");
    tx_ = b_.new_i();
    ty_ = b_.new_i();
    b_.emit("and.b32 " + reg(tx_) + ", " + reg(tid_) + ", " + std::to_string(kThreadsPerAxis - 1));
    b_.emit("shr.u32 " + reg(ty_) + ", " + reg(tid_) + ", 4");
    const PtxI batch = b_.divide(block, magic_mn, shift_mn);
    const PtxI in_batch = b_.remainder(block, batch, tiles_mn);
    const PtxI tile_m = b_.divide(in_batch, magic_n, shift_n);
    const PtxI tile_n = b_.remainder(in_batch, tile_m, tiles_n);
    row0_ = b_.new_i();
    col0_ = b_.new_i();
    b_.emit("shl.b32 " + reg(row0_) + ", " + reg(tile_m) + ", 6");
    b_.emit("shl.b32 " + reg(col0_) + ", " + reg(tile_n) + ", 6");
    // This batch entry's A, B and C.
    const PtxL batch64 = b_.widen(batch);
    a_ = offset_by(a_, batch64, stride_a_);
    bmat_ = offset_by(bmat_, batch64, stride_b_);
    const PtxL mn = b_.new_l();
    b_.emit("mul.wide.u32 " + reg(mn) + ", " + reg(m_) + ", " + reg(n_));
    c_ = offset_by(c_, batch64, mn);
  }

  // base + 4 * count * stride (64-bit).
  PtxL offset_by(PtxL base, PtxL count, PtxL stride) {
    const PtxL elems = b_.new_l(), out = b_.new_l();
    b_.emit("mul.lo.s64 " + reg(elems) + ", " + reg(count) + ", " + reg(stride));
    b_.emit("shl.b64 " + reg(elems) + ", " + reg(elems) + ", 2");
    b_.emit("add.s64 " + reg(out) + ", " + reg(base) + ", " + reg(elems));
    return out;
  }

  // base + 4 * (major * minor_dim + minor), for 32-bit indices.
  PtxL element_address(PtxL base, PtxI major, PtxI minor_dim, PtxI minor) {
    const PtxL index = b_.new_l(), address = b_.new_l();
    b_.emit("mul.wide.u32 " + reg(index) + ", " + reg(major) + ", " + reg(minor_dim));
    const PtxL minor64 = b_.widen(minor);
    b_.emit("add.s64 " + reg(index) + ", " + reg(index) + ", " + reg(minor64));
    b_.emit("shl.b64 " + reg(index) + ", " + reg(index) + ", 2");
    b_.emit("add.s64 " + reg(address) + ", " + reg(base) + ", " + reg(index));
    return address;
  }

  PtxI add_immediate(PtxI v, std::uint32_t imm) {
    const PtxI out = b_.new_i();
    b_.emit("add.u32 " + reg(out) + ", " + reg(v) + ", " + std::to_string(imm));
    return out;
  }

  PtxP less(PtxI v, PtxI limit) {
    const PtxP p = b_.new_p();
    b_.emit("setp.lt.u32 " + reg(p) + ", " + reg(v) + ", " + reg(limit));
    return p;
  }

  PtxP both(PtxP x, PtxP y) {
    const PtxP p = b_.new_p();
    b_.emit("and.pred " + reg(p) + ", " + reg(x) + ", " + reg(y));
    return p;
  }

  // What stays fixed over the K loop: which rows of A and columns of B this
  // thread stages (load l of A: row ty + 16 l at k = tx; load l of B:
  // k = tid / 64 + 4 l at column tid % 64), and the shared addresses.
  void prepare_staging() {
    const PtxI first_row = b_.new_i();
    b_.emit("add.u32 " + reg(first_row) + ", " + reg(row0_) + ", " + reg(ty_));
    for (std::size_t l = 0; l < a_rows_.size(); ++l) {
      a_rows_[l] = add_immediate(first_row, static_cast<std::uint32_t>(kThreadsPerAxis * l));
      a_rows_ok_[l] = less(a_rows_[l], m_);
    }
    const PtxI col_in_tile = b_.new_i();
    b_.emit("and.b32 " + reg(col_in_tile) + ", " + reg(tid_) + ", " + std::to_string(kMatmulTile - 1));
    b_col_ = b_.new_i();
    b_.emit("add.u32 " + reg(b_col_) + ", " + reg(col0_) + ", " + reg(col_in_tile));
    b_col_ok_ = less(b_col_, n_);
    b_k0_ = b_.new_i();
    b_.emit("shr.u32 " + reg(b_k0_) + ", " + reg(tid_) + ", 6");

    const PtxI a_tile = b_.new_i(), b_tile = b_.new_i();
    b_.emit("mov.u32 " + reg(a_tile) + ", canary_a_tile");
    b_.emit("mov.u32 " + reg(b_tile) + ", canary_b_tile");
    // A is staged k-major: element (row r, k kk) at 4 (kk 64 + r).
    a_store_ = b_.new_i();
    b_.emit("mad.lo.u32 " + reg(a_store_) + ", " + reg(tx_) + ", " + std::to_string(kMatmulTile) + ", " + reg(ty_));
    b_.emit("shl.b32 " + reg(a_store_) + ", " + reg(a_store_) + ", 2");
    b_.emit("add.u32 " + reg(a_store_) + ", " + reg(a_store_) + ", " + reg(a_tile));
    // B: element (k kk, column c) at 4 (kk 64 + c) = 4 (tid + 256 l).
    b_store_ = b_.new_i();
    b_.emit("shl.b32 " + reg(b_store_) + ", " + reg(tid_) + ", 2");
    b_.emit("add.u32 " + reg(b_store_) + ", " + reg(b_store_) + ", " + reg(b_tile));
    // The reads of the multiply: A at row ty + 16 i, B at column tx + 16 j.
    a_read_ = b_.new_i();
    b_.emit("shl.b32 " + reg(a_read_) + ", " + reg(ty_) + ", 2");
    b_.emit("add.u32 " + reg(a_read_) + ", " + reg(a_read_) + ", " + reg(a_tile));
    b_read_ = b_.new_i();
    b_.emit("shl.b32 " + reg(b_read_) + ", " + reg(tx_) + ", 2");
    b_.emit("add.u32 " + reg(b_read_) + ", " + reg(b_read_) + ", " + reg(b_tile));
  }

  // value = ok ? *address : 0, then stored at shared[store + offset].
  void stage(PtxP ok, PtxL address, PtxI store, int offset) {
    const PtxF v = b_.new_f();
    b_.emit("mov.f32 " + reg(v) + ", 0f00000000");
    b_.emit("@" + reg(ok) + " ld.global.nc.f32 " + reg(v) + ", [" + reg(address) + "]");
    b_.emit("st.shared.f32 [" + reg(store) + "+" + std::to_string(offset) + "], " + reg(v));
  }

  // One K slice [k0, k0 + 16): stage, wait, multiply, wait.
  void emit_slice(PtxI k0) {
    const PtxI a_k = b_.new_i();
    b_.emit("add.u32 " + reg(a_k) + ", " + reg(k0) + ", " + reg(tx_));
    const PtxP a_k_ok = less(a_k, k_);
    for (int l = 0; l < kLoads; ++l) {
      const PtxI row = a_rows_[static_cast<std::size_t>(l)];
      const PtxP ok = both(a_rows_ok_[static_cast<std::size_t>(l)], a_k_ok);
      const PtxL address = spec_.trans_a ? element_address(a_, a_k, m_, row) : element_address(a_, row, k_, a_k);
      stage(ok, address, a_store_, 16 * 4 * l);
    }
    for (int l = 0; l < kLoads; ++l) {
      const PtxI k = b_.new_i();
      b_.emit("add.u32 " + reg(k) + ", " + reg(k0) + ", " + reg(b_k0_));
      b_.emit("add.u32 " + reg(k) + ", " + reg(k) + ", " + std::to_string(4 * l));
      const PtxP ok = both(b_col_ok_, less(k, k_));
      const PtxL address = spec_.trans_b ? element_address(bmat_, b_col_, k_, k) : element_address(bmat_, k, n_, b_col_);
      stage(ok, address, b_store_, static_cast<int>(kMatmulThreads) * 4 * l);
    }
    b_.emit("bar.sync 0");
    for (int kk = 0; kk < static_cast<int>(kMatmulSliceK); ++kk) {
      std::array<PtxF, kPerThread> a{}, bv{};
      for (int i = 0; i < kPerThread; ++i) {
        a[static_cast<std::size_t>(i)] = b_.new_f();
        b_.emit("ld.shared.f32 " + reg(a[static_cast<std::size_t>(i)]) + ", [" + reg(a_read_) + "+" +
                std::to_string(4 * (kk * static_cast<int>(kMatmulTile) + kThreadsPerAxis * i)) + "]");
      }
      for (int j = 0; j < kPerThread; ++j) {
        bv[static_cast<std::size_t>(j)] = b_.new_f();
        b_.emit("ld.shared.f32 " + reg(bv[static_cast<std::size_t>(j)]) + ", [" + reg(b_read_) + "+" +
                std::to_string(4 * (kk * static_cast<int>(kMatmulTile) + kThreadsPerAxis * j)) + "]");
      }
      for (int i = 0; i < kPerThread; ++i)
        for (int j = 0; j < kPerThread; ++j) {
          const PtxF acc = acc_[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
          b_.emit("fma.rn.f32 " + reg(acc) + ", " + reg(a[static_cast<std::size_t>(i)]) + ", " +
                  reg(bv[static_cast<std::size_t>(j)]) + ", " + reg(acc));
        }
    }
    b_.emit("bar.sync 0");
  }

  // Each owned output inside C: scaled, biased and stored.
  void store_results() {
    for (int i = 0; i < kPerThread; ++i) {
      const PtxI row = b_.new_i();
      b_.emit("add.u32 " + reg(row) + ", " + reg(row0_) + ", " + reg(ty_));
      b_.emit("add.u32 " + reg(row) + ", " + reg(row) + ", " + std::to_string(kThreadsPerAxis * i));
      const PtxP row_ok = less(row, m_);
      for (int j = 0; j < kPerThread; ++j) {
        const PtxI col = b_.new_i();
        b_.emit("add.u32 " + reg(col) + ", " + reg(col0_) + ", " + reg(tx_));
        b_.emit("add.u32 " + reg(col) + ", " + reg(col) + ", " + std::to_string(kThreadsPerAxis * j));
        const PtxP ok = both(row_ok, less(col, n_));
        PtxF v = acc_[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
        if (spec_.alpha != 1.0f) {
          const PtxF scaled = b_.new_f();
          b_.emit("mul.rn.f32 " + reg(scaled) + ", " + reg(v) + ", " + ptx_f32_literal(spec_.alpha));
          v = scaled;
        }
        if (spec_.has_bias) {
          const PtxL address = b_.new_l(), offset = b_.widen(col);
          b_.emit("shl.b64 " + reg(offset) + ", " + reg(offset) + ", 2");
          b_.emit("add.s64 " + reg(address) + ", " + reg(bias_) + ", " + reg(offset));
          const PtxF bias = b_.new_f(), sum = b_.new_f();
          b_.emit("mov.f32 " + reg(bias) + ", 0f00000000");
          b_.emit("@" + reg(ok) + " ld.global.nc.f32 " + reg(bias) + ", [" + reg(address) + "]");
          b_.emit("add.rn.f32 " + reg(sum) + ", " + reg(v) + ", " + reg(bias));
          v = sum;
        }
        const PtxL address = element_address(c_, row, n_, col);
        b_.emit("@" + reg(ok) + " st.global.f32 [" + reg(address) + "], " + reg(v));
      }
    }
  }

  const MatmulSpec& spec_;
  PtxBuilder b_;
  PtxL a_, bmat_, bias_, c_, stride_a_, stride_b_;
  PtxI m_, n_, k_, tid_, tx_, ty_, row0_, col0_;
  std::array<PtxI, kLoads> a_rows_{};
  std::array<PtxP, kLoads> a_rows_ok_{};
  PtxI b_col_, b_k0_, a_store_, b_store_, a_read_, b_read_;
  PtxP b_col_ok_;
  std::array<std::array<PtxF, kPerThread>, kPerThread> acc_{};
};

}  // namespace

std::string MatmulSpec::key() const {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &alpha, sizeof bits);
  return "mm ta=" + std::to_string(trans_a) + " tb=" + std::to_string(trans_b) + " bias=" + std::to_string(has_bias) +
         " alpha=" + std::to_string(bits);
}

MatmulLaunchScalars make_matmul_scalars(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k) {
  MatmulLaunchScalars s;
  s.m = static_cast<std::uint32_t>(m);
  s.n = static_cast<std::uint32_t>(n);
  s.k = static_cast<std::uint32_t>(k);
  const std::int64_t tiles_m = (m + kMatmulTile - 1) / kMatmulTile, tiles_n = (n + kMatmulTile - 1) / kMatmulTile;
  s.tiles_n = static_cast<std::uint32_t>(std::max<std::int64_t>(tiles_n, 1));
  s.tiles_mn = static_cast<std::uint32_t>(std::max<std::int64_t>(tiles_m * tiles_n, 1));
  const Divider dn = make_divider(s.tiles_n), dmn = make_divider(s.tiles_mn);
  s.magic_n = dn.magic;
  s.shift_n = dn.shift;
  s.magic_mn = dmn.magic;
  s.shift_mn = dmn.shift;
  s.blocks = static_cast<std::uint64_t>(batch) * static_cast<std::uint64_t>(tiles_m * tiles_n);
  return s;
}

std::string emit_matmul_ptx(const MatmulSpec& spec, const std::string& target) {
  const std::vector<std::string> params = {
      ".param .u64 a",       ".param .u64 b",       ".param .u64 bias",    ".param .u64 c",
      ".param .s64 stride_a", ".param .s64 stride_b", ".param .u32 m",      ".param .u32 n",
      ".param .u32 k",       ".param .u32 tiles_n", ".param .u32 magic_n", ".param .u32 shift_n",
      ".param .u32 tiles_mn", ".param .u32 magic_mn", ".param .u32 shift_mn"};
  return ptx_module("Canary tiled matmul: " + spec.key(), target, kMatmulEntryName, params,
                    MatmulEmitter(spec).body());
}

}  // namespace canary::jit::cuda

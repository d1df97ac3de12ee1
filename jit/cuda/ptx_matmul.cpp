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
static_assert(kLoads == kPerThread, "a thread stages A's rows for the rows of C it owns");
constexpr int kTileBytes = static_cast<int>(kMatmulTile * kMatmulSliceK) * 4;

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
        b_.emit("mov.f32 " + ptx_reg(v) + ", 0f00000000");
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
    b_.emit("mov.u32 " + ptx_reg(tid_) + ", %tid.x");
    b_.emit("mov.u32 " + ptx_reg(block) + ", %ctaid.x");
    tx_ = b_.new_i();
    ty_ = b_.new_i();
    b_.emit("and.b32 " + ptx_reg(tx_) + ", " + ptx_reg(tid_) + ", " + std::to_string(kThreadsPerAxis - 1));
    b_.emit("shr.u32 " + ptx_reg(ty_) + ", " + ptx_reg(tid_) + ", 4");
    const PtxI batch = b_.divide(block, magic_mn, shift_mn);
    const PtxI in_batch = b_.remainder(block, batch, tiles_mn);
    const PtxI tile_m = b_.divide(in_batch, magic_n, shift_n);
    const PtxI tile_n = b_.remainder(in_batch, tile_m, tiles_n);
    row0_ = b_.new_i();
    col0_ = b_.new_i();
    b_.emit("shl.b32 " + ptx_reg(row0_) + ", " + ptx_reg(tile_m) + ", 6");
    b_.emit("shl.b32 " + ptx_reg(col0_) + ", " + ptx_reg(tile_n) + ", 6");
    // This batch entry's A, B and C.
    const PtxL batch64 = b_.widen(batch);
    a_ = offset_by(a_, batch64, stride_a_);
    bmat_ = offset_by(bmat_, batch64, stride_b_);
    const PtxL mn = b_.new_l();
    b_.emit("mul.wide.u32 " + ptx_reg(mn) + ", " + ptx_reg(m_) + ", " + ptx_reg(n_));
    c_ = offset_by(c_, batch64, mn);
  }

  // base + 4 * count * stride (64-bit).
  PtxL offset_by(PtxL base, PtxL count, PtxL stride) {
    const PtxL elems = b_.new_l(), out = b_.new_l();
    b_.emit("mul.lo.s64 " + ptx_reg(elems) + ", " + ptx_reg(count) + ", " + ptx_reg(stride));
    b_.emit("shl.b64 " + ptx_reg(elems) + ", " + ptx_reg(elems) + ", 2");
    b_.emit("add.s64 " + ptx_reg(out) + ", " + ptx_reg(base) + ", " + ptx_reg(elems));
    return out;
  }

  // base + 4 * (major * minor_dim + minor), for 32-bit indices.
  PtxL element_address(PtxL base, PtxI major, PtxI minor_dim, PtxI minor) {
    const PtxL index = b_.new_l(), address = b_.new_l();
    b_.emit("mul.wide.u32 " + ptx_reg(index) + ", " + ptx_reg(major) + ", " + ptx_reg(minor_dim));
    const PtxL minor64 = b_.widen(minor);
    b_.emit("add.s64 " + ptx_reg(index) + ", " + ptx_reg(index) + ", " + ptx_reg(minor64));
    b_.emit("shl.b64 " + ptx_reg(index) + ", " + ptx_reg(index) + ", 2");
    b_.emit("add.s64 " + ptx_reg(address) + ", " + ptx_reg(base) + ", " + ptx_reg(index));
    return address;
  }

  PtxI add_immediate(PtxI v, std::uint32_t imm) {
    const PtxI out = b_.new_i();
    b_.emit("add.u32 " + ptx_reg(out) + ", " + ptx_reg(v) + ", " + std::to_string(imm));
    return out;
  }

  PtxP less(PtxI v, PtxI limit) {
    const PtxP p = b_.new_p();
    b_.emit("setp.lt.u32 " + ptx_reg(p) + ", " + ptx_reg(v) + ", " + ptx_reg(limit));
    return p;
  }

  PtxP both(PtxP x, PtxP y) {
    const PtxP p = b_.new_p();
    b_.emit("and.pred " + ptx_reg(p) + ", " + ptx_reg(x) + ", " + ptx_reg(y));
    return p;
  }

  // What stays fixed over the K loop: which rows of A and columns of B this
  // thread stages (load l of A: row ty + 16 l at k = tx, the rows of C it
  // owns; load l of B: k = tid / 64 + 4 l at column tid % 64), and the
  // shared addresses.
  void prepare_staging() {
    const PtxI first_row = b_.new_i();
    b_.emit("add.u32 " + ptx_reg(first_row) + ", " + ptx_reg(row0_) + ", " + ptx_reg(ty_));
    for (std::size_t l = 0; l < rows_.size(); ++l) {
      rows_[l] = add_immediate(first_row, static_cast<std::uint32_t>(kThreadsPerAxis * l));
      rows_ok_[l] = less(rows_[l], m_);
    }
    const PtxI col_in_tile = b_.new_i();
    b_.emit("and.b32 " + ptx_reg(col_in_tile) + ", " + ptx_reg(tid_) + ", " + std::to_string(kMatmulTile - 1));
    b_col_ = b_.new_i();
    b_.emit("add.u32 " + ptx_reg(b_col_) + ", " + ptx_reg(col0_) + ", " + ptx_reg(col_in_tile));
    b_col_ok_ = less(b_col_, n_);
    b_k0_ = b_.new_i();
    b_.emit("shr.u32 " + ptx_reg(b_k0_) + ", " + ptx_reg(tid_) + ", 6");

    const PtxI a_tile = b_.new_i(), b_tile = b_.new_i();
    b_.emit("mov.u32 " + ptx_reg(a_tile) + ", canary_a_tile");
    b_.emit("mov.u32 " + ptx_reg(b_tile) + ", canary_b_tile");
    // A is staged k-major: element (row r, k kk) at 4 (kk 64 + r).
    a_store_ = b_.new_i();
    b_.emit("mad.lo.u32 " + ptx_reg(a_store_) + ", " + ptx_reg(tx_) + ", " + std::to_string(kMatmulTile) + ", " + ptx_reg(ty_));
    b_.emit("shl.b32 " + ptx_reg(a_store_) + ", " + ptx_reg(a_store_) + ", 2");
    b_.emit("add.u32 " + ptx_reg(a_store_) + ", " + ptx_reg(a_store_) + ", " + ptx_reg(a_tile));
    // B: element (k kk, column c) at 4 (kk 64 + c) = 4 (tid + 256 l).
    b_store_ = b_.new_i();
    b_.emit("shl.b32 " + ptx_reg(b_store_) + ", " + ptx_reg(tid_) + ", 2");
    b_.emit("add.u32 " + ptx_reg(b_store_) + ", " + ptx_reg(b_store_) + ", " + ptx_reg(b_tile));
    // The reads of the multiply: A at row ty + 16 i, B at column tx + 16 j.
    a_read_ = b_.new_i();
    b_.emit("shl.b32 " + ptx_reg(a_read_) + ", " + ptx_reg(ty_) + ", 2");
    b_.emit("add.u32 " + ptx_reg(a_read_) + ", " + ptx_reg(a_read_) + ", " + ptx_reg(a_tile));
    b_read_ = b_.new_i();
    b_.emit("shl.b32 " + ptx_reg(b_read_) + ", " + ptx_reg(tx_) + ", 2");
    b_.emit("add.u32 " + ptx_reg(b_read_) + ", " + ptx_reg(b_read_) + ", " + ptx_reg(b_tile));
  }

  // value = ok ? *address : 0, then stored at shared[store + offset].
  void stage(PtxP ok, PtxL address, PtxI store, int offset) {
    const PtxF v = b_.new_f();
    b_.emit("mov.f32 " + ptx_reg(v) + ", 0f00000000");
    b_.emit("@" + ptx_reg(ok) + " ld.global.nc.f32 " + ptx_reg(v) + ", [" + ptx_reg(address) + "]");
    b_.emit("st.shared.f32 [" + ptx_reg(store) + "+" + std::to_string(offset) + "], " + ptx_reg(v));
  }

  // One K slice [k0, k0 + 16): stage, wait, multiply, wait.
  void emit_slice(PtxI k0) {
    const PtxI a_k = b_.new_i();
    b_.emit("add.u32 " + ptx_reg(a_k) + ", " + ptx_reg(k0) + ", " + ptx_reg(tx_));
    const PtxP a_k_ok = less(a_k, k_);
    for (int l = 0; l < kLoads; ++l) {
      const PtxI row = rows_[static_cast<std::size_t>(l)];
      const PtxP ok = both(rows_ok_[static_cast<std::size_t>(l)], a_k_ok);
      const PtxL address = spec_.trans_a ? element_address(a_, a_k, m_, row) : element_address(a_, row, k_, a_k);
      stage(ok, address, a_store_, 16 * 4 * l);
    }
    const PtxI b_k = b_.new_i();
    b_.emit("add.u32 " + ptx_reg(b_k) + ", " + ptx_reg(k0) + ", " + ptx_reg(b_k0_));
    for (int l = 0; l < kLoads; ++l) {
      const PtxI k = add_immediate(b_k, static_cast<std::uint32_t>(4 * l));
      const PtxP ok = both(b_col_ok_, less(k, k_));
      const PtxL address = spec_.trans_b ? element_address(bmat_, b_col_, k_, k) : element_address(bmat_, k, n_, b_col_);
      stage(ok, address, b_store_, static_cast<int>(kMatmulThreads) * 4 * l);
    }
    b_.emit("bar.sync 0");
    for (int kk = 0; kk < static_cast<int>(kMatmulSliceK); ++kk) {
      std::array<PtxF, kPerThread> a{}, bv{};
      for (int i = 0; i < kPerThread; ++i) {
        a[static_cast<std::size_t>(i)] = b_.new_f();
        b_.emit("ld.shared.f32 " + ptx_reg(a[static_cast<std::size_t>(i)]) + ", [" + ptx_reg(a_read_) + "+" +
                std::to_string(4 * (kk * static_cast<int>(kMatmulTile) + kThreadsPerAxis * i)) + "]");
      }
      for (int j = 0; j < kPerThread; ++j) {
        bv[static_cast<std::size_t>(j)] = b_.new_f();
        b_.emit("ld.shared.f32 " + ptx_reg(bv[static_cast<std::size_t>(j)]) + ", [" + ptx_reg(b_read_) + "+" +
                std::to_string(4 * (kk * static_cast<int>(kMatmulTile) + kThreadsPerAxis * j)) + "]");
      }
      for (int i = 0; i < kPerThread; ++i)
        for (int j = 0; j < kPerThread; ++j) {
          const PtxF acc = acc_[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
          b_.emit("fma.rn.f32 " + ptx_reg(acc) + ", " + ptx_reg(a[static_cast<std::size_t>(i)]) + ", " +
                  ptx_reg(bv[static_cast<std::size_t>(j)]) + ", " + ptx_reg(acc));
        }
    }
    b_.emit("bar.sync 0");
  }

  // Each owned output inside C: scaled, biased and stored. The thread's
  // rows are the ones it staged A for; its columns and their bias values
  // are worked out once each.
  void store_results() {
    const PtxI first_col = b_.new_i();
    b_.emit("add.u32 " + ptx_reg(first_col) + ", " + ptx_reg(col0_) + ", " + ptx_reg(tx_));
    std::array<PtxI, kPerThread> cols{};
    std::array<PtxP, kPerThread> cols_ok{};
    std::array<PtxF, kPerThread> bias{};
    for (std::size_t j = 0; j < cols.size(); ++j) {
      cols[j] = add_immediate(first_col, static_cast<std::uint32_t>(kThreadsPerAxis * j));
      cols_ok[j] = less(cols[j], n_);
      if (!spec_.has_bias) continue;
      const PtxL offset = b_.widen(cols[j]), address = b_.new_l();
      b_.emit("shl.b64 " + ptx_reg(offset) + ", " + ptx_reg(offset) + ", 2");
      b_.emit("add.s64 " + ptx_reg(address) + ", " + ptx_reg(bias_) + ", " + ptx_reg(offset));
      bias[j] = b_.new_f();
      b_.emit("mov.f32 " + ptx_reg(bias[j]) + ", 0f00000000");
      b_.emit("@" + ptx_reg(cols_ok[j]) + " ld.global.nc.f32 " + ptx_reg(bias[j]) + ", [" + ptx_reg(address) + "]");
    }
    for (std::size_t i = 0; i < rows_.size(); ++i)
      for (std::size_t j = 0; j < cols.size(); ++j) {
        const PtxP ok = both(rows_ok_[i], cols_ok[j]);
        PtxF v = acc_[i][j];
        if (spec_.alpha != 1.0f) {
          const PtxF scaled = b_.new_f();
          b_.emit("mul.rn.f32 " + ptx_reg(scaled) + ", " + ptx_reg(v) + ", " + ptx_f32_literal(spec_.alpha));
          v = scaled;
        }
        if (spec_.has_bias) {
          const PtxF sum = b_.new_f();
          b_.emit("add.rn.f32 " + ptx_reg(sum) + ", " + ptx_reg(v) + ", " + ptx_reg(bias[j]));
          v = sum;
        }
        const PtxL address = element_address(c_, rows_[i], n_, cols[j]);
        b_.emit("@" + ptx_reg(ok) + " st.global.f32 [" + ptx_reg(address) + "], " + ptx_reg(v));
      }
  }

  const MatmulSpec& spec_;
  PtxBuilder b_;
  PtxL a_, bmat_, bias_, c_, stride_a_, stride_b_;
  PtxI m_, n_, k_, tid_, tx_, ty_, row0_, col0_;
  std::array<PtxI, kLoads> rows_{};
  std::array<PtxP, kLoads> rows_ok_{};
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

// The arithmetic precision of the oneDNN MatMul, Gemm and Conv kernels on the
// calling thread: exact f32, or bf16 operands with f32 accumulation.
//
// Under MatmulPrecision::BF16 both operands of every dot product (activations
// and weights) are rounded to bf16, to nearest with ties to even, and the
// products are summed in f32; bias, alpha, beta, C and the output stay f32.
// f32 denormals round to signed zero, as the native bf16 instructions treat
// them. Where the host computes bf16 dot products natively (avx512_bf16 or
// AMX) the operands are converted to bf16 and run on bf16 primitives;
// elsewhere they are rounded into f32 copies and run on the f32 primitives,
// so both give the same values up to f32 summation order (kernels/README.md).
//
// This header includes no oneDNN header, so the JIT can set the scope.
#pragma once

#include <cstdint>

namespace canary::kernels {

enum class MatmulPrecision : std::uint8_t { F32, BF16 };

// The calling thread's precision (F32 until a scope changes it).
MatmulPrecision current_matmul_precision();

// While alive, the oneDNN MatMul, Gemm and Conv kernels called on the
// constructing thread run at `precision`; the destructor restores the
// previous precision. Other threads are unaffected.
class ScopedMatmulPrecision {
 public:
  explicit ScopedMatmulPrecision(MatmulPrecision precision);
  ~ScopedMatmulPrecision();
  ScopedMatmulPrecision(const ScopedMatmulPrecision&) = delete;
  ScopedMatmulPrecision& operator=(const ScopedMatmulPrecision&) = delete;

 private:
  MatmulPrecision previous_;
};

// True when oneDNN computes bf16 dot products natively on this host (its
// effective ISA has avx512_bf16 or AMX); probed once.
bool host_has_native_bf16();

// True when BF16 runs on bf16 primitives on the calling thread: the host has
// native bf16 and no ScopedBf16Emulation is alive.
bool native_bf16_enabled();

// While alive, BF16 is emulated (rounded f32 copies on f32 primitives) on the
// constructing thread even where the host has native bf16, so both paths can
// be tested and measured on one machine; the destructor restores the previous state.
class ScopedBf16Emulation {
 public:
  ScopedBf16Emulation();
  ~ScopedBf16Emulation();
  ScopedBf16Emulation(const ScopedBf16Emulation&) = delete;
  ScopedBf16Emulation& operator=(const ScopedBf16Emulation&) = delete;

 private:
  bool previous_;
};

}  // namespace canary::kernels

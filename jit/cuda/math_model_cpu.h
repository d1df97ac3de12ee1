// CpuMath: the math machine of ptx_math_ops.h on host floats. Every
// IEEE-rounded PTX instruction (add/sub/mul/fma/div/rcp/sqrt .rn, cvt.rni,
// min/max, selp) has a bit-exact host counterpart here, so an exact routine
// evaluated with CpuMath produces the bits the GPU will (NaN payloads aside).
// The hardware approximations (ex2/lg2/rcp .approx, div.full) are modelled by
// libm and are not bit-exact. Used by tests and as documentation.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace canary::jit::cuda {

struct CpuMath {
  using F = float;
  using I = std::int32_t;
  using P = bool;

  F c(float v) const { return v; }
  I ic(std::int32_t v) const { return v; }

  F add(F a, F b) const { return a + b; }
  F sub(F a, F b) const { return a - b; }
  F mul(F a, F b) const { return a * b; }
  F div(F a, F b) const { return a / b; }
  F div_approx(F a, F b) const { return a / b; }
  F min_num(F a, F b) const { return std::fmin(a, b); }
  F max_num(F a, F b) const { return std::fmax(a, b); }
  F fma(F a, F b, F c) const { return std::fma(a, b, c); }
  F rcp(F a) const { return 1.0f / a; }
  F rcp_approx(F a) const { return 1.0f / a; }
  F sqrt(F a) const { return std::sqrt(a); }
  F neg(F a) const { return -a; }
  F abs(F a) const { return std::fabs(a); }
  F rint(F a) const { return std::nearbyint(a); }
  F floor(F a) const { return std::floor(a); }
  F ceil(F a) const { return std::ceil(a); }
  F ex2_approx(F a) const { return std::exp2(a); }
  F lg2_approx(F a) const { return std::log2(a); }
  F copysign(F mag, F sgn) const { return std::copysign(mag, sgn); }

  P lt(F a, F b) const { return a < b; }
  P gt(F a, F b) const { return a > b; }
  P le(F a, F b) const { return a <= b; }
  P ge(F a, F b) const { return a >= b; }
  P eq(F a, F b) const { return a == b; }
  P is_nan(F a) const { return std::isnan(a); }
  P is_finite(F a) const { return std::isfinite(a); }
  P p_not(P a) const { return !a; }
  P p_or(P a, P b) const { return a || b; }
  F select(P p, F a, F b) const { return p ? a : b; }
  I iselect(P p, I a, I b) const { return p ? a : b; }

  I bits(F a) const {
    I i;
    std::memcpy(&i, &a, sizeof i);
    return i;
  }
  F from_bits(I a) const {
    F f;
    std::memcpy(&f, &a, sizeof f);
    return f;
  }
  // cvt.rni.s32.f32 saturates and maps NaN to 0.
  I f2i(F a) const {
    if (std::isnan(a)) return 0;
    const float r = std::nearbyint(a);
    if (r >= 2147483647.0f) return INT32_MAX;
    if (r <= -2147483648.0f) return INT32_MIN;
    return static_cast<I>(r);
  }
  F i2f(I a) const { return static_cast<F>(a); }
  I iadd(I a, I b) const { return static_cast<I>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b)); }
  I isub(I a, I b) const { return static_cast<I>(static_cast<std::uint32_t>(a) - static_cast<std::uint32_t>(b)); }
  I iand(I a, I b) const { return a & b; }
  I ishl(I a, int n) const { return static_cast<I>(static_cast<std::uint32_t>(a) << n); }
  I isra(I a, int n) const { return a >> n; }
};

}  // namespace canary::jit::cuda

// The matrix-product catalog, its data, the fp64 reference, the host model of
// the kernel and the comparison (matmul_cases.h).
#include "tests/cuda/matmul_cases.h"

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

namespace canary::jit::cuda_test {
namespace {

MatmulCase make(std::string name, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k) {
  MatmulCase c;
  c.name = std::move(name);
  c.dims.batch = batch;
  c.dims.m = m;
  c.dims.n = n;
  c.dims.k = k;
  c.dims.stride_a = m * k;
  c.dims.stride_b = k * n;
  return c;
}

// Offsets of op(A)[row, k] and op(B)[k, col] in batch entry e.
std::int64_t a_offset(const MatmulCase& c, std::int64_t e, std::int64_t row, std::int64_t k) {
  const cuda::MatmulDims& d = c.dims;
  return e * d.stride_a + (c.spec.trans_a ? k * d.m + row : row * d.k + k);
}
std::int64_t b_offset(const MatmulCase& c, std::int64_t e, std::int64_t k, std::int64_t col) {
  const cuda::MatmulDims& d = c.dims;
  return e * d.stride_b + (c.spec.trans_b ? col * d.k + k : k * d.n + col);
}

std::size_t out_index(const cuda::MatmulDims& d, std::int64_t e, std::int64_t row, std::int64_t col) {
  return static_cast<std::size_t>((e * d.m + row) * d.n + col);
}

}  // namespace

std::vector<MatmulCase> matmul_cases() {
  std::vector<MatmulCase> cases;
  cases.push_back(make("square 64", 1, 64, 64, 64));
  cases.push_back(make("odd 37x53x29", 1, 37, 53, 29));
  cases.push_back(make("tall 130x70x300", 1, 130, 70, 300));
  cases.push_back(make("wide 3x200x128", 1, 3, 200, 128));
  cases.push_back(make("one element", 1, 1, 1, 1));
  MatmulCase c = make("k zero with bias", 1, 5, 7, 0);
  c.spec.has_bias = true;
  cases.push_back(c);
  c = make("gemm trans_b bias 33x65x47", 1, 33, 65, 47);
  c.spec.trans_b = true;
  c.spec.has_bias = true;
  cases.push_back(c);
  c = make("trans_a alpha 20x30x70", 1, 20, 30, 70);
  c.spec.trans_a = true;
  c.spec.alpha = 0.5f;
  cases.push_back(c);
  c = make("both transposed, alpha, bias 65x17x19", 1, 65, 17, 19);
  c.spec.trans_a = true;
  c.spec.trans_b = true;
  c.spec.alpha = -1.25f;
  c.spec.has_bias = true;
  cases.push_back(c);
  cases.push_back(make("batch 3 of 40x24x18", 3, 40, 24, 18));
  c = make("batch 4, B broadcast, 9x70x16", 4, 9, 70, 16);
  c.dims.stride_b = 0;
  cases.push_back(c);
  c = make("batch 2, A broadcast, 70x5x33", 2, 70, 5, 33);
  c.dims.stride_a = 0;
  cases.push_back(c);
  c = make("NaN and Inf operands 8x9x10", 1, 8, 9, 10);
  c.poison = true;
  cases.push_back(c);
  return cases;
}

void make_matmul_case_data(const MatmulCase& c, std::uint64_t seed, MatmulCaseData* data, float fill) {
  const cuda::MatmulDims& d = c.dims;
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + std::hash<std::string>{}(c.name));
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  auto draw = [&](std::vector<float>& v, std::int64_t n) {
    v.resize(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
    for (float& x : v) x = value(rng);
  };
  draw(data->a, cuda::matmul_a_extent(d));
  draw(data->b, cuda::matmul_b_extent(d));
  draw(data->bias, d.n);
  if (c.poison && d.m > 2 && d.k > 1) {
    data->a[static_cast<std::size_t>(a_offset(c, 0, 1, 0))] = std::numeric_limits<float>::quiet_NaN();
    data->a[static_cast<std::size_t>(a_offset(c, 0, 2, 1))] = std::numeric_limits<float>::infinity();
  }
  data->c.assign(static_cast<std::size_t>(std::max<std::int64_t>(d.batch * d.m * d.n, 1)), fill);
  data->args.a = data->a.data();
  data->args.b = data->b.data();
  data->args.bias = c.spec.has_bias ? data->bias.data() : nullptr;
  data->args.c = data->c.data();
  data->args.dims = d;
}

MatmulReference evaluate_matmul_reference(const MatmulCase& c, const MatmulCaseData& data) {
  const cuda::MatmulDims& d = c.dims;
  constexpr double kUnit = 0x1p-24;
  MatmulReference r;
  r.c.assign(data.c.size(), 0.0);
  r.bound.assign(data.c.size(), 0.0);
  for (std::int64_t e = 0; e < d.batch; ++e)
    for (std::int64_t row = 0; row < d.m; ++row)
      for (std::int64_t col = 0; col < d.n; ++col) {
        double sum = 0.0, magnitude = 0.0;
        for (std::int64_t k = 0; k < d.k; ++k) {
          const double p = static_cast<double>(data.a[static_cast<std::size_t>(a_offset(c, e, row, k))]) *
                           static_cast<double>(data.b[static_cast<std::size_t>(b_offset(c, e, k, col))]);
          sum += p;
          magnitude += std::fabs(p);
        }
        double v = static_cast<double>(c.spec.alpha) * sum;
        magnitude *= std::fabs(static_cast<double>(c.spec.alpha));
        if (c.spec.has_bias) {
          const double bias = data.bias[static_cast<std::size_t>(col)];
          v += bias;
          magnitude += std::fabs(bias);
        }
        const std::size_t i = out_index(d, e, row, col);
        r.c[i] = v;
        r.bound[i] = static_cast<double>(d.k + 2) * kUnit * magnitude + kUnit * std::fabs(v) +
                     std::numeric_limits<float>::denorm_min();
      }
  return r;
}

void evaluate_matmul_model(const MatmulCase& c, MatmulCaseData* data) {
  const cuda::MatmulDims& d = c.dims;
  for (std::int64_t e = 0; e < d.batch; ++e)
    for (std::int64_t row = 0; row < d.m; ++row)
      for (std::int64_t col = 0; col < d.n; ++col) {
        float acc = 0.0f;
        for (std::int64_t k = 0; k < d.k; ++k)
          acc = std::fma(data->a[static_cast<std::size_t>(a_offset(c, e, row, k))],
                         data->b[static_cast<std::size_t>(b_offset(c, e, k, col))], acc);
        if (c.spec.alpha != 1.0f) acc = acc * c.spec.alpha;
        if (c.spec.has_bias) acc = acc + data->bias[static_cast<std::size_t>(col)];
        data->c[out_index(d, e, row, col)] = acc;
      }
}

MatmulOutcome compare_matmul(const MatmulCase& c, const MatmulCaseData& got, const MatmulReference& want) {
  MatmulOutcome o;
  const cuda::MatmulDims& d = c.dims;
  const std::size_t count = static_cast<std::size_t>(d.batch * d.m * d.n);
  for (std::size_t i = 0; i < count; ++i) {
    ++o.elements;
    const double g = got.c[i], w = want.c[i];
    bool ok = false;
    if (std::isnan(w)) ok = std::isnan(g);
    else if (std::isinf(w)) ok = g == w;
    else if (std::isfinite(g)) {
      const double error = std::fabs(g - w) / want.bound[i];
      o.max_error = std::max(o.max_error, error);
      ok = error <= 1.0;
    }
    if (ok) continue;
    if (o.failures++ == 0) {
      std::ostringstream m;
      m << "C[" << i << "]: got " << g << " want " << w << " (bound " << want.bound[i] << ")";
      o.first_failure = m.str();
    }
  }
  return o;
}

}  // namespace canary::jit::cuda_test

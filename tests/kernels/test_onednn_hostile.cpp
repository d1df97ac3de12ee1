// Hostile-input cases of the oneDNN kernels: recurrent scratch buffers bounded
// by the tensor allocation limit, and Gemm scales the f32 primitive cannot
// reproduce, all left to the reference kernels.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include "canary/tensor.h"
#include "kernels/onednn.h"
#include "kernels/reference.h"

using canary::DType;
using canary::ScopedTensorAllocationLimit;
using canary::Tensor;
namespace k = canary::kernels;

namespace {

// All-zero weights make every LSTM gate sigmoid(0) = 0.5 and the candidate
// tanh(0) = 0, so with h0 = 0, c0 = 1 the cell halves each step:
// c_T = 0.5^T and h_T = 0.5 * tanh(0.5^T).
struct ZeroLstm {
  Tensor x = Tensor::empty(DType::F32, {4, 1, 1});
  Tensor w = Tensor::empty(DType::F32, {1, 4, 1});
  Tensor r = Tensor::empty(DType::F32, {1, 4, 1});
  Tensor c0 = Tensor::from_vector<float>({1.0f}, {1, 1, 1});
};

// All-zero weights make the GRU update gate 0.5 and the candidate 0, so
// h_t = 0.5 * h_{t-1}: with h0 = 1, h_T = 0.5^T.
struct ZeroGru {
  Tensor x = Tensor::empty(DType::F32, {4, 1, 1});
  Tensor w = Tensor::empty(DType::F32, {1, 3, 1});
  Tensor r = Tensor::empty(DType::F32, {1, 3, 1});
  Tensor h0 = Tensor::from_vector<float>({1.0f}, {1, 1, 1});
};

// A 1x1 Gemm: a = [[1]], b = [[2]], c = [[cv]].
struct TinyGemm {
  explicit TinyGemm(float cv) : c(Tensor::from_vector<float>({cv}, {1, 1})) {}
  Tensor a = Tensor::from_vector<float>({1.0f}, {1, 1});
  Tensor b = Tensor::from_vector<float>({2.0f}, {1, 1});
  Tensor c;
};

}  // namespace

TEST_CASE("oneDNN LSTM leaves a gate scratch above the allocation limit to the reference", "[unit][onednn][lstm]") {
  ZeroLstm m;
  k::LstmParams p;
  p.hidden_size = 1;
  // The kernel keeps every step's gate pre-activations: a T*B*4H = 16 float (64 byte) scratch.
  Tensor y_h, y_c;
  {
    ScopedTensorAllocationLimit limit(60);
    CHECK_FALSE(k::onednn_lstm(p, m.x, m.w, m.r, nullptr, nullptr, nullptr, &m.c0, nullptr, nullptr, &y_h, &y_c));
    k::lstm(p, m.x, m.w, m.r, nullptr, nullptr, nullptr, &m.c0, nullptr, nullptr, &y_h, &y_c);
  }
  CHECK(y_c.data<float>()[0] == Approx(0.0625f));
  CHECK(y_h.data<float>()[0] == Approx(0.5 * std::tanh(0.0625)));
  Tensor y_h2, y_c2;
  REQUIRE(k::onednn_lstm(p, m.x, m.w, m.r, nullptr, nullptr, nullptr, &m.c0, nullptr, nullptr, &y_h2, &y_c2));
  CHECK(y_c2.data<float>()[0] == Approx(0.0625f));
  CHECK(y_h2.data<float>()[0] == Approx(0.5 * std::tanh(0.0625)));
}

TEST_CASE("oneDNN GRU leaves a gate scratch above the allocation limit to the reference", "[unit][onednn][gru]") {
  ZeroGru m;
  k::GruParams p;
  p.hidden_size = 1;
  // The kernel keeps every step's input projection: a T*B*3H = 12 float (48 byte) scratch.
  Tensor y_h;
  {
    ScopedTensorAllocationLimit limit(44);
    CHECK_FALSE(k::onednn_gru(p, m.x, m.w, m.r, nullptr, nullptr, &m.h0, nullptr, &y_h));
    k::gru(p, m.x, m.w, m.r, nullptr, nullptr, &m.h0, nullptr, &y_h);
  }
  CHECK(y_h.data<float>()[0] == Approx(0.0625f));
  Tensor y_h2;
  REQUIRE(k::onednn_gru(p, m.x, m.w, m.r, nullptr, nullptr, &m.h0, nullptr, &y_h2));
  CHECK(y_h2.data<float>()[0] == Approx(0.0625f));
}

TEST_CASE("oneDNN LSTM and GRU run when their scratch just fits the allocation limit", "[unit][onednn][lstm][gru]") {
  ZeroLstm l;
  ZeroGru g;
  k::LstmParams lp;
  lp.hidden_size = 1;
  k::GruParams gp;
  gp.hidden_size = 1;
  Tensor y_h, y_c, gy_h;
  {
    ScopedTensorAllocationLimit limit(64);  // exactly the LSTM's T*B*4H = 16 gate floats
    REQUIRE(k::onednn_lstm(lp, l.x, l.w, l.r, nullptr, nullptr, nullptr, &l.c0, nullptr, nullptr, &y_h, &y_c));
  }
  CHECK(y_c.data<float>()[0] == Approx(0.0625f));
  ScopedTensorAllocationLimit limit(48);  // exactly the GRU's T*B*3H = 12 gate floats
  REQUIRE(k::onednn_gru(gp, g.x, g.w, g.r, nullptr, nullptr, &g.h0, nullptr, &gy_h));
  CHECK(gy_h.data<float>()[0] == Approx(0.0625f));
}

TEST_CASE("oneDNN Gemm with a tiny beta falls back and the reference gives AB", "[unit][onednn][gemm]") {
  TinyGemm g(3.0f);
  k::GemmParams p;
  p.alpha = 1.0;
  p.beta = 1e-39;  // alpha / beta overflows f32
  Tensor y;
  CHECK_FALSE(k::onednn_gemm(p, g.a, g.b, &g.c, y));
  k::gemm(p, g.a, g.b, &g.c, y);
  CHECK(y.data<float>()[0] == 2.0f);
}

TEST_CASE("oneDNN Gemm rejects scales outside the safe f32 range", "[unit][onednn][gemm]") {
  TinyGemm g(3.0f);
  Tensor y;
  for (const auto& [alpha, beta] : {std::pair{1.0, 1e-30}, std::pair{1e30, 1.0}, std::pair{1.0, 1e30},
                                    std::pair{std::nan(""), 1.0}, std::pair{1.0, std::nan("")},
                                    std::pair{std::numeric_limits<double>::infinity(), 1.0}}) {
    k::GemmParams p;
    p.alpha = alpha;
    p.beta = beta;
    CHECK_FALSE(k::onednn_gemm(p, g.a, g.b, &g.c, y));
  }
  k::GemmParams no_c;
  no_c.alpha = 1e39;  // not an f32
  CHECK_FALSE(k::onednn_gemm(no_c, g.a, g.b, nullptr, y));
  no_c.alpha = 1e-40;  // subnormal in f32
  CHECK_FALSE(k::onednn_gemm(no_c, g.a, g.b, nullptr, y));
}

TEST_CASE("oneDNN Gemm with ordinary scales still runs: 2*AB + 0.5*C", "[unit][onednn][gemm]") {
  TinyGemm g(3.0f);
  k::GemmParams p;
  p.alpha = 2.0;
  p.beta = 0.5;
  Tensor y;
  REQUIRE(k::onednn_gemm(p, g.a, g.b, &g.c, y));
  CHECK(y.data<float>()[0] == Approx(5.5f));
  k::GemmParams no_c;
  no_c.alpha = 1e6;
  REQUIRE(k::onednn_gemm(no_c, g.a, g.b, nullptr, y));
  CHECK(y.data<float>()[0] == Approx(2e6f));
}

TEST_CASE("Gemm with beta 0 and a non-finite C: oneDNN defers, the reference gives 0*C = NaN", "[unit][onednn][gemm]") {
  k::GemmParams p;
  p.beta = 0.0;
  for (float cv : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    TinyGemm g(cv);
    Tensor y;
    CHECK_FALSE(k::onednn_gemm(p, g.a, g.b, &g.c, y));
    k::gemm(p, g.a, g.b, &g.c, y);
    CHECK(std::isnan(y.data<float>()[0]));
  }
}

TEST_CASE("Gemm with beta 0 and a finite C: oneDNN and the reference both give AB", "[unit][onednn][gemm]") {
  TinyGemm g(-7.0f);
  k::GemmParams p;
  p.beta = 0.0;
  Tensor y_onednn, y_reference;
  REQUIRE(k::onednn_gemm(p, g.a, g.b, &g.c, y_onednn));
  k::gemm(p, g.a, g.b, &g.c, y_reference);
  CHECK(y_onednn.data<float>()[0] == 2.0f);
  CHECK(y_reference.data<float>()[0] == 2.0f);
}

// The host model of the row kernel (see row_model.h).
#include "tests/cuda/row_model.h"

#include <array>
#include <vector>

#include "jit/cuda/ew_lowering.h"
#include "jit/cuda/math_model_cpu.h"
#include "jit/cuda/ptx_elementwise.h"
#include "jit/cuda/ptx_row.h"
#include "jit/cuda/row_lowering.h"

namespace canary::jit::cuda_test {
namespace {

using cuda::CpuMath;
using cuda::RowFold;
using Acc = cuda::RowAcc<CpuMath>;

class RowModel {
 public:
  RowModel(const FusedRowSpec& spec, const RowArgs& args)
      : spec_(spec), pro_(spec.prologue), args_(args), compensated_(spec.accumulation == Accumulation::Compensated) {
    const std::array<std::int64_t, 3> d =
        pro_.exact_dims ? *pro_.exact_dims : std::array<std::int64_t, 3>{args.dims[0], args.dims[1], args.dims[2]};
    d1_ = d[1] > 0 ? d[1] : 1;
    d2_ = d[2];
    threads_ = cuda::row_block_threads(d2_);
    values_.resize(pro_.nodes.size());
  }

  std::uint32_t run() {
    const cuda::RowLaunchScalars s = cuda::make_row_scalars(d1_, d2_, args_.row_begin, args_.row_end);
    const cuda::Divider by_d1{s.magic1, s.shift1};
    for (std::uint32_t row = s.row_begin; row < s.row_end; ++row) {
      const std::uint32_t i0 = by_d1.divide(row), i1 = row - i0 * s.d1;
      run_row(row, i0, i1);
    }
    return pro_.check_non_finite && non_finite_ ? 1u : 0u;
  }

 private:
  float prologue_value(std::int64_t i0, std::int64_t i1, std::int64_t j) {
    for (std::size_t i = 0; i < pro_.nodes.size(); ++i) {
      const EwNode& n = pro_.nodes[i];
      if (n.op == EwOp::Input) {
        const std::int64_t* st = args_.strides + 2 * n.input;
        values_[i] = args_.inputs[n.input][i0 * st[0] + i1 * st[1] + (pro_.inner_broadcast[n.input] ? 0 : j)];
      } else {
        values_[i] = cuda::lower_node(m_, n, values_, pro_.math);
      }
    }
    return values_[pro_.outputs.front()];
  }

  static Acc start(RowFold fold) {
    return {fold == RowFold::Sum ? 0.0f : -std::numeric_limits<float>::infinity(), 0.0f};
  }

  // Thread t's accumulator over its elements j = t, t + T, ... of `value(j)`.
  template <class Value>
  std::vector<Acc> thread_folds(RowFold fold, bool compensated, Value value) {
    std::vector<Acc> acc(threads_, start(fold));
    for (std::int64_t j = 0; j < d2_; ++j) {
      Acc& a = acc[static_cast<std::size_t>(j % threads_)];
      a = cuda::fold_value(m_, a, value(j), fold, compensated);
    }
    return acc;
  }

  // The butterfly within each warp, then the partials in warp order.
  float block_fold(std::vector<Acc> acc, RowFold fold, bool compensated) {
    std::vector<Acc> partials;
    for (unsigned w = 0; w < threads_ / 32; ++w) {
      std::array<Acc, 32> lanes;
      for (unsigned l = 0; l < 32; ++l) lanes[l] = acc[w * 32 + l];
      for (unsigned offset = 16; offset >= 1; offset /= 2) {
        std::array<Acc, 32> next;
        for (unsigned l = 0; l < 32; ++l) next[l] = cuda::fold_pair(m_, lanes[l], lanes[l ^ offset], fold, compensated);
        lanes = next;
      }
      partials.push_back(lanes[0]);
    }
    Acc total = partials.front();
    for (std::size_t w = 1; w < partials.size(); ++w) total = cuda::fold_pair(m_, total, partials[w], fold, compensated);
    return cuda::fold_result(m_, total, fold, compensated);
  }

  void write(float* at, float v) {
    *at = v;
    non_finite_ = non_finite_ || !m_.is_finite(v);
  }

  void run_row(std::int64_t row, std::int64_t i0, std::int64_t i1) {
    const float n = m_.i2f(static_cast<std::int32_t>(d2_));
    auto value = [&](std::int64_t j) { return prologue_value(i0, i1, j); };
    if (spec_.op == RowOp::Sum || spec_.op == RowOp::Mean || spec_.op == RowOp::Max) {
      const RowFold fold = spec_.op == RowOp::Max ? RowFold::Max : RowFold::Sum;
      float r = block_fold(thread_folds(fold, compensated_, value), fold, compensated_);
      if (spec_.op == RowOp::Mean) r = m_.div(r, n);
      write(args_.output + row, r);
      return;
    }
    float* out = args_.output + row * d2_;
    for (std::int64_t j = 0; j < d2_; ++j) out[j] = value(j);
    auto stored = [&](std::int64_t j) { return out[j]; };
    if (spec_.op == RowOp::Softmax) {
      const float max = block_fold(thread_folds(RowFold::MaxNum, false, stored), RowFold::MaxNum, false);
      for (std::int64_t j = 0; j < d2_; ++j) out[j] = cuda::softmax_exp(m_, out[j], max, pro_.math);
      const float sum = block_fold(thread_folds(RowFold::Sum, compensated_, stored), RowFold::Sum, compensated_);
      for (std::int64_t j = 0; j < d2_; ++j) write(out + j, cuda::softmax_value(m_, out[j], sum, pro_.math));
      return;
    }
    const float mean = m_.div(block_fold(thread_folds(RowFold::Sum, compensated_, stored), RowFold::Sum, compensated_), n);
    auto square = [&](std::int64_t j) {
      const float d = m_.sub(out[j], mean);
      return m_.mul(d, d);
    };
    const float squares = block_fold(thread_folds(RowFold::Sum, compensated_, square), RowFold::Sum, compensated_);
    const float rstd = cuda::layer_norm_rstd(m_, squares, n, spec_.epsilon);
    for (std::int64_t j = 0; j < d2_; ++j) {
      const float* scale = spec_.has_scale ? args_.scale + j : nullptr;
      const float* bias = spec_.has_bias ? args_.bias + j : nullptr;
      write(out + j, cuda::layer_norm_value(m_, out[j], mean, rstd, scale, bias));
    }
  }

  const FusedRowSpec& spec_;
  const FusedElementwiseSpec& pro_;
  const RowArgs& args_;
  const bool compensated_;
  CpuMath m_;
  std::int64_t d1_ = 1, d2_ = 0;
  unsigned threads_ = 32;
  std::vector<float> values_;
  bool non_finite_ = false;
};

}  // namespace

std::uint32_t evaluate_row_model(const FusedRowSpec& spec, const RowArgs& args) {
  return RowModel(spec, args).run();
}

}  // namespace canary::jit::cuda_test

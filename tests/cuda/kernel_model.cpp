// The host model of the fused kernel (see kernel_model.h).
#include "tests/cuda/kernel_model.h"

#include <vector>

#include "jit/cuda/ew_lowering.h"
#include "jit/cuda/fused_launch.h"
#include "jit/cuda/math_model_cpu.h"
#include "jit/cuda/ptx_elementwise.h"

namespace canary::jit::cuda_test {

std::uint32_t evaluate_fused_model(const FusedElementwiseSpec& spec, const FusedArgs& args) {
  const auto d = cuda::launch_dims(spec, args.dims);
  if (args.row_end == args.row_begin || d[2] == 0) return 0;
  const cuda::FusedLaunchScalars s = cuda::make_launch_scalars(d[1], d[2], args.row_begin, args.row_end);
  const cuda::Divider by_d1{s.magic1, s.shift1}, by_d2{s.magic2, s.shift2};
  cuda::CpuMath m;
  std::vector<float> values(spec.nodes.size());
  bool non_finite = false;
  for (std::uint32_t e = s.begin; e < s.end; ++e) {
    const std::uint32_t row = by_d2.divide(e), i2 = e - row * s.d2;
    const std::uint32_t i0 = by_d1.divide(row), i1 = row - i0 * s.d1;
    for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
      const EwNode& n = spec.nodes[i];
      if (n.op == EwOp::Input) {
        const std::int64_t* st = args.strides + 2 * n.input;
        const std::int64_t at = i0 * st[0] + i1 * st[1] + (spec.inner_broadcast[n.input] ? 0 : i2);
        values[i] = args.inputs[n.input][at];
      } else {
        values[i] = cuda::lower_node(m, n, values, spec.math);
      }
    }
    for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
      args.outputs[k][e] = values[spec.outputs[k]];
      non_finite = non_finite || !m.is_finite(values[spec.outputs[k]]);
    }
  }
  return spec.check_non_finite && non_finite ? 1u : 0u;
}

}  // namespace canary::jit::cuda_test

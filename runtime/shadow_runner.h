// ShadowRunner: one session's shadow runs for the cost model. After a call
// that ran a candidate under trial, it runs the fp64 reference on the same
// inputs and compares every output, then runs perturbed copies of the inputs
// through the candidate and the reference to compare their spread.
//
// The reference runs the copies as one batch (stacked along dim 0) where the
// model's signature says dim 0 is a batch (every input and output leads with
// the same symbolic dim) and the first shadowed call confirms it: there the
// copies also run one by one, and batching stays on only if every slice of
// the batched outputs holds the same bits (the fp64 reference kernels compute
// each row the same way at any batch size, so rows that do not mix agree
// exactly). The candidate's copies always run at the call's own shape: a
// batch would measure another variant.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "canary/canary.h"
#include "canary/options.h"
#include "jit/cost/trial.h"
#include "vm/interpreter.h"

namespace canary {

class ShadowRunner {
 public:
  using RunFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

  ShadowRunner(std::shared_ptr<const vm::Program> reference, const Options& options,
               const std::vector<TensorSpec>& inputs, const std::vector<TensorSpec>& outputs);

  // The reference's side of one shadowed call, computed once and shared by
  // every candidate compared on that call: its outputs, and the perturbed
  // copies of the inputs with the reference's outputs for them.
  struct Reference {
    std::vector<Tensor> outputs;
    std::vector<std::vector<Tensor>> noisy_inputs, noisy_outputs;
    bool batched = false;  // the noisy outputs came from one batched run
  };
  Reference reference(const std::vector<Tensor>& inputs);

  // Fills the accuracy and variance fields of `sample` for one candidate's
  // outputs on the call's inputs; run_candidate runs that candidate on the
  // perturbed copies.
  void compare(const Reference& reference, const std::vector<Tensor>& outputs, const RunFn& run_candidate,
               jit::cost::TrialSample& sample) const;

 private:
  std::vector<Tensor> perturbed(const std::vector<Tensor>& inputs);
  // The reference's outputs for every noisy copy, batched where allowed.
  void run_noise_copies(Reference& ref);
  // The copies stacked along dim 0 through one reference run, split back;
  // nullopt when they cannot be (a limit, an output not led by the batch).
  std::optional<std::vector<std::vector<Tensor>>> run_batched(const std::vector<std::vector<Tensor>>& copies);

  enum class Batching { Off, Unverified, Verified };

  vm::Interpreter reference_;
  CostModelOptions options_;
  double relative_floor_;
  std::vector<std::string> output_names_;
  std::vector<const DecisionOutput*> decisions_;  // per output, or null
  std::vector<bool> is_mask_;                     // per input
  Batching batching_ = Batching::Off;
  std::mt19937_64 rng_;
};

}  // namespace canary

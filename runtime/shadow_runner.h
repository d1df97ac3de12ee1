// ShadowRunner: one session's shadow runs for the cost model. After a call
// that ran a candidate under trial, it runs the fp64 reference on the same
// inputs and compares every output, then runs perturbed copies of the inputs
// through the candidate and the reference to compare their spread.
#pragma once

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "canary/options.h"
#include "jit/cost/trial.h"
#include "vm/interpreter.h"

namespace canary {

class ShadowRunner {
 public:
  using RunFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

  ShadowRunner(std::shared_ptr<const vm::Program> reference, const Options& options,
               std::vector<std::string> input_names, std::vector<std::string> output_names);

  // The reference's side of one shadowed call, computed once and shared by
  // every candidate compared on that call: its outputs, and the perturbed
  // copies of the inputs with the reference's outputs for them.
  struct Reference {
    std::vector<Tensor> outputs;
    std::vector<std::vector<Tensor>> noisy_inputs, noisy_outputs;
  };
  Reference reference(const std::vector<Tensor>& inputs);

  // Fills the accuracy and variance fields of `sample` for one candidate's
  // outputs on the call's inputs; run_candidate runs that candidate on the
  // perturbed copies.
  void compare(const Reference& reference, const std::vector<Tensor>& outputs, const RunFn& run_candidate,
               jit::cost::TrialSample& sample) const;

 private:
  std::vector<Tensor> perturbed(const std::vector<Tensor>& inputs);

  vm::Interpreter reference_;
  CostModelOptions options_;
  double relative_floor_;
  std::vector<std::string> output_names_;
  std::vector<const DecisionOutput*> decisions_;  // per output, or null
  std::vector<bool> is_mask_;                     // per input
  std::mt19937_64 rng_;
};

}  // namespace canary

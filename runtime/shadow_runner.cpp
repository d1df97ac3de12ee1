// Shadow runs: the fp64 reference on a call's inputs, output comparison, and
// the spread of outputs under input noise (or redrawn dropout masks).
#include "runtime/shadow_runner.h"

#include <algorithm>
#include <limits>

#include "jit/cost/objective.h"
#include "jit/cost/output_metrics.h"
#include "runtime/model_impl.h"

namespace canary {

namespace {

// Folds one output's comparison into the call's sample.
void fold(const jit::cost::OutputComparison& c, jit::cost::TrialSample& s) {
  s.max_relative_error = std::max(s.max_relative_error, c.max_relative_error);
  s.max_ulp = std::max(s.max_ulp, c.max_ulp);
  s.new_non_finite += c.new_non_finite;
  s.saturated += c.saturated;
  s.decisions += c.decisions;
  s.near_flips += c.near_flips;
  for (std::size_t i = 0; i < c.margins.size() && s.margins.size() < jit::cost::kMaxMarginSamples; ++i)
    s.margins.push_back(c.margins[i]);
  if (c.far_flips == 0) return;
  s.min_far_margin = s.far_flips == 0 ? c.min_far_flip_margin : std::min(s.min_far_margin, c.min_far_flip_margin);
  s.far_flips += c.far_flips;
}

}  // namespace

ShadowRunner::ShadowRunner(std::shared_ptr<const vm::Program> reference, const Options& options,
                           std::vector<std::string> input_names, std::vector<std::string> output_names)
    : reference_(std::move(reference), limits_of(options, true)), options_(options.cost),
      relative_floor_(options.cost.limits.value_or(jit::cost::profile_limits(options.cost.profile)).relative_floor),
      output_names_(std::move(output_names)), rng_(options.cost.seed) {
  for (const std::string& name : output_names_) {
    const DecisionOutput* d = nullptr;
    for (const DecisionOutput& o : options_.decisions)
      if (o.output == name) d = &o;
    decisions_.push_back(d);
  }
  for (const std::string& name : input_names)
    is_mask_.push_back(std::find(options_.dropout_mask_inputs.begin(), options_.dropout_mask_inputs.end(), name) !=
                       options_.dropout_mask_inputs.end());
}

std::vector<Tensor> ShadowRunner::perturbed(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  out.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i)
    out.push_back(is_mask_[i] ? jit::cost::redraw_mask(inputs[i], rng_)
                              : jit::cost::perturb(inputs[i], options_.noise_sigma, rng_));
  return out;
}

ShadowRunner::Reference ShadowRunner::reference(const std::vector<Tensor>& inputs) {
  Reference ref;
  ref.outputs = reference_.run(inputs);
  try {
    for (int k = 0; k < options_.noise_copies; ++k) {
      ref.noisy_inputs.push_back(perturbed(inputs));
      ref.noisy_outputs.push_back(reference_.run(ref.noisy_inputs.back()));
    }
  } catch (const Error&) {
    // A perturbed copy the model rejects: the spread goes unmeasured this
    // call; the plain comparison stands.
    ref.noisy_inputs.clear();
    ref.noisy_outputs.clear();
  }
  return ref;
}

void ShadowRunner::compare(const Reference& ref, const std::vector<Tensor>& outputs, const RunFn& run_candidate,
                           jit::cost::TrialSample& sample) const {
  sample.shadowed = true;
  for (std::size_t i = 0; i < outputs.size(); ++i)
    fold(jit::cost::compare_output(output_names_[i], outputs[i], ref.outputs[i], relative_floor_, decisions_[i]),
         sample);
  if (ref.noisy_inputs.empty()) return;
  std::vector<jit::cost::SpreadAccumulator> spread(outputs.size());
  try {
    for (std::size_t k = 0; k < ref.noisy_inputs.size(); ++k) {
      const std::vector<Tensor> c = run_candidate(ref.noisy_inputs[k]);
      for (std::size_t i = 0; i < spread.size(); ++i) spread[i].add(c[i], ref.noisy_outputs[k][i]);
    }
  } catch (const Error&) {
    return;  // the candidate rejected a perturbed copy: spread unmeasured, the comparison stands
  }
  sample.noise_copies = ref.noisy_inputs.size();
  sample.variance_ratio = 0.0;
  for (const jit::cost::SpreadAccumulator& s : spread) sample.variance_ratio = std::max(sample.variance_ratio, s.ratio());
}

}  // namespace canary

// Shadow runs: the fp64 reference on a call's inputs, output comparison, and
// the spread of outputs under input noise (or redrawn dropout masks).
#include "runtime/shadow_runner.h"

#include <algorithm>
#include <cstring>
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

// Whether the signature declares dim 0 a batch: every input and output
// leads with one and the same symbolic dim ("N", not "4").
bool leads_with_one_batch_dim(const std::vector<TensorSpec>& inputs, const std::vector<TensorSpec>& outputs) {
  if (inputs.empty() || outputs.empty() || inputs.front().dims.empty()) return false;
  const std::string& batch = inputs.front().dims.front();
  if (batch.empty() || std::all_of(batch.begin(), batch.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  const auto leads = [&](const TensorSpec& s) { return !s.dims.empty() && s.dims.front() == batch; };
  return std::all_of(inputs.begin(), inputs.end(), leads) && std::all_of(outputs.begin(), outputs.end(), leads);
}

// The tensors stacked along dim 0 (all of one shape).
Tensor stack_rows(const std::vector<const Tensor*>& parts) {
  Shape shape = parts.front()->shape();
  shape[0] *= static_cast<std::int64_t>(parts.size());
  Tensor out = Tensor::empty(parts.front()->dtype(), shape);
  auto* to = static_cast<unsigned char*>(out.raw());
  for (const Tensor* p : parts) {
    std::memcpy(to, p->raw(), p->nbytes());
    to += p->nbytes();
  }
  return out;
}

// Part k of `count` equal parts of t along dim 0.
Tensor rows_part(const Tensor& t, std::size_t k, std::size_t count) {
  Shape shape = t.shape();
  shape[0] /= static_cast<std::int64_t>(count);
  Tensor out = Tensor::empty(t.dtype(), shape);
  std::memcpy(out.raw(), static_cast<const unsigned char*>(t.raw()) + k * out.nbytes(), out.nbytes());
  return out;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

}  // namespace

ShadowRunner::ShadowRunner(std::shared_ptr<const vm::Program> reference, const Options& options,
                           const std::vector<TensorSpec>& inputs, const std::vector<TensorSpec>& outputs)
    : reference_(std::move(reference), limits_of(options, true)), options_(options.cost),
      relative_floor_(options.cost.limits.value_or(jit::cost::profile_limits(options.cost.profile)).relative_floor),
      batching_(options.cost.batch_noise_copies && leads_with_one_batch_dim(inputs, outputs) ? Batching::Unverified
                                                                                             : Batching::Off),
      rng_(options.cost.seed) {
  std::vector<std::string> input_names;
  for (const TensorSpec& s : inputs) input_names.push_back(s.name);
  for (const TensorSpec& s : outputs) output_names_.push_back(s.name);
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
    for (int k = 0; k < options_.noise_copies; ++k) ref.noisy_inputs.push_back(perturbed(inputs));
    run_noise_copies(ref);
  } catch (const Error&) {
    // A perturbed copy the model rejects: the spread goes unmeasured this
    // call; the plain comparison stands.
    ref.noisy_inputs.clear();
    ref.noisy_outputs.clear();
  }
  return ref;
}

void ShadowRunner::run_noise_copies(Reference& ref) {
  if (batching_ == Batching::Verified && ref.noisy_inputs.size() > 1) {
    if (auto outputs = run_batched(ref.noisy_inputs)) {
      ref.noisy_outputs = std::move(*outputs);
      ref.batched = true;
      return;
    }
    batching_ = Batching::Off;  // e.g. the batch outgrew a limit: one by one from now on
  }
  for (const std::vector<Tensor>& copy : ref.noisy_inputs) ref.noisy_outputs.push_back(reference_.run(copy));
  if (batching_ != Batching::Unverified || ref.noisy_inputs.size() < 2) return;
  // The first chance to compare: batching stays only if it gives the same bits.
  const auto batched = run_batched(ref.noisy_inputs);
  bool same = batched.has_value();
  for (std::size_t k = 0; same && k < ref.noisy_outputs.size(); ++k)
    for (std::size_t i = 0; same && i < ref.noisy_outputs[k].size(); ++i)
      same = same_bits((*batched)[k][i], ref.noisy_outputs[k][i]);
  batching_ = same ? Batching::Verified : Batching::Off;
}

std::optional<std::vector<std::vector<Tensor>>> ShadowRunner::run_batched(
    const std::vector<std::vector<Tensor>>& copies) {
  const std::size_t count = copies.size();
  std::vector<Tensor> stacked;
  for (std::size_t i = 0; i < copies.front().size(); ++i) {
    std::vector<const Tensor*> parts;
    for (const std::vector<Tensor>& copy : copies) parts.push_back(&copy[i]);
    if (parts.front()->shape().empty() || parts.front()->shape()[0] == 0) return std::nullopt;
    stacked.push_back(stack_rows(parts));
  }
  std::vector<Tensor> outputs;
  try {
    outputs = reference_.run(stacked);
  } catch (const Error&) {
    return std::nullopt;  // a limit the batch reaches and single copies do not
  }
  std::vector<std::vector<Tensor>> split(count);
  for (const Tensor& out : outputs) {
    if (out.shape().empty() || out.shape()[0] % static_cast<std::int64_t>(count) != 0) return std::nullopt;
    for (std::size_t k = 0; k < count; ++k) split[k].push_back(rows_part(out, k, count));
  }
  return split;
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

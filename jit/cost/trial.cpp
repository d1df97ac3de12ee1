// Trial bookkeeping: folding samples into measurements, round-robin
// scheduling with shadow quotas, and the terms computed from the whole trial
// (expected deopt from the shape histogram, energy, memory).
#include "jit/cost/trial.h"

#include <algorithm>
#include <limits>

#include "jit/guard.h"

namespace canary::jit::cost {

namespace {

// Latency samples kept after each candidate's warm-up call.
std::uint64_t latency_samples(const TrialCandidate& c) { return c.measured.latency_us.size(); }

// A side exit and the interpreter's re-run of the region cost about one
// interpreter call; this adds the exit's own bookkeeping.
constexpr double kExitOverheadUs = 1.0;

}  // namespace

void add_sample(TrialCandidate& c, const TrialSample& s) {
  CandidateMeasurements& m = c.measured;
  if (!s.candidate_ran) {
    ++c.refused;
    return;
  }
  if (s.timed && c.reported++ > 0) {
    if (m.latency_us.size() < kMaxLatencySamples) m.latency_us.push_back(s.call_us);
    else m.latency_us[(c.reported - 2) % kMaxLatencySamples] = s.call_us;
  }
  if (s.shadowed) {
    ++m.shadow_calls;
    m.max_relative_error = std::max(m.max_relative_error, s.max_relative_error);
    m.max_ulp = std::max(m.max_ulp, s.max_ulp);
    m.decisions += s.decisions;
    m.near_flips += s.near_flips;
    for (std::size_t i = 0; i < s.margins.size() && m.reference_margins.size() < kMaxMarginSamples; ++i)
      m.reference_margins.push_back(s.margins[i]);
    if (s.far_flips > 0)
      m.min_far_margin = m.far_flips == 0 ? s.min_far_margin : std::min(m.min_far_margin, s.min_far_margin);
    m.far_flips += s.far_flips;
    m.new_non_finite += s.new_non_finite;
    m.saturated += s.saturated;
    if (s.noise_copies > 0) {
      m.variance_ratio = m.noise_copies == 0 ? s.variance_ratio : std::max(m.variance_ratio, s.variance_ratio);
      m.noise_copies += s.noise_copies;
    }
  }
  if (s.energy_measured) {
    // Running mean of the measured joules per call.
    ++c.energy_samples;
    c.host_energy_joules += (s.energy_joules - c.host_energy_joules) / static_cast<double>(c.energy_samples);
  }
  // The candidate's first call (compiles the GPU module, fills caches) is
  // its warm-up for energy as for latency.
  c.device_energy_seen = c.device_energy_seen || s.device_energy_read;
  if (s.device_energy_read && s.timed && c.reported > 1) {
    c.device_energy_joules += s.device_energy_joules;
    c.device_energy_window_us += s.call_us;
    ++c.device_energy_calls;
  }
}

bool servable(const Trial& trial, std::uint32_t candidate, double max_error) {
  const TrialCandidate& c = trial.candidates[candidate];
  if (candidate == 0 || !c.trace) return true;
  const CandidateMeasurements& m = c.measured;
  const CandidateMeasurements& primary = trial.candidates.front().measured;
  const double limit = std::max(max_error, primary.shadow_calls > 0 ? 2.0 * primary.max_relative_error : 0.0);
  return m.shadow_calls > 0 && m.new_non_finite == 0 && m.saturated == 0 && m.far_flips == 0 &&
         m.max_relative_error <= limit;
}

bool wants_shadow(const TrialCandidate& c, const CostModelOptions& options) {
  const bool refuses = c.refused >= static_cast<std::uint64_t>(std::max(1, options.trial_calls));
  return !refuses && c.measured.shadow_calls < static_cast<std::uint64_t>(std::max(0, options.shadow_samples));
}

std::optional<std::uint32_t> next_candidate(const Trial& trial, const CostModelOptions& options, bool may_shadow) {
  if (trial.decided || trial_complete(trial, options)) return std::nullopt;
  // Latency first (warm-up plus trial_calls timed calls each, fewest tickets
  // first) ... A candidate is scheduled until it has the samples that
  // trial_complete asks for, not for a count of tickets: a ticket can end
  // without a timed sample (its call threw, or it was refused while another
  // candidate's call re-ran it for a shared shadow), and counting tickets
  // then left a trial waiting forever for a sample nobody would take.
  const std::uint64_t calls = static_cast<std::uint64_t>(std::max(1, options.trial_calls));
  std::optional<std::uint32_t> best;
  for (std::uint32_t i = 0; i < trial.candidates.size(); ++i) {
    const TrialCandidate& c = trial.candidates[i];
    if (latency_samples(c) < calls && c.refused < calls && (!best || c.issued < trial.candidates[*best].issued))
      best = i;
  }
  if (best || !may_shadow) return best;
  // ... then only calls that will be shadowed are forced onto a candidate.
  for (std::uint32_t i = 0; i < trial.candidates.size(); ++i)
    if (wants_shadow(trial.candidates[i], options) &&
        (!best || trial.candidates[i].measured.shadow_calls < trial.candidates[*best].measured.shadow_calls))
      best = i;
  return best;
}

bool trial_complete(const Trial& trial, const CostModelOptions& options) {
  const std::uint64_t calls = static_cast<std::uint64_t>(std::max(1, options.trial_calls));
  const std::uint64_t limit = kMaxTrialRounds * calls * std::max<std::size_t>(1, trial.candidates.size());
  if (trial.tickets >= limit) return true;
  // A candidate whose guards keep refusing the traffic has nothing more to
  // measure: its "measured" gate fails and the trial goes on without it.
  return std::all_of(trial.candidates.begin(), trial.candidates.end(), [&](const TrialCandidate& c) {
    return c.refused >= calls || (latency_samples(c) >= calls && !wants_shadow(c, options));
  });
}

std::vector<std::int64_t> shape_key(const std::vector<TensorHeader>& headers) {
  std::vector<std::int64_t> key;
  for (const TensorHeader& h : headers) {
    key.push_back(h.rank);
    key.push_back(h.dtype);
    for (std::int64_t d = 0; d < h.rank; ++d) key.push_back(h.dims[d]);
  }
  return key;
}

std::vector<TensorHeader> headers_of_key(const std::vector<std::int64_t>& key, std::vector<std::int64_t>& dims_storage) {
  static const std::int64_t aligned_storage[16] = {};
  dims_storage = key;  // dims point into this copy
  std::vector<TensorHeader> headers;
  for (std::size_t i = 0; i + 1 < key.size();) {
    TensorHeader h;
    h.rank = key[i];
    h.dtype = key[i + 1];
    h.dims = dims_storage.data() + i + 2;
    h.data = aligned_storage;
    headers.push_back(h);
    i += 2 + static_cast<std::size_t>(std::max<std::int64_t>(0, h.rank));
  }
  return headers;
}

void fill_expected_deopt(Trial& trial) {
  double interpreter_p50 = 0.0;
  for (const TrialCandidate& c : trial.candidates)
    if (!c.trace) interpreter_p50 = percentile(c.measured.latency_us, 0.5);
  std::uint64_t total = 0;
  for (const auto& [key, count] : trial.shapes) total += count;
  for (TrialCandidate& c : trial.candidates) {
    c.measured.histogram_shapes = trial.shapes.size();
    c.measured.expected_deopt_us = 0.0;
    if (!c.trace || total == 0) continue;
    const GuardSet& guards = c.trace->plan().guards;
    std::vector<std::int64_t> symbols(guards.num_symbols + 1);
    double rejected = 0.0;
    for (const auto& [key, count] : trial.shapes) {
      std::vector<std::int64_t> storage;
      const std::vector<TensorHeader> headers = headers_of_key(key, storage);
      if (headers.size() != c.trace->plan().entry.size()) continue;
      if (evaluate_guards(guards, headers.data(), symbols.data()) != 0) rejected += static_cast<double>(count);
    }
    c.measured.expected_deopt_us = rejected / static_cast<double>(total) * (interpreter_p50 + kExitOverheadUs);
  }
}

void fill_energy_and_memory(Trial& trial, x86::Isa host_isa) {
  for (TrialCandidate& c : trial.candidates) {
    c.measured.memory_bytes = c.work.bytes_materialised;
    const bool on_device = c.work.device_bytes > 0;
    const bool nvml_read = c.device_energy_seen;
    const bool device_measured =
        nvml_read && c.device_energy_window_us >= kDeviceEnergyWindowUs && c.device_energy_joules > 0;
    // Never half measured: where NVML is read (a GPU is in use) every
    // candidate needs its window, and a GPU candidate without NVML is
    // modelled whole.
    c.measured.energy_measured = c.energy_samples > 0 && (nvml_read ? device_measured : !on_device);
    if (c.measured.energy_measured) {
      c.measured.energy_joules =
          c.host_energy_joules +
          (c.device_energy_calls > 0 ? c.device_energy_joules / static_cast<double>(c.device_energy_calls) : 0.0);
      continue;
    }
    const double seconds = percentile(c.measured.latency_us, 0.5) * 1e-6;
    // The interpreter's heavy kernels are vectorised for the host like the compiled ones.
    const x86::Isa isa = c.trace ? c.spec.isa : host_isa;
    c.measured.energy_joules = modelled_joules(c.work, isa, seconds);
  }
}

}  // namespace canary::jit::cost

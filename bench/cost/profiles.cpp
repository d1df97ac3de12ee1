// The cost model's profiles on the two sample models: for the flow-meter conv
// net and the vehicle LSTM, each profile (speed, balanced, robust) trials its
// candidates on the sample's realistic stream until it decides, then what it
// installed is measured on held-out calls: p50 latency (profiles timed in
// alternating rounds), max relative error against the fp64 reference, decision
// flips near and far from the threshold, the chosen candidate's energy term,
// the trial's length and the shadow overhead.
//
//   OMP_NUM_THREADS=1 build/bench/canary_bench_cost_profiles [--quick] [--rounds R] [--held-out H] [--cap C]
//
// --quick (the ctest smoke test): 8 held-out calls, 2 rounds, one noise copy
// per shadowed call and no thread-count candidates.
//
// Runtime: JIT on, synchronous compiles, hot_threshold 2, cost model on with
// the profile, shadow_burst_ms 5000 (the trial is not throttled by the shadow
// budget), one intra-op thread, non-finite inputs rejected (as the samples do).
// Trial: calls of the sample's stream (default seed) until the model logs a
// decision with a table (at most C calls). Held out: the first H calls of the
// same generator with another seed, identical for every profile; one
// untimed warm-up pass, then R rounds, each running the held-out calls on
// every profile in turn. Latency: p50 of Session::run wall time over a round,
// median over rounds; the ratio to speed's is taken per round, median over
// rounds. Max relative error: max over calls, outputs and elements of
// |c - r| / max(|r|, 1e-3 x RMS(r)) (RMS of that output in that call), r from
// Model::reference_session(), over the timed rounds; the warm-up pass (where
// a trial of a newly recorded trace may still serve candidates' outputs) is
// reported on its own. Shadow overhead: Stats::cost.overhead() of the whole
// session (trial included), and of the timed rounds alone. As a check on a
// loaded machine, the thread's CPU time per call is reported too (flow meter:
// Session::run; vehicle: Detector::process, screening and scoring included).
// Exit status 1 when a profile never decides or a call ran in one tier only.
// Decisions: the flow meter has no decision output (its outputs are rates).
// The vehicle model outputs a prediction; the sample's Detector turns it into
// a per-row decision (score > threshold, model card). That decision is derived
// outside the model, so it is not declared to the cost model: flips are
// counted here, comparing the detector's decision on the installed code's
// output with its decision on the fp64 reference's, near when the reference's
// score lies within 1% of the threshold (the band of the sample's replay).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/jit/timing.h"
#include "canary/canary.h"
#include "samples/flowmeter/replay.h"
#include "samples/flowmeter/stream_generator.h"
#include "samples/flowmeter/window_cleaning.h"
#include "samples/vehicle/detector.h"
#include "samples/vehicle/model_card.h"
#include "samples/vehicle/replay.h"
#include "samples/vehicle/stream.h"

namespace {

using canary::CostProfile;
using canary::bench::median;

constexpr double kRelativeFloor = 1e-3;  // the cost model's default relative_floor
constexpr double kNearBand = 0.01;       // vehicle: near a flip when |score - t| <= 1% of t
constexpr std::uint64_t kHeldOutSeedOffset = 1000;

struct Args {
  bool quick = false;
  int rounds = 9;
  int held_out = 200;
  int cap = 400;
};

// Reads --quick, --rounds, --held-out and --cap.
Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const bool has_value = i + 1 < argc;
    if (k == "--quick") a.quick = true, a.rounds = 2, a.held_out = 8;
    else if (k == "--rounds" && has_value) a.rounds = std::max(1, std::atoi(argv[++i]));
    else if (k == "--held-out" && has_value) a.held_out = std::max(1, std::atoi(argv[++i]));
    else if (k == "--cap" && has_value) a.cap = std::max(1, std::atoi(argv[++i]));
  }
  return a;
}

// What one held-out call produced: time, outputs, and per-row decisions.
struct CallOutputs {
  bool ran = false;
  double latency_us = 0.0;  // Session::run wall time
  double cpu_us = 0.0;      // this thread's CPU time for the call (preemption by other processes not counted)
  std::vector<std::vector<double>> outputs;  // per model output, flattened
  std::vector<signed char> decisions;        // per row: -1 no decision, 0 no, 1 yes
  std::vector<double> scores;                // per row: the value the decision thresholds
};

// One session of a sample model fed from the sample's streams.
class SampleSession {
 public:
  virtual ~SampleSession() = default;
  // Runs call i of the trial stream (a typed error ends the call, not the run).
  virtual void run_trial(int i) = 0;
  // Runs call i of the held-out stream.
  virtual CallOutputs run_held_out(int i) = 0;
  virtual const canary::Stats& stats() const = 0;
};

// Flow meter: the stream's calls cleaned as the sample does, inputs built once and shared.
class FlowInputs {
 public:
  FlowInputs(const canary::Model& model, int trial_calls, int held_out_calls)
      : policy_(flowmeter::gap_policy_for(model)), lens_(has_lens(model)),
        trial_(config(flowmeter::StreamConfig{}.seed, trial_calls)),
        held_out_(config(flowmeter::StreamConfig{}.seed + kHeldOutSeedOffset, held_out_calls)) {}
  // Call i's model inputs (empty when every well was masked).
  const canary::NamedTensors& trial(int i) { return cached(trial_, trial_cache_, i); }
  const canary::NamedTensors& held_out(int i) { return cached(held_out_, held_out_cache_, i); }

 private:
  static flowmeter::StreamConfig config(std::uint64_t seed, int calls) {
    flowmeter::StreamConfig c;
    c.seed = seed;
    c.calls = calls;
    return c;
  }
  static bool has_lens(const canary::Model& model) {
    return std::any_of(model.inputs().begin(), model.inputs().end(), [](const auto& s) { return s.name == "lens"; });
  }
  // Builds (once) and returns call i of `stream`.
  const canary::NamedTensors& cached(const flowmeter::StreamGenerator& stream, std::vector<canary::NamedTensors>& cache,
                                     int i) {
    while (static_cast<int>(cache.size()) <= i) cache.push_back(build(stream.call(static_cast<int>(cache.size()))));
    return cache[static_cast<std::size_t>(i)];
  }
  // Cleans the call's gaps (samples/flowmeter/window_cleaning.h) and wraps the kept rows.
  canary::NamedTensors build(const flowmeter::FlowCall& call) const {
    const auto [n, f, w] = call.shape();
    std::vector<std::string> names;
    for (flowmeter::Channel c : call.channels) names.emplace_back(flowmeter::channel_name(c));
    const flowmeter::CleanBatch clean =
        flowmeter::clean_batch(call.x, static_cast<int>(n), static_cast<int>(f), static_cast<int>(w), policy_, names);
    canary::NamedTensors in;
    if (clean.rows.empty()) return in;
    const auto kept = static_cast<std::int64_t>(clean.rows.size());
    in.emplace("x", canary::Tensor::from_vector(clean.x, {kept, f, w}));
    if (lens_) in.emplace("lens", canary::Tensor::from_vector(clean.lens, {kept}));
    return in;
  }

  flowmeter::GapPolicy policy_;
  bool lens_;
  flowmeter::StreamGenerator trial_, held_out_;
  std::vector<canary::NamedTensors> trial_cache_, held_out_cache_;
};

class FlowSession : public SampleSession {
 public:
  FlowSession(canary::Session session, FlowInputs& inputs) : session_(std::move(session)), inputs_(inputs) {}
  void run_trial(int i) override {
    const canary::NamedTensors& in = inputs_.trial(i);
    if (in.empty()) return;
    try {
      session_.run(in);
    } catch (const canary::Error&) {
    }
  }
  CallOutputs run_held_out(int i) override {
    CallOutputs out;
    const canary::NamedTensors& in = inputs_.held_out(i);
    if (in.empty()) return out;
    try {
      canary::NamedTensors result;
      const auto t0 = canary::bench::Clock::now();
      out.cpu_us = 1e3 * canary::bench::thread_cpu_ms([&] { result = session_.run(in); });
      out.latency_us = std::chrono::duration<double, std::micro>(canary::bench::Clock::now() - t0).count();
      out.ran = true;
      for (const auto& [name, t] : result) {
        out.outputs.emplace_back();
        for (std::int64_t k = 0; k < t.numel(); ++k) out.outputs.back().push_back(t.element_as_double(k));
      }
    } catch (const canary::Error&) {
    }
    return out;
  }
  const canary::Stats& stats() const override { return session_.stats(); }

 private:
  canary::Session session_;
  FlowInputs& inputs_;
};

// Vehicle: the sample's streams (trial: seed 7; held out: another seed), built once and shared.
struct VehicleStreams {
  VehicleStreams() : trial(config(7)), held_out(config(7 + kHeldOutSeedOffset)) {}
  static vehicle::ScenarioConfig config(std::uint64_t seed) {
    vehicle::ScenarioConfig c;
    c.seed = seed;
    return c;
  }
  const vehicle::StreamCall& trial_call(int i) { return cached(trial, trial_cache, i); }
  const vehicle::StreamCall& held_out_call(int i) { return cached(held_out, held_out_cache, i); }
  static const vehicle::StreamCall& cached(const vehicle::VehicleStream& s, std::vector<vehicle::StreamCall>& cache,
                                           int i) {
    while (static_cast<int>(cache.size()) <= i) cache.push_back(s.call(static_cast<int>(cache.size()) % s.calls()));
    return cache[static_cast<std::size_t>(i)];
  }
  vehicle::VehicleStream trial, held_out;
  std::vector<vehicle::StreamCall> trial_cache, held_out_cache;
};

class VehicleSession : public SampleSession {
 public:
  VehicleSession(canary::Session session, vehicle::ModelCard card, VehicleStreams& streams)
      : detector_(std::move(session), std::move(card)), streams_(streams) {}
  void run_trial(int i) override { detector_.process(streams_.trial_call(i)); }
  // The detector's prediction (the model's one output) and each row's decision.
  CallOutputs run_held_out(int i) override {
    CallOutputs out;
    vehicle::CallResult r;
    out.cpu_us = 1e3 * canary::bench::thread_cpu_ms([&] { r = detector_.process(streams_.held_out_call(i)); });
    out.ran = r.model_rows > 0 && !r.failed;
    out.latency_us = r.latency_us;
    out.outputs.emplace_back();
    for (const vehicle::RowDecision& d : r.rows) {
      // Rows the model predicted: scored, or non-finite because the prediction was (screened rows keep score 0).
      const bool predicted = out.ran && (d.outcome == vehicle::RowOutcome::Scored ||
                                         (d.outcome == vehicle::RowOutcome::NonFinite && !std::isfinite(d.score)));
      if (predicted) out.outputs.back().insert(out.outputs.back().end(), d.prediction.begin(), d.prediction.end());
      out.decisions.push_back(predicted ? static_cast<signed char>(d.exceeds) : -1);
      out.scores.push_back(d.score);
    }
    return out;
  }
  const canary::Stats& stats() const override { return detector_.session().stats(); }

 private:
  vehicle::Detector detector_;
  VehicleStreams& streams_;
};

// How far the installed code's results are from the reference's, over all held-out passes.
struct Tally {
  double max_relative_error = 0.0;
  std::uint64_t compared_calls = 0, mismatched_calls = 0;  // mismatched: ran in one only, or output sizes differ
  std::uint64_t decisions = 0, near_flips = 0, far_flips = 0;
};

// Max over elements of |c - r| / max(|r|, floor), floor = 1e-3 x RMS(r); non-finite c counts as infinite.
double max_relative_error(const std::vector<double>& c, const std::vector<double>& r) {
  double sum_sq = 0.0;
  for (double v : r) sum_sq += v * v;
  const double floor = kRelativeFloor * std::sqrt(sum_sq / static_cast<double>(std::max<std::size_t>(r.size(), 1)));
  double worst = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const double denom = std::max(std::abs(r[i]), floor);
    const double e = std::isfinite(c[i]) ? std::abs(c[i] - r[i]) / (denom > 0 ? denom : 1.0) : INFINITY;
    worst = std::max(worst, e);
  }
  return worst;
}

// Adds one call's comparison with the reference: errors per output, decision flips per row.
void compare_call(const CallOutputs& c, const CallOutputs& r, double threshold, Tally& t) {
  if (c.ran != r.ran || c.outputs.size() != r.outputs.size()) {
    ++t.mismatched_calls;
    return;
  }
  ++t.compared_calls;
  for (std::size_t o = 0; o < r.outputs.size(); ++o) {
    if (c.outputs[o].size() != r.outputs[o].size()) {
      ++t.mismatched_calls;
      continue;
    }
    t.max_relative_error = std::max(t.max_relative_error, max_relative_error(c.outputs[o], r.outputs[o]));
  }
  for (std::size_t row = 0; row < std::min(c.decisions.size(), r.decisions.size()); ++row) {
    if (r.decisions[row] < 0) continue;
    ++t.decisions;
    if (c.decisions[row] == r.decisions[row]) continue;
    if (std::abs(r.scores[row] - threshold) <= kNearBand * threshold) ++t.near_flips;
    else ++t.far_flips;
  }
}

// A sample: its model, how its sessions are fed, and what its decisions are.
struct Sample {
  std::string title;
  std::string model_path;
  std::string decision_note;
  bool has_decisions = false;
  double threshold = 0.0;
  std::function<std::unique_ptr<SampleSession>(canary::Session)> make_session;
};

canary::Options profile_options(CostProfile profile, bool quick);

// One profile on one sample: its runtime, model, session, decision and measurements.
struct ProfileRun {
  ProfileRun(CostProfile p, const Sample& sample, bool quick)
      : profile(p), runtime(std::make_unique<canary::Runtime>(profile_options(p, quick))),
        model(runtime->load(sample.model_path)), session(sample.make_session(model.session())) {}

  CostProfile profile;
  std::unique_ptr<canary::Runtime> runtime;
  canary::Model model;
  std::unique_ptr<SampleSession> session;
  int trial_calls = 0;
  std::vector<std::shared_ptr<const canary::CostDecision>> decisions;  // first: the trial's; then any later
  std::uint64_t next_event = 0;
  std::vector<double> p50_us, cpu_p50_us;  // per round: wall time, thread CPU time
  Tally warm_up, tally;  // the warm-up pass (trials of new traces may still run); the timed rounds
  double timed_shadow_us = 0.0, timed_calls_us = 0.0;  // Stats::cost growth during the timed rounds
};

// The benchmark's runtime options for one profile (see the top of the file).
canary::Options profile_options(CostProfile profile, bool quick) {
  canary::Options o;
  o.intra_op_threads = 1;
  o.reject_non_finite_inputs = true;
  o.jit.enabled = true;
  o.jit.synchronous = true;
  o.jit.hot_threshold = 2;
  o.cost.enabled = true;
  o.cost.profile = profile;
  o.cost.shadow_burst_ms = 5000.0;
  if (quick) {
    // Smoke test: shadowed calls carry one noise copy, and no thread-count
    // candidates (a second thread on a loaded 2-core machine can take 0.5 s a call).
    o.cost.noise_copies = 1;
    o.cost.try_threads = false;
  }
  return o;
}

// Appends the decisions (events with a table) the model logged since the last look.
void collect_decisions(ProfileRun& run) {
  for (const canary::Event& e : run.model.events(run.next_event)) {
    run.next_event = e.sequence + 1;
    if (e.kind == canary::EventKind::Decision && e.cost) run.decisions.push_back(e.cost);
  }
}

// Feeds trial-stream calls until the first decision, at most `cap` calls.
void run_trial(ProfileRun& run, int cap) {
  for (int i = 0; i < cap && run.decisions.empty(); ++i) {
    run.session->run_trial(i);
    run.trial_calls = i + 1;
    collect_decisions(run);
  }
}

// Runs every held-out call once and compares with the reference into `tally`;
// returns the p50 wall and thread CPU times in us.
std::pair<double, double> run_held_out_pass(ProfileRun& run, const std::vector<CallOutputs>& reference,
                                            double threshold, Tally& tally) {
  std::vector<double> wall, cpu;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const CallOutputs out = run.session->run_held_out(static_cast<int>(i));
    if (out.ran) wall.push_back(out.latency_us), cpu.push_back(out.cpu_us);
    compare_call(out, reference[i], threshold, tally);
  }
  collect_decisions(run);
  return {median(wall), median(cpu)};
}

// The chosen candidate of a decision ("-" when none).
std::string chosen_name(const canary::CostDecision* d) {
  return d != nullptr && d->chosen < d->candidates.size() ? d->candidates[d->chosen].name : "-";
}

// "name (trace 3)", then "; later: name (trace 4) x2" for decisions after the trial's (same choices counted).
std::string chosen_cell(const ProfileRun& run) {
  if (run.decisions.empty()) return "-";
  const auto label = [](const canary::CostDecision& d) { return chosen_name(&d) + " (trace " + std::to_string(d.trace) + ")"; };
  std::string cell = label(*run.decisions.front());
  std::vector<std::pair<std::string, int>> later;
  for (std::size_t k = 1; k < run.decisions.size(); ++k) {
    const std::string l = label(*run.decisions[k]);
    auto it = std::find_if(later.begin(), later.end(), [&](const auto& p) { return p.first == l; });
    if (it == later.end()) later.emplace_back(l, 1);
    else ++it->second;
  }
  for (std::size_t k = 0; k < later.size(); ++k)
    cell += (k == 0 ? "; later: " : ", ") + later[k].first + (later[k].second > 1 ? " x" + std::to_string(later[k].second) : "");
  return cell;
}

// "1.2e-05 J (modelled)": the chosen candidate's energy term and its source.
std::string energy_cell(const canary::CostDecision* d) {
  if (d == nullptr || d->chosen >= d->candidates.size()) return "-";
  for (const canary::CostTerm& t : d->candidates[d->chosen].terms) {
    if (t.name != "energy") continue;
    char text[96];
    std::snprintf(text, sizeof text, "%.3g (%s)", t.value, t.source.c_str());
    return text;
  }
  return "not in table";
}

// "0 / 1234 (0.00%)" or "n/a".
std::string flips_cell(std::uint64_t flips, std::uint64_t decisions, bool has_decisions) {
  if (!has_decisions) return "n/a";
  char text[96];
  std::snprintf(text, sizeof text, "%llu / %llu (%.3f%%)", static_cast<unsigned long long>(flips),
                static_cast<unsigned long long>(decisions),
                decisions > 0 ? 100.0 * static_cast<double>(flips) / static_cast<double>(decisions) : 0.0);
  return text;
}

// Median over rounds of a p50 divided by speed's in the same round.
double ratio_to_speed(const std::vector<double>& p50, const std::vector<double>& speed_p50) {
  std::vector<double> ratios;
  for (std::size_t r = 0; r < p50.size() && r < speed_p50.size(); ++r)
    if (speed_p50[r] > 0) ratios.push_back(p50[r] / speed_p50[r]);
  return median(ratios);
}

// The sample's markdown table, one row per profile.
void print_table(const Sample& sample, const std::vector<ProfileRun>& runs, int cap) {
  std::printf("\n| profile | chosen candidate | p50 latency | latency / speed's | max rel error | near flips | far flips "
              "| energy J/call (source) | trial calls until decision | shadow overhead |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const ProfileRun& run : runs) {
    const canary::CostDecision* d = run.decisions.empty() ? nullptr : run.decisions.front().get();
    const std::string trial = d ? std::to_string(run.trial_calls) : "none in " + std::to_string(cap);
    std::printf("| %s | %s | %.1f us | %.2f | %.2e | %s | %s | %s | %s | %.1f%% |\n",
                canary::cost_profile_name(run.profile).c_str(), chosen_cell(run).c_str(), median(run.p50_us),
                ratio_to_speed(run.p50_us, runs.front().p50_us), run.tally.max_relative_error,
                flips_cell(run.tally.near_flips, run.tally.decisions, sample.has_decisions).c_str(),
                flips_cell(run.tally.far_flips, run.tally.decisions, sample.has_decisions).c_str(),
                energy_cell(d).c_str(), trial.c_str(), 100.0 * run.session->stats().cost.overhead());
  }
}

// Each decision's table, once per (trace, choice): a repeated choice prints its header line only.
void print_decisions(const ProfileRun& run) {
  const std::string name = canary::cost_profile_name(run.profile);
  if (run.decisions.empty()) std::printf("\n%s: no decision\n", name.c_str());
  std::vector<std::pair<std::uint32_t, std::string>> printed;
  for (std::size_t k = 0; k < run.decisions.size(); ++k) {
    const canary::CostDecision& d = *run.decisions[k];
    const std::pair<std::uint32_t, std::string> key{d.trace, chosen_name(&d)};
    const bool seen = std::find(printed.begin(), printed.end(), key) != printed.end();
    const std::string table = d.to_table();
    std::printf("\n%s, decision %zu of %zu:\n%s", name.c_str(), k + 1, run.decisions.size(),
                seen ? (table.substr(0, table.find('\n') + 1)).c_str() : table.c_str());
    if (!seen) printed.push_back(key);
  }
}

// One profile's thread CPU time, shadow accounting, calls that did not compare, and its warm-up pass.
void print_accounting(const ProfileRun& run, const ProfileRun& speed) {
  const canary::CostStats& c = run.session->stats().cost;
  const double timed_overhead = run.timed_calls_us > 0 ? run.timed_shadow_us / run.timed_calls_us : 0.0;
  std::printf("%s: thread CPU p50 %.1f us (%.2f x speed's); %llu trial calls, %llu shadowed (%.0f ms of shadow "
              "runs, %.0f ms of calls), %llu skipped; overhead in the timed rounds alone %.1f%%; %llu held-out calls "
              "compared, %llu mismatched; warm-up pass: max rel error %.2e, flips %llu near, %llu far of %llu\n",
              canary::cost_profile_name(run.profile).c_str(), median(run.cpu_p50_us),
              ratio_to_speed(run.cpu_p50_us, speed.cpu_p50_us), static_cast<unsigned long long>(c.trial_calls),
              static_cast<unsigned long long>(c.shadow_calls), c.shadow_us / 1e3, c.calls_us / 1e3,
              static_cast<unsigned long long>(c.shadow_skipped), 100.0 * timed_overhead,
              static_cast<unsigned long long>(run.tally.compared_calls),
              static_cast<unsigned long long>(run.tally.mismatched_calls), run.warm_up.max_relative_error,
              static_cast<unsigned long long>(run.warm_up.near_flips),
              static_cast<unsigned long long>(run.warm_up.far_flips),
              static_cast<unsigned long long>(run.warm_up.decisions));
}

// The decision tables, then each profile's accounting.
void print_details(const std::vector<ProfileRun>& runs) {
  for (const ProfileRun& run : runs) print_decisions(run);
  std::printf("\n");
  for (const ProfileRun& run : runs) print_accounting(run, runs.front());
}

// Trials every profile, then times and compares them on the held-out calls in
// alternating rounds; false when a profile never decided or a call did not compare.
bool run_sample(const Sample& sample, const Args& args) {
  const canary::Runtime reference_rt;
  const canary::Model reference_model = reference_rt.load(sample.model_path);
  std::unique_ptr<SampleSession> reference = sample.make_session(reference_model.reference_session());
  std::vector<CallOutputs> expected;
  for (int i = 0; i < args.held_out; ++i) expected.push_back(reference->run_held_out(i));

  std::vector<ProfileRun> runs;
  for (CostProfile profile : {CostProfile::Speed, CostProfile::Balanced, CostProfile::Robust}) {
    runs.emplace_back(profile, sample, args.quick);
    run_trial(runs.back(), args.cap);
  }
  for (ProfileRun& run : runs) run_held_out_pass(run, expected, sample.threshold, run.warm_up);  // not kept
  for (int round = 0; round < args.rounds; ++round)
    for (std::size_t k = 0; k < runs.size(); ++k) {
      ProfileRun& run = runs[(k + static_cast<std::size_t>(round)) % runs.size()];
      const canary::CostStats before = run.session->stats().cost;
      const auto [wall, cpu] = run_held_out_pass(run, expected, sample.threshold, run.tally);
      run.p50_us.push_back(wall);
      run.cpu_p50_us.push_back(cpu);
      run.timed_shadow_us += run.session->stats().cost.shadow_us - before.shadow_us;
      run.timed_calls_us += run.session->stats().cost.calls_us - before.calls_us;
    }

  std::printf("\n## %s\n\nmodel %s, jit isa %s; %d held-out calls x (1 warm-up + %d rounds)\n%s\n",
              sample.title.c_str(), sample.model_path.c_str(), runs.front().model.jit_report().isa.c_str(),
              args.held_out, args.rounds, sample.decision_note.c_str());
  print_table(sample, runs, args.cap);
  print_details(runs);
  bool ok = true;
  for (const ProfileRun& run : runs) {
    const std::string name = sample.title + ", " + canary::cost_profile_name(run.profile);
    if (run.decisions.empty()) std::printf("FAIL %s: no decision in %d calls\n", name.c_str(), args.cap), ok = false;
    if (run.tally.mismatched_calls + run.warm_up.mismatched_calls > 0)
      std::printf("FAIL %s: calls that ran in one tier only\n", name.c_str()), ok = false;
  }
  return ok;
}

// "model name" of the first CPU in /proc/cpuinfo.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

}  // namespace

int main(int argc, char** argv) {
  canary::bench::run_on_one_thread(argv);
  const Args args = parse_args(argc, argv);
  std::printf("machine: %s, %u hardware threads; OMP_NUM_THREADS=1, intra_op_threads 1%s\n", cpu_model().c_str(),
              std::thread::hardware_concurrency(), args.quick ? "; --quick" : "");

  const canary::Runtime probe_rt;
  const std::string flow_path = flowmeter::default_model_path(flowmeter::ModelKind::Conv);
  auto flow_inputs = std::make_shared<FlowInputs>(probe_rt.load(flow_path), args.cap, args.held_out);
  Sample flow{"flow meter (conv net)", flow_path,
              "decisions: none (the outputs are oil, gas and water rates; no threshold or argmax)", false, 0.0,
              [flow_inputs](canary::Session s) { return std::make_unique<FlowSession>(std::move(s), *flow_inputs); }};

  const std::string vehicle_path = vehicle::default_model_dir() + "/vehicle_lstm.onnx";
  const vehicle::ModelCard card = vehicle::load_model_card(vehicle::card_path_for(vehicle_path));
  auto streams = std::make_shared<VehicleStreams>();
  char note[400];
  std::snprintf(note, sizeof note,
                "decisions: derived outside the model (not declared to the cost model): the Detector's per-row "
                "score > %.4g (model card) on the installed code's prediction vs on the fp64 reference's; near = "
                "reference score within 1%% of the threshold",
                card.threshold);
  Sample car{"vehicle (LSTM)", vehicle_path, note, true, card.threshold, [card, streams](canary::Session s) {
               return std::make_unique<VehicleSession>(std::move(s), card, *streams);
             }};

  const bool flow_ok = run_sample(flow, args);
  const bool car_ok = run_sample(car, args);
  return flow_ok && car_ok ? 0 : 1;
}

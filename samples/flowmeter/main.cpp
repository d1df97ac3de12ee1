// canary-flowmeter: a virtual flow meter over a generated field of wells.
//
//   canary-flowmeter [--calls N] [--wells N] [--seed S] [--model conv|lstm] [--model-path P]
//                    [--no-jit] [--sync-jit] [--no-reference] [--verbose]
//                    [--script FILE] [--print-script]
//   canary-flowmeter generate --out DIR [--fields N] [--seed S]       training data for train.py
//   canary-flowmeter predict --model-path P --x X.npy [--lens L.npy] --out Y.npy [--no-jit]
//
// The default mode replays a seeded stream (shape events, gauge faults) through
// a Session and prints the report. Uses only the public API.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "canary/canary.h"
#include "samples/flowmeter/flow_accuracy.h"
#include "samples/flowmeter/npy_io.h"
#include "samples/flowmeter/replay.h"
#include "samples/flowmeter/report.h"
#include "samples/flowmeter/training_data.h"

namespace {

using namespace flowmeter;

struct Args {
  std::string mode = "replay";
  StreamConfig stream;
  ModelKind kind = ModelKind::Conv;
  std::string model_path, script_path, out, x_path, lens_path;
  bool jit = true, sync_jit = false, reference = true, verbose = false, print_script = false;
  int fields = 100;
};

// The integer after a flag, or an error naming the flag.
long long number_after(int& i, int argc, char** argv) {
  if (i + 1 >= argc) throw std::invalid_argument(std::string(argv[i]) + " needs a value");
  return std::stoll(argv[++i]);
}

// The text after a flag.
std::string text_after(int& i, int argc, char** argv) {
  if (i + 1 >= argc) throw std::invalid_argument(std::string(argv[i]) + " needs a value");
  return argv[++i];
}

// Parses the command line (first word may name a mode).
Args parse_args(int argc, char** argv) {
  Args a;
  int i = 1;
  if (argc > 1 && (std::string(argv[1]) == "generate" || std::string(argv[1]) == "predict")) a.mode = argv[i++];
  for (; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--calls") a.stream.calls = static_cast<int>(number_after(i, argc, argv));
    else if (s == "--wells") a.stream.wells = static_cast<int>(number_after(i, argc, argv));
    else if (s == "--seed") a.stream.seed = static_cast<std::uint64_t>(number_after(i, argc, argv));
    else if (s == "--fields") a.fields = static_cast<int>(number_after(i, argc, argv));
    else if (s == "--model") {
      const std::string m = text_after(i, argc, argv);
      if (m != "conv" && m != "lstm") throw std::invalid_argument("--model must be conv or lstm, got '" + m + "'");
      a.kind = m == "conv" ? ModelKind::Conv : ModelKind::Lstm;
    } else if (s == "--model-path") a.model_path = text_after(i, argc, argv);
    else if (s == "--script") a.script_path = text_after(i, argc, argv);
    else if (s == "--out") a.out = text_after(i, argc, argv);
    else if (s == "--x") a.x_path = text_after(i, argc, argv);
    else if (s == "--lens") a.lens_path = text_after(i, argc, argv);
    else if (s == "--no-jit") a.jit = false;
    else if (s == "--sync-jit") a.sync_jit = true;
    else if (s == "--no-reference") a.reference = false;
    else if (s == "--verbose") a.verbose = true;
    else if (s == "--print-script") a.print_script = true;
    else throw std::invalid_argument("unknown argument '" + s + "'");
  }
  if (a.stream.wells < 8 || a.stream.wells > 64) throw std::invalid_argument("--wells must be in [8, 64]");
  if (a.stream.calls < 1) throw std::invalid_argument("--calls must be at least 1");
  if (a.model_path.empty()) a.model_path = default_model_path(a.kind);
  return a;
}

// Runtime options: JIT as asked; NaN inputs refused by the runtime as a second line of defence.
canary::Options runtime_options(const Args& a) {
  canary::Options o;
  o.jit.enabled = a.jit;
  o.jit.synchronous = a.sync_jit;
  o.reject_non_finite_inputs = true;
  return o;
}

// The file's whole text.
std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// True when every rejected call was shaped by a channel change and nothing non-finite came out.
bool stream_survived(const ReplayResult& r) {
  for (const CallRecord& c : r.calls) {
    if (c.outcome != CallOutcome::Rejected) continue;
    bool channel_event = false;
    for (const ShapeEvent& e : c.shape_events)
      channel_event |= e.kind == ShapeEventKind::ChannelRemoved || e.kind == ShapeEventKind::ChannelAdded;
    if (!channel_event) return false;
  }
  const AccuracySummary a = summarize_accuracy(r);
  return a.non_finite_rates == 0 && a.negative_rates == 0;
}

// Default mode: replay the stream and print the report.
int run_replay(const Args& a) {
  const canary::Runtime rt(runtime_options(a));
  const canary::Model model = rt.load(a.model_path);
  const StreamGenerator stream = a.script_path.empty()
                                     ? StreamGenerator(a.stream)
                                     : StreamGenerator(a.stream, ShapeScript::parse(read_text(a.script_path)));
  if (a.print_script) std::printf("%s\n", stream.script().to_text().c_str());
  ReplayOptions options;
  options.reference = a.reference;
  const ReplayResult result = replay_stream(model, stream, options);
  print_report(stdout, {a.model_path, a.kind, a.jit, a.verbose}, model, stream, result);
  const bool ok = stream_survived(result);
  std::printf("\n%s\n", ok ? "every shape event survived" : "FAILED: a call was lost outside a channel change");
  return ok ? 0 : 1;
}

// generate: training data for train.py.
int run_generate(const Args& a) {
  if (a.out.empty()) throw std::invalid_argument("generate needs --out DIR");
  TrainingDataConfig c;
  c.out_dir = a.out;
  c.fields = a.fields;
  if (a.stream.seed != StreamConfig{}.seed) c.seed = a.stream.seed;
  write_training_data(c, stdout);
  return 0;
}

// predict: runs a model on an .npy batch and writes the rates (train.py checks its export with it).
int run_predict(const Args& a) {
  if (a.x_path.empty() || a.out.empty()) throw std::invalid_argument("predict needs --x X.npy and --out Y.npy");
  const canary::Runtime rt(runtime_options(a));
  const canary::Model model = rt.load(a.model_path);
  const NpyArray x = read_npy(a.x_path);
  canary::NamedTensors in;
  in.emplace("x", canary::Tensor::from_vector(std::vector<float>(x.values.begin(), x.values.end()), x.shape));
  if (!a.lens_path.empty()) {
    const NpyArray lens = read_npy(a.lens_path);
    in.emplace("lens", canary::Tensor::from_vector(std::vector<std::int32_t>(lens.values.begin(), lens.values.end()), lens.shape));
  }
  canary::Session session = model.session();
  const canary::Tensor y = session.run(in).at(model.outputs().front().name);
  std::vector<float> values(static_cast<std::size_t>(y.numel()));
  for (std::int64_t i = 0; i < y.numel(); ++i) values[static_cast<std::size_t>(i)] = static_cast<float>(y.element_as_double(i));
  write_npy(a.out, values, y.shape());
  return 0;
}

}  // namespace

// Dispatches on the mode; a bad argument or a canary::Error ends with status 2 and the message.
int main(int argc, char** argv) {
  try {
    const Args a = parse_args(argc, argv);
    if (a.mode == "generate") return run_generate(a);
    if (a.mode == "predict") return run_predict(a);
    return run_replay(a);
  } catch (const canary::Error& e) {
    std::fprintf(stderr, "canary-flowmeter: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "canary-flowmeter: %s\n", e.what());
  }
  return 2;
}

// The Canary worker of the peer benchmark: serves the JSON-lines protocol of
// bench/peers/PROTOCOL.md on stdin/stdout with canary::Runtime.
//
//   canary_peer_worker --threads N
//
// Models run with default Options (JIT on, compiles on the background
// thread) except intra_op_threads = N, which is what an embedding service
// would use. Besides the protocol's requests it answers
//   {"op": "profile", "id": ..., "inputs": [...], "iters": K}
// with the runtime's own per-tier timers over K calls (Stats::time), for the
// "where the time goes" table of the results.
#include <oneapi/dnnl/dnnl.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <unistd.h>

#include "canary/canary.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double micros_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

canary::DType dtype_of_name(const std::string& name) {
  if (name == "float32") return canary::DType::F32;
  if (name == "int32") return canary::DType::I32;
  if (name == "int64") return canary::DType::I64;
  throw std::runtime_error("unsupported dtype '" + name + "' (float32, int32, int64)");
}

const char* name_of_dtype(canary::DType dtype) {
  switch (dtype) {
    case canary::DType::F32: return "float32";
    case canary::DType::I32: return "int32";
    case canary::DType::I64: return "int64";
    case canary::DType::F64: return "float64";
    default: throw std::runtime_error("output dtype " + std::string(canary::dtype_name(dtype)) + " has no protocol name");
  }
}

// Reads one protocol tensor ({name, dtype, shape, file, offset}) into memory.
canary::Tensor read_tensor(const json& spec) {
  const canary::Shape shape = spec.at("shape").get<canary::Shape>();
  canary::Tensor t = canary::Tensor::empty(dtype_of_name(spec.at("dtype").get<std::string>()), shape);
  const std::string file = spec.at("file").get<std::string>();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open input file " + file);
  in.seekg(spec.value("offset", std::int64_t{0}));
  in.read(static_cast<char*>(t.raw()), static_cast<std::streamsize>(t.nbytes()));
  if (static_cast<std::size_t>(in.gcount()) != t.nbytes())
    throw std::runtime_error("input file " + file + " is shorter than " + canary::shape_to_string(shape));
  return t;
}

canary::NamedTensors read_inputs(const json& specs) {
  canary::NamedTensors inputs;
  for (const json& spec : specs) inputs[spec.at("name").get<std::string>()] = read_tensor(spec);
  return inputs;
}

// Writes a tensor as a raw file and returns its protocol description.
json write_tensor(const std::string& name, const canary::Tensor& t, const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.nbytes()));
  if (!out) throw std::runtime_error("cannot write output file " + path.string());
  return {{"name", name}, {"dtype", name_of_dtype(t.dtype())}, {"shape", t.shape()}, {"file", path.string()}};
}

// Outputs in the model's declared order, written as <prefix>out<k>.bin.
json write_outputs(const canary::Model& model, const canary::NamedTensors& outputs, const std::string& dir,
                   const std::string& prefix) {
  std::filesystem::create_directories(dir);
  json described = json::array();
  const auto& specs = model.outputs();
  for (std::size_t k = 0; k < specs.size(); ++k)
    described.push_back(write_tensor(specs[k].name, outputs.at(specs[k].name),
                                     std::filesystem::path(dir) / (prefix + "out" + std::to_string(k) + ".bin")));
  return described;
}

// A loaded model and the one session that serves it.
struct Served {
  canary::Model model;
  canary::Session session;
};

class Worker {
 public:
  explicit Worker(int threads) { options_.intra_op_threads = threads; }

  json handle(const json& request) {
    const std::string op = request.at("op").get<std::string>();
    if (op == "load") return load(request);
    if (op == "run") return run(request);
    if (op == "stream") return stream(request);
    if (op == "profile") return profile(request);
    if (op == "reference") return reference(request);
    throw std::runtime_error("unknown op '" + op + "'");
  }

 private:
  json load(const json& request) {
    const auto start = Clock::now();
    canary::Runtime runtime(options_);
    canary::Model model = runtime.load(request.at("model").get<std::string>());
    canary::Session session = model.session();
    const double load_us = micros_since(start);
    const std::string id = request.at("id").get<std::string>();
    served_.erase(id);
    served_.emplace(id, Served{model, std::move(session)});
    return {{"ok", true}, {"load_us", load_us}};
  }

  Served& served(const json& request) {
    const std::string id = request.at("id").get<std::string>();
    auto it = served_.find(id);
    if (it == served_.end()) throw std::runtime_error("no model loaded under id '" + id + "'");
    return it->second;
  }

  json run(const json& request) {
    Served& s = served(request);
    const canary::NamedTensors inputs = read_inputs(request.at("inputs"));
    for (int i = 0, n = request.value("warmup", 0); i < n; ++i) s.session.run(inputs);
    // Compiles run in the background; a steady state is what "run" measures.
    s.model.wait_for_compiles();
    std::vector<double> times;
    canary::NamedTensors outputs;
    for (int i = 0, n = request.at("iters").get<int>(); i < n; ++i) {
      const auto start = Clock::now();
      outputs = s.session.run(inputs);
      times.push_back(micros_since(start));
    }
    if (outputs.empty()) throw std::runtime_error("iters must be at least 1");
    return {{"ok", true},
            {"times_us", times},
            {"outputs", write_outputs(s.model, outputs, request.at("output_dir").get<std::string>(), "")}};
  }

  json stream(const json& request) {
    std::vector<canary::NamedTensors> calls;
    for (const json& call : request.at("calls")) calls.push_back(read_inputs(call));
    canary::Options options = options_;
    options.collect_timings = request.value("timings", false);  // for profiles, never for timed streams
    const auto start = Clock::now();
    canary::Runtime runtime(options);
    canary::Model model = runtime.load(request.at("model").get<std::string>());
    canary::Session session = model.session();
    const double create_us = micros_since(start);
    std::vector<double> call_us;
    std::vector<canary::NamedTensors> outputs;
    for (const canary::NamedTensors& inputs : calls) {
      const auto call_start = Clock::now();
      outputs.push_back(session.run(inputs));
      call_us.push_back(micros_since(call_start));
    }
    const double total_us = micros_since(start);
    const std::string dir = request.at("output_dir").get<std::string>();
    json described = json::array();
    for (std::size_t i = 0; i < outputs.size(); ++i)
      described.push_back(write_outputs(model, outputs[i], dir, "call" + std::to_string(i) + "_"));
    const canary::Stats& stats = session.stats();
    return {{"ok", true},        {"create_us", create_us},
            {"call_us", call_us}, {"total_us", total_us},
            {"outputs", described}, {"jit", jit_summary(stats)},
            {"calls_us", stats.time.calls_us}, {"tiers", tier_delta(canary::TimeStats{}, stats.time)}};
  }

  // Outputs of the fp64 reference interpreter for each call: the oracle every
  // contender's outputs are checked against before anything is timed.
  json reference(const json& request) {
    canary::Runtime runtime(options_);
    canary::Model model = runtime.load(request.at("model").get<std::string>());
    canary::Session session = model.reference_session();
    const std::string dir = request.at("output_dir").get<std::string>();
    json described = json::array();
    std::size_t i = 0;
    for (const json& call : request.at("calls")) {
      const canary::NamedTensors outputs = session.run(read_inputs(call));
      described.push_back(write_outputs(model, outputs, dir, "call" + std::to_string(i++) + "_"));
    }
    return {{"ok", true}, {"outputs", described}};
  }

  // The runtime's own timers over `iters` calls of a model loaded for this
  // request with Options::collect_timings (the timed runs above go without).
  json profile(const json& request) {
    canary::Options options = options_;
    options.collect_timings = true;
    canary::Runtime runtime(options);
    canary::Model model = runtime.load(request.at("model").get<std::string>());
    canary::Session session = model.session();
    const canary::NamedTensors inputs = read_inputs(request.at("inputs"));
    for (int i = 0, n = request.value("warmup", 0); i < n; ++i) session.run(inputs);
    model.wait_for_compiles();
    const canary::Stats before = session.stats();  // a copy: stats() is refreshed in place
    const int iters = request.at("iters").get<int>();
    const auto start = Clock::now();
    for (int i = 0; i < iters; ++i) session.run(inputs);
    const double wall_us = micros_since(start);
    const canary::Stats& after = session.stats();
    return {{"ok", true},
            {"wall_us", wall_us},
            {"iters", iters},
            {"calls_us", after.time.calls_us - before.time.calls_us},
            {"tiers", tier_delta(before.time, after.time)},
            {"jit", jit_summary(after)}};
  }

  static json jit_summary(const canary::Stats& stats) {
    return {{"compiles", stats.jit.compiles}, {"compile_ms", stats.jit.compile_ms},
            {"compiled_entries", stats.jit.compiled_entries}, {"guard_failures", stats.jit.guard_failures},
            {"deopts", stats.jit.deopts}, {"retraces", stats.jit.retraces}};
  }

  static json tier_delta(const canary::TimeStats& before, const canary::TimeStats& after) {
    json rows = json::array();
    for (const canary::TierTime& t : after.tiers) {
      double us = t.total_us;
      std::uint64_t count = t.count;
      for (const canary::TierTime& b : before.tiers)
        if (b.tier == t.tier && b.op == t.op) us -= b.total_us, count -= b.count;
      if (count > 0) rows.push_back({{"tier", t.tier}, {"op", t.op}, {"us", us}, {"count", count}});
    }
    return rows;
  }

  canary::Options options_;
  std::map<std::string, Served> served_;
};

// The protocol's channel: the original stdout. Everything else the process
// prints (oneDNN's verbose mode writes to stdout) goes to stderr instead.
std::FILE* protocol_out = nullptr;

void take_stdout_for_protocol() {
  std::fflush(stdout);
  protocol_out = fdopen(dup(STDOUT_FILENO), "w");
  dup2(STDERR_FILENO, STDOUT_FILENO);
}

void reply(const json& message) {
  const std::string line = message.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), protocol_out);
  std::fflush(protocol_out);
}

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

int parse_threads(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--threads") return std::stoi(argv[i + 1]);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  try {
    threads = parse_threads(argc, argv);
  } catch (const std::exception&) {
    std::cerr << "usage: canary_peer_worker --threads N\n";
    return 2;
  }
  take_stdout_for_protocol();
  Worker worker(threads);
  reply({{"ok", true}, {"contender", "canary"}, {"versions", {{"onednn", onednn_version()}}}});
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    json response;
    try {
      const json request = json::parse(line);
      if (request.value("op", "") == "quit") {
        reply({{"ok", true}});
        return 0;
      }
      response = worker.handle(request);
    } catch (const std::exception& e) {
      response = {{"ok", false}, {"error", e.what()}};
    }
    reply(response);
  }
  return 0;
}

// Energy: RAPL counters read from the powercap sysfs tree, the work a plan
// or the interpreter does per call (bytes, flops, bytes materialised), and
// the energy model used where RAPL is not readable.
#include "jit/cost/energy.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>
#include <unordered_map>

namespace canary::jit::cost {

namespace fs = std::filesystem;

namespace {

// Wrap range assumed for a zone without a readable max_energy_range_uj: a
// 32-bit microjoule counter. Real zones always publish it (for the usual
// 15.3 uJ / 61 uJ energy units it is 65.5 kJ / 262 kJ).
constexpr std::uint64_t kDefaultRangeUj = std::uint64_t{1} << 32;

// A counter file's value, or why it could not be read.
struct CounterRead {
  std::optional<std::uint64_t> value;
  std::string error;
};

// Reads one unsigned decimal counter ("12345\n") from a sysfs file.
CounterRead read_counter(const fs::path& path) {
  CounterRead r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    r.error = path.string() + ": " + std::generic_category().message(errno);
    return r;
  }
  char buf[64];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  const int read_errno = errno;
  ::close(fd);
  if (n < 0) {
    r.error = path.string() + ": " + std::generic_category().message(read_errno);
    return r;
  }
  std::string_view text(buf, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    r.error = path.string() + ": not a counter: \"" + std::string(text.substr(0, 20)) + "\"";
    return r;
  }
  r.value = value;
  return r;
}

// The first line of a small text file, or "" when it cannot be read.
std::string read_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

// N when name is prefix followed by decimal digits only.
std::optional<unsigned> zone_index(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  unsigned n = 0;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size();
  const auto [end, ec] = std::from_chars(first, last, n);
  if (ec != std::errc() || end != last) return std::nullopt;
  return n;
}

// Subdirectories of dir named prefix + N, sorted by N; empty on any error.
std::vector<std::pair<unsigned, fs::path>> indexed_dirs(const fs::path& dir, const std::string& prefix,
                                                        std::error_code& ec) {
  std::vector<std::pair<unsigned, fs::path>> found;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto n = zone_index(it->path().filename().string(), prefix);
    std::error_code dir_ec;
    if (n && it->is_directory(dir_ec)) found.emplace_back(*n, it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

// Finds the package zones and their DRAM subzones; any unreadable counter disables the reader.
RaplReader::RaplReader(std::string root) {
  std::error_code ec;
  const auto packages = indexed_dirs(root, "intel-rapl:", ec);
  if (ec) {
    description_ = "not readable: " + root + ": " + ec.message();
    return;
  }
  if (packages.empty()) {
    description_ = "not readable: " + root + " has no intel-rapl zones";
    return;
  }
  std::string labels;
  // Adds one zone; false (with the reason in description_) when its counter is unreadable.
  auto add_zone = [&](const fs::path& dir, const std::string& label) {
    const CounterRead energy = read_counter(dir / "energy_uj");
    if (!energy.value) {
      description_ = "not readable: " + energy.error;
      return false;
    }
    const CounterRead range = read_counter(dir / "max_energy_range_uj");
    zones_.push_back({(dir / "energy_uj").string(), range.value && *range.value > 0 ? *range.value : kDefaultRangeUj});
    labels += (labels.empty() ? "" : " + ") + label;
    return true;
  };
  for (const auto& [n, dir] : packages) {
    const std::string name = read_line(dir / "name");
    bool ok = add_zone(dir, name.empty() ? "package-" + std::to_string(n) : name);
    std::error_code sub_ec;
    for (const auto& sub : indexed_dirs(dir, "intel-rapl:" + std::to_string(n) + ":", sub_ec))
      if (ok && read_line(sub.second / "name") == "dram") ok = add_zone(sub.second, "dram-" + std::to_string(n));
    if (!ok) {
      zones_.clear();
      return;
    }
  }
  description_ = labels + " (" + root + ")";
}

// Reads every zone's counter.
RaplSample RaplReader::read() const {
  RaplSample s;
  s.ok = !zones_.empty();
  for (const Zone& z : zones_) {
    const CounterRead r = read_counter(z.energy_path);
    s.ok = s.ok && r.value.has_value();
    s.energy_uj.push_back(r.value.value_or(0));
  }
  return s;
}

// Sums each zone's increase, unwrapping counters that went down.
double RaplReader::joules_between(const RaplSample& before, const RaplSample& after) const {
  if (!before.ok || !after.ok || before.energy_uj.size() != zones_.size() || after.energy_uj.size() != zones_.size())
    return 0.0;
  double uj = 0.0;
  for (std::size_t i = 0; i < zones_.size(); ++i) {
    const std::uint64_t b = before.energy_uj[i], a = after.energy_uj[i];
    const std::uint64_t range = zones_[i].max_range_uj;
    // The counter wrapped at its range (a counter above the range is read as having restarted at 0).
    const std::uint64_t delta = a >= b ? a - b : (b <= range ? range - b + a : a);
    uj += static_cast<double>(delta);
  }
  return uj * 1e-6;
}

// ---------------------------------------------------------------------------
// Work estimates.

namespace {

using graph::OpKind;

// Elements of a recorded value (0 when undefined).
double value_elements(const TraceValue& v) {
  if (!v.defined) return 0.0;
  double n = 1.0;
  for (std::int64_t d : v.shape) n *= static_cast<double>(d);
  return n;
}

// Bytes of a recorded value.
double value_bytes(const TraceValue& v) { return value_elements(v) * static_cast<double>(dtype_size(v.dtype)); }

// The op kind of a traced kernel instruction (nullopt for structural ones).
std::optional<OpKind> op_kind(const vm::Program& program, const TraceOp& op) {
  if (op.opcode != vm::Opcode::Kernel || op.pc >= program.instruction_count()) return std::nullopt;
  const vm::NodeInfo* node = program.node_of(program.at(op.pc));
  if (!node) return std::nullopt;
  return node->op;
}

// Ops whose output shares its input's buffer: no bytes move.
bool is_view(OpKind kind) {
  return kind == OpKind::Reshape || kind == OpKind::Squeeze || kind == OpKind::Unsqueeze ||
         kind == OpKind::Flatten || kind == OpKind::Identity;
}

// Elements of input i (0 when absent).
double input_elements(const TraceOp& op, std::size_t i) {
  return i < op.inputs.size() ? value_elements(op.inputs[i]) : 0.0;
}
// Last dim of input i (1 when absent or a scalar).
double input_last_dim(const TraceOp& op, std::size_t i) {
  if (i >= op.inputs.size() || op.inputs[i].shape.empty()) return 1.0;
  return static_cast<double>(op.inputs[i].shape.back());
}

// Flops of one traced op: MatMul/Gemm/Conv 2 per multiply-add, LSTM/GRU 2
// per multiply-add of their gate products, everything else one per element
// of its largest operand (elementwise ops: per output element; reductions:
// per input element).
double op_flops(OpKind kind, const TraceOp& op) {
  const double out = op.outputs.empty() ? 0.0 : value_elements(op.outputs[0]);
  switch (kind) {
    case OpKind::MatMul: return 2.0 * out * input_last_dim(op, 0);  // K = A's last dim
    case OpKind::Gemm: {
      // [M, N] output; A is [M, K] or [K, M]: K = numel(A) / M.
      const double m = op.outputs.empty() || op.outputs[0].shape.empty() ? 1.0 : double(op.outputs[0].shape[0]);
      return m > 0 ? 2.0 * out * input_elements(op, 0) / m : 0.0;
    }
    case OpKind::Conv: {
      // W is [Cout, Cin / group, k...]: each output element takes numel(W) / Cout products.
      const double cout = op.inputs.size() > 1 && !op.inputs[1].shape.empty() ? double(op.inputs[1].shape[0]) : 0.0;
      return cout > 0 ? 2.0 * out * input_elements(op, 1) / cout : 0.0;
    }
    case OpKind::LSTM:
    case OpKind::GRU: {
      // X [T, N, I] (or [N, T, I]), W [dirs, G*H, I], R [dirs, G*H, H] with G = 4 (LSTM) or 3 (GRU):
      // every step of every sequence multiplies [I + H] by both: 2 T N dirs G H (I + H).
      const double steps = input_elements(op, 0) / std::max(1.0, input_last_dim(op, 0));
      return 2.0 * steps * (input_elements(op, 1) + input_elements(op, 2));
    }
    default: break;
  }
  if (is_view(kind)) return 0.0;
  double largest = 0.0;
  for (const TraceValue& v : op.inputs) largest = std::max(largest, value_elements(v));
  for (const TraceValue& v : op.outputs) largest = std::max(largest, value_elements(v));
  return largest;
}

// One traced op run as a kernel on its own: all its operands move.
void add_kernel_work(const vm::Program& program, const TraceOp& op, WorkEstimate& w) {
  const std::optional<OpKind> kind = op_kind(program, op);
  if (!kind || is_view(*kind)) return;
  for (const TraceValue& v : op.inputs) w.bytes_moved += value_bytes(v);
  for (const TraceValue& v : op.outputs) {
    w.bytes_moved += value_bytes(v);
    w.bytes_materialised += value_bytes(v);
  }
  w.flops += op_flops(*kind, op);
}

// The traced ops of a fused step's instructions, in order.
std::vector<const TraceOp*> ops_at(const std::unordered_map<vm::Pc, const TraceOp*>& by_pc,
                                   const std::vector<vm::Pc>& pcs) {
  std::vector<const TraceOp*> ops;
  for (vm::Pc pc : pcs) {
    const auto it = by_pc.find(pc);
    if (it != by_pc.end()) ops.push_back(it->second);
  }
  return ops;
}

// Bytes of reg as the first of `ops` to read it saw it.
double bytes_read(const std::vector<const TraceOp*>& ops, vm::RegId reg) {
  for (const TraceOp* op : ops)
    for (const TraceValue& v : op->inputs)
      if (v.reg == reg) return value_bytes(v);
  return 0.0;
}

// Bytes of reg as the last of `ops` to write it left it.
double bytes_written(const std::vector<const TraceOp*>& ops, vm::RegId reg) {
  for (auto op = ops.rbegin(); op != ops.rend(); ++op)
    for (const TraceValue& v : (*op)->outputs)
      if (v.reg == reg) return value_bytes(v);
  return 0.0;
}

// A fused or row kernel: its inputs are read once and its outputs written
// once; intermediates stay in registers. Flops as if each op ran alone.
void add_group_work(const vm::Program& program, const std::vector<const TraceOp*>& ops,
                    const std::vector<vm::RegId>& inputs, const std::vector<vm::RegId>& outputs, WorkEstimate& w) {
  for (vm::RegId r : inputs)
    if (r.valid()) w.bytes_moved += bytes_read(ops, r);
  for (vm::RegId r : outputs) {
    if (!r.valid()) continue;
    w.bytes_moved += bytes_written(ops, r);
    w.bytes_materialised += bytes_written(ops, r);
  }
  for (const TraceOp* op : ops)
    if (const auto kind = op_kind(program, *op)) w.flops += op_flops(*kind, *op);
}

}  // namespace

// Sums the work of each step, taking shapes from the trace by pc.
WorkEstimate estimate_work(const Plan& plan, const Trace& trace, const vm::Program& program) {
  std::unordered_map<vm::Pc, const TraceOp*> by_pc;
  for (const TraceOp& op : trace.ops) by_pc.emplace(op.pc, &op);
  WorkEstimate w;
  for (const Step& step : plan.steps) {
    if (step.kind == StepKind::Fused && step.fused < plan.fused.size()) {
      const FusedStep& f = plan.fused[step.fused];
      add_group_work(program, ops_at(by_pc, f.pcs), f.inputs, f.outputs, w);
    } else if (step.kind == StepKind::Row && step.fused < plan.rows.size()) {
      const RowStep& r = plan.rows[step.fused];
      std::vector<vm::RegId> inputs = r.inputs;
      inputs.push_back(r.scale);
      inputs.push_back(r.bias);
      add_group_work(program, ops_at(by_pc, r.pcs), inputs, {r.output}, w);
    } else if (step.kind == StepKind::Kernel) {
      const auto it = by_pc.find(step.pc);
      if (it != by_pc.end()) add_kernel_work(program, *it->second, w);
    }
    // Move, Branch and LoopNext share buffers or test a flag: no work counted.
  }
  return w;
}

// Sums the work of every traced op run as its own kernel.
WorkEstimate estimate_interpreter_work(const Trace& trace, const vm::Program& program) {
  WorkEstimate w;
  for (const TraceOp& op : trace.ops) add_kernel_work(program, op, w);
  return w;
}

// ---------------------------------------------------------------------------
// Energy model.
//
// Core power per busy core by ISA tier. Server Xeons (Skylake-SP to Sapphire
// Rapids) spend roughly 150-350 W of TDP over 20-56 cores, i.e. 4-7 W per
// fully busy core including its share of uncore; wide vectors draw more
// (the reason for the AVX2 / AVX-512 frequency licences), so the tiers step
// up by 1 W each: scalar 4 W, AVX2 5 W, AVX-512 6 W. One busy core is
// assumed (the measured time is wall time of a call on the calling thread).
//
// Memory traffic: 20 pJ per byte moved. A DRAM access itself costs about
// 20 pJ per bit (1.3-2.6 nJ per 64-bit word in published 45 nm figures), an L2 or
// L3 access 1-2 pJ per byte; bytes_moved counts every operand a step reads
// or writes, most of which stay in cache for per-call tensors, so the
// constant is a blended figure that charges traffic without letting it
// dominate the core term. It matters for comparisons between candidates
// (fused vs unfused moves fewer bytes), not for absolute joules.
namespace {

// Power of one busy core running code of the tier.
double core_watts(x86::Isa isa) {
  switch (isa) {
    case x86::Isa::Scalar: return 4.0;
    case x86::Isa::Avx2: return 5.0;
    case x86::Isa::Avx512: return 6.0;
  }
  return 4.0;
}

constexpr double kJoulesPerByte = 20e-12;

}  // namespace

// Core energy for the busy time plus memory energy for the bytes moved.
double modelled_joules(const WorkEstimate& work, x86::Isa isa, double seconds) {
  const double busy = std::isfinite(seconds) && seconds > 0 ? seconds : 0.0;
  const double bytes = std::isfinite(work.bytes_moved) && work.bytes_moved > 0 ? work.bytes_moved : 0.0;
  return core_watts(isa) * busy + kJoulesPerByte * bytes;
}

}  // namespace canary::jit::cost

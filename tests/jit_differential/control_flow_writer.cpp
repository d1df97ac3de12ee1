// GraphWriter control flow: If nodes whose condition is computed exactly from
// data (sum(sign(input)) > 0, or the iteration number inside a Loop body), and
// Loops that carry a Tanh-bounded state through an RNN-like cell, either over
// the T axis of a captured input or for a trip count (input or constant).
#include <algorithm>
#include <cmath>

#include "tests/jit_differential/graph_writer.h"

namespace canary::differential {
namespace {

// Indentation of a level.
std::string pad(int level) { return std::string(static_cast<std::size_t>(2 * level), ' '); }

// "a, b, c".
std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s;
}

// The type text of an f32 value with basic dims: "f32[N, C]".
std::string f32_type(const Dims& dims) { return "f32[" + joined(dims) + "]"; }

}  // namespace

// Emits a node whose single output is not an f32 pool value (conditions, shapes); returns its name.
std::string GraphWriter::raw_node(Scope& scope, const std::string& op, const std::vector<std::string>& args,
                                  const std::string& attrs) {
  std::string name = fresh("c");
  for (const std::string& a : args) note_use(a);
  line(scope, name + " = " + op + "(" + joined(args) + ")" + (attrs.empty() ? "" : " {" + attrs + "}"));
  ++graph_.features.ops;
  return name;
}

// A main-graph If on sum(sign(input)) > 0 over one or two visible values.
std::optional<Val> GraphWriter::if_node(Scope& scope) {
  if (if_done_) return std::nullopt;
  if_done_ = true;
  std::string cond = if_condition(scope);
  std::vector<Val> targets{*pick(scope, [](const Val&) { return true; })};
  if (rng_.chance(0.3)) {
    std::optional<Val> second = pick(scope, [&](const Val& v) { return v.name != targets[0].name; });
    if (second) targets.push_back(*second);
  }
  return if_on(scope, cond, targets).back();
}

// The condition's name: i > k inside a Loop body, else sum(sign(x)) > 0 for a graph input x.
std::string GraphWriter::if_condition(Scope& scope) {
  if (!scope.iteration.empty()) {
    std::string k = const_i64(scope, {}, {rng_.range(0, 2)});
    return raw_node(scope, rng_.chance(0.5) ? "Greater" : "Less", {scope.iteration, k}, "");
  }
  std::optional<Val> x = pick(scope, [](const Val& v) { return v.is_input; });
  graph_.if_condition_inputs.push_back(x->name);
  std::string sign = raw_node(scope, "Sign", {x->name}, "");
  std::string sum = raw_node(scope, "ReduceSum", {sign}, "keepdims = 0");
  std::string zero = const_scalar(scope, 0.0f);
  if (rng_.chance(0.5)) return raw_node(scope, "Greater", {sum, zero}, "");
  return raw_node(scope, "Less", {zero, sum}, "");
}

// Emits `outs = If(cond) {else_branch, then_branch}`; each output keeps its target's dims.
std::vector<Val> GraphWriter::if_on(Scope& scope, const std::string& cond, const std::vector<Val>& targets) {
  std::string id = fresh("if");
  std::vector<Val> then_vals, else_vals;
  std::string else_text = branch(scope, "else_" + id, targets, &else_vals);
  std::string then_text = branch(scope, "then_" + id, targets, &then_vals);
  std::vector<Val> outs;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    Bound b = join_bounds(then_vals[i].bound, else_vals[i].bound);
    b.depth += 1;
    outs.push_back(Val{fresh("v"), targets[i].dims, b, false});
    names.push_back(outs.back().name);
  }
  note_use(cond);
  line(scope, joined(names) + " = If(" + cond + ") {");
  scope.text += pad(scope.indent + 1) + "else_branch = " + else_text + ",\n";
  scope.text += pad(scope.indent + 1) + "then_branch = " + then_text + "\n";
  line(scope, "} \"" + id + "\"");
  for (const Val& v : outs) scope.values.push_back(v);
  ++graph_.features.ops;
  graph_.features.if_node = true;
  return outs;
}

// The text of one branch graph: 0 to 3 dim-preserving steps from each target.
std::string GraphWriter::branch(Scope& scope, const std::string& graph_name, const std::vector<Val>& targets,
                                std::vector<Val>* results) {
  Scope br;
  br.parent = &scope;
  br.indent = scope.indent + 2;
  br.iteration = scope.iteration;
  std::vector<std::string> outs;
  for (const Val& t : targets) {
    Val cur = t;
    for (std::int64_t n = rng_.range(0, 3); n > 0; --n) cur = preserving_step(br, cur);
    results->push_back(cur);
    outs.push_back(cur.name);
    note_use(cur.name);
  }
  return "graph " + graph_name + "() -> (" + joined(outs) + ") {\n" + br.text + pad(scope.indent + 1) + "}";
}

// A unary op, a binary op with an operand that broadcasts into a's dims, or a squash.
Val GraphWriter::preserving_step(Scope& scope, const Val& a) {
  double r = rng_.uniform(0.0, 1.0);
  if (r < 0.45) return unary(scope, a);
  if (r < 0.9) {
    std::optional<Val> b = rng_.chance(0.6) ? partner(scope, a, true) : std::nullopt;
    return binary(scope, a, b ? *b : constant_like(scope, a, true));
  }
  return squash(scope, a, rng_.chance(0.5) ? 1.0 : 4.0);
}

// A Loop in the main graph: over the T axis of a rank-3 value, or for a trip count.
std::optional<Val> GraphWriter::loop_node(Scope& scope) {
  if (loop_done_ || scope.parent) return std::nullopt;
  std::optional<Val> seq = pick(scope, [](const Val& v) { return v.dims.size() == 3 && v.dims[2] == "T" && is_basic(v.dims); });
  if (seq && rng_.chance(0.6)) return loop_over_t(scope, *seq);
  std::optional<Val> init = pick(scope, [](const Val& v) { return !v.dims.empty() && is_basic(v.dims); });
  if (!init) return std::nullopt;
  return loop_with_trip(scope, *init);
}

// h_t = Tanh(cell(x_t W + h U)) over x_t = seq[:, :, t], t < T; h_0 = Tanh(mean over T).
std::optional<Val> GraphWriter::loop_over_t(Scope& scope, const Val& seq) {
  loop_done_ = true;
  std::string steps = raw_node(scope, "Shape", {seq.name}, "start = 2, end = 3");
  Val mean = emit(scope, "ReduceMean", {seq.name}, "axes = [2], keepdims = 0", {seq.dims[0], seq.dims[1]},
                  reduce_mean_bound(seq.bound, kMaxT));
  Val h0 = emit(scope, "Tanh", {mean.name}, "", mean.dims, unary_bound(UnaryRule::Tanh, mean.bound));
  Scope body;
  body.parent = &scope;
  body.indent = scope.indent + 2;
  body.iteration = fresh("i");
  Val h{fresh("h"), h0.dims, carried_bound(-1.0, 1.0), false};
  body.values.push_back(h);
  Bound xb = seq.bound;
  xb.depth += 1;
  Val xt = emit(body, "Gather", {seq.name, body.iteration}, "axis = 2", h0.dims, xb);
  const std::string& width = h0.dims.back();
  Val a = xt, r = h;
  if (dim_min(width) == dim_max(width) && dim_max(width) <= 16) {
    std::int64_t k = dim_min(width);
    // Square weights with entries in [-1, 1] / k, so every column sum of |W| is at most 1.
    auto weights = [&](double* col_abs) {
      std::vector<float> w(static_cast<std::size_t>(k * k));
      std::vector<double> col(static_cast<std::size_t>(k), 0.0);
      for (std::size_t i = 0; i < w.size(); ++i) {
        w[i] = static_cast<float>(std::round(rng_.uniform(-1, 1) * 8.0) / 8.0 / static_cast<double>(k));
        col[i % static_cast<std::size_t>(k)] += std::abs(static_cast<double>(w[i]));
      }
      *col_abs = std::max(*std::max_element(col.begin(), col.end()), 0.125);
      return w;
    };
    double ca = 0, cr = 0;
    std::string wa = const_f32(body, {k, k}, weights(&ca));
    std::string wr = const_f32(body, {k, k}, weights(&cr));
    a = emit(body, "MatMul", {xt.name, wa}, "", xt.dims, matmul_bound(xt.bound, k, ca));
    r = emit(body, "MatMul", {h.name, wr}, "", h.dims, matmul_bound(h.bound, k, cr));
  } else {
    float ka = random_constant(-1.0, 1.0), kr = random_constant(-1.0, 1.0);
    a = emit(body, "Mul", {xt.name, const_scalar(body, ka)}, "", xt.dims, mul_bound(xt.bound, exact_bound(ka, ka)));
    r = emit(body, "Mul", {const_scalar(body, kr), h.name}, "", h.dims, mul_bound(h.bound, exact_bound(kr, kr)));
  }
  Val pre = emit(body, "Add", {a.name, r.name}, "", h.dims, add_bound(a.bound, r.bound));
  Val p = cell(body, pre);
  Val hn = emit(body, "Tanh", {p.name}, "", p.dims, unary_bound(UnaryRule::Tanh, p.bound));
  graph_.features.loop_over_t = true;
  return finish_loop(scope, body, steps, h0, h, hn, rng_.chance(0.5) ? hn : p, kMaxT, "T");
}

// h_t = Tanh(cell(h)) for a trip count from an i64 input (0..kMaxTrip) or a constant.
std::optional<Val> GraphWriter::loop_with_trip(Scope& scope, const Val& init) {
  loop_done_ = true;
  std::string trip;
  std::int64_t trips = kMaxTrip;
  if (rng_.chance(0.5)) {
    trip = "steps";
    input_decls_.push_back("steps: i64[]");
    graph_.inputs.push_back(InputSpec{"steps", DType::I64, {}});
  } else {
    trips = rng_.range(0, 3);
    trip = const_i64(scope, {}, {trips});
  }
  bool bounded = init.bound.lo >= -1.0 && init.bound.hi <= 1.0;
  Val h0 = bounded ? init : emit(scope, "Tanh", {init.name}, "", init.dims, unary_bound(UnaryRule::Tanh, init.bound));
  Scope body;
  body.parent = &scope;
  body.indent = scope.indent + 2;
  body.iteration = fresh("i");
  Val h{fresh("h"), h0.dims, carried_bound(-1.0, 1.0), false};
  body.values.push_back(h);
  Val p = cell(body, h);
  Val hn = emit(body, "Tanh", {p.name}, "", p.dims, unary_bound(UnaryRule::Tanh, p.bound));
  std::string scan_dim = fresh("L");
  derived_min_[scan_dim] = 0;
  derived_max_[scan_dim] = trips;
  return finish_loop(scope, body, trip, h0, h, hn, rng_.chance(0.5) ? hn : p, trips, scan_dim);
}

// One to three dim-preserving steps from start, sometimes through an If on the iteration number.
Val GraphWriter::cell(Scope& body, const Val& start) {
  Val cur = start;
  for (std::int64_t n = rng_.range(1, 3); n > 0; --n) cur = preserving_step(body, cur);
  if (!graph_.features.if_in_loop && rng_.chance(0.3)) {
    graph_.features.if_in_loop = true;
    cur = if_on(body, if_condition(body), {cur}).back();
  }
  return cur;
}

// Emits `hl[, hs] = Loop(trip, true, h0) {body}` and registers its outputs in the scope.
std::optional<Val> GraphWriter::finish_loop(Scope& scope, Scope& body, const std::string& trip, const Val& h0, const Val& h,
                                            const Val& hn, const Val& scan, std::int64_t trips, const std::string& scan_dim) {
  std::string keep = fresh("k");
  line(scope, "const " + keep + ": bool[] = [true]");
  std::string id = fresh("loop");
  std::string cond = fresh("c");
  bool with_scan = rng_.chance(0.6);
  Bound hb = hn.bound;
  hb.lo = std::min(hb.lo, h0.bound.lo);
  hb.hi = std::max(hb.hi, h0.bound.hi);
  hb.g = loop_error(h0.bound, hn.bound, trips);
  hb.s = 0.0;
  hb.depth = h0.bound.depth + static_cast<int>(trips) * hn.bound.depth;
  Val hl{fresh("v"), h0.dims, hb, false};
  std::vector<std::string> outs{hl.name}, body_outs{cond, hn.name};
  note_use(hn.name);
  note_use(trip);
  note_use(h0.name);
  Val hs;
  if (with_scan) {
    Bound sb = scan.bound;
    sb.g = scan.bound.g + scan.bound.s * hb.g;
    sb.s = 0.0;
    sb.depth = hb.depth;
    Dims dims{scan_dim};
    dims.insert(dims.end(), h0.dims.begin(), h0.dims.end());
    hs = Val{fresh("v"), dims, sb, false};
    outs.push_back(hs.name);
    body_outs.push_back(scan.name);
    note_use(scan.name);
  }
  std::string sig = "graph body_" + id + "(" + body.iteration + ": i64[], " + cond + ": bool[], " + h.name + ": " +
                    f32_type(h0.dims) + ") -> (" + joined(body_outs) + ")";
  line(scope, joined(outs) + " = Loop(" + trip + ", " + keep + ", " + h0.name + ") {");
  scope.text += pad(scope.indent + 1) + "body = " + sig + " {\n" + body.text + pad(scope.indent + 1) + "}\n";
  line(scope, "} \"" + id + "\"");
  scope.values.push_back(hl);
  if (with_scan) scope.values.push_back(hs);
  ++graph_.features.ops;
  graph_.features.loop = true;
  return with_scan && rng_.chance(0.5) ? hs : hl;
}

}  // namespace canary::differential

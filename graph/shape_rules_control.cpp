// Shape rules of control flow: Loop, If and Scan check their body
// signatures, infer the bodies, and derive the node's outputs from them.
#include "graph/shape_rules.h"

namespace canary::graph::rules {
namespace {

// The mutable subgraph behind a graph attribute.
Graph& subgraph(const InferContext& ctx, std::string_view name) {
  ctx.attr_graph(name);  // checks presence and type
  return *std::get<std::shared_ptr<Graph>>(ctx.node().attrs.find(name)->second);
}

// Copies the types and known contents of the outer values into the captures.
void copy_captures(const InferContext& ctx, Graph& body) {
  for (const Capture& c : body.captures()) {
    const ValueInfo& outer = ctx.graph().value(c.outer);
    ValueInfo& local = body.value(c.local);
    local.type = outer.type;
    local.known_dims = outer.known_dims;
  }
}

// True for rank 0 or a single-element 1-D shape.
bool is_scalar_like(const ValueType& t) {
  return t.rank() == 0 || (t.rank() == 1 && t.shape[0].is_constant() && t.shape[0].value() == 1);
}

// Requires a subgraph value to be a scalar of a dtype.
void expect_scalar(const InferContext& ctx, const ValueType& t, DType dtype, const std::string& what) {
  if (t.dtype != dtype || !is_scalar_like(t)) {
    ctx.fail(ErrorKind::Model, what + " must be a " + std::string(dtype_name(dtype)) + " scalar, got " + t.to_string());
  }
}

// Requires a body value's dtype and rank to match the outer value's.
void expect_same_kind(const InferContext& ctx, const ValueType& body, const ValueType& outer, const std::string& what) {
  if (body.dtype != outer.dtype || body.rank() != outer.rank()) {
    ctx.fail(ErrorKind::Model, what + " is " + body.to_string() + " in the body but " + outer.to_string() + " outside");
  }
}

// The type of a subgraph's i-th output.
const ValueType& output_type(const Graph& g, std::size_t i) { return g.value(g.outputs()[i]).type; }

// True when a value is a constant whose first element is nonzero.
bool is_constant_true(const ValueInfo& v) { return v.constant && v.constant->numel() > 0 && v.constant->element_as_double(0) != 0; }

// The number of iterations of a Loop when it is known: M, when the condition
// cannot stop the loop early. A negative constant M runs no iteration.
std::optional<Dim> loop_trip_count(const InferContext& ctx, const Graph& body) {
  std::optional<DimVector> m = ctx.input_dims_value(0);
  if (!m || m->size() != 1) return std::nullopt;
  const Dim trips = (*m)[0].is_constant() && (*m)[0].value() < 0 ? Dim(0) : (*m)[0];
  if (!ctx.has_input(1)) return trips;
  const ValueInfo* cond = ctx.input_constant(1) ? &ctx.input_info(1) : nullptr;
  ValueId body_cond = body.outputs()[0];
  bool body_keeps = body_cond == body.inputs()[1] || is_constant_true(body.value(body_cond));
  if (cond && is_constant_true(*cond) && body_keeps) return trips;
  return std::nullopt;
}

// Checks the Loop body's inputs against the node's inputs.
void check_loop_inputs(const InferContext& ctx, const Graph& body, int carried) {
  if (static_cast<int>(body.inputs().size()) != 2 + carried) {
    ctx.fail(ErrorKind::Model, "body has " + std::to_string(body.inputs().size()) + " inputs, expected " +
                                   std::to_string(2 + carried) + " (iteration number, condition and " +
                                   std::to_string(carried) + " carried values)");
  }
  if (ctx.has_input(0)) expect_scalar(ctx, ctx.input_type(0), DType::I64, "trip count M");
  if (ctx.has_input(1)) expect_scalar(ctx, ctx.input_type(1), DType::Bool, "condition");
  expect_scalar(ctx, body.value(body.inputs()[0]).type, DType::I64, "body input 0 (iteration number)");
  expect_scalar(ctx, body.value(body.inputs()[1]).type, DType::Bool, "body input 1 (condition)");
  for (int i = 0; i < carried; ++i) {
    expect_same_kind(ctx, body.value(body.inputs()[2 + i]).type, ctx.input_type(2 + i),
                     "carried value " + std::to_string(i));
  }
}

}  // namespace

// Loop: carried outputs take the body's types; scan outputs get the trip
// count (M when known, else a fresh symbol) prepended.
void infer_loop(InferContext& ctx) {
  Graph& body = subgraph(ctx, "body");
  int carried = ctx.num_inputs() - 2;
  check_loop_inputs(ctx, body, carried);
  int scans = static_cast<int>(body.outputs().size()) - 1 - carried;
  if (scans < 0 || ctx.num_outputs() != carried + scans) {
    ctx.fail(ErrorKind::Model, "body has " + std::to_string(body.outputs().size()) + " outputs and the node " +
                                   std::to_string(ctx.num_outputs()) + "; expected body = 1 + node outputs, node >= " +
                                   std::to_string(carried) + " carried");
  }
  copy_captures(ctx, body);
  infer_subgraph(body);
  expect_scalar(ctx, output_type(body, 0), DType::Bool, "body output 0 (condition)");
  for (int i = 0; i < carried; ++i) {
    expect_same_kind(ctx, output_type(body, 1 + i), ctx.input_type(2 + i), "carried output " + std::to_string(i));
    ctx.set_output(i, output_type(body, 1 + i));
  }
  std::optional<Dim> trip = loop_trip_count(ctx, body);
  Dim length = trip ? *trip : ctx.symbols().fresh();
  for (int k = 0; k < scans; ++k) {
    ValueType t = output_type(body, 1 + carried + k);
    t.shape.insert(t.shape.begin(), length);
    ctx.set_output(carried + k, t);
  }
}

// If: both branches give the same number and dtypes of outputs; a dim is kept
// where the branches agree, else it becomes a fresh symbol.
void infer_if(InferContext& ctx) {
  expect_scalar(ctx, ctx.input_type(0), DType::Bool, "condition");
  Graph& then_g = subgraph(ctx, "then_branch");
  Graph& else_g = subgraph(ctx, "else_branch");
  for (Graph* g : {&then_g, &else_g}) {
    if (!g->inputs().empty()) ctx.fail(ErrorKind::Model, "branch '" + g->name + "' must not have inputs");
    if (static_cast<int>(g->outputs().size()) != ctx.num_outputs()) {
      ctx.fail(ErrorKind::Model, "branch '" + g->name + "' has " + std::to_string(g->outputs().size()) +
                                     " outputs, the node has " + std::to_string(ctx.num_outputs()));
    }
    copy_captures(ctx, *g);
    infer_subgraph(*g);
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const ValueType& a = output_type(then_g, i);
    const ValueType& b = output_type(else_g, i);
    if (a.dtype != b.dtype || a.rank() != b.rank()) {
      ctx.fail(ErrorKind::Shape, "output " + std::to_string(i) + " is " + a.to_string() + " in the then branch but " +
                                     b.to_string() + " in the else branch");
    }
    ValueType out{a.dtype, {}};
    for (int k = 0; k < a.rank(); ++k)
      out.shape.push_back(ctx.symbols().equal(a.shape[k], b.shape[k]) ? a.shape[k] : ctx.symbols().fresh());
    ctx.set_output(i, out);
  }
}

namespace {

// An ints attribute of a given length, or zeros when absent.
std::vector<std::int64_t> scan_ints(const InferContext& ctx, std::string_view name, int length) {
  if (!ctx.has_attr(name)) return std::vector<std::int64_t>(static_cast<std::size_t>(length), 0);
  std::vector<std::int64_t> v = ctx.attr_ints(name);
  if (static_cast<int>(v.size()) != length) {
    ctx.fail(ErrorKind::Model, "attribute '" + std::string(name) + "' has " + std::to_string(v.size()) +
                                   " entries, expected " + std::to_string(length));
  }
  bool direction = name.find("direction") != std::string_view::npos;
  for (std::int64_t x : v)
    if (direction && x != 0 && x != 1) ctx.fail(ErrorKind::Model, "attribute '" + std::string(name) + "' must hold 0 or 1");
  return v;
}

// The common scan length of the scanned inputs, checking the body's inputs.
Dim scan_length(InferContext& ctx, const Graph& body, int states, int scanned) {
  std::vector<std::int64_t> axes = scan_ints(ctx, "scan_input_axes", scanned);
  scan_ints(ctx, "scan_input_directions", scanned);
  std::optional<Dim> length;
  for (int j = 0; j < scanned; ++j) {
    const ValueType& in = ctx.input_type(states + j);
    int axis = ctx.normalize_axis(axes[j], in.rank(), "scan input axis");
    ValueType slice = in;
    slice.shape.erase(slice.shape.begin() + axis);
    expect_same_kind(ctx, body.value(body.inputs()[states + j]).type, slice, "scan input " + std::to_string(j));
    if (length) ctx.assert_equal(*length, in.shape[axis], "scan length of " + ctx.describe_input(states + j));
    else length = in.shape[axis];
  }
  return *length;
}

}  // namespace

// Scan: final states take the body's state types; scan outputs get the scan
// length inserted at their scan_output_axes (default 0).
void infer_scan(InferContext& ctx) {
  Graph& body = subgraph(ctx, "body");
  std::int64_t scanned = ctx.attr_int("num_scan_inputs");
  if (scanned < 1 || scanned > ctx.num_inputs()) {
    ctx.fail(ErrorKind::Model, "attribute 'num_scan_inputs' is " + std::to_string(scanned) + ", expected 1.." +
                                   std::to_string(ctx.num_inputs()));
  }
  int states = ctx.num_inputs() - static_cast<int>(scanned);
  int outs = static_cast<int>(body.outputs().size()) - states;
  if (static_cast<int>(body.inputs().size()) != ctx.num_inputs() || outs < 0 || ctx.num_outputs() != states + outs) {
    ctx.fail(ErrorKind::Model, "body signature (" + std::to_string(body.inputs().size()) + " inputs, " +
                                   std::to_string(body.outputs().size()) + " outputs) does not match the node (" +
                                   std::to_string(ctx.num_inputs()) + " inputs, " + std::to_string(ctx.num_outputs()) +
                                   " outputs)");
  }
  for (int i = 0; i < states; ++i)
    expect_same_kind(ctx, body.value(body.inputs()[i]).type, ctx.input_type(i), "state " + std::to_string(i));
  Dim length = scan_length(ctx, body, states, static_cast<int>(scanned));
  std::vector<std::int64_t> out_axes = scan_ints(ctx, "scan_output_axes", outs);
  scan_ints(ctx, "scan_output_directions", outs);
  copy_captures(ctx, body);
  infer_subgraph(body);
  for (int i = 0; i < states; ++i) {
    expect_same_kind(ctx, output_type(body, i), ctx.input_type(i), "state output " + std::to_string(i));
    ctx.set_output(i, output_type(body, i));
  }
  for (int k = 0; k < outs; ++k) {
    ValueType t = output_type(body, states + k);
    int axis = ctx.normalize_axis(out_axes[k], t.rank() + 1, "scan output axis");
    t.shape.insert(t.shape.begin() + axis, length);
    ctx.set_output(states + k, t);
  }
}

}  // namespace canary::graph::rules

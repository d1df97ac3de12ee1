// Lowering of control flow to bytecode: If → conditional jumps over the two
// branches; Loop and Scan → init, header (anchor), body, scan appends,
// carried-value moves and a back jump, then final moves and scan stacking.
//
//   If:    jump_if_false c → ELSE; <then>; move outs ← then; jump END;
//          ELSE: <else>; move outs ← else; END:
//   Loop:  move (cond, carried) ← (cond0 | true, initial); loop_init M
//          HEAD: loop_header cond → EXIT, writes iter; <body>; scan_append…
//          move (cond, carried) ← body outputs; loop_next → HEAD
//          EXIT: move outs ← carried; scan_stack…
//   Scan:  like Loop, with scan_init (trip = scanned length) and a
//          scan_slice per scanned input at the top of the body.
// Captured outer values are read directly from the enclosing registers.
#include <string>

#include "canary/error.h"
#include "graph/op_registry.h"
#include "vm/program_builder.h"

namespace canary::vm {
namespace {

// The subgraph attribute `name` of a node.
const graph::Graph& subgraph(ProgramBuilder& b, const graph::Graph& g, const graph::Node& n, std::string_view name) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end() || !std::holds_alternative<std::shared_ptr<graph::Graph>>(it->second) ||
      !std::get<std::shared_ptr<graph::Graph>>(it->second))
    b.fail(g, n, "missing subgraph attribute '" + std::string(name) + "'");
  return *std::get<std::shared_ptr<graph::Graph>>(it->second);
}

// An int-list attribute, or `fallback` zeros when absent.
std::vector<std::int64_t> ints_attr(const graph::Node& n, std::string_view name, std::size_t fallback) {
  auto it = n.attrs.find(name);
  if (it != n.attrs.end() && std::holds_alternative<std::vector<std::int64_t>>(it->second))
    return std::get<std::vector<std::int64_t>>(it->second);
  return std::vector<std::int64_t>(fallback, 0);
}

// Binds a subgraph's captures to the registers of the values they stand for.
void bind_captures(ProgramBuilder& b, const graph::Graph& parent, const graph::Graph& sub) {
  for (const graph::Capture& c : sub.captures()) b.bind(sub, c.local, b.reg_of(parent, c.outer));
}

// Lowers a subgraph in place and returns its output registers.
std::vector<RegId> lower_subgraph(ProgramBuilder& b, const graph::Graph& parent, const graph::Graph& sub) {
  bind_captures(b, parent, sub);
  lower_graph_body(b, sub);
  std::vector<RegId> outs;
  for (graph::ValueId v : sub.outputs()) outs.push_back(b.reg_of(sub, v));
  return outs;
}

// Fresh registers for a subgraph's inputs [first, first + count).
std::vector<RegId> bind_subgraph_inputs(ProgramBuilder& b, const graph::Graph& sub, std::size_t first,
                                        std::size_t count) {
  std::vector<RegId> regs;
  for (std::size_t i = first; i < first + count; ++i) {
    graph::ValueId v = sub.inputs()[i];
    RegId r = b.new_vreg(sub.value(v).name, b.promoted(sub.value(v).type));
    b.bind(sub, v, r);
    regs.push_back(r);
  }
  return regs;
}

// Normalises a possibly negative axis against a rank or fails naming it.
int normalize_axis(ProgramBuilder& b, const graph::Graph& g, const graph::Node& n, std::int64_t axis, int rank,
                   const std::string& what) {
  const std::int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) b.fail(g, n, what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(a);
}

// The loop part shared by Loop and Scan after its init instruction: header,
// body (via `body_fn`), scan appends, carried moves, back jump. The loop's
// exit pc is next_pc() afterwards.
template <typename BodyFn>
void emit_loop(ProgramBuilder& b, std::uint32_t node, const std::string& name, const LoopParams& lp, RegId cond,
               RegId iter, const std::vector<RegId>& carried, BodyFn body_fn) {
  const Pc header = b.emit(Opcode::LoopHeader, {cond}, {iter});
  b.at(header).slot = lp.loop;
  b.at(header).node = node;
  b.at(header).aux = b.new_anchor(AnchorKind::LoopHeader, header, name).index;
  auto [next_cond, next_carried, scan_elems] = body_fn();
  for (std::uint32_t k = 0; k < scan_elems.size(); ++k) {
    Pc pc = b.emit(Opcode::ScanAppend, {scan_elems[k]}, {});
    b.at(pc).slot = lp.first_scan + k;
    b.at(pc).node = node;
  }
  std::vector<RegId> dsts = carried, srcs = next_carried;
  if (cond.valid()) {
    dsts.insert(dsts.begin(), cond);
    srcs.insert(srcs.begin(), next_cond);
  }
  b.emit_moves(dsts, srcs, node);
  const Pc next = b.emit(Opcode::LoopNext, {}, {});
  b.at(next).slot = lp.loop;
  b.at(next).target = header;
  b.at(next).node = node;
  b.loops.push_back(LoopRange{header, next});
  b.at(header).target = b.next_pc();
}

// After the loop: final carried values into the node's outputs, then stacking.
void emit_loop_exit(ProgramBuilder& b, std::uint32_t node, const LoopParams& lp, const std::vector<RegId>& carried,
                    const std::vector<RegId>& outs, const std::vector<graph::ValueType>& elem_types,
                    const std::vector<std::int64_t>& axes, const std::vector<std::int64_t>& reverse) {
  std::vector<RegId> dsts, srcs;
  for (std::size_t i = 0; i < carried.size() && i < outs.size(); ++i) {
    if (!outs[i].valid()) continue;
    dsts.push_back(outs[i]);
    srcs.push_back(carried[i]);
  }
  b.emit_moves(dsts, srcs, node);
  for (std::uint32_t k = 0; k < lp.scan_count; ++k) {
    const std::size_t o = carried.size() + k;
    if (o >= outs.size() || !outs[o].valid()) continue;
    auto sp = std::make_unique<StackParams>();
    sp->axis = static_cast<int>(axes[k]);
    sp->reverse = reverse[k] != 0;
    sp->elem_dtype = elem_types[k].dtype;
    sp->elem_shape = elem_types[k].shape;
    Pc pc = b.emit(Opcode::ScanStack, {}, {outs[o]});
    b.at(pc).slot = lp.first_scan + k;
    b.at(pc).node = node;
    b.at(pc).params = b.own(std::move(sp));
  }
}

// Lowers one branch of an If and moves its outputs into the node's.
void lower_branch(ProgramBuilder& b, const graph::Graph& g, const graph::Node& n, const graph::Graph& branch,
                  const std::vector<RegId>& outs, std::uint32_t node) {
  std::vector<RegId> srcs = lower_subgraph(b, g, branch);
  if (srcs.size() != outs.size())
    b.fail(g, n, "branch '" + branch.name + "' has " + std::to_string(srcs.size()) + " outputs, the node has " +
                     std::to_string(outs.size()));
  std::vector<RegId> d, s;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].valid()) continue;
    d.push_back(outs[i]);
    s.push_back(srcs[i]);
  }
  b.emit_moves(d, s, node);
}

// Scan output element types (promoted) of a body.
std::vector<graph::ValueType> scan_elem_types(ProgramBuilder& b, const graph::Graph& body, std::size_t first) {
  std::vector<graph::ValueType> types;
  for (std::size_t i = first; i < body.outputs().size(); ++i) types.push_back(b.promoted(body.value(body.outputs()[i]).type));
  return types;
}

}  // namespace

// If: both branches inline, selected by a conditional jump.
void lower_if(ProgramBuilder& b, const graph::Graph& g, const graph::Node& n) {
  const std::uint32_t node = b.add_node_info(g, n);
  const graph::Graph& then_g = subgraph(b, g, n, "then_branch");
  const graph::Graph& else_g = subgraph(b, g, n, "else_branch");
  RegId cond = b.reg_of(g, n.inputs.at(0));
  std::vector<RegId> outs = b.declare_node_outputs(g, n);
  const Pc jump_false = b.emit(Opcode::JumpIfFalse, {cond}, {});
  b.at(jump_false).node = node;
  lower_branch(b, g, n, then_g, outs, node);
  const Pc jump_end = b.emit(Opcode::Jump, {}, {});
  b.at(jump_false).target = b.next_pc();
  lower_branch(b, g, n, else_g, outs, node);
  b.at(jump_end).target = b.next_pc();
}

// Loop (ONNX): optional trip count M and condition, carried values, scan outputs.
void lower_loop(ProgramBuilder& b, const graph::Graph& g, const graph::Node& n) {
  const std::uint32_t node = b.add_node_info(g, n);
  const graph::Graph& body = subgraph(b, g, n, "body");
  const std::size_t carried_count = n.inputs.size() - 2;
  if (body.inputs().size() != carried_count + 2 || body.outputs().size() < carried_count + 1)
    b.fail(g, n, "body must have " + std::to_string(carried_count + 2) + " inputs and at least " +
                     std::to_string(carried_count + 1) + " outputs");
  std::vector<RegId> outs = b.declare_node_outputs(g, n);
  RegId iter = bind_subgraph_inputs(b, body, 0, 1)[0];
  RegId cond = bind_subgraph_inputs(b, body, 1, 1)[0];
  std::vector<RegId> carried = bind_subgraph_inputs(b, body, 2, carried_count);
  RegId cond0 = n.inputs[1].valid() ? b.reg_of(g, n.inputs[1]) : b.add_constant("true", Tensor::scalar<bool>(true));
  std::vector<RegId> dsts{cond}, srcs{cond0};
  for (std::size_t i = 0; i < carried_count; ++i) {
    dsts.push_back(carried[i]);
    srcs.push_back(b.reg_of(g, n.inputs[2 + i]));
  }
  b.emit_moves(dsts, srcs, node);
  auto lp = std::make_unique<LoopParams>();
  lp->loop = b.new_loop_slot();
  lp->scan_count = static_cast<std::uint32_t>(body.outputs().size() - 1 - carried_count);
  lp->first_scan = b.data.scan_buffers;
  b.data.scan_buffers += lp->scan_count;
  const LoopParams& params = *b.own(std::move(lp));
  const Pc init = b.emit(Opcode::LoopInit, {b.optional_reg_of(g, n.inputs[0])}, {});
  b.at(init).params = &params;
  b.at(init).node = node;
  emit_loop(b, node, node_display_name(g, n), params, cond, iter, carried, [&] {
    std::vector<RegId> res = lower_subgraph(b, g, body);
    std::vector<RegId> next(res.begin() + 1, res.begin() + 1 + static_cast<std::ptrdiff_t>(carried_count));
    std::vector<RegId> scans(res.begin() + 1 + static_cast<std::ptrdiff_t>(carried_count), res.end());
    return std::make_tuple(res[0], next, scans);
  });
  const std::vector<std::int64_t> zeros(params.scan_count, 0);
  emit_loop_exit(b, node, params, carried, outs, scan_elem_types(b, body, carried_count + 1), zeros, zeros);
}

// Scan (ONNX opset 9+): state values, scanned inputs with axes and directions,
// scan outputs with axes and directions.
void lower_scan(ProgramBuilder& b, const graph::Graph& g, const graph::Node& n) {
  const std::uint32_t node = b.add_node_info(g, n);
  const graph::Graph& body = subgraph(b, g, n, "body");
  auto it = n.attrs.find("num_scan_inputs");
  if (it == n.attrs.end() || !std::holds_alternative<std::int64_t>(it->second)) b.fail(g, n, "missing num_scan_inputs");
  const auto scanned = static_cast<std::size_t>(std::get<std::int64_t>(it->second));
  if (scanned < 1 || scanned > n.inputs.size()) b.fail(g, n, "num_scan_inputs out of range");
  const std::size_t state_count = n.inputs.size() - scanned;
  if (body.inputs().size() != n.inputs.size() || body.outputs().size() < state_count)
    b.fail(g, n, "body must have " + std::to_string(n.inputs.size()) + " inputs and at least " +
                     std::to_string(state_count) + " outputs");
  const std::size_t scan_out_count = body.outputs().size() - state_count;
  std::vector<std::int64_t> in_axes = ints_attr(n, "scan_input_axes", scanned);
  std::vector<std::int64_t> in_dirs = ints_attr(n, "scan_input_directions", scanned);
  std::vector<std::int64_t> out_axes = ints_attr(n, "scan_output_axes", scan_out_count);
  std::vector<std::int64_t> out_dirs = ints_attr(n, "scan_output_directions", scan_out_count);
  if (in_axes.size() != scanned || in_dirs.size() != scanned || out_axes.size() != scan_out_count ||
      out_dirs.size() != scan_out_count)
    b.fail(g, n, "scan axes/directions attributes do not match the number of scanned inputs/outputs");

  std::vector<RegId> outs = b.declare_node_outputs(g, n);
  std::vector<RegId> state = bind_subgraph_inputs(b, body, 0, state_count);
  std::vector<RegId> inits, scan_inputs;
  for (std::size_t i = 0; i < state_count; ++i) inits.push_back(b.reg_of(g, n.inputs[i]));
  for (std::size_t s = 0; s < scanned; ++s) scan_inputs.push_back(b.reg_of(g, n.inputs[state_count + s]));
  b.emit_moves(state, inits, node);

  auto lp = std::make_unique<LoopParams>();
  lp->loop = b.new_loop_slot();
  lp->scan_count = static_cast<std::uint32_t>(scan_out_count);
  lp->first_scan = b.data.scan_buffers;
  b.data.scan_buffers += lp->scan_count;
  for (std::size_t s = 0; s < scanned; ++s)
    lp->axes.push_back(normalize_axis(b, g, n, in_axes[s], g.value(n.inputs[state_count + s]).type.rank(), "scan_input_axes"));
  const LoopParams& params = *b.own(std::move(lp));
  const Pc init = b.emit(Opcode::ScanInit, scan_inputs, {});
  b.at(init).params = &params;
  b.at(init).node = node;

  emit_loop(b, node, node_display_name(g, n), params, RegId::none(), RegId::none(), state, [&] {
    std::vector<RegId> slices = bind_subgraph_inputs(b, body, state_count, scanned);
    for (std::size_t s = 0; s < scanned; ++s) {
      auto sp = std::make_unique<SliceParams>();
      sp->axis = params.axes[s];
      sp->reverse = in_dirs[s] != 0;
      Pc pc = b.emit(Opcode::ScanSlice, {scan_inputs[s]}, {slices[s]});
      b.at(pc).slot = params.loop;
      b.at(pc).node = node;
      b.at(pc).params = b.own(std::move(sp));
    }
    std::vector<RegId> res = lower_subgraph(b, g, body);
    std::vector<RegId> next(res.begin(), res.begin() + static_cast<std::ptrdiff_t>(state_count));
    std::vector<RegId> scans(res.begin() + static_cast<std::ptrdiff_t>(state_count), res.end());
    return std::make_tuple(RegId::none(), next, scans);
  });
  std::vector<graph::ValueType> elem_types = scan_elem_types(b, body, state_count);
  for (std::size_t k = 0; k < scan_out_count; ++k)
    out_axes[k] = normalize_axis(b, g, n, out_axes[k], elem_types[k].rank() + 1, "scan_output_axes");
  emit_loop_exit(b, node, params, state, outs, elem_types, out_axes, out_dirs);
}

}  // namespace canary::vm

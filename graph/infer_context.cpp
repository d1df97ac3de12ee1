// InferContext: what a shape rule reads (inputs, constants, attributes) and
// writes (output types), plus the checks and broadcasting every rule shares.
#include <algorithm>

#include "graph/op_registry.h"
#include "graph/shape_rules.h"

namespace canary::graph {

// Throws Error(kind) prefixed with the node's name and op.
void fail_node(const Node& node, ErrorKind kind, const std::string& text) {
  throw Error(kind, "node '" + node.name + "' (" + std::string(op_schema(node.op).name) + "): " + text);
}

InferContext::InferContext(const Graph& graph, const Node& node, SymbolTable& symbols)
    : graph_(graph), node_(node), symbols_(symbols), outputs_(node.outputs.size()), known_(node.outputs.size()) {}

bool InferContext::has_input(int i) const { return i >= 0 && i < num_inputs() && node_.inputs[i].valid(); }

bool InferContext::has_output(int i) const { return i >= 0 && i < num_outputs() && node_.outputs[i].valid(); }

const ValueInfo& InferContext::input_info(int i) const {
  if (!has_input(i)) fail(ErrorKind::Model, "input " + std::to_string(i) + " is required but absent");
  return graph_.value(node_.inputs[i]);
}

const ValueType& InferContext::input_type(int i) const { return input_info(i).type; }

const Tensor* InferContext::input_constant(int i) const {
  if (!has_input(i)) return nullptr;
  const ValueInfo& info = graph_.value(node_.inputs[i]);
  return info.constant ? &*info.constant : nullptr;
}

// Reads a constant integer tensor of rank 0 or 1 as dims.
static std::optional<DimVector> constant_dims(const Tensor& t) {
  if (t.rank() > 1 || !is_integer(t.dtype())) return std::nullopt;
  DimVector dims;
  for (std::int64_t k = 0; k < t.numel(); ++k) {
    dims.emplace_back(t.dtype() == DType::I64 ? t.data<std::int64_t>()[k]
                                              : static_cast<std::int64_t>(t.data<std::int32_t>()[k]));
  }
  return dims;
}

std::optional<DimVector> InferContext::input_dims_value(int i) const {
  if (!has_input(i)) return std::nullopt;
  const ValueInfo& info = graph_.value(node_.inputs[i]);
  if (info.constant) return constant_dims(*info.constant);
  return info.known_dims;
}

// The schema entry of an attribute, or a Model error naming it.
static const AttrSpec& find_spec(const InferContext& ctx, std::string_view name) {
  for (const AttrSpec& spec : op_schema(ctx.node().op).attrs)
    if (spec.name == name) return spec;
  ctx.fail(ErrorKind::Internal, "op has no attribute '" + std::string(name) + "'");
}

// The attribute's value (given or default) checked against the wanted type.
template <typename T>
static const T& attr_value(const InferContext& ctx, std::string_view name, AttrType want) {
  const AttrSpec& spec = find_spec(ctx, name);
  const AttrValue* v = nullptr;
  auto it = ctx.node().attrs.find(name);
  if (it != ctx.node().attrs.end()) v = &it->second;
  else if (spec.default_value) v = &*spec.default_value;
  if (v == nullptr) ctx.fail(ErrorKind::Model, "missing required attribute '" + std::string(name) + "'");
  if (attr_type_of(*v) != want) {
    ctx.fail(ErrorKind::Model, "attribute '" + std::string(name) + "' has type " + attr_type_name(attr_type_of(*v)) +
                                   ", expected " + attr_type_name(want));
  }
  return std::get<T>(*v);
}

std::int64_t InferContext::attr_int(std::string_view name) const {
  return attr_value<std::int64_t>(*this, name, AttrType::Int);
}
double InferContext::attr_float(std::string_view name) const { return attr_value<double>(*this, name, AttrType::Float); }
std::string InferContext::attr_string(std::string_view name) const {
  return attr_value<std::string>(*this, name, AttrType::String);
}
std::vector<std::int64_t> InferContext::attr_ints(std::string_view name) const {
  return attr_value<std::vector<std::int64_t>>(*this, name, AttrType::Ints);
}
std::vector<double> InferContext::attr_floats(std::string_view name) const {
  return attr_value<std::vector<double>>(*this, name, AttrType::Floats);
}
bool InferContext::has_attr(std::string_view name) const { return node_.attrs.find(name) != node_.attrs.end(); }

const Graph& InferContext::attr_graph(std::string_view name) const {
  const auto& g = attr_value<std::shared_ptr<Graph>>(*this, name, AttrType::Graph);
  if (!g) fail(ErrorKind::Model, "graph attribute '" + std::string(name) + "' is empty");
  return *g;
}

void InferContext::set_output(int i, ValueType type) {
  if (i < 0 || i >= num_outputs()) return;
  outputs_[i] = std::move(type);
}

void InferContext::set_output_known_dims(int i, DimVector dims) {
  if (i < 0 || i >= num_outputs()) return;
  known_[i] = std::move(dims);
}

void InferContext::fail(ErrorKind kind, const std::string& text) const { fail_node(node_, kind, text); }

std::string InferContext::describe_input(int i) const {
  std::string text = "input " + std::to_string(i);
  if (has_input(i)) text += " ('" + graph_.value(node_.inputs[i]).name + "')";
  return text;
}

int InferContext::normalize_axis(std::int64_t axis, int rank, std::string_view what) const {
  if (axis < -rank || axis >= rank) {
    fail(ErrorKind::Shape, std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                               std::to_string(rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

void InferContext::expect_dtype(int input, std::initializer_list<DType> allowed) const {
  DType actual = input_type(input).dtype;
  if (std::find(allowed.begin(), allowed.end(), actual) != allowed.end()) return;
  std::string names;
  for (DType t : allowed) names += (names.empty() ? "" : ", ") + std::string(dtype_name(t));
  fail(ErrorKind::Model, describe_input(input) + " has dtype " + std::string(dtype_name(actual)) +
                             ", expected one of {" + names + "}");
}

void InferContext::expect_rank(int input, int rank) const {
  const ValueType& t = input_type(input);
  if (t.rank() == rank) return;
  fail(ErrorKind::Shape, describe_input(input) + " expected rank " + std::to_string(rank) + ", got rank " +
                             std::to_string(t.rank()) + " " + t.to_string());
}

// Broadcasts one pair of dims, or returns nullopt when two constants clash.
static std::optional<Dim> broadcast_dim(const SymbolTable& symbols, const Dim& a, const Dim& b) {
  if (a == b || symbols.equal(a, b)) return a;
  if (a.is_constant() && a.value() == 1) return b;
  if (b.is_constant() && b.value() == 1) return a;
  if (a.is_constant() && b.is_constant()) return std::nullopt;
  if (a.is_constant()) return a;
  if (b.is_constant()) return b;
  return max(a, b);
}

DimVector InferContext::broadcast(const DimVector& a, const DimVector& b) const {
  std::size_t rank = std::max(a.size(), b.size());
  DimVector out(rank);
  for (std::size_t k = 0; k < rank; ++k) {
    std::size_t from_end = rank - 1 - k;
    if (from_end >= a.size()) out[k] = b[b.size() - 1 - from_end];
    else if (from_end >= b.size()) out[k] = a[a.size() - 1 - from_end];
    else {
      const Dim& x = a[a.size() - 1 - from_end];
      const Dim& y = b[b.size() - 1 - from_end];
      std::optional<Dim> d = broadcast_dim(symbols_, x, y);
      if (!d) {
        fail(ErrorKind::Shape, "cannot broadcast " + dims_to_string(a) + " with " + dims_to_string(b) + ": dims " +
                                   x.to_string() + " and " + y.to_string() + " differ");
      }
      out[k] = *d;
    }
  }
  return out;
}

void InferContext::assert_equal(const Dim& a, const Dim& b, const std::string& what) {
  try {
    symbols_.assert_equal(a, b, what);
  } catch (const Error& e) {
    fail(ErrorKind::Shape, e.detail());
  }
}

}  // namespace canary::graph

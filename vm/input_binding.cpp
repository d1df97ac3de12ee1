// The run() boundary: checking and binding the caller's inputs (dtype, rank,
// constant and symbolic dims) and handing out outputs that alias no register.
#include <algorithm>
#include <string>

#include "canary/error.h"
#include "vm/interpreter.h"

namespace canary::vm {
namespace {

// "input 'x': expected f32[N, 128], got f32[4, 64]".
std::string describe(const std::string& name, const graph::ValueType& expected, const Tensor& actual) {
  return "input '" + name + "': expected " + expected.to_string() + ", got " +
         (actual.defined() ? actual.type_string() : std::string("no tensor"));
}

}  // namespace

// Checks every input and places it (borrowed) in its register.
void Interpreter::bind_inputs(std::span<const Tensor> inputs) {
  const auto& names = program_->input_names();
  if (inputs.size() != names.size()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
    std::string missing;
    if (inputs.size() < names.size()) missing = "; missing input '" + names[inputs.size()] + "'";
    throw Error(ErrorKind::Input, "expected " + std::to_string(names.size()) + " inputs (" + list + "), got " +
                                      std::to_string(inputs.size()) + missing);
  }
  frame_.bindings.clear();
  for (std::size_t i = 0; i < inputs.size(); ++i) check_input(i, inputs[i]);
  check_input_expressions(inputs);
  const auto& regs = program_->input_registers();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    frame_.registers[regs[i].index] = inputs[i];
    profile_.record_input(i, inputs[i].shape());
  }
}

// Dtype and rank (Input errors), constant dims and plain symbols (Shape errors).
void Interpreter::check_input(std::size_t i, const Tensor& t) {
  const std::string& name = program_->input_names()[i];
  const graph::ValueType& type = program_->input_types()[i];
  if (!t.defined()) throw Error(ErrorKind::Input, describe(name, type, t) + " (missing input)");
  if (t.dtype() != type.dtype) throw Error(ErrorKind::Input, describe(name, type, t) + " (wrong dtype)");
  if (t.rank() != type.rank())
    throw Error(ErrorKind::Input, describe(name, type, t) + " (expected rank " + std::to_string(type.rank()) +
                                      ", got rank " + std::to_string(t.rank()) + ")");
  for (int d = 0; d < t.rank(); ++d) {
    const graph::Dim& dim = type.shape[static_cast<std::size_t>(d)];
    const std::int64_t actual = t.dim(d);
    if (dim.is_constant()) {
      if (dim.value() != actual)
        throw Error(ErrorKind::Shape, describe(name, type, t) + " (dim " + std::to_string(d) + " must be " +
                                          std::to_string(dim.value()) + ", got " + std::to_string(actual) + ")");
      continue;
    }
    if (!dim.is_symbol()) continue;
    try {
      program_->symbols().bind(frame_.bindings, dim.symbol_name(), actual);
    } catch (const Error& e) {
      throw Error(ErrorKind::Shape, describe(name, type, t) + " (dim " + std::to_string(d) + "): " + e.detail());
    }
  }
}

// Dims that are expressions over symbols are checked once all symbols are bound.
void Interpreter::check_input_expressions(std::span<const Tensor> inputs) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const graph::ValueType& type = program_->input_types()[i];
    for (int d = 0; d < type.rank(); ++d) {
      const graph::Dim& dim = type.shape[static_cast<std::size_t>(d)];
      if (dim.is_constant() || dim.is_symbol()) continue;
      std::optional<std::int64_t> v = dim.evaluate(frame_.bindings);
      if (v && *v != inputs[i].dim(d))
        throw Error(ErrorKind::Shape, describe(program_->input_names()[i], type, inputs[i]) + " (dim " +
                                          std::to_string(d) + " = " + dim.to_string() + " = " + std::to_string(*v) +
                                          ", got " + std::to_string(inputs[i].dim(d)) + ")");
    }
  }
}

// Moves each output out of its register, copying when it is borrowed (an
// input, wrapped memory), a constant, or already handed out in this call.
std::vector<Tensor> Interpreter::collect_outputs() {
  const auto& regs = program_->output_registers();
  std::vector<Tensor> out;
  out.reserve(regs.size());
  for (std::size_t i = 0; i < regs.size(); ++i) {
    // The same value listed twice as an output: hand out a copy of the first.
    const auto first = std::find(regs.begin(), regs.begin() + static_cast<std::ptrdiff_t>(i), regs[i]);
    if (first != regs.begin() + static_cast<std::ptrdiff_t>(i)) {
      out.push_back(out[static_cast<std::size_t>(first - regs.begin())].clone());
      continue;
    }
    Tensor& t = frame_.registers[regs[i].index];
    bool copy = !t.owns_storage();
    for (std::size_t j = 0; j < i && !copy; ++j) copy = out[j].shares_storage_with(t);
    for (std::size_t k = 0; k < pinned_sources_.size() && !copy; ++k)
      copy = frame_.registers[pinned_sources_[k].index].shares_storage_with(t);
    out.push_back(copy ? t.clone() : std::move(t));
  }
  return out;
}

// Drops the caller's input tensors (and any view of borrowed memory) from the
// registers so nothing outlives the call.
void Interpreter::release_borrowed() {
  for (RegId r : program_->input_registers()) frame_.registers[r.index] = Tensor();
  for (Tensor& t : frame_.registers)
    if (t.defined() && !t.owns_storage()) t = Tensor();
}

}  // namespace canary::vm

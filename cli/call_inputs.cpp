// CallInputs: reads .npy files (once each), generates seeded random tensors, checks names.
#include "cli/call_inputs.h"

#include <charconv>

#include "cli/npy.h"
#include "cli/random_tensor.h"

namespace canary::cli {

std::string describe_inputs(const std::vector<TensorSpec>& specs) {
  std::string s;
  for (const TensorSpec& spec : specs) s += (s.empty() ? "" : ", ") + spec.to_string();
  return s.empty() ? "(none)" : s;
}

CallInputs::CallInputs(std::vector<TensorSpec> specs, std::uint64_t seed) : specs_(std::move(specs)), seed_(seed) {}

const TensorSpec& CallInputs::spec_of(const InputSource& source) const {
  for (const TensorSpec& spec : specs_)
    if (spec.name == source.name) return spec;
  throw Error(ErrorKind::Input, source.origin + ": unknown input '" + source.name +
                                    "'; the model's inputs are: " + describe_inputs(specs_));
}

// The declared shape of an input, when every dim is a number.
Shape CallInputs::declared_shape(const InputSource& source, const TensorSpec& spec) const {
  Shape shape;
  for (const std::string& d : spec.dims) {
    std::int64_t v = -1;
    const auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
    if (ec != std::errc() || end != d.data() + d.size())
      throw Error(ErrorKind::Input, source.origin + ": " + source.name + "=random needs dims because input '" +
                                        spec.to_string() + "' has a symbolic shape, e.g. " + source.name +
                                        "=random:4x16");
    shape.push_back(v);
  }
  return shape;
}

const Tensor& CallInputs::file_tensor(const std::string& path) {
  auto it = files_.find(path);
  if (it == files_.end()) it = files_.emplace(path, read_npy(path)).first;
  return it->second;
}

NamedTensors CallInputs::make(const std::vector<InputSource>& sources, std::uint64_t call) {
  NamedTensors tensors;
  for (const InputSource& source : sources) {
    const TensorSpec& spec = spec_of(source);
    if (source.kind == InputSource::Kind::File) {
      tensors.insert_or_assign(source.name, file_tensor(source.path));
      continue;
    }
    const Shape shape = source.dims ? *source.dims : declared_shape(source, spec);
    tensors.insert_or_assign(source.name, random_tensor(spec.dtype, shape, input_seed(seed_, call, source.name)));
  }
  return tensors;
}

}  // namespace canary::cli

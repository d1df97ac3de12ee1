// Turning the input sources of one call into the tensors Session::run takes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "canary/canary.h"
#include "cli/input_spec.h"

namespace canary::cli {

class CallInputs {
 public:
  // `specs`: the model's declared inputs; `seed`: the run's random seed.
  CallInputs(std::vector<TensorSpec> specs, std::uint64_t seed);

  // The tensors of call number `call` (1-based). Error(Input) for a name the
  // model does not declare, a bad .npy file, or random data for a symbolic
  // declared shape without dims.
  NamedTensors make(const std::vector<InputSource>& sources, std::uint64_t call);

 private:
  const TensorSpec& spec_of(const InputSource& source) const;
  Shape declared_shape(const InputSource& source, const TensorSpec& spec) const;
  const Tensor& file_tensor(const std::string& path);

  std::vector<TensorSpec> specs_;
  std::uint64_t seed_;
  std::map<std::string, Tensor> files_;  // .npy files already read, by path
};

// "x: f32[N, 4], h0: f32[N, 2]" for messages.
std::string describe_inputs(const std::vector<TensorSpec>& specs);

}  // namespace canary::cli

// Device chains: consecutive steps of a plan placed on the same device run as
// one device call, so a value one step produces and only later steps of the
// chain read never crosses to the host and back (part of "transfers only at
// trace boundaries"). Placement forms them (device_placement.h); the trace
// driver runs them (CompiledTrace), through FusedDevice::run_chain.
#pragma once

#include <cstdint>
#include <vector>

namespace canary::jit {

// Where one input of a chained step comes from: the host pointer the step's
// arguments carry, or an output of an earlier step of the same chain (the
// device reads its own copy of that result).
struct ChainInput {
  static constexpr std::int32_t kHost = -1;
  std::int32_t step = kHost;  // index within the chain, or kHost
  std::uint32_t output = 0;   // that step's output
  bool on_host() const { return step == kHost; }
};

// One run of consecutive placed steps (at least two), fixed at placement.
// Every step is a fused group or row kernel without holds, replays, held
// inputs or hoisting, so the chain never has to exit between its steps.
struct DeviceChain {
  std::uint32_t first = 0;  // index into Plan::steps
  std::uint32_t count = 0;
  // Per step, per input: a fused group's inputs; a row kernel's prologue
  // inputs, then its scale and bias when the spec has them.
  std::vector<std::vector<ChainInput>> sources;
  // Per step, bit o: output o is read after the chain (by a later step, at
  // an exit, at the trace's end or by the next iteration) and must reach the
  // host. The other outputs stay on the device; their host buffers are sized
  // but never written.
  std::vector<std::uint32_t> host_outputs;
};

}  // namespace canary::jit

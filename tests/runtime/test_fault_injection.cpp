// Fault injection (Options::fault_injection, CANARY_FAULT): the spec syntax,
// and for each point a model whose call still returns the right outputs (or,
// for host allocation, a typed resource error) while later calls keep working.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <random>
#include <string>

#include "jit_test_models.h"
#include "kernels/onednn.h"
#include "runtime/core/fault_injection.h"

using canary::DType;
using canary::Error;
using canary::ErrorKind;
using canary::EventKind;
using canary::FaultPoint;
using canary::Tensor;
using namespace canary::test;

namespace {

// Turns every fault off on entry and again on exit, however the test leaves.
class FaultReset {
 public:
  FaultReset() { canary::configure_faults(""); }
  ~FaultReset() { canary::configure_faults(""); }
  FaultReset(const FaultReset&) = delete;
  FaultReset& operator=(const FaultReset&) = delete;
};

// Sets an environment variable for a scope and restores the previous state.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The message of the Error(Input) that configure_faults(spec) throws ("" when none).
std::string input_error_of(const std::string& spec) {
  try {
    canary::configure_faults(spec);
  } catch (const Error& e) {
    return e.kind() == ErrorKind::Input ? e.what() : std::string("wrong kind: ") + e.what();
  }
  return "";
}

// y = relu(x @ w + b) with x [N, 32], w [32, 24]: a MatMul kernel step, then a fused group.
canary::Model matmul_model(const canary::Runtime& rt) {
  canary::ModelBuilder b("mlp");
  b.input("x", DType::F32, {"N", 32})
      .constant("w", random_tensor({32, 24}, 5, -1.0f, 1.0f))
      .constant("b", random_tensor({24}, 6, -1.0f, 1.0f))
      .node("MatMul", {"x", "w"}, {"xw"})
      .node("Add", {"xw", "b"}, {"z"})
      .node("Relu", {"z"}, {"y"})
      .output("y");
  return rt.build(b);
}

// Inputs of the elementwise chain for call i.
canary::NamedTensors chain_inputs(int i) {
  return {{"x", random_tensor({4, 37}, 100 + i)}, {"b", random_tensor({37}, 7)}};
}

// The events of `model` of one kind whose message contains `text`.
std::size_t events_mentioning(const canary::Model& model, EventKind kind, const std::string& text) {
  std::size_t n = 0;
  for (const canary::Event& e : events_of(model, kind))
    if (e.message.find(text) != std::string::npos) ++n;
  return n;
}

}  // namespace

TEST_CASE("fault injection: a spec sets per-point counts, and no count means every time", "[unit][fault]") {
  const FaultReset reset;
  canary::configure_faults("kernel:2, alloc ,compile:0");
  CHECK(canary::take_fault(FaultPoint::KernelExecution));
  CHECK(canary::take_fault(FaultPoint::KernelExecution));
  CHECK_FALSE(canary::take_fault(FaultPoint::KernelExecution));
  for (int i = 0; i < 5; ++i) CHECK(canary::take_fault(FaultPoint::HostAllocation));
  CHECK_FALSE(canary::take_fault(FaultPoint::Compile));
  CHECK_FALSE(canary::take_fault(FaultPoint::CodeCache));
  CHECK(canary::faults_taken(FaultPoint::KernelExecution) == 2);
  CHECK(canary::faults_taken(FaultPoint::HostAllocation) == 5);
  CHECK(canary::faults_taken(FaultPoint::Compile) == 0);
  // A new spec replaces the old one and its counters; empty turns all off.
  canary::configure_faults("code-cache:1");
  CHECK_FALSE(canary::take_fault(FaultPoint::HostAllocation));
  CHECK(canary::faults_taken(FaultPoint::HostAllocation) == 0);
  CHECK(canary::take_fault(FaultPoint::CodeCache));
  canary::configure_faults("");
  CHECK_FALSE(canary::take_fault(FaultPoint::CodeCache));
  CHECK(canary::fault_point_name(FaultPoint::Compile) == "compile");
  CHECK(canary::fault_point_name(FaultPoint::CodeCache) == "code-cache");
  CHECK(canary::fault_point_name(FaultPoint::OnednnPrimitive) == "onednn");
  CHECK(canary::fault_point_name(FaultPoint::KernelExecution) == "kernel");
  CHECK(canary::fault_point_name(FaultPoint::CompileThread) == "compile-thread");
  CHECK(canary::fault_point_name(FaultPoint::HostAllocation) == "alloc");
}

TEST_CASE("fault injection: point@n fails only the n-th operation at that point", "[unit][fault]") {
  const FaultReset reset;
  canary::configure_faults("kernel@3, alloc@1");
  CHECK_FALSE(canary::take_fault(FaultPoint::KernelExecution));
  CHECK_FALSE(canary::take_fault(FaultPoint::KernelExecution));
  CHECK(canary::take_fault(FaultPoint::KernelExecution));
  for (int i = 0; i < 4; ++i) CHECK_FALSE(canary::take_fault(FaultPoint::KernelExecution));
  CHECK(canary::take_fault(FaultPoint::HostAllocation));
  CHECK_FALSE(canary::take_fault(FaultPoint::HostAllocation));
  CHECK(canary::faults_taken(FaultPoint::KernelExecution) == 1);
  CHECK_THAT(input_error_of("kernel@0"), Catch::Contains("ordinal '0' of point 'kernel'"));
  CHECK_THAT(input_error_of("kernel@"), Catch::Contains("ordinal '' of point 'kernel'"));
  CHECK_THAT(input_error_of("kernel:2@1"), Catch::Contains("both a count and an ordinal"));
}

TEST_CASE("fault injection: malformed specs are Error(Input) naming the bad item", "[unit][fault]") {
  const FaultReset reset;
  canary::configure_faults("compile:3");
  CHECK_THAT(input_error_of("compile,bogus"), Catch::Contains("unknown point 'bogus'"));
  CHECK_THAT(input_error_of("kernel:x"), Catch::Contains("count 'x' of point 'kernel'"));
  CHECK_THAT(input_error_of("kernel:-1"), Catch::Contains("count '-1' of point 'kernel'"));
  CHECK_THAT(input_error_of("kernel:"), Catch::Contains("count '' of point 'kernel'"));
  CHECK_THAT(input_error_of("kernel:99999999999999999999"), Catch::Contains("of point 'kernel'"));
  CHECK_THAT(input_error_of("alloc,,compile"), Catch::Contains("empty item"));
  CHECK_THAT(input_error_of("alloc,"), Catch::Contains("empty item"));
  CHECK_THAT(input_error_of("alloc:1,alloc:2"), Catch::Contains("point 'alloc' given twice"));
  // A rejected spec leaves the previous configuration in place.
  CHECK(canary::take_fault(FaultPoint::Compile));
  CHECK(canary::faults_taken(FaultPoint::Compile) == 1);
  // Through Options, the constructor names the option.
  canary::Options options;
  options.fault_injection = "compile,kernal";
  try {
    canary::Runtime rt(options);
    FAIL("a malformed Options::fault_injection was accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Input);
    CHECK_THAT(e.what(), Catch::Contains("Options::fault_injection") && Catch::Contains("'kernal'"));
  }
}

TEST_CASE("fault injection: compile:1 fails the first compile, the interpreter serves, the next compile installs",
          "[unit][fault][jit]") {
  const FaultReset reset;
  canary::Runtime plain_rt(interpreter_options());
  canary::Options options = jit_options(2);
  options.fault_injection = "compile:1";
  canary::Runtime rt(options);
  auto model = elementwise_chain(rt);
  auto s = model.session();
  auto p = elementwise_chain(plain_rt).session();
  for (int call = 0; call < 8; ++call) {
    const auto in = chain_inputs(call);
    CHECK(max_relative_difference(s.run(in).at("y"), p.run(in).at("y")) < 1e-6);
  }
  CHECK(canary::faults_taken(FaultPoint::Compile) == 1);
  CHECK(events_mentioning(model, EventKind::CompileFailed, "fault injection point 'compile'") == 1);
  CHECK(events_of(model, EventKind::Compiled).size() == 1);
  CHECK(s.stats().jit.compile_failures == 1);
  CHECK(s.stats().jit.compiled_entries > 0);
}

TEST_CASE("fault injection: code-cache:1 fails the first executable mapping; a later compile installs",
          "[unit][fault][jit]") {
  const FaultReset reset;
  canary::Runtime plain_rt(interpreter_options());
  canary::Options options = jit_options(2);
  options.fault_injection = "code-cache:1";
  canary::Runtime rt(options);
  auto model = elementwise_chain(rt);
  auto s = model.session();
  auto p = elementwise_chain(plain_rt).session();
  for (int call = 0; call < 8; ++call) {
    const auto in = chain_inputs(call);
    CHECK(max_relative_difference(s.run(in).at("y"), p.run(in).at("y")) < 1e-6);
  }
  CHECK(canary::faults_taken(FaultPoint::CodeCache) == 1);
  CHECK(events_mentioning(model, EventKind::CompileFailed, "executable memory unavailable") == 1);
  CHECK(events_of(model, EventKind::Compiled).size() == 1);
  CHECK(s.stats().jit.compiled_entries > 0);
}

TEST_CASE("fault injection: onednn makes primitive creation fail and the reference MatMul runs",
          "[unit][fault][onednn]") {
  const FaultReset reset;
  canary::kernels::onednn_clear_cache();
  canary::Options reference_options = interpreter_options();
  reference_options.use_onednn = false;
  canary::Runtime reference_rt(reference_options), onednn_rt(interpreter_options());
  auto want = matmul_model(reference_rt).session();
  auto fast = matmul_model(onednn_rt).session();
  canary::Options options = interpreter_options();
  options.fault_injection = "onednn";
  canary::Runtime rt(options);
  auto s = matmul_model(rt).session();
  for (int call = 0; call < 3; ++call) {
    const canary::NamedTensors in{{"x", random_tensor({5, 32}, 40 + call)}};
    // Every creation fails: the values are the reference kernel's, bit for bit.
    CHECK(bit_identical(s.run(in).at("y"), want.run(in).at("y")));
  }
  CHECK(canary::faults_taken(FaultPoint::OnednnPrimitive) == 3);
  CHECK(canary::kernels::onednn_cache_stats().size == 0);
  // With the count used up, oneDNN serves again (and agrees with the reference).
  canary::configure_faults("onednn:1");
  const canary::NamedTensors in{{"x", random_tensor({5, 32}, 50)}};
  CHECK(bit_identical(s.run(in).at("y"), want.run(in).at("y")));
  const Tensor y = s.run(in).at("y");
  CHECK(canary::kernels::onednn_cache_stats().size == 1);
  CHECK(canary::faults_taken(FaultPoint::OnednnPrimitive) == 1);
  CHECK(bit_identical(y, fast.run(in).at("y")));
  CHECK(max_relative_difference(y, want.run(in).at("y")) < 1e-5);
}

TEST_CASE("fault injection: kernel faults make compiled code exit and the interpreter re-run the step",
          "[unit][fault][jit]") {
  const FaultReset reset;
  canary::Runtime plain_rt(interpreter_options());
  SECTION("the first step is a fused group; every compiled call fails there") {
    canary::Options options = jit_options(2);
    options.fault_injection = "kernel";
    canary::Runtime rt(options);
    auto model = elementwise_chain(rt);
    auto s = model.session();
    auto p = elementwise_chain(plain_rt).session();
    for (int call = 0; call < 8; ++call) {
      const auto in = chain_inputs(call);
      CHECK(max_relative_difference(s.run(in).at("y"), p.run(in).at("y")) < 1e-6);
    }
    const std::uint64_t taken = canary::faults_taken(FaultPoint::KernelExecution);
    CHECK(taken >= 5);  // calls 1-2 warm up, call 3 compiles: calls 3-8 enter compiled code
    CHECK(s.stats().jit.deopts == taken);
    const auto deopts = events_of(model, EventKind::Deopt);
    REQUIRE_FALSE(deopts.empty());
    CHECK(deopts.front().guard == "kernel error");
    // A kernel error never retraces: the one variant stays installed.
    CHECK(events_of(model, EventKind::Retrace).empty());
    CHECK(events_of(model, EventKind::Compiled).size() == 1);
  }
  SECTION("the first step is a MatMul kernel call; one fault, then compiled calls run through") {
    canary::Options options = jit_options(2);
    options.fault_injection = "kernel:1";
    canary::Runtime rt(options);
    auto model = matmul_model(rt);
    auto s = model.session();
    auto p = matmul_model(plain_rt).session();
    for (int call = 0; call < 8; ++call) {
      const canary::NamedTensors in{{"x", random_tensor({3, 32}, 60 + call)}};
      CHECK(max_relative_difference(s.run(in).at("y"), p.run(in).at("y")) < 1e-5);
    }
    CHECK(canary::faults_taken(FaultPoint::KernelExecution) == 1);
    CHECK(s.stats().jit.deopts == 1);
    REQUIRE(events_of(model, EventKind::Deopt).size() == 1);
    CHECK(events_of(model, EventKind::Deopt).front().guard == "kernel error");
    CHECK(s.stats().jit.compiled_entries >= 5);
  }
}

TEST_CASE("fault injection: compile-thread:1 compiles on the calling thread, the next model gets the thread",
          "[unit][fault][jit]") {
  const FaultReset reset;
  canary::Runtime plain_rt(interpreter_options());
  canary::Options options = jit_options(2);
  options.jit.synchronous = false;
  options.fault_injection = "compile-thread:1";
  canary::Runtime rt(options);
  auto p = elementwise_chain(plain_rt).session();
  auto first = elementwise_chain(rt);
  auto second = elementwise_chain(rt);
  for (canary::Model* model : {&first, &second}) {
    auto s = model->session();
    for (int call = 0; call < 8; ++call) {
      const auto in = chain_inputs(call);
      CHECK(max_relative_difference(s.run(in).at("y"), p.run(in).at("y")) < 1e-6);
      model->wait_for_compiles();
    }
    CHECK(s.stats().jit.compiled_entries > 0);
  }
  CHECK(canary::faults_taken(FaultPoint::CompileThread) == 1);
  const auto fallbacks = events_of(first, EventKind::Fallback);
  REQUIRE(fallbacks.size() == 1);
  CHECK_THAT(fallbacks.front().message, Catch::Contains("fault injection point 'compile-thread'") &&
                                            Catch::Contains("compiling on the calling thread"));
  REQUIRE(events_of(first, EventKind::Compiled).size() == 1);
  CHECK(events_of(first, EventKind::Compiled).front().thread == 0);
  CHECK(events_of(second, EventKind::Fallback).empty());
  REQUIRE(events_of(second, EventKind::Compiled).size() == 1);
  CHECK(events_of(second, EventKind::Compiled).front().thread == 1);
}

TEST_CASE("fault injection: alloc:1 fails one call with Error(Resource), the next call succeeds",
          "[unit][fault][api]") {
  const FaultReset reset;
  canary::Runtime plain_rt(interpreter_options());
  canary::Options options = interpreter_options();
  options.fault_injection = "alloc:1";
  canary::Runtime rt(options);
  // Loading the model and building inputs allocate outside any call: untouched.
  auto s = elementwise_chain(rt).session();
  auto p = elementwise_chain(plain_rt).session();
  const auto in = chain_inputs(0);
  CHECK(canary::faults_taken(FaultPoint::HostAllocation) == 0);
  try {
    s.run(in);
    FAIL("the injected allocation failure did not reach the caller");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Resource);
    CHECK_THAT(e.what(), Catch::Contains("injected host allocation failure") && Catch::Contains("'alloc'"));
  }
  CHECK(canary::faults_taken(FaultPoint::HostAllocation) == 1);
  for (int call = 0; call < 3; ++call) {
    const auto next = chain_inputs(call);
    CHECK(bit_identical(s.run(next).at("y"), p.run(next).at("y")));
  }
  CHECK(s.stats().failed_calls == 1);
  CHECK(s.stats().calls == 3);
}

TEST_CASE("fault injection: CANARY_FAULT applies when the option is empty, and the option wins over it",
          "[unit][fault][api]") {
  const FaultReset reset;
  canary::Runtime plain_rt(interpreter_options());
  auto p = elementwise_chain(plain_rt).session();
  const auto in = chain_inputs(3);
  {
    const ScopedEnv env("CANARY_FAULT", "alloc:1");
    canary::Runtime rt(interpreter_options());
    auto s = elementwise_chain(rt).session();
    CHECK_THROWS_MATCHES(s.run(in), Error, Catch::Predicate<Error>([](const Error& e) {
                           return e.kind() == ErrorKind::Resource &&
                                  std::string(e.what()).find("injected host allocation failure") != std::string::npos;
                         }));
    CHECK(bit_identical(s.run(in).at("y"), p.run(in).at("y")));
    // Options::fault_injection takes precedence: only compiles fail now.
    canary::Options options = interpreter_options();
    options.fault_injection = "compile";
    canary::Runtime other(options);
    auto t = elementwise_chain(other).session();
    CHECK(bit_identical(t.run(in).at("y"), p.run(in).at("y")));
    CHECK(canary::faults_taken(FaultPoint::HostAllocation) == 0);
  }
  {
    const ScopedEnv env("CANARY_FAULT", "alloc:two");
    try {
      canary::Runtime rt(interpreter_options());
      FAIL("a malformed CANARY_FAULT was accepted");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Input);
      CHECK_THAT(e.what(), Catch::Contains("CANARY_FAULT") && Catch::Contains("count 'two'"));
    }
  }
}

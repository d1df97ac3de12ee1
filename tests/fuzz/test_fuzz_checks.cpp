// The fuzz targets' checks can fail: broken inputs made here are reported as
// findings (without aborting), canary::Error is told apart from other
// exceptions, and the graph_stream plan reaches the sizes it promises.
#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>
#include <string>

#include "cli/npy.h"
#include "graph/text_format.h"
#include "tests/fuzz/differential_verdict.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/npy_round_trip.h"
#include "tests/fuzz/stream_budget.h"
#include "tests/fuzz/stream_plan.h"
#include "tests/fuzz/text_round_trip.h"

using namespace canary::fuzz;
using canary::DType;
using canary::Tensor;

namespace {

// A model the text format accepts (one Relu).
const char* const kRelu = "canary v1\ngraph main(x: f32[2]) -> (y) {\n  y = Relu(x)\n}\n";

}  // namespace

TEST_CASE("fuzz checks: canary::Error is a rejection, any other exception a finding", "[fuzz][unit]") {
  FuzzResult rejected = run_guarded([]() -> FuzzResult { throw canary::Error(canary::ErrorKind::Model, "bad"); });
  CHECK(rejected.verdict == FuzzVerdict::Rejected);
  FuzzResult other = run_guarded([]() -> FuzzResult { throw std::out_of_range("index 7"); });
  REQUIRE(other.is_finding());
  CHECK(other.detail.find("std::out_of_range") != std::string::npos);
  CHECK(other.detail.find("index 7") != std::string::npos);
  CHECK(run_guarded([]() -> FuzzResult { throw 3; }).is_finding());
}

TEST_CASE("fuzz checks: a printed graph that differs or does not parse back is a finding", "[fuzz][unit]") {
  std::string printed = canary::graph::print_graph(*canary::graph::parse_graph(kRelu));
  CHECK(check_text_round_trip(*canary::graph::parse_graph(kRelu)).verdict == FuzzVerdict::Accepted);
  FuzzResult differs = compare_printed("canary v1\ngraph a\n", "canary v1\ngraph b\n");
  REQUIRE(differs.is_finding());
  CHECK(differs.detail.find("line 2") != std::string::npos);
  std::string reprinted;
  CHECK(reparse_printed(printed, reprinted).verdict == FuzzVerdict::Accepted);
  CHECK(reprinted == printed);
  FuzzResult broken = reparse_printed(printed + "}\n", reprinted);
  REQUIRE(broken.is_finding());
  CHECK(broken.detail.find("does not parse back") != std::string::npos);
}

TEST_CASE("fuzz checks: a tensor changed by the npy round trip is a finding", "[fuzz][unit]") {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  CHECK(compare_npy_tensors(a, a.clone()).verdict == FuzzVerdict::Accepted);
  CHECK(compare_npy_tensors(a, a.reshaped(std::vector<std::int64_t>{4})).is_finding());
  CHECK(compare_npy_tensors(a, Tensor::from_vector<std::int32_t>({1, 2, 3, 4}, {2, 2})).is_finding());
  Tensor b = a.clone();
  b.data<float>()[3] = 5;
  CHECK(compare_npy_tensors(a, b).is_finding());
  CHECK(fuzz_npy(canary::cli::encode_npy(a)).verdict == FuzzVerdict::Accepted);
  CHECK(fuzz_npy("\x93NUMPY").verdict == FuzzVerdict::Rejected);
}

TEST_CASE("fuzz checks: a differential report with a failure is a finding", "[fuzz][unit]") {
  canary::differential::DifferentialReport report;
  CHECK(judge_report(report).verdict == FuzzVerdict::Accepted);
  report.failure = "seed 7, call 2 of 3 (N=0): output y: JIT vs interpreter, element 0";
  FuzzResult r = judge_report(report);
  REQUIRE(r.is_finding());
  CHECK(r.detail.find("seed 7") != std::string::npos);
}

TEST_CASE("fuzz checks: the target functions classify simple inputs", "[fuzz][unit]") {
  CHECK(fuzz_text_format(kRelu).verdict == FuzzVerdict::Accepted);
  CHECK(fuzz_text_format("canary v1\ngraph").verdict == FuzzVerdict::Rejected);
  CHECK(fuzz_onnx_import("not protobuf").verdict == FuzzVerdict::Rejected);
  CHECK(fuzz_graph_stream("").verdict == FuzzVerdict::Accepted);
}

TEST_CASE("fuzz checks: stream plans change shapes mid-stream and reach 0, 1 and the range maxima", "[fuzz][unit]") {
  using canary::differential::kMaxC;
  using canary::differential::kMaxN;
  using canary::differential::kMaxT;
  CHECK(decode_stream_plan("").calls.size() == 1);
  std::set<std::int64_t> dims;
  for (int b = 0; b < 256; ++b) dims.insert(decode_dim(static_cast<std::uint8_t>(b), 0, kMaxN));
  for (std::int64_t want : {std::int64_t{0}, std::int64_t{1}, kMaxN - 1, kMaxN}) CHECK(dims.count(want) == 1);
  CHECK(decode_dim(0xF3, 1, kMaxC) == kMaxC);
  CHECK(decode_dim(0xF0, 1, kMaxT) == 1);
  // 4 calls: all dims at their maxima, N = 0, back to the first shape, N = 1.
  const std::string bytes = std::string(8, '\x2a') + std::string("\x05\x03", 2) +
                            "\x04\xf3\xf3\xf3\x01\x07" "\x01\xf0\x02\x08" "\x05\x03\x09" "\x01\xf1\x05\x0a";
  StreamPlan plan = decode_stream_plan(bytes);
  REQUIRE(plan.calls.size() == 4);
  CHECK(plan.options.hot_threshold == 2);
  CHECK_FALSE(plan.options.value_canaries);
  CHECK(plan.options.values.non_finite_fraction > 0);
  CHECK((plan.calls[0].n == kMaxN && plan.calls[0].c == kMaxC && plan.calls[0].t == kMaxT));
  CHECK((plan.calls[1].n == 0 && plan.calls[1].c == kMaxC));
  CHECK((plan.calls[2].n == kMaxN && plan.calls[2].t == kMaxT));
  CHECK(plan.calls[3].n == 1);
  CHECK(plan.calls[1].trip == 2);
}

TEST_CASE("fuzz checks: a stream plan keeps within its element budget by lowering N", "[fuzz][unit]") {
  using namespace canary::differential;
  // [N, 1, T] + [N, 1] broadcasts to [N, N, T]: quadratic in N.
  const auto g = canary::graph::parse_graph(
      "canary v1\nsymbols {\n  N in [0, 4096]\n  T in [1, 8]\n}\n"
      "graph main(a: f32[N, 1, T], b: f32[N, 1]) -> (y) {\n  y = Add(a, b)\n}\n");
  StreamCall small;
  small.n = 3;
  small.t = 2;
  CHECK(call_elements(*g, small) == 3 * 2 + 3 + 3 * 3 * 2);
  // Six calls, each with N, C and T at their maxima.
  std::string bytes = std::string(8, '\0') + std::string("\x00\x05", 2);
  for (int i = 0; i < 6; ++i) bytes += std::string("\x04\xf3\xf3\xf3\x01\x01", 6);
  StreamPlan plan = decode_stream_plan(bytes);
  REQUIRE(plan.calls.size() == 6);
  fit_plan_to_budget(plan, *g);
  std::int64_t total = 0;
  for (const StreamCall& call : plan.calls) {
    CHECK((call.c == kMaxC && call.t == kMaxT));
    total += call_elements(*g, call);
  }
  CHECK(total <= kMaxPlanElements);
  // The first call got the largest N that fits.
  REQUIRE(plan.calls[0].n > 0);
  CHECK(plan.calls[0].n < kMaxN);
  StreamCall more = plan.calls[0];
  ++more.n;
  CHECK(call_elements(*g, more) > kMaxPlanElements);
}

TEST_CASE("fuzz checks: a graph_stream plan runs every call and the JIT compiles", "[fuzz][unit]") {
  using namespace canary::differential;
  // Seed 3, hot threshold 1, three calls: N=2 C=3 T=4, the same shape, N=5.
  const std::string bytes = std::string("\x03\0\0\0\0\0\0\0\x00\x02", 10) + std::string("\x04\x02\x02\x03\x00\x01", 6) +
                            std::string("\x00\x00\x02", 3) + std::string("\x01\x05\x00\x03", 4);
  StreamPlan plan = decode_stream_plan(bytes);
  REQUIRE(plan.calls.size() == 3);
  const RandomGraph graph = generate_random_graph(plan.graph_seed);
  DifferentialRunner runner;
  DifferentialReport report = runner.run(graph, plan.calls, plan.options);
  INFO(report.failure);
  CHECK(report.ok());
  CHECK(report.calls == 3);
  CHECK(report.count(canary::EventKind::Compiled) > 0);
  CHECK(judge_report(report).verdict == FuzzVerdict::Accepted);
  CHECK(describe_plan(plan, graph).find("isa auto, hot threshold 1, value canaries off") == 0);
  CHECK(describe_plan(plan, graph).find(" | N=5") != std::string::npos);
}

TEST_CASE("fuzz checks: the flags byte picks the vector tier", "[fuzz][unit]") {
  const auto isa_of = [](std::uint8_t flags) {
    return decode_stream_plan(std::string("\x03\0\0\0\0\0\0\0", 8) + std::string(1, static_cast<char>(flags))).options.isa;
  };
  CHECK(isa_of(0x00) == "auto");
  CHECK(isa_of(0x08) == "avx2");
  CHECK(isa_of(0x10) == "scalar");
  CHECK(isa_of(0x18) == "auto");
  CHECK(isa_of(0x0B) == "avx2");  // with the other flags set
}

TEST_CASE("fuzz checks: bit 5 of the flags byte puts fused groups on the stand-in device", "[fuzz][unit]") {
  const auto device_of = [](std::uint8_t flags) {
    return decode_stream_plan(std::string("\x03\0\0\0\0\0\0\0", 8) + std::string(1, static_cast<char>(flags)))
        .options.device;
  };
  CHECK_FALSE(device_of(0x00));
  CHECK(device_of(0x20));
  CHECK(device_of(0x3F));
  CHECK_FALSE(device_of(0x1F));
}

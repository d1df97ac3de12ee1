// Options::split_batch: calls of a model whose samples never meet run as
// slices of their batch on the session's threads, give what one thread
// gives, and leave everything else (errors, batch 1, other models) unsplit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "canary/canary.h"

using canary::DType;
using canary::Tensor;

namespace {

Tensor uniform_tensor(std::mt19937& rng, std::vector<std::int64_t> shape, float scale = 1.0f) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::uniform_real_distribution<float> dist(-scale, scale);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// Conv 5x5 (32 -> 64 channels) + Relu + global average pool + Gemm head on
// x [N, 32, 32, 32]: about 105 Mflop per sample, so even a call at batch 2
// takes well over the split's 200 us on one thread. With `cross_batch`, the head's
// input is centred by its mean over the batch (ReduceMean over axis 0), so
// samples meet and the model must not split.
canary::Model conv_classifier(const canary::Runtime& rt, bool cross_batch = false) {
  std::mt19937 rng(5);
  canary::ModelBuilder b("classifier");
  b.input("x", DType::F32, {"N", 32, 32, 32})
      .constant("w", uniform_tensor(rng, {64, 32, 5, 5}, 0.05f))
      .constant("b", uniform_tensor(rng, {64}, 0.1f))
      .constant("hw", uniform_tensor(rng, {10, 64}, 0.3f))
      .constant("hb", uniform_tensor(rng, {10}, 0.1f))
      .node("Conv", {"x", "w", "b"}, {"c"}, {{"pads", std::vector<std::int64_t>{2, 2, 2, 2}}})
      .node("Relu", {"c"}, {"r"})
      .node("GlobalAveragePool", {"r"}, {"g"})
      .node("Flatten", {"g"}, {"f"});
  std::string head_input = "f";
  if (cross_batch) {
    b.node("ReduceMean", {"f"}, {"m"}, {{"axes", std::vector<std::int64_t>{0}}})
        .node("Sub", {"f", "m"}, {"centred"});
    head_input = "centred";
  }
  b.node("Gemm", {head_input, "hw", "hb"}, {"y"}, {{"transB", std::int64_t{1}}}).output("y");
  return rt.build(b);
}

canary::Options threads_options(int threads) {
  canary::Options o;
  o.intra_op_threads = threads;
  return o;
}

void check_close(const Tensor& want, const Tensor& got) {
  REQUIRE(got.shape() == want.shape());
  int bad = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const double a = want.element_as_double(i), b = got.element_as_double(i);
    if (!(std::abs(a - b) <= 1e-5 * std::abs(a) + 1e-6)) ++bad;
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("split batch: a conv classifier on two threads runs as batch slices and matches one thread",
          "[unit][api][batch_split]") {
  const canary::Runtime one_rt(threads_options(1)), two_rt(threads_options(2));
  canary::Model one_model = conv_classifier(one_rt), two_model = conv_classifier(two_rt);
  canary::Session one = one_model.session(), two = two_model.session(), reference = two_model.reference_session();
  std::mt19937 rng(9);
  for (const std::int64_t batch : {8, 8, 8, 5, 8, 2, 1, 7}) {
    INFO("batch " << batch);
    const canary::NamedTensors in{{"x", uniform_tensor(rng, {batch, 32, 32, 32})}};
    const canary::NamedTensors a = one.run(in), b = two.run(in), want = reference.run(in);
    check_close(a.at("y"), b.at("y"));
    check_close(want.at("y"), b.at("y"));
  }
  CHECK(one.stats().split_calls == 0);  // one thread never splits
  // The first call measures; every later call at batch 2 or more splits.
  CHECK(two.stats().split_calls == 6);
  CHECK(two.stats().calls == 8);
}

TEST_CASE("split batch: attention whose heads a Reshape merges with the batch runs as slices and matches one thread",
          "[unit][api][batch_split]") {
  // torch's nn.MultiheadAttention as exported: [T, N, 64] reshaped to
  // [T, 4N, 16] (the batch grouped with the heads), per-head attention,
  // [T*N, 64] for the output projection (the batch grouped with T), then a
  // mean over T.
  std::mt19937 rng(12);
  canary::ModelBuilder b("attention");
  b.input("x", DType::F32, {"N", "T", 64})
      .constant("w_in", uniform_tensor(rng, {64, 64}, 0.2f))
      .constant("w_out", uniform_tensor(rng, {64, 64}, 0.2f))
      .constant("per_head", Tensor::from_vector<std::int64_t>({0, -1, 16}, {3}))
      .constant("rows", Tensor::from_vector<std::int64_t>({-1, 64}, {2}))
      .node("MatMul", {"x", "w_in"}, {"h"})
      .node("Transpose", {"h"}, {"ht"}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}})
      .node("Reshape", {"ht", "per_head"}, {"heads"})
      .node("Transpose", {"heads"}, {"q"}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}})
      .node("Transpose", {"heads"}, {"k"}, {{"perm", std::vector<std::int64_t>{1, 2, 0}}})
      .node("MatMul", {"q", "k"}, {"scores"})
      .node("Softmax", {"scores"}, {"weights"}, {{"axis", std::int64_t{-1}}})
      .node("MatMul", {"weights", "q"}, {"context"})
      .node("Transpose", {"context"}, {"back"}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}})
      .node("Reshape", {"back", "rows"}, {"merged"})
      .node("MatMul", {"merged", "w_out"}, {"proj"})
      .node("Shape", {"ht"}, {"ht_shape"})
      .node("Reshape", {"proj", "ht_shape"}, {"seq"})
      .node("ReduceMean", {"seq"}, {"pooled"}, {{"axes", std::vector<std::int64_t>{0}}, {"keepdims", std::int64_t{0}}})
      .output("pooled");
  const canary::Runtime one_rt(threads_options(1)), two_rt(threads_options(2));
  canary::Model one_model = one_rt.build(b), two_model = two_rt.build(b);
  CHECK(two_model.batch_split_obstacle().empty());
  canary::Session one = one_model.session(), two = two_model.session(), reference = two_model.reference_session();
  for (const std::int64_t batch : {8, 8, 8, 5, 3}) {
    INFO("batch " << batch);
    const canary::NamedTensors in{{"x", uniform_tensor(rng, {batch, 128, 64})}};
    const canary::NamedTensors a = one.run(in), c = two.run(in), want = reference.run(in);
    check_close(a.at("pooled"), c.at("pooled"));
    check_close(want.at("pooled"), c.at("pooled"));
  }
  CHECK(two.stats().split_calls >= 3);
}

TEST_CASE("split batch: a model whose samples meet, split_batch off, or batch 1 stays whole", "[unit][api][batch_split]") {
  std::mt19937 rng(10);
  const auto run_calls = [&](canary::Session& s, std::int64_t batch) {
    for (int i = 0; i < 4; ++i) s.run({{"x", uniform_tensor(rng, {batch, 32, 32, 32})}});
  };
  const canary::Runtime two_rt(threads_options(2));
  canary::Session meets = conv_classifier(two_rt, true).session();
  run_calls(meets, 8);
  CHECK(meets.stats().split_calls == 0);

  canary::Options off = threads_options(2);
  off.split_batch = false;
  const canary::Runtime off_rt(off);
  canary::Session unsplit = conv_classifier(off_rt).session();
  run_calls(unsplit, 8);
  CHECK(unsplit.stats().split_calls == 0);

  canary::Session single = conv_classifier(two_rt).session();
  run_calls(single, 1);
  CHECK(single.stats().split_calls == 0);
  run_calls(single, 4);  // the control: the same session splits at batch 4
  CHECK(single.stats().split_calls > 0);
}

TEST_CASE("split batch: a bad input fails as it does unsplit, and the session goes on", "[unit][api][batch_split]") {
  const canary::Runtime one_rt(threads_options(1)), two_rt(threads_options(2));
  canary::Session one = conv_classifier(one_rt).session(), two = conv_classifier(two_rt).session();
  std::mt19937 rng(11);
  for (int i = 0; i < 3; ++i) {
    const canary::NamedTensors in{{"x", uniform_tensor(rng, {8, 32, 32, 32})}};
    one.run(in);
    two.run(in);
  }
  REQUIRE(two.stats().split_calls > 0);
  const canary::NamedTensors bad{{"x", uniform_tensor(rng, {8, 31, 32, 32})}};  // 31 channels, the model takes 32
  std::string one_message, two_message;
  canary::ErrorKind one_kind = canary::ErrorKind::Internal, two_kind = canary::ErrorKind::Internal;
  try {
    one.run(bad);
  } catch (const canary::Error& e) {
    one_kind = e.kind();
    one_message = e.what();
  }
  try {
    two.run(bad);
  } catch (const canary::Error& e) {
    two_kind = e.kind();
    two_message = e.what();
  }
  CHECK_FALSE(two_message.empty());
  CHECK(two_kind == one_kind);
  CHECK(two_kind != canary::ErrorKind::Internal);
  CHECK(two_message == one_message);  // batch 8 named, not a slice's 4
  CHECK(two.stats().failed_calls == 1);
  const canary::NamedTensors good{{"x", uniform_tensor(rng, {8, 32, 32, 32})}};
  check_close(one.run(good).at("y"), two.run(good).at("y"));
}

TEST_CASE("split batch: calls stay whole while a cost-model trial is open, and split once it has decided",
          "[unit][api][batch_split][cost]") {
  canary::Options o = threads_options(2);
  o.cost.enabled = true;
  o.cost.trial_calls = 4;
  o.cost.max_shadow_overhead = 1e9;  // about the split, not the budget
  o.jit.synchronous = true;
  const canary::Runtime rt(o);
  canary::Model model = conv_classifier(rt);
  canary::Session s = model.session();
  std::mt19937 rng(12);
  const auto decision_events = [&](bool with_table) {
    int n = 0;
    for (const canary::Event& e : model.events())
      if (e.kind == canary::EventKind::Decision && static_cast<bool>(e.cost) == with_table) ++n;
    return n;
  };
  // From the call after the trial opened to the one that decided it, no call splits.
  std::optional<std::uint64_t> split_at_open;
  for (int call = 0; call < 200 && decision_events(true) == 0; ++call) {
    s.run({{"x", uniform_tensor(rng, {4, 32, 32, 32})}});
    if (!split_at_open && decision_events(false) > 0) split_at_open = s.stats().split_calls;
  }
  REQUIRE(split_at_open.has_value());
  REQUIRE(decision_events(true) > 0);
  CHECK(s.stats().split_calls == *split_at_open);
  for (int i = 0; i < 3; ++i) s.run({{"x", uniform_tensor(rng, {4, 32, 32, 32})}});
  CHECK(s.stats().split_calls == *split_at_open + 3);
}

TEST_CASE("split batch: slices count in the session's stats and share its arena budget", "[unit][api][batch_split]") {
  canary::Options o = threads_options(2);
  o.collect_timings = true;
  const canary::Runtime rt(o), one_rt(threads_options(1));
  canary::Session s = conv_classifier(rt).session(), one = conv_classifier(one_rt).session();
  std::mt19937 rng(12);
  std::vector<canary::NamedTensors> inputs;
  for (int i = 0; i < 4; ++i) inputs.push_back({{"x", uniform_tensor(rng, {8, 32, 32, 32})}});
  const auto conv_runs = [](const canary::Stats& st) {
    std::uint64_t n = 0;
    for (const canary::TierTime& t : st.time.tiers) n += t.op == "Conv" ? t.count : 0;
    return n;
  };
  s.run(inputs[0]);  // unsplit: it measures the call
  const canary::Stats first = s.stats();
  REQUIRE(first.split_calls == 0);
  for (int i = 1; i < 4; ++i) s.run(inputs[static_cast<std::size_t>(i)]);
  const canary::Stats later = s.stats();
  REQUIRE(later.split_calls == 3);
  CHECK(later.instructions_executed > first.instructions_executed);
  CHECK(conv_runs(first) == 1);
  CHECK(conv_runs(later) == 1 + 3 * 2);  // each split call's Conv, timed on each of its two slices
  // The slices' buffers are the session's: the peak holds them with the kept whole-batch registers.
  CHECK(later.peak_arena_bytes > first.peak_arena_bytes);

  // Under a budget of one unsplit call, slices never take the session past it.
  canary::Options tight = threads_options(2);
  tight.max_arena_bytes = first.peak_arena_bytes;
  const canary::Runtime tight_rt(tight);
  canary::Session bounded = conv_classifier(tight_rt).session();
  for (const canary::NamedTensors& in : inputs) check_close(one.run(in).at("y"), bounded.run(in).at("y"));
  CHECK(bounded.stats().peak_arena_bytes <= tight.max_arena_bytes);
  CHECK(bounded.stats().failed_calls == 0);
}

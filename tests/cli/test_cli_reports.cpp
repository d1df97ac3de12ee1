// `canary inspect` and `canary explain` as subprocesses: text, the documented
// JSON fields, event kinds in order, and CANARY_LOG from the library.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_process.h"

using nlohmann::json;
using namespace canary::test;

namespace {

// mlp.cnr: 10 calls of batch 8, then 6 of 16 and 4 of 32, compiled synchronously.
CliResult run_on_batch_stream(const ScratchDir& dir, const std::string& verb, std::vector<std::string> extra = {},
                              std::vector<std::string> env = {}) {
  write_text(dir.file("s.txt"), "x=random:8x4 *10\nx=random:16x4 *6\nx=random:32x4 *4\n");
  // The fixture's nodes as written (the graph optimizer would make fc1 and h1 one Gemm).
  std::vector<std::string> args = {verb, fixture("mlp.cnr"), "--stream", dir.file("s.txt"), "--sync-compile",
                                   "--graph-opt", "off"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args, env);
}

// Checks that `object` has every key with the JSON type given.
void check_fields(const json& object, const std::vector<std::pair<std::string, json::value_t>>& fields) {
  for (const auto& [key, type] : fields) {
    INFO(key);
    REQUIRE(object.contains(key));
    const bool numeric = type == json::value_t::number_float;
    CHECK((numeric ? object[key].is_number() : object[key].type() == type));
  }
}

}  // namespace

TEST_CASE("cli inspect --json: the documented structure, with the numbers of the stream", "[unit][cli]") {
  ScratchDir dir;
  const CliResult r = run_on_batch_stream(dir, "inspect", {"--json"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json doc = json::parse(r.out);
  CHECK(doc["format"] == "canary-inspect");
  CHECK(doc["version"] == 1);
  const json& jit = doc["jit"];
  CHECK(jit["enabled"] == true);
  REQUIRE(jit["anchors"].size() == 1);
  const json& anchor = jit["anchors"][0];
  check_fields(anchor, {{"name", json::value_t::string}, {"kind", json::value_t::string},
                        {"pc", json::value_t::number_unsigned}, {"compiles", json::value_t::number_unsigned},
                        {"state", json::value_t::string}, {"variants", json::value_t::array}});
  CHECK(anchor["name"] == "entry");
  CHECK(anchor["compiles"] == 2);
  REQUIRE(anchor["variants"].size() == 1);  // trace 2 subsumed trace 1
  const json& v = anchor["variants"][0];
  check_fields(v, {{"trace", json::value_t::number_unsigned}, {"tier", json::value_t::string},
                   {"math", json::value_t::string}, {"isa", json::value_t::string}, {"loop", json::value_t::boolean},
                   {"groups", json::value_t::array}, {"kernels", json::value_t::array},
                   {"guards", json::value_t::array}, {"entries", json::value_t::number_unsigned},
                   {"deopts", json::value_t::number_unsigned}, {"compile_ms", json::value_t::number_float},
                   {"code_bytes", json::value_t::number_unsigned}, {"listing", json::value_t::string}});
  CHECK(v["trace"] == 2);
  CHECK(v["tier"] == "symbolic fused");
  CHECK(v["entries"] == 8);  // calls 13..20
  CHECK(v["groups"][0]["nodes"] == json::array({"h1", "h"}));  // Add + Relu fused
  CHECK(v["groups"][0]["sunk"] == false);                       // adjacent in the recorded order
  REQUIRE(v["kernels"].size() >= 2);  // MatMul and Gemm run as oneDNN kernel calls
  CHECK(v["kernels"][0] == "fc1");
  CHECK(v["kernels"][1] == "fc2");
  for (const json& g : v["guards"]) check_fields(g, {{"condition", json::value_t::string}, {"failures", json::value_t::number_unsigned}});
  CHECK(doc["tiers"]["compiled"]["calls"] == 10);
  CHECK(doc["tiers"]["interpreter"]["calls"] == 10);
  CHECK(doc["stats"]["calls"] == 20);
  CHECK(doc["stats"]["jit"]["retraces"] == 1);
  const json& shapes = doc["stats"]["input_shapes"][0]["shapes"];
  REQUIRE(shapes.size() == 3);
  CHECK(shapes[1]["shape"] == json::array({16, 4}));
  CHECK(shapes[1]["count"] == 6);
  REQUIRE(doc["calls"].size() == 20);
  CHECK(doc["calls"][10]["tier"] == "interpreter");
  CHECK(doc["calls"][10]["guard_failures"] == 1);
}

TEST_CASE("cli inspect: the readable report names anchors, variants, groups and guards", "[unit][cli]") {
  ScratchDir dir;
  const CliResult r = run_on_batch_stream(dir, "inspect");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("anchor 'entry' (entry at pc 0): compiled (1 variants); 2 compiles"));
  CHECK_THAT(r.out, Catch::Contains("variant trace 2: symbolic fused, exact math"));
  CHECK_THAT(r.out, Catch::Contains("group 1: h1 h (2 in, 1 out)"));
  CHECK_THAT(r.out, Catch::Contains("kernel calls: fc1 fc2"));
  CHECK_THAT(r.out, Catch::Contains("x.rank == 2"));
  CHECK_THAT(r.out, Catch::Contains("compiled code:    10 calls"));
}

TEST_CASE("cli explain: every event in order, in words, and why it recompiled", "[unit][cli]") {
  ScratchDir dir;
  const CliResult text = run_on_batch_stream(dir, "explain");
  INFO(text.err);
  REQUIRE(text.status == 0);
  CHECK_THAT(text.out, Catch::Contains("call 11: guard x.dim0 == 8 failed (saw 16)"));
  CHECK_THAT(text.out, Catch::Contains("call 12: retrace of 'entry' queued -> x.dim0 made symbolic"));
  CHECK_THAT(text.out, Catch::Contains("call 12: guard x.dim0 == 8 failed (saw 16) -> x.dim0 made symbolic "
                                       "(seen 8..16, divisible by 8) -> trace 2 recompiled in "));
  CHECK_THAT(text.out, Catch::Contains("cost model"));

  const CliResult r = run_on_batch_stream(dir, "explain", {"--json"});
  REQUIRE(r.status == 0);
  const json doc = json::parse(r.out);
  CHECK(doc["format"] == "canary-explain");
  std::vector<std::string> kinds;
  for (const json& e : doc["events"]) {
    check_fields(e, {{"sequence", json::value_t::number_unsigned}, {"kind", json::value_t::string},
                     {"time_us", json::value_t::number_float}, {"thread", json::value_t::string},
                     {"call", json::value_t::number_unsigned}, {"anchor", json::value_t::string},
                     {"guard", json::value_t::string}, {"observed", json::value_t::string},
                     {"decision", json::value_t::string}, {"text", json::value_t::string}});
    kinds.push_back(e["kind"]);
  }
  CHECK(kinds == std::vector<std::string>{"hot", "trace-recorded", "compiled", "guard-failed", "guard-failed",
                                          "retrace", "trace-recorded", "compiled", "evicted"});
  CHECK(doc["events"][3]["call"] == 11);
  CHECK(doc["events"][3]["guard"] == "x.dim0 == 8");
  CHECK(doc["events"][3]["observed"] == "saw 16");
  CHECK(doc["events"][7]["decision"] == "symbolic fused, exact math");
  CHECK(doc["counts"]["guard-failed"] == 2);
  REQUIRE(doc["recompiles"].size() == 1);
  CHECK(doc["recompiles"][0]["call"] == 12);
  CHECK(doc["recompiles"][0]["decision"] == "x.dim0 made symbolic (seen 8..16, divisible by 8)");
  CHECK(doc["recompiles"][0]["trace"] == 2);
  CHECK(doc["cost_model"]["enabled"] == false);
  CHECK(doc["cost_model"]["decisions"].empty());
}

TEST_CASE("cli explain --cost: the decision table of every choice, in text and JSON", "[unit][cli][cost]") {
  ScratchDir dir;
  write_text(dir.file("s.txt"), "x=random:8x4 *150\n");
  const std::vector<std::string> args = {"explain", fixture("mlp.cnr"), "--stream", dir.file("s.txt"), "--sync-compile",
                                         "--hot", "2", "--cost", "--profile", "robust"};
  const CliResult text = run_cli(args);
  INFO(text.err);
  REQUIRE(text.status == 0);
  CHECK_THAT(text.out, Catch::Contains("cost model decisions:"));
  CHECK_THAT(text.out, Catch::Contains("profile robust, anchor 'entry'"));
  CHECK_THAT(text.out, Catch::Contains("interpreter"));
  CHECK_THAT(text.out, Catch::Contains("max relative error"));

  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const CliResult r = run_cli(json_args);
  REQUIRE(r.status == 0);
  const json doc = json::parse(r.out);
  CHECK(doc["cost_model"]["enabled"] == true);
  REQUIRE(doc["cost_model"]["decisions"].size() >= 1);
  const json& d = doc["cost_model"]["decisions"][0];
  CHECK(d["profile"] == "robust");
  CHECK(d["weights"]["error"] == 2.0);
  CHECK(d["limits"]["max_relative_error"] == 1e-6);
  REQUIRE(d["candidates"].size() >= 2);
  bool chosen_found = false;
  for (const json& c : d["candidates"]) {
    CHECK(c["terms"].size() > 5);
    CHECK(c["gates"].size() >= 4);
    if (c["name"] == d["chosen"]) chosen_found = true;
  }
  CHECK(chosen_found);
}

TEST_CASE("cli --decision: malformed specs are rejected with the flag's value", "[unit][cli][cost]") {
  for (const char* bad : {"score", "score=median", "score=threshold", "score=threshold:x", "score=argmax:1:2"}) {
    CAPTURE(bad);
    const CliResult r = run_cli({"run", fixture("mlp.cnr"), "--input", "x=random:2x4", "--cost", "--decision", bad});
    CHECK(r.status != 0);
    CHECK_THAT(r.err, Catch::Contains("--decision"));
  }
  const CliResult no_cost = run_cli({"run", fixture("mlp.cnr"), "--input", "x=random:2x4", "--decision", "y=argmax"});
  CHECK(no_cost.status != 0);
  CHECK_THAT(no_cost.err, Catch::Contains("--decision needs --cost"));
}

TEST_CASE("CANARY_LOG prints the library's events to stderr", "[unit][cli]") {
  ScratchDir dir;
  const CliResult all = run_on_batch_stream(dir, "run", {}, {"CANARY_LOG=all"});
  REQUIRE(all.status == 0);
  std::size_t lines = 0, pos = 0;
  while ((pos = all.err.find("[canary]", pos)) != std::string::npos) ++lines, ++pos;
  CHECK(lines == 9);  // every event of the stream
  CHECK_THAT(all.err, Catch::Contains("[canary] #4 call 11 guard-failed: guard x.dim0 == 8"));
  const CliResult guards = run_on_batch_stream(dir, "run", {}, {"CANARY_LOG=guards"});
  CHECK(line_count(guards.err) == 2);
  CHECK_THAT(guards.err, Catch::Contains("guard-failed"));
  const CliResult quiet = run_on_batch_stream(dir, "run");
  CHECK(quiet.err.empty());
}

TEST_CASE("cli inspect --passes: what each graph pass changed, and the JIT on the optimized graph", "[unit][cli]") {
  ScratchDir dir;
  write_text(dir.file("s.txt"), "x=random:8x4 *10\n");
  const CliResult r = run_cli({"inspect", fixture("mlp.cnr"), "--stream", dir.file("s.txt"), "--sync-compile", "--passes"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("graph passes:\n  eliminate_dead_nodes: 0 changes, nodes 5 -> 5"));
  CHECK_THAT(r.out, Catch::Contains("  fuse_matmul_add: 1 change, nodes 5 -> 4\n    'fc1' and 'Add -> h1' as one Gemm"));
  // The Gemm and the Relu after it run as one contraction with its epilogue.
  CHECK_THAT(r.out, Catch::Contains("group 1: fc1 h (3 in, 1 out)"));
  CHECK_THAT(r.out, Catch::Contains("kernel calls: fc2"));

  const CliResult off = run_cli({"inspect", fixture("mlp.cnr"), "--stream", dir.file("s.txt"), "--passes",
                                 "--graph-opt", "off"});
  REQUIRE(off.status == 0);
  CHECK_THAT(off.out, Catch::Contains("graph passes: off"));

  const CliResult js = run_cli({"inspect", fixture("mlp.cnr"), "--stream", dir.file("s.txt"), "--json"});
  REQUIRE(js.status == 0);
  const json doc = json::parse(js.out);
  REQUIRE(doc["graph_passes"].size() == 10);
  const json& fuse = doc["graph_passes"][7];
  CHECK(fuse["pass"] == "fuse_matmul_add");
  CHECK(fuse["changes"] == 1);
  CHECK(fuse["nodes_before"] == 5);
  CHECK(fuse["nodes_after"] == 4);
  CHECK(fuse["details"][0] == "'fc1' and 'Add -> h1' as one Gemm");

  const CliResult bad = run_cli({"run", fixture("mlp.cnr"), "--graph-opt", "max"});
  CHECK(bad.status == 2);
  CHECK_THAT(bad.err, Catch::Contains("--graph-opt"));
}

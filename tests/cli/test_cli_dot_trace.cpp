// `canary dot` and `--chrome-trace` as subprocesses.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_process.h"

using nlohmann::json;
using namespace canary::test;

TEST_CASE("cli dot: fusion groups become clusters and guarded inputs are marked", "[unit][cli]") {
  ScratchDir dir;
  write_text(dir.file("s.txt"), "x=random:8x4 *4\n");
  // The fixture's nodes as written (the graph optimizer would make fc1 and h1 one Gemm).
  const CliResult r = run_cli({"dot", fixture("mlp.cnr"), "--stream", dir.file("s.txt"), "--hot", "2", "--sync-compile",
                               "--graph-opt", "off"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("digraph G {", 0) == 0);
  CHECK_THAT(r.out, Catch::Contains("subgraph cluster_fused_0 {"));
  CHECK_THAT(r.out, Catch::Contains("trace 1 group 1 (exact fused)"));
  CHECK_THAT(r.out, Catch::Contains("label=\"x\\nf32[N, 4]\\n(guarded)\""));
  CHECK_THAT(r.out, Catch::Contains("label=\"h1\\nAdd\""));
  CHECK(std::count(r.out.begin(), r.out.end(), '{') == std::count(r.out.begin(), r.out.end(), '}'));

  const CliResult plain = run_cli({"dot", fixture("mlp.cnr")});
  REQUIRE(plain.status == 0);
  CHECK(plain.out.find("subgraph cluster") == std::string::npos);
  CHECK(plain.out.find("(guarded)") == std::string::npos);

  const CliResult loop = run_cli({"dot", fixture("rnn_loop.cnr")});
  REQUIRE(loop.status == 0);
  CHECK_THAT(loop.out, Catch::Contains("subgraph cluster_scope_1 {"));
  CHECK_THAT(loop.out, Catch::Contains("Loop 'rnn' body"));
  CHECK_THAT(loop.out, Catch::Contains("style=dashed]"));  // the body captures xs, wx, wh
}

TEST_CASE("cli --chrome-trace: valid trace-event JSON with call spans, compiles and instants", "[unit][cli]") {
  ScratchDir dir;
  write_text(dir.file("s.txt"), "x=random:8x4 *10\nx=random:16x4 *6\nx=random:32x4 *4\n");
  const CliResult r = run_cli({"run", fixture("mlp.cnr"), "--stream", dir.file("s.txt"), "--sync-compile",
                               "--chrome-trace", dir.file("t.json")});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json doc = json::parse(read_text(dir.file("t.json")));
  REQUIRE(doc["traceEvents"].is_array());
  int calls = 0, compiled = 0, compiles = 0, guard_instants = 0, metadata = 0;
  for (const json& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    CHECK((ph == "X" || ph == "i" || ph == "M"));
    if (ph == "M") ++metadata;
    if (ph == "X") {
      CHECK(e["dur"].get<double>() >= 0.0);
      CHECK(e["ts"].get<double>() >= 0.0);
    }
    const std::string cat = e.value("cat", "");
    if (ph == "X" && (cat == "interpreter" || cat == "compiled")) {
      ++calls;
      compiled += cat == "compiled";
      CHECK(e["tid"] == 0);
    }
    if (ph == "X" && cat == "compile") ++compiles;
    if (ph == "i" && cat == "guard-failed") ++guard_instants;
  }
  CHECK(metadata == 3);
  CHECK(calls == 20);
  CHECK(compiled == 10);
  CHECK(compiles == 2);
  CHECK(guard_instants == 2);
}

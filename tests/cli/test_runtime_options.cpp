// The --profile presets and the flags that adjust canary::Options.
#include <catch2/catch.hpp>

#include "canary/error.h"
#include "cli/runtime_options.h"

using namespace canary::cli;

TEST_CASE("profiles: speed, balanced and robust map to documented options", "[unit][cli-options]") {
  const canary::Options defaults;
  const canary::Options speed = profile_options("speed");
  CHECK(speed.jit.fast_math);
  CHECK_FALSE(speed.jit.value_canaries);
  const canary::Options balanced = profile_options("balanced");
  CHECK(balanced.jit.fast_math == defaults.jit.fast_math);
  CHECK(balanced.jit.value_canaries == defaults.jit.value_canaries);
  CHECK(balanced.reject_non_finite_inputs == defaults.reject_non_finite_inputs);
  const canary::Options robust = profile_options("robust");
  CHECK(robust.jit.value_canaries);
  CHECK_FALSE(robust.jit.fast_math);
  CHECK_FALSE(robust.reject_non_finite_inputs);
  CHECK_THROWS_WITH(profile_options("fastest"), Catch::Contains("unknown profile 'fastest'"));
}

TEST_CASE("profiles: the other flags apply on top of the profile", "[unit][cli-options]") {
  CliOptions cli;
  cli.profile = "speed";
  cli.no_jit = true;
  cli.threads = 3;
  cli.sync_compile = true;
  cli.hot_threshold = 5;
  const canary::Options o = runtime_options(cli);
  CHECK(o.jit.fast_math);
  CHECK_FALSE(o.jit.enabled);
  CHECK(o.intra_op_threads == 3);
  CHECK(o.jit.synchronous);
  CHECK(o.jit.hot_threshold == 5);
  CHECK(describe_settings(cli) == "profile speed; jit off; 3 intra-op threads");
  cli.no_jit = false;
  cli.threads = 1;
  CHECK(describe_settings(cli) ==
        "profile speed; jit on (hot after 5 visits, compiles on the calling thread, fast math); 1 intra-op thread");
  CHECK_FALSE(runtime_options(cli).jit.range_canaries);
  cli.range_canaries = true;
  CHECK(runtime_options(cli).jit.range_canaries);
  CHECK(describe_settings(cli) == "profile speed; jit on (hot after 5 visits, compiles on the calling thread, fast "
                                  "math, range canaries); 1 intra-op thread");
  cli.threads = -1;
  CHECK_THROWS_AS(runtime_options(cli), canary::Error);
}

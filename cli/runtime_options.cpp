// The --profile presets and the flags that adjust canary::Options.
#include "cli/runtime_options.h"

#include <string>

#include "canary/error.h"

namespace canary::cli {

Options profile_options(std::string_view profile) {
  Options o;
  if (profile == "speed") {
    o.jit.fast_math = true;
  } else if (profile == "robust") {
    o.jit.value_canaries = true;
    o.reject_non_finite_inputs = false;
  } else if (profile != "balanced") {
    throw Error(ErrorKind::Input,
                "unknown profile '" + std::string(profile) + "' (expected speed, balanced or robust)");
  }
  return o;
}

Options runtime_options(const CliOptions& cli) {
  Options o = profile_options(cli.profile);
  if (cli.threads < 0) throw Error(ErrorKind::Input, "--threads must be 0 (library default) or more");
  o.intra_op_threads = cli.threads;
  o.jit.enabled = !cli.no_jit;
  o.jit.synchronous = cli.sync_compile;
  if (cli.hot_threshold) o.jit.hot_threshold = *cli.hot_threshold;
  return o;
}

std::string describe_settings(const CliOptions& cli) {
  const Options o = runtime_options(cli);
  std::string s = "profile " + cli.profile + "; jit ";
  if (!o.jit.enabled) {
    s += "off";
  } else {
    s += "on (hot after " + std::to_string(o.jit.hot_threshold) + " visits, " +
         (o.jit.synchronous ? "compiles on the calling thread, " : "background compiles, ") +
         (o.jit.fast_math ? "fast math" : "exact math") + (o.jit.value_canaries ? ", value canaries" : "") + ")";
  }
  s += "; ";
  if (o.intra_op_threads == 0) s += "default intra-op threads";
  else s += std::to_string(o.intra_op_threads) + (o.intra_op_threads == 1 ? " intra-op thread" : " intra-op threads");
  return s;
}

}  // namespace canary::cli

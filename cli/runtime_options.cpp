// The --profile presets and the flags that adjust canary::Options.
#include "cli/runtime_options.h"

#include <cmath>
#include <string>
#include <vector>

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

DecisionOutput parse_decision(std::string_view spec) {
  const auto bad = [&](const std::string& why) {
    return Error(ErrorKind::Input, "--decision '" + std::string(spec) + "': " + why +
                                       " (expected OUTPUT=threshold:T[:MARGIN] or OUTPUT=argmax[:MARGIN])");
  };
  const std::size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0) throw bad("no output name");
  DecisionOutput d;
  d.output = std::string(spec.substr(0, eq));
  std::vector<std::string> parts;
  std::string_view rest = spec.substr(eq + 1);
  for (std::size_t colon; (colon = rest.find(':')) != std::string_view::npos; rest.remove_prefix(colon + 1))
    parts.emplace_back(rest.substr(0, colon));
  parts.emplace_back(rest);
  const auto number = [&](const std::string& text) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || text.empty() || !std::isfinite(v)) throw bad("'" + text + "' is not a finite number");
    return v;
  };
  std::size_t next = 1;
  if (parts[0] == "threshold") {
    if (parts.size() < 2) throw bad("threshold needs a value");
    d.kind = DecisionOutput::Kind::Threshold;
    d.threshold = number(parts[1]);
    next = 2;
  } else if (parts[0] == "argmax") {
    d.kind = DecisionOutput::Kind::Argmax;
  } else {
    throw bad("unknown kind '" + parts[0] + "'");
  }
  if (parts.size() > next) d.near_margin = number(parts[next]);
  if (parts.size() > next + 1) throw bad("too many fields");
  if (d.near_margin < 0) throw bad("the margin must not be negative");
  return d;
}

Options runtime_options(const CliOptions& cli) {
  Options o = cli.cost ? Options{} : profile_options(cli.profile);
  if (cli.cost) {
    profile_options(cli.profile);  // validates the name
    o.cost.enabled = true;
    o.cost.profile = cli.profile == "speed" ? CostProfile::Speed
                     : cli.profile == "robust" ? CostProfile::Robust : CostProfile::Balanced;
  }
  if (!cli.decisions.empty() && !cli.cost) throw Error(ErrorKind::Input, "--decision needs --cost");
  for (const std::string& d : cli.decisions) o.cost.decisions.push_back(parse_decision(d));
  if (cli.threads < 0) throw Error(ErrorKind::Input, "--threads must be 0 (library default) or more");
  o.intra_op_threads = cli.threads;
  o.jit.enabled = !cli.no_jit;
  o.jit.synchronous = cli.sync_compile;
  if (cli.range_canaries) o.jit.range_canaries = true;
  if (cli.device == "auto" && !cli.cost) throw Error(ErrorKind::Input, "--device auto needs --cost");
  o.jit.device = cli.device;
  if (cli.hot_threshold) {  // exactly N visits: the time-based tier-up would make the count vary
    o.jit.hot_threshold = *cli.hot_threshold;
    o.jit.hot_time_us = 0;
  }
  if (cli.graph_opt == "off") o.graph_optimization = GraphOptimization::Off;
  else if (cli.graph_opt == "basic") o.graph_optimization = GraphOptimization::Basic;
  else if (cli.graph_opt == "all") o.graph_optimization = GraphOptimization::All;
  else throw Error(ErrorKind::Input, "--graph-opt '" + cli.graph_opt + "' (expected off, basic or all)");
  return o;
}

std::string describe_settings(const CliOptions& cli) {
  const Options o = runtime_options(cli);
  std::string s = "profile " + cli.profile + "; jit ";
  if (!o.jit.enabled) {
    s += "off";
  } else {
    s += "on (hot after " + std::to_string(o.jit.hot_threshold) + " visits" +
         (o.jit.hot_time_us > 0 ? " or " + std::to_string(o.jit.hot_time_us) + " us interpreted" : std::string()) +
         ", " +
         (o.jit.synchronous ? "compiles on the calling thread, " : "background compiles, ") +
         (o.cost.enabled ? "cost model " + cost_profile_name(o.cost.profile) + " chooses variants"
                         : std::string(o.jit.fast_math ? "fast math" : "exact math")) +
         (o.jit.value_canaries ? ", value canaries" : "") + (o.jit.range_canaries ? ", range canaries" : "") + ")";
  }
  s += "; ";
  if (o.intra_op_threads == 0) s += "default intra-op threads";
  else s += std::to_string(o.intra_op_threads) + (o.intra_op_threads == 1 ? " intra-op thread" : " intra-op threads");
  return s;
}

}  // namespace canary::cli

// plan_calls: merges the folder, --input and stream sources into the calls to replay.
#include "cli/call_plan.h"

#include "canary/error.h"

namespace canary::cli {

std::vector<CallSpec> plan_calls(const InputArgs& args) {
  if (args.repeat < 1) throw Error(ErrorKind::Input, "--repeat must be at least 1");
  std::vector<InputSource> base;
  if (!args.inputs_dir.empty()) base = list_input_folder(args.inputs_dir, "--inputs " + args.inputs_dir);
  std::vector<InputSource> given;
  for (const std::string& text : args.inputs) {
    InputSource s = parse_input_source(text, "--input " + text, {});
    for (const InputSource& prev : given)
      if (prev.name == s.name) throw Error(ErrorKind::Input, "--input: input '" + s.name + "' given twice");
    given.push_back(std::move(s));
  }
  base = merge_sources(std::move(base), given);
  std::vector<CallSpec> once;
  if (!args.stream.empty()) {
    for (CallSpec& call : read_stream_file(args.stream)) {
      call.inputs = merge_sources(base, call.inputs);
      once.push_back(std::move(call));
    }
  } else if (!base.empty()) {
    once.push_back({base, args.inputs_dir.empty() ? "--input" : "--inputs"});
  }
  std::vector<CallSpec> calls;
  calls.reserve(once.size() * static_cast<std::size_t>(args.repeat));
  for (int r = 0; r < args.repeat; ++r) calls.insert(calls.end(), once.begin(), once.end());
  return calls;
}

}  // namespace canary::cli

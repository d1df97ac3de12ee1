// The fuzz targets: one function per target, each taking the raw fuzz bytes
// and returning what happened, so that both a libFuzzer entry point
// (tests/fuzz/entry/) and the Catch2 replay of the corpus and regressions
// (test_fuzz_replay.cpp) can call it. What each checks: tests/fuzz/README.md.
#pragma once

#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_result.h"

namespace canary::fuzz {

// ONNX bytes -> import_onnx; an accepted model must survive print -> parse -> print.
FuzzResult fuzz_onnx_import(std::string_view bytes);
// Graph text -> parse_graph; an accepted graph must survive print -> parse -> print.
FuzzResult fuzz_text_format(std::string_view bytes);
// .npy bytes -> parse_npy; an accepted tensor must survive encode -> parse unchanged.
FuzzResult fuzz_npy(std::string_view bytes);
// Bytes -> a random graph's seed and a shape stream, run on the JIT, the
// interpreter and the fp64 reference (stream_plan.h); they must agree.
FuzzResult fuzz_graph_stream(std::string_view bytes);
// Bytes -> a JIT shape profile file a model loads at start; every call at
// several shapes must still agree with the fp64 reference, and a profile it
// cannot use is reported and ignored.
FuzzResult fuzz_shape_profile(std::string_view bytes);
// The profile shape_profile's model writes after a few calls (a seed).
std::string learned_shape_profile();

// One target: its name (the corpus and regressions folder) and its function.
struct FuzzTarget {
  const char* name;
  FuzzResult (*run)(std::string_view bytes);
};

// Every target, in the order scripts/fuzz.sh runs them.
inline constexpr FuzzTarget kFuzzTargets[] = {
    {"onnx_import", fuzz_onnx_import},
    {"text_format", fuzz_text_format},
    {"npy", fuzz_npy},
    {"graph_stream", fuzz_graph_stream},
    {"shape_profile", fuzz_shape_profile},
};

}  // namespace canary::fuzz

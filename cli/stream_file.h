// Stream files: one call per line, replayed in order to reproduce a dynamic-shape stream.
//
//   # comment
//   x=random:8x4 *12         <- 12 calls with fresh random x of shape [8, 4]
//   x=data/x16.npy h0=random:16x2
//   inputs/call3             <- a folder of NAME.npy files
//
// Relative paths are resolved against the stream file's folder.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cli/input_spec.h"

namespace canary::cli {

// The inputs of one call and where it was written ("calls.txt:3").
struct CallSpec {
  std::vector<InputSource> inputs;
  std::string origin;
};

// Parses stream text; `source` names it in messages. A line's "*N" token
// repeats the call N times. Error(Input) naming source:line when malformed.
std::vector<CallSpec> parse_stream(std::string_view text, const std::string& source,
                                   const std::filesystem::path& base_dir);

// Reads and parses a stream file.
std::vector<CallSpec> read_stream_file(const std::string& path);

}  // namespace canary::cli

// The learned shape profile on disk: per anchor, the tier reached and the
// dims known to be symbolic (with the facts seen of each) or unequal, so a
// restarted service compiles its first trace at what it had learned instead
// of relearning it call by call.
#pragma once

#include <string>
#include <vector>

#include "jit/plan.h"
#include "vm/program.h"

namespace canary::jit {

struct AnchorProfile {
  std::string anchor;  // the anchor's name
  Tier tier = Tier::ExactFused;
  ShapeKnowledge knowledge;
};

// Writes the profiles; returns false with `error` set when the file cannot be written.
bool save_profile(const std::string& path, const vm::Program& program, const std::vector<AnchorProfile>& anchors,
                  std::string& error);
// Reads profiles written for this program. A missing file is not an error
// (empty result); a file for another program, or a malformed one, returns
// false with `error` set and nothing loaded.
bool load_profile(const std::string& path, const vm::Program& program, std::vector<AnchorProfile>& anchors,
                  std::string& error);

// Identifies a program's shape (instruction count and anchors), so a profile
// never applies to another model.
std::string program_fingerprint(const vm::Program& program);

}  // namespace canary::jit

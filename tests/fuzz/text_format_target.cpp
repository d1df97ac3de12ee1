// The text_format target: bytes -> parse_graph. A canary::Error is the
// expected answer to malformed text; an accepted graph must survive
// print -> parse -> print as a fixed point.
#include <memory>

#include "graph/text_format.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/text_round_trip.h"

namespace canary::fuzz {

FuzzResult fuzz_text_format(std::string_view bytes) {
  return run_guarded([&] {
    std::shared_ptr<graph::Graph> g = graph::parse_graph(bytes, "fuzz.cnr");
    return check_text_round_trip(*g);
  });
}

}  // namespace canary::fuzz

// The onnx_import target: raw bytes -> import_onnx. A canary::Error is the
// expected answer to a bad model; an accepted model must also print in the
// text format and survive print -> parse -> print.
#include <memory>

#include "graph/onnx_import.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/text_round_trip.h"

namespace canary::fuzz {

FuzzResult fuzz_onnx_import(std::string_view bytes) {
  return run_guarded([&] {
    std::shared_ptr<graph::Graph> g = graph::import_onnx(bytes, "fuzz.onnx");
    return check_text_round_trip(*g);
  });
}

}  // namespace canary::fuzz

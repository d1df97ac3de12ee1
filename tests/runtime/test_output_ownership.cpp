// Outputs a call returns belong to the caller: later calls of the same
// session (interpreted or compiled, same or other shapes) never write into them.
#include <catch2/catch.hpp>

#include "jit_test_models.h"

using namespace canary;
using namespace canary::test;

TEST_CASE("a call's outputs are not overwritten by the session's later calls", "[unit][api]") {
  for (bool jit : {false, true}) {
    CAPTURE(jit);
    Runtime rt(jit ? jit_options(2) : interpreter_options());
    ModelBuilder b("mm");
    b.input("x", DType::F32, {"N", 3})
        .constant("w", Tensor::from_vector<float>({1.003f, 1.0f, 0.5f}, {3, 1}))
        .node("MatMul", {"x", "w"}, {"score"})
        .output("score");
    Model m = rt.build(b);
    Session s = m.session();
    std::vector<Tensor> kept, copies;
    for (int i = 0; i < 8; ++i) {
      const Tensor y = s.run({{"x", random_tensor({16, 3}, 1 + static_cast<std::uint32_t>(i))}}).at("score");
      kept.push_back(y);
      copies.push_back(y.clone());
    }
    for (std::size_t i = 0; i < kept.size(); ++i) CHECK(bit_identical(kept[i], copies[i]));
  }
}

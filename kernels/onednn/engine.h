// The oneDNN CPU engine and the per-thread stream every oneDNN kernel runs on.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace canary::kernels::onednn {

// The process-wide CPU engine (oneDNN engines are thread-safe); created on first use.
const dnnl::engine& cpu_engine();
// The calling thread's in-order stream on cpu_engine().
dnnl::stream& thread_stream();

}  // namespace canary::kernels::onednn

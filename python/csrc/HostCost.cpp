//===- HostCost.cpp - What a torch op call costs the host, measured -------===//
//
// kgen::_host_cost(x, weight, iters) -> [op_us, launch_us]: microseconds per
// call of kgen::rmsnorm through torch's dispatcher (checks, output allocation,
// kernel lookup, launch), and per bare kgen_launch of the same kernel with its
// arguments packed once. bench/python/model_bench.py reports both.
//
//===----------------------------------------------------------------------===//
#include "Call.h"
#include "Kernels.h"
#include "runtime/kgen_runtime.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <chrono>

namespace kgen::torch_ext {
namespace {

using at::Tensor;

template <typename F> double microsPerCall(int64_t iters, F &&f) {
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i)
    f();
  std::chrono::duration<double, std::micro> d =
      std::chrono::steady_clock::now() - t0;
  return d.count() / double(iters);
}

std::vector<double> hostCost(const Tensor &x, const Tensor &w, int64_t iters) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.is_contiguous(),
              "kgen::_host_cost: 'x' must be a contiguous CUDA [rows, hidden]");
  TORCH_CHECK(iters > 0 && iters <= 10'000'000, "kgen::_host_cost: iters ",
              iters, " is out of range");
  auto op = c10::Dispatcher::singleton()
                .findSchemaOrThrow("kgen::rmsnorm", "")
                .typed<Tensor(const Tensor &, const Tensor &, double)>();
  std::string why;
  const KernelRef *k =
      findKernel("rmsnorm", kgenDtype(x.scalar_type()), x.size(1), false, why);
  TORCH_CHECK(k, "kgen::_host_cost: ", why);
  Tensor y = at::empty_like(x);
  // In the kernel's order; one specialized on the length has no hidden dim.
  std::vector<kgen_arg> args;
  for (size_t i = 0; i < k->names.size(); ++i) {
    const std::string &n = k->names[i];
    kgen_arg a{KGEN_ARG_TENSOR, k->dtypes[i], nullptr, 0, 0, 0};
    if (n == "x" || n == "weight" || n == "y")
      a.ptr = (n == "x" ? x : n == "weight" ? w : y).data_ptr();
    else if (n == "eps")
      a = {KGEN_ARG_SCALAR, k->dtypes[i], nullptr, 0, 1e-6, 0};
    else
      a = {KGEN_ARG_DIM, k->dtypes[i], nullptr, 0, 0, x.size(1)};
    args.push_back(a);
  }
  c10::DeviceGuard guard(x.device());
  void *stream = c10::cuda::getCurrentCUDAStream(x.device().index()).stream();
  op.call(x, w, 1e-6); // warm: the kernel is loaded
  double viaOp = microsPerCall(iters, [&] { op.call(x, w, 1e-6); });
  double bare = microsPerCall(iters, [&] {
    TORCH_CHECK(kgen_launch(k->kernel, args.data(), args.size(), x.size(0),
                            stream) == KGEN_OK,
                kgen_last_error());
  });
  return {viaOp, bare};
}

} // namespace
} // namespace kgen::torch_ext

TORCH_LIBRARY_FRAGMENT(kgen, m) {
  m.def("_host_cost(Tensor x, Tensor weight, int iters) -> float[]");
}

TORCH_LIBRARY_IMPL(kgen, CUDA, m) {
  m.impl("_host_cost", &kgen::torch_ext::hostCost);
}

//===- HostCost.cpp - What a torch op call costs the host, measured -------===//
//
// kgen::_host_cost(x, weight, iters) -> [rmsnorm_us, launch_us, inplace_us,
// inplace_launch_us]: microseconds per call through torch's dispatcher of
// kgen::rmsnorm (which allocates its output) and of kgen::fused_add_rmsnorm
// (in place, allocating nothing), each beside a bare kgen_launch of the same
// kernel with its arguments packed once. python/tests/gpu_check.py reports
// them.
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
#include <map>
#include <string>
#include <vector>

namespace kgen::torch_ext {
namespace {

using at::Tensor;

template <typename F> double microsPerCall(int64_t iters, F &&f) {
  f(); // warm: the kernel is loaded
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i)
    f();
  std::chrono::duration<double, std::micro> d =
      std::chrono::steady_clock::now() - t0;
  return d.count() / double(iters);
}

/// A bare kgen_launch of `op`'s kernel for x's dtype and length, with the
/// tensors and values given by name.
double bareLaunch(const char *op, const Tensor &x,
                  const std::map<std::string, Tensor> &tensors, int64_t iters) {
  std::string why;
  const KernelRef *k =
      findKernel(op, kgenDtype(x.scalar_type()), x.size(1), false, why);
  TORCH_CHECK(k, "kgen::_host_cost: ", why);
  std::vector<kgen_arg> args;
  for (size_t i = 0; i < k->names.size(); ++i) {
    const std::string &n = k->names[i];
    kgen_arg a{KGEN_ARG_DIM, k->dtypes[i], nullptr, 0, 0, x.size(1)};
    if (auto t = tensors.find(n); t != tensors.end())
      a = {KGEN_ARG_TENSOR, k->dtypes[i], t->second.data_ptr(), 0, 0, 0};
    else if (n == "eps")
      a = {KGEN_ARG_SCALAR, k->dtypes[i], nullptr, 0, 1e-6, 0};
    args.push_back(a);
  }
  c10::DeviceGuard guard(x.device());
  void *stream = c10::cuda::getCurrentCUDAStream(x.device().index()).stream();
  return microsPerCall(iters, [&] {
    TORCH_CHECK(kgen_launch(k->kernel, args.data(), args.size(), x.size(0),
                            stream) == KGEN_OK,
                kgen_last_error());
  });
}

std::vector<double> hostCost(const Tensor &x, const Tensor &w, int64_t iters) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.is_contiguous(),
              "kgen::_host_cost: 'x' must be a contiguous CUDA [rows, hidden]");
  TORCH_CHECK(iters > 0 && iters <= 10'000'000, "kgen::_host_cost: iters ",
              iters, " is out of range");
  auto &dispatcher = c10::Dispatcher::singleton();
  auto rmsnorm = dispatcher.findSchemaOrThrow("kgen::rmsnorm", "")
                     .typed<Tensor(const Tensor &, const Tensor &, double)>();
  auto fused = dispatcher.findSchemaOrThrow("kgen::fused_add_rmsnorm", "")
                   .typed<void(const Tensor &, const Tensor &,
                               const std::optional<Tensor> &, double)>();
  Tensor y = at::empty_like(x), r = at::zeros_like(x);
  return {microsPerCall(iters, [&] { rmsnorm.call(x, w, 1e-6); }),
          bareLaunch("rmsnorm", x, {{"x", x}, {"weight", w}, {"y", y}}, iters),
          microsPerCall(iters, [&] { fused.call(y, r, w, 1e-6); }),
          bareLaunch("fused_add_rmsnorm", x,
                     {{"x", y}, {"residual", r}, {"weight", w}}, iters)};
}

} // namespace
} // namespace kgen::torch_ext

TORCH_LIBRARY_FRAGMENT(kgen, m) {
  m.def("_host_cost(Tensor x, Tensor weight, int iters) -> float[]");
}

TORCH_LIBRARY_IMPL(kgen, CUDA, m) {
  m.impl("_host_cost", &kgen::torch_ext::hostCost);
}

//===- Kernels.h - The embedded kernels, by op, dtype and length --*- C++
//-*-===//
#ifndef KGEN_PYTHON_KERNELS_H
#define KGEN_PYTHON_KERNELS_H

#include "runtime/kgen_runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kgen::torch_ext {

/// A kernel of the embedded library and its parameters in the spec's order.
struct KernelRef {
  const kgen_kernel *kernel = nullptr;
  std::vector<std::string> names;
  std::vector<kgen_dtype> dtypes;
};

/// The kernel specialized on `length`, else the dynamic one (unless
/// `fixedLength`), created on first use; null when the library has neither
/// (`why` says what it has). `op` must be a string literal: it keys a cache.
const KernelRef *findKernel(const char *op, const char *dtype, int64_t length,
                            bool fixedLength, std::string &why);

/// Every (op, dtype, length) the library embeds, for kgen.library().
std::vector<std::string> embeddedKernels();

} // namespace kgen::torch_ext

#endif // KGEN_PYTHON_KERNELS_H

//===- KgenRuntime.hpp - C++ wrapper of the kgen runtime --------*- C++ -*-===//
//
// Header-only and exception-free: a move-only RAII Kernel and argument
// helpers over the C API. Failures return a kgen_status; the message is
// kgen::lastError().
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_RUNTIME_KGENRUNTIME_HPP
#define KGEN_RUNTIME_KGENRUNTIME_HPP

#include "runtime/kgen_runtime.h"

#include <cstdint>
#include <string_view>

namespace kgen::rt {

inline const char *lastError() noexcept { return kgen_last_error(); }

/// A tensor argument; rowStride in elements, <= 0 for contiguous rows.
inline kgen_arg tensorArg(const void *ptr, kgen_dtype dtype,
                          int64_t rowStride = 0) noexcept {
  kgen_arg a{};
  a.kind = KGEN_ARG_TENSOR;
  a.dtype = dtype;
  a.ptr = ptr;
  a.row_stride = rowStride;
  return a;
}

inline kgen_arg f32Arg(float value) noexcept {
  kgen_arg a{};
  a.kind = KGEN_ARG_SCALAR;
  a.dtype = KGEN_F32;
  a.f = value;
  return a;
}

/// An i32 or i64 scalar.
inline kgen_arg intArg(int64_t value, kgen_dtype dtype = KGEN_I64) noexcept {
  kgen_arg a{};
  a.kind = KGEN_ARG_SCALAR;
  a.dtype = dtype;
  a.i = value;
  return a;
}

inline kgen_arg dimArg(int64_t value) noexcept {
  kgen_arg a{};
  a.kind = KGEN_ARG_DIM;
  a.dtype = KGEN_I64;
  a.i = value;
  return a;
}

class Kernel {
public:
  Kernel() noexcept = default;
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;
  Kernel(Kernel &&other) noexcept : kernel(other.kernel) {
    other.kernel = nullptr;
  }
  Kernel &operator=(Kernel &&other) noexcept {
    if (this != &other) {
      kgen_kernel_destroy(kernel);
      kernel = other.kernel;
      other.kernel = nullptr;
    }
    return *this;
  }
  ~Kernel() { kgen_kernel_destroy(kernel); }

  /// Replaces this kernel with one built from `ptx` and `specJson`.
  kgen_status create(std::string_view ptx, std::string_view specJson) noexcept {
    kgen_kernel *fresh = nullptr;
    kgen_status st = kgen_kernel_create(ptx.data(), ptx.size(), specJson.data(),
                                        specJson.size(), &fresh);
    if (st == KGEN_OK) {
      kgen_kernel_destroy(kernel);
      kernel = fresh;
    }
    return st;
  }

  bool valid() const noexcept { return kernel != nullptr; }
  kgen_kernel *get() const noexcept { return kernel; }

  kgen_status info(kgen_kernel_info &out) const noexcept {
    return kgen_kernel_get_info(kernel, &out);
  }
  kgen_status param(size_t index, kgen_param_info &out) const noexcept {
    return kgen_kernel_get_param(kernel, index, &out);
  }
  kgen_status findParam(const char *name, size_t &index) const noexcept {
    return kgen_kernel_find_param(kernel, name, &index);
  }
  kgen_status variant(size_t index, kgen_variant_info &out) const noexcept {
    return kgen_kernel_get_variant(kernel, index, &out);
  }
  kgen_status selectVariant(const kgen_arg *args, size_t nargs, int64_t rows,
                            size_t &variant) const noexcept {
    return kgen_select_variant(kernel, args, nargs, rows, &variant);
  }
  template <size_t N>
  kgen_status selectVariant(const kgen_arg (&args)[N], int64_t rows,
                            size_t &variant) const noexcept {
    return selectVariant(args, N, rows, variant);
  }
  kgen_status launch(const kgen_arg *args, size_t nargs, int64_t rows,
                     void *cuStream = nullptr) const noexcept {
    return kgen_launch(kernel, args, nargs, rows, cuStream);
  }
  template <size_t N>
  kgen_status launch(const kgen_arg (&args)[N], int64_t rows,
                     void *cuStream = nullptr) const noexcept {
    return launch(args, N, rows, cuStream);
  }

private:
  kgen_kernel *kernel = nullptr;
};

} // namespace kgen::rt

#endif // KGEN_RUNTIME_KGENRUNTIME_HPP

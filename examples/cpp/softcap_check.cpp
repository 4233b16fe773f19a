//===- softcap_check.cpp - A user's op on the GPU against the interpreter -===//
//
// Launches the user's softcap (ops/softcap.cpp) through the generated C++
// overloads, for bf16 and f32, at a specialized length (4096) and a dynamic
// one (1000), and checks every output against kgen's interpreter running the
// same formula on the host, within kgen's tolerance for the output dtype.
// Exit 0: passed; 77: no GPU here; 1: a mismatch.
//
//===----------------------------------------------------------------------===//
#include "example_kernels.hpp"

#include "dsl/Float.h"
#include "dsl/Interpreter.h"
#include "dsl/Registry.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

namespace {

using namespace kgen;

/// Device buffer of `bytes`, poisoned with 0xff (NaN) bytes.
struct DeviceBuffer {
  void *ptr = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    cudaMalloc(&ptr, bytes);
    cudaMemset(ptr, 0xff, bytes);
  }
  ~DeviceBuffer() { cudaFree(ptr); }
};

template <typename Elem>
kgen_status launch(const void *x, void *y, float cap, int64_t n, int64_t rows) {
  return example_kernels::softcap(static_cast<const Elem *>(x), 0,
                                  static_cast<Elem *>(y), 0, cap, n, rows);
}

bool check(DType dt, int64_t rows, int64_t n) {
  const OpDef *op = findOp("softcap");
  Kernel k = op->build(dt, 0);
  float cap = static_cast<float>(op->scalars.at("cap"));
  size_t elem = sizeInBytes(dt), bytes = rows * n * elem;
  std::vector<unsigned char> x(bytes), got(bytes), ref(bytes);
  for (int64_t i = 0; i < rows * n; ++i)
    encode(dt, double((i * 7919) % 4001 - 2000) / 20.0, &x[i * elem]);

  Bindings b;
  b.dims = {n};
  b.rows = rows;
  b.tensors = {{x.data(), 0}, {ref.data(), 0}};
  b.params = {cap};
  interpret(k, b);

  DeviceBuffer dx(bytes), dy(bytes);
  cudaMemcpy(dx.ptr, x.data(), bytes, cudaMemcpyHostToDevice);
  kgen_status st = dt == DType::BF16
                       ? launch<kgen_bf16>(dx.ptr, dy.ptr, cap, n, rows)
                       : launch<float>(dx.ptr, dy.ptr, cap, n, rows);
  if (st != KGEN_OK) {
    std::fprintf(stderr, "softcap: %s\n", kgen_last_error());
    return false;
  }
  cudaMemcpy(got.data(), dy.ptr, bytes, cudaMemcpyDeviceToHost);
  Tolerance tol = outputTolerance(k, 1);
  int64_t bad = 0;
  for (int64_t i = 0; i < rows * n; ++i) {
    double g = decode(dt, &got[i * elem]), r = decode(dt, &ref[i * elem]);
    if (!withinTolerance(dt, g, r, tol) && !bad++)
      std::fprintf(stderr, "softcap %s: y[%lld] = %g, interpreter %g\n",
                   std::string(name(dt)).c_str(), (long long)i, g, r);
  }
  std::printf("softcap %s %lld x %lld: %s\n", std::string(name(dt)).c_str(),
              (long long)rows, (long long)n,
              bad ? "MISMATCH" : "ok (matches the interpreter)");
  return bad == 0;
}

} // namespace

int main() {
  kgen_status st = kgen_device_open(0, nullptr);
  if (st == KGEN_ERROR_NO_DRIVER || st == KGEN_ERROR_NO_DEVICE) {
    std::fprintf(stderr, "no GPU: %s\n", kgen_last_error());
    return 77;
  }
  if (st != KGEN_OK) {
    std::fprintf(stderr, "%s\n", kgen_last_error());
    return 1;
  }
  bool ok = true;
  for (DType dt : {DType::BF16, DType::F32})
    for (int64_t n : {4096, 1000})
      ok &= check(dt, 9, n);
  return ok ? 0 : 1;
}

//===- CheckKernelHost.h - CheckKernel.cu compiled for the host --*- C++
//-*-===//
//
// The emulator (EmuCuda.cpp) runs the output checker from the same source as
// the GPU, one simulated thread after another, so the checker's logic is
// tested without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TEST_GPU_CHECKKERNELHOST_H
#define KGEN_TEST_GPU_CHECKKERNELHOST_H

#include <cstdint>

namespace kgen::gpu::hostcheck {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};
inline thread_local Dim3 blockIdx, threadIdx, gridDim, blockDim;

inline unsigned long long atomicAdd(unsigned long long *a,
                                    unsigned long long v) {
  return __atomic_fetch_add(a, v, __ATOMIC_RELAXED);
}
inline unsigned long long atomicMin(unsigned long long *a,
                                    unsigned long long v) {
  unsigned long long old = __atomic_load_n(a, __ATOMIC_RELAXED);
  while (v < old && !__atomic_compare_exchange_n(
                        a, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}

#define __global__
#define __device__
#define __forceinline__ inline
#define KGEN_CHECK_ENTRY inline
#include "CheckKernel.cu"
#undef KGEN_CHECK_ENTRY
#undef __global__
#undef __device__
#undef __forceinline__

/// Runs the kernel over a grid, sequentially.
inline void launch(unsigned grid, unsigned block, const uint8_t *buf,
                   const uint8_t *expect, long long elems, int esize, int kind,
                   long long off, long long stride, long long rowLen,
                   long long rows, unsigned long long *res) {
  gridDim.x = grid;
  blockDim.x = block;
  for (unsigned b = 0; b < grid; ++b)
    for (unsigned t = 0; t < block; ++t) {
      blockIdx.x = b;
      threadIdx.x = t;
      kgen_check_output(buf, expect, elems, esize, kind, off, stride, rowLen,
                        rows, res);
    }
}

} // namespace kgen::gpu::hostcheck

#endif // KGEN_TEST_GPU_CHECKKERNELHOST_H

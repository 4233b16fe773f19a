// The GPU test's output checker: scans a whole output allocation on the GPU,
// so that huge outputs need no copy to the host. CheckKernelPtx.h holds its
// PTX; regenerate it after a change with
//   test/gpu/gen-check-ptx.sh
// (nvcc -ptx -arch=sm_75: runs on every GPU kgen targets).
//
// The allocation holds `rows` rows of `rowLen` elements of `esize` bytes,
// row r starting at element off + r * stride. Everything else (the `off`
// elements before the first row, the padding between rows, the guard after
// the last row, up to `elems`) must equal `expect` (when non-null: a pristine
// copy, for tensors written in place) or be 0xFF bytes (the poison).
// Elements in rows must not be NaN; a NaN that is all 0xFF bytes is counted
// as unwritten.
//
// res (8 x u64, zeroed / set to ~0 by the caller):
//   [0] unwritten count  [1] NaN count  [2] outside-rows changed count
//   [3] first unwritten  [4] first NaN  [5] first outside-rows changed
//   (element indices into the allocation; ~0 when none)
//   [6] elements visited (must equal elems)

#include <stdint.h>

__device__ __forceinline__ uint32_t loadElem(const uint8_t *p, int esize) {
  if (esize == 4)
    return *reinterpret_cast<const uint32_t *>(p);
  if (esize == 2)
    return *reinterpret_cast<const uint16_t *>(p);
  return *p;
}

// kind: 0 f32, 1 f16, 2 bf16, 3 f8e4m3, 4 f8e5m2, 5 no NaN (integers)
__device__ __forceinline__ bool isNan(uint32_t v, int kind) {
  switch (kind) {
  case 0:
    return (v & 0x7fffffffu) > 0x7f800000u;
  case 1:
    return (v & 0x7fffu) > 0x7c00u;
  case 2:
    return (v & 0x7fffu) > 0x7f80u;
  case 3:
    return (v & 0x7fu) == 0x7fu;
  case 4:
    return (v & 0x7fu) > 0x7cu;
  default:
    return false;
  }
}

// CheckKernelHost.h compiles this file for the host with its own entry macro.
#ifndef KGEN_CHECK_ENTRY
#define KGEN_CHECK_ENTRY extern "C" __global__
#endif

KGEN_CHECK_ENTRY void kgen_check_output(
    const uint8_t *buf, const uint8_t *expect, long long elems, int esize,
    int kind, long long off, long long stride, long long rowLen,
    long long rows, unsigned long long *res) {
  const uint32_t poison =
      esize == 4 ? 0xffffffffu : esize == 2 ? 0xffffu : 0xffu;
  unsigned long long cU = 0, cN = 0, cP = 0, visited = 0;
  unsigned long long fU = ~0ull, fN = ~0ull, fP = ~0ull;
  // Block b takes rows b, b + gridDim.x, ...; the "row" index `rows` stands
  // for everything outside [off, off + rows * stride).
  for (long long r = blockIdx.x; r <= rows; r += gridDim.x) {
    long long ranges[2][2];
    int nRanges;
    if (r < rows) {
      ranges[0][0] = off + r * stride;
      ranges[0][1] = off + (r + 1) * stride;
      nRanges = 1;
    } else {
      ranges[0][0] = 0;
      ranges[0][1] = off;
      ranges[1][0] = off + rows * stride;
      ranges[1][1] = elems;
      nRanges = 2;
    }
    for (int k = 0; k < nRanges; ++k) {
      long long begin = ranges[k][0], end = ranges[k][1];
      if (end > elems)
        end = elems;
      for (long long q = begin + threadIdx.x; q < end; q += blockDim.x) {
        ++visited;
        uint32_t v = loadElem(buf + q * esize, esize);
        bool inRow = r < rows && q - begin < rowLen;
        if (inRow) {
          if (isNan(v, kind)) {
            if (expect == nullptr && v == poison) {
              ++cU;
              if ((unsigned long long)q < fU)
                fU = q;
            } else {
              ++cN;
              if ((unsigned long long)q < fN)
                fN = q;
            }
          }
        } else {
          uint32_t want =
              expect ? loadElem(expect + q * esize, esize) : poison;
          if (v != want) {
            ++cP;
            if ((unsigned long long)q < fP)
              fP = q;
          }
        }
      }
    }
  }
  if (cU) {
    atomicAdd(&res[0], cU);
    atomicMin(&res[3], fU);
  }
  if (cN) {
    atomicAdd(&res[1], cN);
    atomicMin(&res[4], fN);
  }
  if (cP) {
    atomicAdd(&res[2], cP);
    atomicMin(&res[5], fP);
  }
  if (visited)
    atomicAdd(&res[6], visited);
}

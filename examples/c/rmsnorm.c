/* rmsnorm.c: kgen's generated C launchers from a C program.
 *
 * Runs example_kernels_rmsnorm_bf16 (Hugging Face LlamaRMSNorm) at a
 * length it is specialized on (4096) and at one it is not (1000: the
 * dynamic kernel), and compares with the same formula in C. Exit 0: the
 * check passed; 77: no GPU here (the runtime says why); 1: a mismatch.
 */
#include "example_kernels.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint16_t toBf16(float f) { /* round to nearest even */
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

static float fromBf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* y = weight * (x * rsqrt(mean(x^2) + eps)).to(bf16), as LlamaRMSNorm. */
static void reference(const uint16_t *x, const uint16_t *w, uint16_t *y,
                      int64_t rows, int64_t n, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) {
      float v = fromBf16(x[r * n + i]);
      ss += (double)v * v;
    }
    float inv = 1.0f / sqrtf((float)(ss / (double)n) + eps);
    for (int64_t i = 0; i < n; ++i) {
      float normed = fromBf16(toBf16(fromBf16(x[r * n + i]) * inv));
      y[r * n + i] = toBf16(fromBf16(w[i]) * normed);
    }
  }
}

static int check(int64_t rows, int64_t n) {
  size_t bytes = (size_t)(rows * n) * 2;
  uint16_t *x = malloc(bytes), *w = malloc((size_t)n * 2), *y = malloc(bytes),
           *ref = malloc(bytes);
  for (int64_t i = 0; i < rows * n; ++i)
    x[i] = toBf16((float)((i * 7919) % 2001 - 1000) / 250.0f);
  for (int64_t i = 0; i < n; ++i)
    w[i] = toBf16(0.5f + (float)(i % 17) / 16.0f);
  reference(x, w, ref, rows, n, 1e-6f);

  void *dx, *dw, *dy;
  cudaMalloc(&dx, bytes);
  cudaMalloc(&dw, (size_t)n * 2);
  cudaMalloc(&dy, bytes);
  cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(dw, w, (size_t)n * 2, cudaMemcpyHostToDevice);
  cudaMemset(dy, 0xff, bytes); /* poison: NaN where nothing is written */
  kgen_status st = example_kernels_rmsnorm_bf16(
      (const kgen_bf16 *)dx, 0, (const kgen_bf16 *)dw, (kgen_bf16 *)dy, 0,
      1e-6f, n, rows, NULL);
  if (st != KGEN_OK) {
    fprintf(stderr, "rmsnorm %lld: %s\n", (long long)n, kgen_last_error());
    return 1;
  }
  cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int64_t i = 0; i < rows * n; ++i) {
    int d = (int)y[i] - (int)ref[i]; /* same sign: adjacent bf16 differ by 1 */
    if (d < -1 || d > 1) {
      if (!bad++)
        fprintf(stderr, "rmsnorm %lld: y[%lld] = %g, expected %g\n",
                (long long)n, (long long)i, fromBf16(y[i]), fromBf16(ref[i]));
    }
  }
  printf("rmsnorm bf16 %lld x %lld: %s\n", (long long)rows, (long long)n,
         bad ? "MISMATCH" : "ok (within 1 ulp)");
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(dy);
  free(x);
  free(w);
  free(y);
  free(ref);
  return bad != 0;
}

int main(void) {
  printf("kgen runtime %s\n", kgen_runtime_version());
  /* Bad input gets a clear error, before any driver call. */
  if (example_kernels_rmsnorm_bf16(NULL, 0, NULL, NULL, 0, 1e-6f, 4096, 1,
                                   NULL) != KGEN_ERROR_INVALID_ARGUMENT) {
    fprintf(stderr, "a NULL pointer was not refused\n");
    return 1;
  }
  printf("refused as expected: %s\n", kgen_last_error());

  kgen_status st = kgen_device_open(0, NULL);
  if (st == KGEN_ERROR_NO_DRIVER || st == KGEN_ERROR_NO_DEVICE) {
    fprintf(stderr, "no GPU: %s\n", kgen_last_error());
    return 77;
  }
  if (st != KGEN_OK) {
    fprintf(stderr, "%s\n", kgen_last_error());
    return 1;
  }
  return check(7, 4096) | check(33, 1000);
}

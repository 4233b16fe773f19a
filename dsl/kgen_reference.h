/*===- kgen_reference.h - kgen's ops on host memory, from C -----*- C -*-===*
 *
 * The reference semantics of every registered op: kgen's interpreter, the
 * spec its GPU kernels are checked against, on host memory. No MLIR, no
 * CUDA: the CPU path of language bindings and a reference for their tests.
 * Arguments are matched by name, so callers need not know the spec's order.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KGEN_REFERENCE_H
#define KGEN_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define KGEN_REFERENCE_API __attribute__((visibility("default")))
#else
#define KGEN_REFERENCE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One argument: a tensor of the op's kernel (data: host memory of its dtype,
 * row_stride in elements, <= 0 for contiguous rows), a scalar parameter or a
 * dim (value). */
typedef struct {
  const char *name;
  void *data;
  int64_t row_stride;
  double value;
} kgen_ref_arg;

/* Runs `op` ("rmsnorm", `kgen list`) for `dtype` ("f32", "f16", "bf16") on
 * `rows` rows, writing its outputs. `length` is 0, or for ops built for fixed
 * lengths (rope's head_dim) one of them. Every tensor, scalar and dim of the
 * kernel needs an argument of its name. The caller owns the memory: each
 * tensor must hold its rows at its stride (a vector: its one row). Returns
 * 0, or -1 with the reason in err (err_len bytes, NUL-terminated). */
KGEN_REFERENCE_API int kgen_reference_run(const char *op, const char *dtype,
                                          int64_t length,
                                          const kgen_ref_arg *args,
                                          size_t nargs, int64_t rows, char *err,
                                          size_t err_len);

/* The tolerance kgen's GPU tests hold a kernel's output of `dtype` to
 * against the reference: |got - ref| <= atol + rtol * |ref|. Returns 0, or
 * -1 for an unknown dtype or a NULL argument. */
KGEN_REFERENCE_API int kgen_reference_tolerance(const char *dtype,
                                                double *rtol, double *atol);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KGEN_REFERENCE_H */

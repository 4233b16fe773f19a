/*===- kgen_runtime.h - Load and launch kgen kernels ------------*- C -*-===*
 *
 * C API of the kgen runtime: it loads the PTX that kgen produced and launches
 * the kernel described by its JSON spec. It needs only libc, libdl and
 * pthreads; the CUDA driver (libcuda.so.1) is opened at run time, so a program
 * linked with it still runs, with a clear error, where there is no driver.
 *
 * Conventions:
 *  - Every function that can fail returns a kgen_status; the message of the
 *    last failure on the calling thread is kgen_last_error() (each call that
 *    returns a status clears it first).
 *  - The runtime uses the CUDA context current on the calling thread and never
 *    changes it (kgen_device_open is the one exception: it is asked to).
 *  - A kgen_kernel is immutable after creation: several threads may launch it
 *    at once. It must not be destroyed while another thread uses it.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KGEN_RUNTIME_H
#define KGEN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

/* Exported even when built with -fvisibility=hidden into a shared library. */
#if defined(__GNUC__) || defined(__clang__)
#define KGEN_API __attribute__((visibility("default")))
#else
#define KGEN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  KGEN_OK = 0,
  KGEN_ERROR_NO_DRIVER,        /* libcuda.so.1 missing or too old */
  KGEN_ERROR_NO_DEVICE,        /* no CUDA device, or ordinal out of range */
  KGEN_ERROR_NO_CONTEXT,       /* no CUDA context current on this thread */
  KGEN_ERROR_INVALID_SPEC,     /* malformed JSON or spec, PTX lacks an entry */
  KGEN_ERROR_INVALID_ARGUMENT, /* wrong arguments for this kernel */
  KGEN_ERROR_MISALIGNED,       /* pointer/stride alignment, no variant fits */
  KGEN_ERROR_JIT,              /* the driver could not compile the PTX */
  KGEN_ERROR_CUDA,             /* any other CUDA driver error */
  KGEN_ERROR_INTERNAL          /* out of memory or a bug in the runtime */
} kgen_status;

typedef enum {
  KGEN_F32,
  KGEN_F16,
  KGEN_BF16,
  KGEN_F8E4M3,
  KGEN_F8E5M2,
  KGEN_I32,
  KGEN_I64,
  KGEN_I8
} kgen_dtype;

/* Element types of the tensor pointers of generated launchers (kgen aot):
 * f32, i32, i64 and i8 tensors take float, int32_t, int64_t and int8_t; the
 * others take these incomplete types, so a pointer of another dtype does not
 * convert. */
typedef struct kgen_f16_element kgen_f16;
typedef struct kgen_bf16_element kgen_bf16;
typedef struct kgen_f8e4m3_element kgen_f8e4m3;
typedef struct kgen_f8e5m2_element kgen_f8e5m2;

typedef enum { KGEN_ARG_TENSOR, KGEN_ARG_SCALAR, KGEN_ARG_DIM } kgen_arg_kind;

/* One argument per spec parameter, in the spec's order.
 *  tensor: dtype, ptr (device address), row_stride in elements (<= 0 means
 *          the parameter's row length, i.e. contiguous rows; heads padded
 *          inside a row: count * pitch, kgen_param_info's row_length_expr).
 *  scalar: dtype; f for an f32 scalar, i for an i32/i64 scalar.
 *  dim:    i (must be > 0); dtype is ignored. */
typedef struct {
  kgen_arg_kind kind;
  kgen_dtype dtype;
  const void *ptr;
  int64_t row_stride;
  double f;
  int64_t i;
} kgen_arg;

typedef struct kgen_kernel kgen_kernel;

/* Strings point into the kernel and live until kgen_kernel_destroy. */
typedef struct {
  const char *op;
  const char *dtype;
  const char *arch;
  const char *hash;
  size_t num_params;
  size_t num_variants;
} kgen_kernel_info;

typedef struct {
  const char *name;
  kgen_arg_kind kind;
  kgen_dtype dtype;
  int is_vector;      /* tensor: 1 for "access":"vector", 0 for "rows" */
  int writes;         /* tensor: 1 if the kernel writes it */
  int64_t row_length; /* tensor: static row length, 0 if it depends on a dim */
  const char *row_length_expr; /* tensor: the spec's text, e.g. "2*hidden" */
} kgen_param_info;

typedef struct {
  const char *entry;
  int block; /* threads per block; the most, where the spec's launch_threads
                or launch_rows_per_block lets the launch choose fewer */
  int rows_per_block; /* the spec's rows a block; a launch_threads variant
                         with chunks 0 or 1 launches x threads a row by y
                         rows, both chosen at launch, x * y <= block */
  int shared_bytes;
} kgen_variant_info;

/* The runtime's version, "MAJOR.MINOR.PATCH" (kgen's version). */
KGEN_API const char *kgen_runtime_version(void);

/* Sets this thread's kgen_last_error() to `message` and returns `status`:
 * generated launchers report their own argument errors with it. */
KGEN_API kgen_status kgen_set_error(kgen_status status, const char *message);

/* Message of the last failure on this thread ("" if the last call succeeded).
 * Valid until the next kgen call on this thread. Never NULL. */
KGEN_API const char *kgen_last_error(void);

/* Parses and validates the spec and copies both texts; needs no GPU. Trailing
 * NUL bytes inside the given lengths are ignored. */
KGEN_API kgen_status kgen_kernel_create(const char *ptx, size_t ptx_len,
                                        const char *spec_json, size_t spec_len,
                                        kgen_kernel **out);
/* One compiled image of a kernel: the PTX and spec that kgen emitted for one
 * arch (the spec's "arch"), and optionally ptxas's cubin of that PTX for the
 * same arch. */
typedef struct {
  const char *ptx;
  size_t ptx_len;
  const char *spec_json;
  size_t spec_len;
  const void *cubin; /* NULL: none */
  size_t cubin_len;
} kgen_image;

/* A kernel built for several archs (count >= 1, one image an arch, the same
 * op, dtype and params). Each launch takes, for the device of the current
 * context, the image of the newest arch at or below the device's (sm_XYa
 * only on its own arch): its cubin where that runs there (the same major
 * version), else its PTX, which the driver compiles once per context; a
 * cubin the driver refuses falls back to the PTX. The queries below (info,
 * params, variants, kgen_select_variant, kgen_launch_config_get) describe
 * the first image: an engine of its own launcher makes a kernel per image. */
KGEN_API kgen_status kgen_kernel_create_images(const kgen_image *images,
                                               size_t count, kgen_kernel **out);

/* kgen_kernel_create_images once per *slot, safe from several threads: the
 * first call creates the kernel and stores it in *slot (a static the caller
 * owns, initially NULL), later calls return it. The kernel lives as long as
 * the process. Generated launchers (kgen aot) use it. */
KGEN_API kgen_status kgen_kernel_create_once(kgen_kernel **slot,
                                             const kgen_image *images,
                                             size_t count, kgen_kernel **out);

/* Accepts NULL. Loaded modules stay cached (they are shared by PTX text). */
KGEN_API void kgen_kernel_destroy(kgen_kernel *kernel);

KGEN_API kgen_status kgen_kernel_get_info(const kgen_kernel *kernel,
                                          kgen_kernel_info *out);
KGEN_API kgen_status kgen_kernel_get_param(const kgen_kernel *kernel,
                                           size_t index, kgen_param_info *out);
KGEN_API kgen_status kgen_kernel_find_param(const kgen_kernel *kernel,
                                            const char *name,
                                            size_t *index_out);
KGEN_API kgen_status kgen_kernel_get_variant(const kgen_kernel *kernel,
                                             size_t index,
                                             kgen_variant_info *out);

/* Runs every argument check of kgen_launch and picks the variant it would
 * launch, without touching the driver. */
KGEN_API kgen_status kgen_select_variant(const kgen_kernel *kernel,
                                         const kgen_arg *args, size_t nargs,
                                         int64_t rows, size_t *variant_out);

/* Launches on cu_stream (a CUstream; NULL is the default stream) in the
 * context current on this thread. rows == 0 checks the arguments and returns
 * KGEN_OK without launching. */
KGEN_API kgen_status kgen_launch(const kgen_kernel *kernel,
                                 const kgen_arg *args, size_t nargs,
                                 int64_t rows, void *cu_stream);

/* For engines with their own launcher (cuLaunchKernel, cudarc, ...): how
 * kgen_launch would launch these arguments, without touching the driver. */
typedef struct {
  size_t variant;        /* index into the spec's variants */
  const char *entry;     /* the PTX entry; lives as long as the kernel */
  uint32_t grid[3];      /* gridDim x, y, z */
  uint32_t block[3];     /* blockDim x, y, z */
  uint32_t cluster[3];   /* the cluster the PTX declares (.reqnctapercluster);
                            1, 1, 1 when none: launch it as any other entry */
  uint32_t shared_bytes; /* dynamic shared memory; above 48 KiB, set
                            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
  int grid_dependency;   /* 1: every entry waits (griddepcontrol.wait) for the
                            kernel before it on the stream, so it may be
                            launched as a programmatic dependent
                            (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_
                            SERIALIZATION), as kgen_launch does */
  int plain_launch_ok;   /* 1: a plain cuLaunchKernel is also correct */
  size_t num_slots;      /* kernel parameters (kgen_pack_params' slots) */
} kgen_launch_config;

/* Runs every check of kgen_launch and gives the launch it would make, on a
 * device of `multiprocessors` SMs (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
 * 0 if unknown: few rows are then not spread over more blocks). rows >= 1. */
KGEN_API kgen_status kgen_launch_config_get(const kgen_kernel *kernel,
                                            const kgen_arg *args, size_t nargs,
                                            int64_t rows, int multiprocessors,
                                            kgen_launch_config *out);

/* The kernel parameters of that launch, in the entry's order, one 8-byte
 * slot each (a 4-byte value in the slot's first bytes): pass
 * kernelParams[i] = &slots[i] to cuLaunchKernel. nslots >= num_slots. */
KGEN_API kgen_status kgen_pack_params(const kgen_kernel *kernel,
                                      const kgen_arg *args, size_t nargs,
                                      int64_t rows, int multiprocessors,
                                      uint64_t *slots, size_t nslots);

/* cuInit, retains the primary context of device `ordinal` (once per device
 * per process) and makes it current on this thread. cu_context_out (a
 * CUcontext*) may be NULL. */
KGEN_API kgen_status kgen_device_open(int ordinal, void **cu_context_out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KGEN_RUNTIME_H */

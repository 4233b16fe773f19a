//===- GpuCommon.h - Shared by the GPU tests and the bench ------*- C++ -*-===//
//
// Reading a kernels folder (manifest.tsv + NAME.ptx + NAME.json, as
// `kgen bundle` writes it), loading its kernels through the runtime's C API,
// device memory through the runtime's dlopen'ed driver table, and a few host
// helpers. Only the C API of the runtime is used here: runtime/KgenRuntime.hpp
// declares a class kgen::Kernel that clashes with the DSL's struct
// kgen::Kernel (dsl/Graph.h), so the two headers cannot meet in one TU.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TEST_GPU_GPUCOMMON_H
#define KGEN_TEST_GPU_GPUCOMMON_H

#include "dsl/Graph.h"
#include "dsl/Registry.h"
#include "runtime/Driver.h"
#include "runtime/LaunchPolicy.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kgen::gpu {

struct ManifestEntry {
  std::string name; ///< NAME of NAME.ptx / NAME.json
  std::string op;
  std::string dtype;
  std::string arch;
  int64_t length = 0; ///< 0: the dynamic kernel
};

bool readTextFile(const std::string &path, std::string &out);
/// Reads dir/manifest.tsv. False with a reason in err.
bool readManifest(const std::string &dir, std::vector<ManifestEntry> &out,
                  std::string &err);

/// The kernel's launch ABI as LowerToGPU builds it (codegen/Transforms/
/// LowerToGPU.cpp): ptr:T for every tensor, stride:T for every Rows tensor,
/// then scalar:P / dim:D in entry order (tensors, params, dims), then rows.
/// `dynamicDims` are the dims that stay run-time arguments.
std::vector<std::string>
expectedAbi(const Kernel &k, const std::vector<std::string> &dynamicDims);

/// The types (".u64", ".f32", ...) of the .params of `.entry NAME(` in PTX
/// text; found = false if there is no such entry.
std::vector<std::string> ptxParamTypes(const std::string &ptx,
                                       const std::string &entry, bool &found);
/// The number of .param of `.entry NAME(` in PTX text; -1 if absent.
int ptxParamCount(const std::string &ptx, const std::string &entry);

/// The kgen_arg entry point of a generated launcher (`kgen aot`'s table).
using AotLaunch = kgen_status (*)(const kgen_arg *args, size_t nargs,
                                  int64_t rows, void *stream);

/// A loaded kernel (C API), move-only.
struct RtKernel {
  kgen_kernel *k = nullptr;
  ManifestEntry entry;
  const OpDef *op = nullptr;
  DType dtype = DType::F32;
  Kernel dsl;                        ///< op->build(dtype)
  std::vector<std::string> variants; ///< entry names
  /// Per variant: the spec's dim_multiple (dim name, multiple) and a short
  /// text of its schedule ("block 256, rows/block 1, vector 8, ...").
  std::vector<std::vector<std::pair<std::string, int64_t>>> dimMultiple;
  std::vector<std::string> schedule;
  /// Per variant: the spec's tensor_align (tensor name, bytes its base and,
  /// for rows, its row stride are a multiple of).
  std::vector<std::vector<std::pair<std::string, int64_t>>> tensorAlign;
  /// Per variant: the spec's launch_threads (chunks, chunk_elements) and its
  /// block, the most threads it may take; chunks = 0 without.
  struct Held {
    int64_t chunks = 0, chunkElements = 0, maxThreads = 0;
  };
  std::vector<Held> held;
  /// Per variant: the spec's min_rows and max_rows (0 without).
  std::vector<int64_t> minRows, maxRows;
  /// Per variant: the spec's domain_range, the row lengths it takes (0, 0
  /// without).
  std::vector<std::pair<int64_t, int64_t>> domainRange;
  /// The spec's launch_policy (defaults where absent).
  launch::LaunchPolicy policy;
  /// The generated launcher of the same op, dtype and length, where the
  /// program links a `kgen aot` library (KGEN_GPU_TEST_AOT): launchKernel
  /// launches through it.
  AotLaunch aot = nullptr;
  std::vector<std::string> paramNames; ///< spec param order
  std::vector<kgen_param_info> params;

  RtKernel() = default;
  RtKernel(const RtKernel &) = delete;
  RtKernel &operator=(const RtKernel &) = delete;
  RtKernel(RtKernel &&o) noexcept { *this = std::move(o); }
  RtKernel &operator=(RtKernel &&o) noexcept;
  ~RtKernel();
};

/// Loads dir/NAME.ptx + NAME.json. Works without a GPU. Checks that every
/// variant's entry exists in the PTX, and that the spec's abi lists the
/// slots expectedAbi() gives, each of the type the PTX declares.
bool loadKernel(const std::string &dir, const ManifestEntry &e, RtKernel &out,
                std::string &err);

/// Where one DSL tensor of a launch lives: its first element and, for a
/// Rows tensor, the elements between rows (0: contiguous).
struct TensorArg {
  CUdeviceptr ptr = 0;
  int64_t rowStride = 0;
};

/// The kgen_arg of each spec param of `k`, in spec order: tensors from
/// `tensor(DSL tensor index)`, scalars the op's registered values, dims from
/// `dim(name)`. False with `err` for a spec param the DSL kernel lacks or a
/// dim `dim` does not know.
bool buildArgs(
    const RtKernel &k, const std::function<TensorArg(size_t)> &tensor,
    const std::function<std::optional<int64_t>(const std::string &)> &dim,
    std::vector<kgen_arg> &out, std::string &err);
/// The same for an op whose one dim is its main one, `mainLength`.
bool buildArgs(const RtKernel &k,
               const std::function<TensorArg(size_t)> &tensor,
               int64_t mainLength, std::vector<kgen_arg> &out,
               std::string &err);

/// The generated launcher of (op, dtype, length) in the `kgen aot` library
/// linked into this program (test/gpu/AotLaunch.cpp), or nullptr.
AotLaunch findAotLaunch(const std::string &op, const std::string &dtype,
                        int64_t length);
/// Launches `k` through its generated launcher where it has one (counted in
/// aotLaunches()), else through kgen_launch.
kgen_status launchKernel(const RtKernel &k, const kgen_arg *args, size_t nargs,
                         int64_t rows, void *stream);
/// Launches through each generated launcher so far.
std::map<AotLaunch, int64_t> &aotLaunches();

/// The held variant of `k` (`_vec_holdC`, `_vec_hold4_wide`) the runtime
/// should pick for `rows` rows of `length` elements (aligned arguments
/// assumed), restated from the spec's rule: among those within their most
/// threads whose chunks but the last all lie in the row, the fewest idle
/// chunk slots, then the fewest threads past 256 (past 128 from 8192 rows),
/// then C nearest 4, then the first listed. Nothing when none fits.
std::optional<size_t> expectedHeld(const RtKernel &k, int64_t length,
                                   int64_t rows);

kgen_dtype toKgen(DType t);

/// Whether the element at p (in t's encoding) is a NaN, from its bits.
bool isNanBits(DType t, const uint8_t *p);
/// Whether all `bytes` bytes at p are 0xFF, the poison outputs start as.
bool isPoison(const uint8_t *p, int64_t bytes);

/// Per element of a row of tensor `t` (of a heads() part's sub-row when it
/// has sub-rows), whether some store writes it; `rowLength` is the row's.
/// The stores of a heads() view name its first part and write them all.
/// `which`, when given, picks the stores counted.
std::vector<char>
storedColumns(const Kernel &k, size_t t, const std::vector<int64_t> &dims,
              int64_t rowLength,
              const std::function<bool(const Store &)> &which = {});

/// Opens the driver and device 0 (primary context current on this thread).
/// nullptr with the reason when there is no driver or no GPU.
const rt::Driver *openGpu(std::string &why);

/// Device memory (freed on destruction). Poison = memset 0xFF (a NaN in every
/// float dtype).
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&o) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept;
  ~DeviceBuffer();
  /// False with a reason on failure.
  bool allocate(const rt::Driver *d, size_t bytes, std::string &err);
  CUdeviceptr ptr() const { return p; }
  size_t size() const { return bytes; }
  void reset();

private:
  const rt::Driver *d = nullptr;
  CUdeviceptr p = 0;
  size_t bytes = 0;
};

/// Fills `bytes` bytes at dst with `pattern` repeated (pattern.size() bytes
/// per period), doubling with device-to-device copies. Element i of the
/// buffer (elemBytes each) is pattern element i % (pattern.size()/elemBytes).
bool fillRepeating(const rt::Driver *d, CUdeviceptr dst, size_t bytes,
                   const std::vector<uint8_t> &pattern, std::string &err);

/// Host memory for device-to-host copies: pinned (cuMemHostAlloc from the
/// already loaded libcuda.so.1) when possible, else ordinary memory. Grows
/// only.
class HostStaging {
public:
  ~HostStaging();
  uint8_t *get(size_t bytes);
  bool pinned() const { return isPinned; }

private:
  uint8_t *data = nullptr;
  size_t capacity = 0;
  bool isPinned = false;
};

/// Calls fn(i) for i in [0, n) on up to `threads` threads (0: all cores).
void parallelFor(size_t n, const std::function<void(size_t)> &fn,
                 unsigned threads = 0);

/// Set by a GPU test that skipped for want of KGEN_KERNEL_DIR, a driver or a
/// GPU: kgen-gpu-tests' main() then exits 77 (ctest: skipped) if nothing
/// failed.
bool &noGpuSkipFlag();

/// Set by a GPU test whose launch left the CUDA context unusable (a sticky
/// error): every later GPU test, in any file, fails at once instead of
/// reporting the same error again.
std::string &brokenContext();

/// "1.5 GiB"
std::string humanBytes(double bytes);

/// Comma separated integers ("1,7,128").
std::vector<int64_t> parseIntList(const std::string &s);

} // namespace kgen::gpu

#endif // KGEN_TEST_GPU_GPUCOMMON_H

//===- EmuCuda.cpp - A libcuda stand-in that runs kernels on the host -----===//
//
// For checking the GPU test and bench harness on a machine without a GPU:
// load it with KGEN_GPU_TEST_FAKE_CUDA=path/libkgen_emu_cuda.so. "Device"
// memory is host memory; a launch finds the op, dtype and length in the entry
// name (NAME_vec / NAME_any of a bundle kernel), unpacks the parameters in
// the ABI LowerToGPU gives (see expectedAbi: every dim the length does not
// fix is a "dim:NAME" slot) and runs interpret() on all rows, in chunks that
// start on a multiple of every tensor's row group (row maps: per-batch rows,
// heads, positions per token; gathered tables are not split).
// So a harness run against it must pass; KGEN_EMU_CORRUPT breaks the result
// on purpose to see the harness catch it:
//   value  one element of the last row off by a lot
//   nan    one element of the last row a NaN
//   skip   the last row not written
//   pad    the element after the last row overwritten
//   misvar the vec variant writes wrong values (a wrong vector path)
//   tail   rows longer than 8 whose length is not a multiple of 8 get their
//          last element wrong (a vector tail bug, for kgen-fuzz minimize)
// and KGEN_EMU_CORRUPT=round stands in for a correct kernel that rounds
// otherwise (interpret() with random rounding): the harness must pass.
//
//===----------------------------------------------------------------------===//

#include "CheckKernelHost.h"
#include "GpuCommon.h"

#include "dsl/Float.h"
#include "dsl/Interpreter.h"

#include <cuda.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

using namespace kgen;

namespace {

thread_local CUcontext current = nullptr;
std::mutex mutex;
std::vector<std::string> functions;

CUresult ok() { return CUDA_SUCCESS; }

const char *corruptMode() {
  const char *m = std::getenv("KGEN_EMU_CORRUPT");
  return m ? m : "";
}

CUresult emulate(const std::string &entry, void **params) {
  // NAME = op_dtype_(dyn|<mainDim><L>)_arch; entry = NAME_(vec|any)
  for (const OpDef &op : registeredOps())
    for (DType dt : op.dtypes) {
      std::string prefix = op.name + "_" + std::string(name(dt)) + "_";
      if (entry.compare(0, prefix.size(), prefix) != 0)
        continue;
      std::string rest = entry.substr(prefix.size());
      int64_t fixed = 0;
      if (rest.compare(0, 4, "dyn_") != 0) {
        if (rest.compare(0, op.mainDim.size(), op.mainDim) != 0)
          continue;
        fixed = std::strtoll(rest.c_str() + op.mainDim.size(), nullptr, 10);
        if (fixed <= 0)
          continue;
      }
      bool vec = entry.size() > 4 && entry.substr(entry.size() - 4) == "_vec";
      std::map<std::string, int64_t> fixedDims;
      Kernel k = op.instantiate(dt, fixed, fixedDims);
      // The dims the length fixes are constants of the kernel; the others
      // (all of them for the dynamic kernel) come as "dim:NAME" parameters.
      std::vector<std::string> dyn;
      Bindings b;
      b.dims.assign(k.dims.size(), 0);
      for (size_t d = 0; d < k.dims.size(); ++d) {
        auto it = fixedDims.find(k.dims[d]);
        if (it != fixedDims.end())
          b.dims[d] = it->second;
        else
          dyn.push_back(k.dims[d]);
      }
      std::vector<std::string> abi = gpu::expectedAbi(k, dyn);
      b.tensors.resize(k.tensors.size());
      b.params.resize(k.params.size());
      for (size_t i = 0; i < abi.size(); ++i) {
        const std::string &s = abi[i];
        std::string what = s.substr(s.find(':') + 1);
        uint64_t raw;
        std::memcpy(&raw, params[i], 8);
        if (s == "rows") {
          b.rows = static_cast<int64_t>(raw);
          continue;
        }
        auto tensor = [&] {
          for (size_t t = 0; t < k.tensors.size(); ++t)
            if (k.tensors[t].name == what)
              return t;
          std::abort();
        };
        if (s.rfind("ptr:", 0) == 0) {
          b.tensors[tensor()].data = reinterpret_cast<void *>(raw);
        } else if (s.rfind("stride:", 0) == 0) {
          b.tensors[tensor()].rowStride = static_cast<int64_t>(raw);
        } else if (s.rfind("scalar:", 0) == 0) {
          for (size_t p = 0; p < k.params.size(); ++p)
            if (k.params[p].name == what) {
              float f;
              std::memcpy(&f, params[i], 4);
              b.params[p] = k.params[p].dtype == DType::F32
                                ? double(f)
                                : double(static_cast<int64_t>(raw));
            }
        } else if (s.rfind("dim:", 0) == 0) {
          for (size_t d = 0; d < k.dims.size(); ++d)
            if (k.dims[d] == what)
              b.dims[d] = static_cast<int64_t>(raw);
        }
      }
      std::string mode = corruptMode();
      int64_t rows = b.rows;
      if (mode == "skip" && rows > 0)
        --rows;
      // Row program r sees row r / group of a Rows or RowScalar tensor
      // (group 1 but for row maps); a gathered table is indexed by value.
      auto groupOf = [&](const TensorDecl &td) -> int64_t {
        if (td.layout == Layout::Vector || td.map.gather >= 0)
          return 0;
        return std::max<int64_t>(1, td.map.group.eval(b.dims));
      };
      // Rows in parallel chunks, each starting on a multiple of every group.
      int64_t unit = 1;
      for (const TensorDecl &td : k.tensors)
        if (int64_t g = groupOf(td))
          unit = std::lcm(unit, g);
      int64_t units = (rows + unit - 1) / unit;
      int64_t chunks = std::min<int64_t>(units, 64);
      gpu::parallelFor(chunks, [&](size_t c) {
        Bindings part = b;
        int64_t r0 = std::min(rows, unit * (units * int64_t(c) / chunks));
        int64_t r1 = std::min(rows, unit * (units * int64_t(c + 1) / chunks));
        part.rows = r1 - r0;
        for (size_t t = 0; t < k.tensors.size(); ++t) {
          const TensorDecl &td = k.tensors[t];
          int64_t g = groupOf(td);
          if (!g)
            continue;
          int64_t e = sizeInBytes(td.dtype);
          int64_t stride = td.rowLength.eval(b.dims);
          if (b.tensors[t].rowStride > 0)
            stride = b.tensors[t].rowStride;
          if (hasRowStride(td))
            part.tensors[t].data = static_cast<uint8_t *>(b.tensors[t].data) +
                                   (r0 / g) * stride * e;
          else if (td.layout == Layout::RowScalar)
            part.tensors[t].data =
                static_cast<uint8_t *>(b.tensors[t].data) + (r0 / g) * e;
        }
        InterpretOptions o;
        if (mode == "round")
          o.perturbSeed = 7717 + c;
        if (part.rows > 0)
          interpret(k, part, o);
      });
      // The first written tensor that holds the last row program's row (for
      // heads, the last part), its row.
      for (size_t t = 0; t < k.tensors.size(); ++t) {
        const TensorDecl &td = k.tensors[t];
        if (!td.isWritten || td.layout != Layout::Rows || b.rows == 0 ||
            td.map.gather >= 0 || td.map.next >= 0)
          continue;
        int64_t e = sizeInBytes(td.dtype);
        int64_t len = td.rowLength.eval(b.dims);
        int64_t stride =
            b.tensors[t].rowStride > 0 ? b.tensors[t].rowStride : len;
        uint8_t *last = static_cast<uint8_t *>(b.tensors[t].data) +
                        ((b.rows - 1) / groupOf(td)) * stride * e;
        if (mode == "value" || (mode == "misvar" && vec)) {
          uint8_t *p = last + (len / 2) * e;
          encode(td.dtype, decode(td.dtype, p) * 2 + 1, p);
        } else if (mode == "tail" && len > 8 && len % 8) {
          uint8_t *p = last + (len - 1) * e;
          encode(td.dtype, decode(td.dtype, p) * 2 + 1, p);
        } else if (mode == "nan") {
          encode(td.dtype, std::nan(""), last + (len - 1) * e);
        } else if (mode == "pad") {
          encode(td.dtype, 0.0, last + len * e);
        }
        break;
      }
      return ok();
    }
  return CUDA_ERROR_NOT_FOUND;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) CUresult cuInit(unsigned) {
  return ok();
}
__attribute__((visibility("default"))) CUresult cuGetErrorName(CUresult r,
                                                               const char **s) {
  *s = r == CUDA_ERROR_NOT_FOUND ? "CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_EMU";
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuGetErrorString(CUresult, const char **s) {
  *s = "emulated driver error";
  return ok();
}
__attribute__((visibility("default"))) CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return ok();
}
__attribute__((visibility("default"))) CUresult cuDeviceGet(CUdevice *d,
                                                            int o) {
  *d = o;
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice) {
  *v = a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT       ? 4
       : a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9
                                                           : 0;
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice) {
  *c = reinterpret_cast<CUcontext>(0xC0);
  return ok();
}
__attribute__((visibility("default"))) CUresult cuCtxGetCurrent(CUcontext *c) {
  *c = current;
  return ok();
}
__attribute__((visibility("default"))) CUresult cuCtxSetCurrent(CUcontext c) {
  current = c;
  return ok();
}
__attribute__((visibility("default"))) CUresult cuCtxGetDevice(CUdevice *d) {
  *d = 0;
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuCtxGetId(CUcontext c, unsigned long long *id) {
  *id = reinterpret_cast<uintptr_t>(c);
  return ok();
}
__attribute__((visibility("default"))) CUresult cuCtxSynchronize() {
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuModuleLoadDataEx(CUmodule *m, const void *, unsigned, CUjit_option *,
                   void **) {
  *m = reinterpret_cast<CUmodule>(0x1);
  return ok();
}
__attribute__((visibility("default"))) CUresult cuModuleUnload(CUmodule) {
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuModuleGetFunction(CUfunction *fn, CUmodule, const char *name) {
  std::lock_guard<std::mutex> lock(mutex);
  functions.push_back(name);
  *fn = reinterpret_cast<CUfunction>(uintptr_t(functions.size()));
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction) {
  *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) {
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuLaunchKernel(CUfunction fn, unsigned gx, unsigned, unsigned, unsigned bx,
               unsigned, unsigned, unsigned, CUstream, void **params, void **) {
  std::string entry;
  {
    std::lock_guard<std::mutex> lock(mutex);
    entry = functions[reinterpret_cast<uintptr_t>(fn) - 1];
  }
  if (entry == "kgen_check_output") {
    auto u64 = [&](int i) {
      uint64_t v;
      std::memcpy(&v, params[i], 8);
      return v;
    };
    auto i32 = [&](int i) {
      int32_t v;
      std::memcpy(&v, params[i], 4);
      return v;
    };
    kgen::gpu::hostcheck::launch(
        gx, bx, reinterpret_cast<const uint8_t *>(u64(0)),
        reinterpret_cast<const uint8_t *>(u64(1)), (long long)u64(2), i32(3),
        i32(4), (long long)u64(5), (long long)u64(6), (long long)u64(7),
        (long long)u64(8), reinterpret_cast<unsigned long long *>(u64(9)));
    return ok();
  }
  return emulate(entry, params);
}
__attribute__((visibility("default"))) CUresult cuMemAlloc_v2(CUdeviceptr *p,
                                                              size_t n) {
  void *m = std::aligned_alloc(256, (n + 255) / 256 * 256);
  if (!m)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *p = reinterpret_cast<CUdeviceptr>(m);
  return ok();
}
__attribute__((visibility("default"))) CUresult cuMemFree_v2(CUdeviceptr p) {
  std::free(reinterpret_cast<void *>(p));
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  std::memcpy(reinterpret_cast<void *>(d), s, n);
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  std::memcpy(d, reinterpret_cast<void *>(s), n);
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
  std::memmove(reinterpret_cast<void *>(d), reinterpret_cast<void *>(s), n);
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
  std::memset(reinterpret_cast<void *>(d), v, n);
  return ok();
}
__attribute__((visibility("default"))) CUresult cuStreamSynchronize(CUstream) {
  return ok();
}
__attribute__((visibility("default"))) CUresult cuEventCreate(CUevent *e,
                                                              unsigned) {
  *e = reinterpret_cast<CUevent>(new double(0));
  return ok();
}
__attribute__((visibility("default"))) CUresult cuEventRecord(CUevent e,
                                                              CUstream) {
  *reinterpret_cast<double *>(e) =
      std::chrono::duration<double, std::milli>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count();
  return ok();
}
__attribute__((visibility("default"))) CUresult cuEventSynchronize(CUevent) {
  return ok();
}
__attribute__((visibility("default"))) CUresult
cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
  *ms = static_cast<float>(*reinterpret_cast<double *>(b) -
                           *reinterpret_cast<double *>(a));
  return ok();
}
__attribute__((visibility("default"))) CUresult cuEventDestroy_v2(CUevent e) {
  delete reinterpret_cast<double *>(e);
  return ok();
}

} // extern "C"

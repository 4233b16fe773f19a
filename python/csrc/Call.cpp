//===- Call.cpp - One kgen op call on torch tensors -----------------------===//
#include "Call.h"

#include "Kernels.h"
#include "dsl/kgen_reference.h"
#include "runtime/kgen_runtime.h"

#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <string>
#include <vector>

namespace kgen::torch_ext {

namespace {
/// The one stride of `t`'s dims before its last `rowDims` (dims of size 1
/// ignored), `rowLen` when all are 1; -1 when they do not collapse or repeat
/// a row (a stride of 0, as expand() makes).
int64_t leadingStride(const at::Tensor &t, int64_t rowDims, int64_t rowLen) {
  int64_t stride = 0, span = 1;
  for (int64_t d = t.dim() - rowDims - 1; d >= 0; --d) {
    if (t.size(d) == 1)
      continue;
    if (t.stride(d) == 0)
      return -1;
    if (stride == 0) {
      stride = t.stride(d);
    } else if (t.stride(d) != stride * span) {
      return -1;
    }
    span *= t.size(d);
  }
  return stride == 0 ? rowLen : stride;
}
} // namespace

int64_t rowStride(const at::Tensor &t, int64_t rowDims) {
  int64_t nd = t.dim();
  TORCH_INTERNAL_ASSERT(rowDims >= 1 && rowDims <= nd);
  // The row: its last rowDims dims, dense.
  int64_t expect = 1;
  for (int64_t d = nd - 1; d >= nd - rowDims; --d) {
    if (t.size(d) != 1 && t.stride(d) != expect)
      return -1;
    expect *= t.size(d);
  }
  return leadingStride(t, rowDims, expect);
}

int64_t headsStride(const at::Tensor &t, int64_t &pitch) {
  TORCH_INTERNAL_ASSERT(t.dim() >= 2);
  const int64_t d = t.size(-1), heads = t.size(-2);
  pitch = heads == 1 ? d : t.stride(-2);
  if ((d != 1 && t.stride(-1) != 1) || pitch < d)
    return -1;
  return leadingStride(t, 2, heads * pitch);
}

at::Tensor asRows(const at::Tensor &t, int64_t rowDims) {
  return rowStride(t, rowDims) < 0 ? t.contiguous() : t;
}

namespace {
struct DtypeName {
  at::ScalarType torch;
  const char *name;
  kgen_dtype runtime;
};
constexpr DtypeName kDtypes[] = {
    {at::kFloat, "f32", KGEN_F32},
    {at::kHalf, "f16", KGEN_F16},
    {at::kBFloat16, "bf16", KGEN_BF16},
    {at::kFloat8_e4m3fn, "f8e4m3", KGEN_F8E4M3},
    {at::kFloat8_e5m2, "f8e5m2", KGEN_F8E5M2},
    {at::kInt, "i32", KGEN_I32},
    {at::kLong, "i64", KGEN_I64},
    {at::kChar, "i8", KGEN_I8},
};

const DtypeName &dtypeOf(at::ScalarType t) {
  for (const DtypeName &d : kDtypes)
    if (d.torch == t)
      return d;
  TORCH_CHECK(false, "kgen has no kernels for dtype ", t);
}
} // namespace

const char *kgenDtype(at::ScalarType t) { return dtypeOf(t).name; }

Call::Call(const char *op, at::ScalarType dtype, int64_t length,
           bool fixedLength)
    : op_(op), dtype_(dtype), length_(length), fixedLength_(fixedLength) {}

Call::Arg &Call::add() {
  TORCH_INTERNAL_ASSERT(numArgs_ < args_.size(), "kgen::", op_,
                        " passes too many arguments");
  return args_[numArgs_++];
}

Call &Call::rows(const char *name, const at::Tensor &t, int64_t rowDims) {
  int64_t stride = rowStride(t, rowDims);
  TORCH_CHECK(stride >= 0, "kgen::", op_, ": '", name,
              "' must be rows with a dense last dim (shape ", t.sizes(),
              ", strides ", t.strides(), ")");
  add() = {name, KGEN_ARG_TENSOR, t, stride};
  return *this;
}

Call &Call::heads(const char *name, const at::Tensor &t, const char *pitchDim) {
  int64_t pitch = 0, stride = headsStride(t, pitch);
  TORCH_CHECK(stride >= 0, "kgen::", op_, ": '", name,
              "' must be [..., heads, head_dim] with a dense last dim, heads "
              "that do not overlap and one stride between tokens (shape ",
              t.sizes(), ", strides ", t.strides(), ")");
  add() = {name, KGEN_ARG_TENSOR, t, stride};
  return dim(pitchDim, pitch);
}

Call &Call::perHead(const char *name, const at::Tensor &t,
                    const char *pitchDim) {
  TORCH_INTERNAL_ASSERT(t.dim() == 2);
  // A dim of one element has no stride of its own: take the dense one.
  const int64_t tokens = t.size(0), heads = t.size(1);
  const int64_t pitch = heads == 1 ? 1 : t.stride(1);
  const int64_t stride = tokens == 1 ? heads * pitch : t.stride(0);
  TORCH_CHECK(pitch >= 1 && stride >= 1, "kgen::", op_, ": '", name,
              "' must have positive strides (shape ", t.sizes(), ", strides ",
              t.strides(), ")");
  add() = {name, KGEN_ARG_TENSOR, t, stride};
  return dim(pitchDim, pitch);
}

Call &Call::whole(const char *name, const at::Tensor &t) {
  TORCH_CHECK(t.is_contiguous(), "kgen::", op_, ": '", name,
              "' must be contiguous (strides ", t.strides(), ")");
  add() = {name, KGEN_ARG_TENSOR, t, 0};
  return *this;
}

Call &Call::scalar(const char *name, double value) {
  add() = {name, KGEN_ARG_SCALAR, {}, 0, value};
  return *this;
}

Call &Call::dim(const char *name, int64_t value) {
  add() = {name, KGEN_ARG_DIM, {}, 0, 0, value};
  return *this;
}

void Call::run(int64_t rows) {
  TORCH_CHECK(rows >= 0 && rows <= kMaxRows, "kgen::", op_, ": ", rows,
              " rows is out of range (at most ", kMaxRows, ")");
  const at::Tensor *first = nullptr;
  for (size_t i = 0; i < numArgs_; ++i) {
    const Arg &a = args_[i];
    if (a.kind != KGEN_ARG_TENSOR)
      continue;
    if (!first)
      first = &a.tensor;
    TORCH_CHECK(a.tensor.device() == first->device(), "kgen::", op_, ": '",
                a.name, "' is on ", a.tensor.device(), ", '", args_[0].name,
                "' on ", first->device());
  }
  TORCH_INTERNAL_ASSERT(first, "kgen::", op_, " has no tensor");
  if (rows == 0)
    return;
  if (first->is_cuda())
    runCuda(rows, first->device());
  else if (first->is_cpu())
    runCpu(rows);
  else
    TORCH_CHECK(false, "kgen::", op_, ": tensors on ", first->device(),
                " are not supported (CUDA, or CPU for the reference)");
}

void Call::runCpu(int64_t rows) {
  std::vector<kgen_ref_arg> refs;
  refs.reserve(numArgs_);
  for (size_t i = 0; i < numArgs_; ++i) {
    const Arg &a = args_[i];
    if (a.kind == KGEN_ARG_TENSOR)
      refs.push_back({a.name, a.tensor.data_ptr(), a.rowStride, 0});
    else
      refs.push_back(
          {a.name, nullptr, 0, a.kind == KGEN_ARG_SCALAR ? a.f : double(a.i)});
  }
  char err[512];
  int rc =
      kgen_reference_run(op_, kgenDtype(dtype_), fixedLength_ ? length_ : 0,
                         refs.data(), refs.size(), rows, err, sizeof err);
  TORCH_CHECK(rc == 0, "kgen::", op_, " (CPU reference): ", err);
}

void Call::runCuda(int64_t rows, at::Device device) {
  std::string why;
  const KernelRef *k =
      findKernel(op_, kgenDtype(dtype_), length_, fixedLength_, why);
  TORCH_CHECK(k, "kgen::", op_, ": ", why);
  // By name: a kernel specialized on a length has that dim baked in, so it
  // takes one argument fewer than the wrapper names.
  kgen_arg packed[16];
  TORCH_INTERNAL_ASSERT(k->names.size() <= 16);
  for (size_t i = 0; i < k->names.size(); ++i) {
    const Arg *a = nullptr;
    for (size_t j = 0; j < numArgs_; ++j)
      if (k->names[i] == args_[j].name)
        a = &args_[j];
    TORCH_INTERNAL_ASSERT(a, "kgen::", op_, ": the wrapper does not pass '",
                          k->names[i], "'");
    kgen_arg &p = packed[i];
    p.kind = kgen_arg_kind(a->kind);
    p.dtype = k->dtypes[i];
    p.ptr = nullptr;
    p.row_stride = a->rowStride;
    p.f = a->f;
    p.i = a->i;
    if (a->kind == KGEN_ARG_TENSOR) {
      p.dtype = dtypeOf(a->tensor.scalar_type()).runtime;
      p.ptr = a->tensor.data_ptr();
    }
  }
  TORCH_INTERNAL_ASSERT(numArgs_ <= k->names.size() + 1, "kgen::", op_,
                        ": the wrapper passes ", numArgs_,
                        " arguments, the kernel takes ", k->names.size());
  c10::DeviceGuard guard(device); // the device's primary context is current
  cudaStream_t stream =
      c10::cuda::getCurrentCUDAStream(device.index()).stream();
  kgen_status st =
      kgen_launch(k->kernel, packed, k->names.size(), rows, stream);
  TORCH_CHECK(st == KGEN_OK, "kgen::", op_, ": ", kgen_last_error());
}

} // namespace kgen::torch_ext

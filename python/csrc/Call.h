//===- Call.h - One kgen op call on torch tensors -----------------*- C++
//-*-===//
//
// An op wrapper names its kernel's arguments in the spec's order; the call
// then runs on the tensors' device: CUDA through the runtime (on the current
// stream), CPU through kgen's interpreter (the reference semantics).
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_PYTHON_CALL_H
#define KGEN_PYTHON_CALL_H

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>

namespace kgen::torch_ext {

/// Rows a call may launch; past it a size is more likely a mistake.
inline constexpr int64_t kMaxRows = int64_t(1) << 31;

/// The stride between rows of `t` seen as [rows, row] where the row is its
/// last `rowDims` dims, or -1 when the leading dims do not collapse into one
/// stride or the row is not contiguous.
int64_t rowStride(const at::Tensor &t, int64_t rowDims = 1);

/// `t` [..., heads, head_dim] as rows of heads with a dense last dim: the
/// stride between rows (tokens), with `pitch` set to the stride between
/// heads; -1 when the tokens do not collapse into one stride, the last dim
/// is not dense or heads overlap.
int64_t headsStride(const at::Tensor &t, int64_t &pitch);

/// `t` as rows of its last `rowDims` dims: itself when rowStride finds one,
/// else a contiguous copy (an input only; outputs are refused instead).
at::Tensor asRows(const at::Tensor &t, int64_t rowDims = 1);

/// "bf16" for torch.bfloat16; throws for dtypes kgen has no kernels of.
const char *kgenDtype(at::ScalarType t);

class Call {
public:
  /// `op` is a registered kgen op (it must outlive the Call), `dtype` its
  /// kernel's dtype, `length` the row length it may be specialized on.
  /// `fixedLength`: the op only exists at its registered lengths (rope's
  /// head_dim).
  Call(const char *op, at::ScalarType dtype, int64_t length,
       bool fixedLength = false);

  /// A tensor read or written by rows of its last `rowDims` dims.
  Call &rows(const char *name, const at::Tensor &t, int64_t rowDims = 1);
  /// A [..., heads, head_dim] tensor (headsStride), its head stride passed
  /// as the dim `pitchDim`.
  Call &heads(const char *name, const at::Tensor &t, const char *pitchDim);
  /// A [tokens, heads] output of one value a head (a kernel's per-head
  /// scalars): its token stride passed as the row stride, its head stride as
  /// the dim `pitchDim`; row- or column-major (the runtime checks overlap).
  Call &perHead(const char *name, const at::Tensor &t, const char *pitchDim);
  /// A tensor read whole by every row (a weight), or one value per row.
  Call &whole(const char *name, const at::Tensor &t);
  Call &scalar(const char *name, double value);
  Call &dim(const char *name, int64_t value);

  /// Runs on `rows` rows, on the device of the first tensor.
  void run(int64_t rows);

private:
  struct Arg {
    const char *name;
    int kind; // kgen_arg_kind
    at::Tensor tensor;
    int64_t rowStride = 0;
    double f = 0;
    int64_t i = 0;
  };
  void runCpu(int64_t rows);
  void runCuda(int64_t rows, at::Device device);

  Arg &add();

  const char *op_;
  at::ScalarType dtype_;
  int64_t length_;
  bool fixedLength_;
  // Inline: a call allocates nothing of its own (the host cost is measured).
  std::array<Arg, 16> args_; // as many as kgen_arg packed[16] in runCuda
  size_t numArgs_ = 0;
};

} // namespace kgen::torch_ext

#endif // KGEN_PYTHON_CALL_H

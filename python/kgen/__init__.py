"""kgen for PyTorch: kgen's fused row kernels as torch custom ops.

    import torch, kgen
    y = torch.ops.kgen.rmsnorm(x, weight, 1e-6)    # or kgen.rmsnorm(x, weight)

Every op runs on CUDA tensors through kgen's embedded kernels (on the
tensor's device and current stream) and on CPU tensors through kgen's
interpreter, the reference the kernels are checked against. Each has a fake
implementation, so it traces under torch.compile(fullgraph=True).
Model patches: kgen.integrations.transformers, kgen.integrations.diffusers.
"""
import os as _os

import torch as _torch

__version__ = "0.1.0"


def _library_path():
    path = _os.environ.get("KGEN_TORCH_LIBRARY")
    if path:
        return path
    return _os.path.join(_os.path.dirname(__file__), "_lib", "libkgen_torch.so")


def _check_torch():
    try:
        from ._build_info import TORCH_VERSION
    except ImportError:  # a source tree, with KGEN_TORCH_LIBRARY
        return
    built = TORCH_VERSION.split("+")[0].split(".")[:2]
    have = _torch.__version__.split("+")[0].split(".")[:2]
    if built != have:
        raise ImportError(
            f"kgen: this build is for torch {TORCH_VERSION}, not "
            f"{_torch.__version__} (its C++ ABI is torch's); rebuild the "
            "wheel against this torch (scripts/build-wheel.sh)")


def _load():
    _check_torch()
    path = _library_path()
    if not _os.path.exists(path):
        raise ImportError(
            f"kgen: the op library {path} is missing; install the kgen wheel "
            "(scripts/build-wheel.sh) or set KGEN_TORCH_LIBRARY")
    _torch.ops.load_library(path)


_load()


def kernels():
    """(op, dtype, length) of every kernel this build embeds; length 0 is an
    op's dynamic kernel (any row length), others are specialized."""
    out = []
    for line in _torch.ops.kgen._kernels():
        op, dtype, length = line.split()
        out.append((op, dtype, int(length)))
    return out


def rope_positions(indptr, offsets, nnz=None):
    """Positions [nnz] (int64) of a ragged batch, for rope_neox and rope_gptj,
    from FlashInfer's apply_rope arguments: token i of request b, with
    indptr[b] <= i < indptr[b + 1], is at offsets[b] + i - indptr[b]. Give nnz
    (q.shape[0]) to build them on the GPU without reading indptr back."""
    if indptr.dim() != 1 or offsets.dim() != 1 or \
            indptr.numel() != offsets.numel() + 1:
        raise ValueError(
            "kgen.rope_positions: indptr must be [B + 1] and offsets [B], "
            f"not {tuple(indptr.shape)} and {tuple(offsets.shape)}")
    if indptr.is_floating_point() or offsets.is_floating_point():
        raise ValueError("kgen.rope_positions: indptr and offsets must be "
                         "integer tensors")
    indptr, offsets = indptr.long(), offsets.long()
    if nnz is None:
        nnz = int(indptr[-1])
    starts = offsets - indptr[:-1]
    per_token = _torch.repeat_interleave(starts, indptr[1:] - indptr[:-1],
                                         output_size=nnz)
    return per_token + _torch.arange(nnz, device=indptr.device)


from . import _fake  # noqa: E402,F401  (fake implementations)
from .ops import *  # noqa: E402,F401,F403
from .ops import __all__  # noqa: E402

"""kgen_ctypes: load and launch kgen kernels from Python through ctypes.

A thin layer over the C API of runtime/kgen_runtime.h, as built into the
shared library libkgen_runtime.so (CMake target kgen_runtime_shared):

    import kgen_ctypes as kg
    k = kg.Kernel("kernels/rmsnorm_bf16_hidden4096_sm_90.ptx",
                  "kernels/rmsnorm_bf16_hidden4096_sm_90.json")
    k.params            # the spec's params: [{'name': 'x', ...}, ...]
    k(x, w, y, 1e-6)    # torch tensors, float scalars (f32), int dims

Arguments come in the spec's order (`k.param_names`). A tensor passes its
data_ptr(), its dtype and, for a [rows, n] parameter, its row stride
tensor.stride(0); the last dimension must be contiguous (a per-row
"scalars" parameter is a contiguous [rows] tensor). rows defaults to the
first row tensor's size(0) times its group (below).

Row maps: a tensor read by groups of G row programs (AdaLN's per-batch
scale [B, C] with G = tokens per batch; rope's q [T, Hq*D] and positions
[T] with G = Hq + Hk heads per token) has only ceil(rows / G) rows, and a
table picked by a per-row index (rope's cos/sin cache) has its own row
count. The spec says so in each such tensor param's "row_map"
("rows_per_tensor_row": G, an int or a dim expression such as
"q_heads+k_heads"; or "gather": the index param's name, with "table_rows");
the caller may also say it: `groups={"q": 40, "positions": 40,
"cos_sin_cache": 0}` (0: a gathered table, not checked against rows).

The launch goes on `stream` (an int CUstream or a torch.cuda.Stream) or,
by default, on torch.cuda.current_stream(), so that a
launch inside torch.cuda.graph() is captured. The runtime uses the CUDA
context current on the calling thread (PyTorch's primary context once PyTorch
has initialised CUDA); when there is none, the first launch makes the primary
context of torch.cuda.current_device() (or device 0) current.

`k.bind(*args, rows=None, groups=None)` checks everything once and returns
a Launch whose call does only the kgen_launch; `k(*args)` caches that
Launch per (pointers, strides, scalars), so repeated calls with the same
tensors are cheap too.

The library is found by `load(path)`, else $KGEN_RUNTIME_LIB, else
libkgen_runtime.so next to this file or one folder up. Neither a GPU nor
PyTorch is needed to import this module, to load the library or to create
kernels (kgen_kernel_create parses the spec and checks the PTX's entries);
only launches need a driver. Every failure raises KgenError with the
runtime's message (kgen_last_error()).

Run as a script, `python3 kgen_ctypes.py KERNEL_DIR [LIB]` creates every
kernel of a bundle's manifest.tsv and prints a count (no GPU needed).
"""

import ctypes
import json
import os
import sys

__all__ = [
    "KgenError", "load", "Kernel", "Launch", "device_open", "read_manifest",
    "find_kernel", "DTYPES", "STATUS",
]

# kgen_status, kgen_dtype and kgen_arg_kind, as in kgen_runtime.h.
STATUS = [
    "KGEN_OK", "KGEN_ERROR_NO_DRIVER", "KGEN_ERROR_NO_DEVICE",
    "KGEN_ERROR_NO_CONTEXT", "KGEN_ERROR_INVALID_SPEC",
    "KGEN_ERROR_INVALID_ARGUMENT", "KGEN_ERROR_MISALIGNED", "KGEN_ERROR_JIT",
    "KGEN_ERROR_CUDA", "KGEN_ERROR_INTERNAL",
]
KGEN_OK = 0
KGEN_ERROR_NO_CONTEXT = 3
DTYPES = {"f32": 0, "f16": 1, "bf16": 2, "f8e4m3": 3, "f8e5m2": 4,
          "i32": 5, "i64": 6, "i8": 7}
ARG_TENSOR, ARG_SCALAR, ARG_DIM = 0, 1, 2
# str(torch.dtype) -> kgen_dtype (no torch import needed).
_TORCH_DTYPES = {
    "torch.float32": DTYPES["f32"], "torch.float16": DTYPES["f16"],
    "torch.bfloat16": DTYPES["bf16"], "torch.float8_e4m3fn": DTYPES["f8e4m3"],
    "torch.float8_e5m2": DTYPES["f8e5m2"], "torch.int32": DTYPES["i32"],
    "torch.int64": DTYPES["i64"], "torch.int8": DTYPES["i8"],
}
_DTYPE_NAMES = {v: k for k, v in DTYPES.items()}


class KgenError(RuntimeError):
    """A kgen runtime call failed; .status is the kgen_status name."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class Arg(ctypes.Structure):
    """kgen_arg."""
    _fields_ = [
        ("kind", ctypes.c_int),
        ("dtype", ctypes.c_int),
        ("ptr", ctypes.c_void_p),
        ("row_stride", ctypes.c_int64),
        ("f", ctypes.c_double),
        ("i", ctypes.c_int64),
    ]


class _KernelInfo(ctypes.Structure):
    _fields_ = [
        ("op", ctypes.c_char_p), ("dtype", ctypes.c_char_p),
        ("arch", ctypes.c_char_p), ("hash", ctypes.c_char_p),
        ("num_params", ctypes.c_size_t), ("num_variants", ctypes.c_size_t),
    ]


class _VariantInfo(ctypes.Structure):
    _fields_ = [
        ("entry", ctypes.c_char_p), ("block", ctypes.c_int),
        ("rows_per_block", ctypes.c_int), ("shared_bytes", ctypes.c_int),
    ]


_lib = None
_lib_path = None


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("KGEN_RUNTIME_LIB")
    if env:
        return [env]
    return [os.path.join(here, "libkgen_runtime.so"),
            os.path.join(os.path.dirname(here), "libkgen_runtime.so")]


def load(path=None):
    """Loads libkgen_runtime.so (once per process) and returns the CDLL.

    path: the library; default $KGEN_RUNTIME_LIB, else libkgen_runtime.so
    next to this file or one folder up. A second call with another path
    raises: a process has one runtime."""
    global _lib, _lib_path
    if _lib is not None:
        if path and os.path.realpath(path) != os.path.realpath(_lib_path):
            raise KgenError("kgen_ctypes: %s is loaded already (asked for %s)"
                            % (_lib_path, path))
        return _lib
    tried = [path] if path else _candidates()
    errors = []
    for p in tried:
        if not os.path.exists(p):
            errors.append("%s: no such file" % p)
            continue
        try:
            lib = ctypes.CDLL(os.path.abspath(p))
        except OSError as e:
            errors.append("%s: %s" % (p, e))
            continue
        _declare(lib)
        _lib, _lib_path = lib, os.path.abspath(p)
        return lib
    raise KgenError("kgen_ctypes: cannot load the kgen runtime library ("
                    + "; ".join(errors) + "); build the CMake target "
                    "kgen_runtime_shared and pass its path or set "
                    "KGEN_RUNTIME_LIB")


def _declare(lib):
    c = ctypes
    kp = c.c_void_p
    lib.kgen_last_error.argtypes = []
    lib.kgen_last_error.restype = c.c_char_p
    lib.kgen_kernel_create.argtypes = [c.c_char_p, c.c_size_t, c.c_char_p,
                                       c.c_size_t, c.POINTER(kp)]
    lib.kgen_kernel_create.restype = c.c_int
    lib.kgen_kernel_destroy.argtypes = [kp]
    lib.kgen_kernel_destroy.restype = None
    lib.kgen_kernel_get_info.argtypes = [kp, c.POINTER(_KernelInfo)]
    lib.kgen_kernel_get_info.restype = c.c_int
    lib.kgen_kernel_get_variant.argtypes = [kp, c.c_size_t,
                                            c.POINTER(_VariantInfo)]
    lib.kgen_kernel_get_variant.restype = c.c_int
    lib.kgen_select_variant.argtypes = [kp, c.POINTER(Arg), c.c_size_t,
                                        c.c_int64, c.POINTER(c.c_size_t)]
    lib.kgen_select_variant.restype = c.c_int
    lib.kgen_launch.argtypes = [kp, c.POINTER(Arg), c.c_size_t, c.c_int64,
                                c.c_void_p]
    lib.kgen_launch.restype = c.c_int
    lib.kgen_device_open.argtypes = [c.c_int, c.POINTER(c.c_void_p)]
    lib.kgen_device_open.restype = c.c_int


def _status_name(st):
    return STATUS[st] if 0 <= st < len(STATUS) else "kgen_status %d" % st


def _check(st, what):
    if st != KGEN_OK:
        msg = _lib.kgen_last_error().decode("utf-8", "replace")
        raise KgenError("%s: %s: %s" % (what, _status_name(st), msg),
                        _status_name(st))


def device_open(ordinal=0):
    """kgen_device_open: retains device `ordinal`'s primary context (the one
    PyTorch uses) and makes it current on this thread. Returns the CUcontext
    as an int."""
    lib = load()
    ctx = ctypes.c_void_p()
    _check(lib.kgen_device_open(int(ordinal), ctypes.byref(ctx)),
           "kgen_device_open(%d)" % ordinal)
    return ctx.value or 0


def _default_stream():
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return torch.cuda.current_stream().cuda_stream
    return 0


def _stream_handle(stream):
    if stream is None:
        return _default_stream()
    if isinstance(stream, int):
        return stream
    return int(stream.cuda_stream)  # torch.cuda.Stream / ExternalStream


def _current_ordinal():
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return torch.cuda.current_device()
    return 0


class Launch:
    """One checked argument set of a kernel; calling it only launches."""

    __slots__ = ("kernel", "args", "nargs", "rows", "keep", "variant")

    def __init__(self, kernel, args, rows, keep, variant):
        self.kernel = kernel
        self.args = args
        self.nargs = len(args)
        self.rows = rows
        self.keep = keep  # the tensors, alive as long as the launch
        self.variant = variant

    def __call__(self, stream=None):
        k = self.kernel
        s = _stream_handle(stream)
        st = k._launch(k._handle, self.args, self.nargs, self.rows, s)
        if st != KGEN_OK:
            if st == KGEN_ERROR_NO_CONTEXT and not k._opened:
                # No context current on this thread: take the primary one.
                device_open(_current_ordinal())
                k._opened = True
                st = k._launch(k._handle, self.args, self.nargs, self.rows, s)
            _check(st, "kgen_launch(%s)" % k.name)


class Kernel:
    """A kgen kernel: its PTX and spec, created with kgen_kernel_create."""

    _CACHE_MAX = 256

    def __init__(self, ptx_path, spec_path, lib=None):
        self._handle = None
        self.lib = load(lib)
        with open(ptx_path, "rb") as f:
            ptx = f.read()
        with open(spec_path, "rb") as f:
            spec_text = f.read()
        self.ptx_path, self.spec_path = ptx_path, spec_path
        handle = ctypes.c_void_p()
        st = self.lib.kgen_kernel_create(ptx, len(ptx), spec_text,
                                         len(spec_text), ctypes.byref(handle))
        _check(st, "kgen_kernel_create(%s)" % spec_path)
        self._handle = handle
        self._launch = self.lib.kgen_launch
        self._opened = False
        self.spec = json.loads(spec_text.decode("utf-8"))
        self.params = self.spec["params"]
        self.param_names = [p["name"] for p in self.params]
        self.op = self.spec.get("op")
        self.dtype = self.spec.get("dtype")
        self.dims = self.spec.get("dims", {})
        self.name = os.path.splitext(os.path.basename(spec_path))[0]
        self.variants = [v["entry"] for v in self.spec.get("variants", [])]
        self._cache = {}
        self._row_param = next(
            (i for i, p in enumerate(self.params)
             if p["kind"] == "tensor" and p.get("access") == "rows"), None)
        if self._row_param is None:
            self._row_param = next(
                (i for i, p in enumerate(self.params)
                 if p["kind"] == "tensor" and p.get("access") == "scalars"),
                None)

    def __del__(self):
        h = getattr(self, "_handle", None)
        if h is not None and h.value and _lib is not None:
            _lib.kgen_kernel_destroy(h)
            self._handle = None

    def __repr__(self):
        return "Kernel(%s: %s)" % (self.name, ", ".join(self.param_names))

    # -- argument building -------------------------------------------------
    def _build(self, args, rows, groups=None):
        n = len(self.params)
        if len(args) != n:
            raise KgenError("%s: %d arguments for %d params (%s)"
                            % (self.name, len(args), n,
                               ", ".join(self.param_names)),
                            "KGEN_ERROR_INVALID_ARGUMENT")
        arr = (Arg * n)()
        keep = []
        dims = dict(self.dims)
        for p, a in zip(self.params, args):
            if p["kind"] == "dim" and isinstance(a, int):
                dims[p["name"]] = a
        maps = [_row_map(p, dims, groups) for p in self.params]
        if rows is None and self._row_param is not None:
            # The first per-row tensor's rows times its group.
            a = args[self._row_param]
            kind, g = maps[self._row_param]
            if kind == "group" and g and hasattr(a, "shape") and a.dim() > 0:
                rows = a.shape[0] * g
        for i, (p, a) in enumerate(zip(self.params, args)):
            kind = p["kind"]
            what = "%s: param %d '%s'" % (self.name, i, p["name"])
            if kind == "tensor":
                if not hasattr(a, "data_ptr"):
                    raise KgenError("%s: needs a tensor, got %s"
                                    % (what, type(a).__name__),
                                    "KGEN_ERROR_INVALID_ARGUMENT")
                dt = _TORCH_DTYPES.get(str(a.dtype))
                if dt is None:
                    raise KgenError("%s: unsupported dtype %s"
                                    % (what, a.dtype),
                                    "KGEN_ERROR_INVALID_ARGUMENT")
                if getattr(a, "is_cuda", True) is False and \
                        os.environ.get("KGEN_CTYPES_ALLOW_HOST") != "1":
                    raise KgenError("%s: the tensor is on %s, not on a CUDA "
                                    "device" % (what, a.device),
                                    "KGEN_ERROR_INVALID_ARGUMENT")
                length = _row_length(p, dims)
                if p.get("access") == "vector":
                    if not a.is_contiguous():
                        raise KgenError("%s: a vector must be contiguous"
                                        % what, "KGEN_ERROR_INVALID_ARGUMENT")
                    if length is not None and a.numel() != length:
                        raise KgenError("%s: %d elements, the spec says %d"
                                        % (what, a.numel(), length),
                                        "KGEN_ERROR_INVALID_ARGUMENT")
                    stride = 0
                elif p.get("access") == "scalars":
                    # [rows]: one element per row (or [rows, 1]).
                    if a.dim() not in (1, 2) or (a.dim() == 2 and
                                                 a.shape[1] != 1) \
                            or not a.is_contiguous():
                        raise KgenError("%s: a contiguous [rows] tensor is "
                                        "needed, got shape %s"
                                        % (what, tuple(a.shape)),
                                        "KGEN_ERROR_INVALID_ARGUMENT")
                    stride = 0
                    trows = a.shape[0]
                else:
                    if a.dim() == 1:
                        stride = 0
                        last = a.shape[0]
                        trows = 1
                        if a.numel() > 1 and a.stride(0) != 1:
                            raise KgenError("%s: the row must be contiguous"
                                            % what,
                                            "KGEN_ERROR_INVALID_ARGUMENT")
                    elif a.dim() == 2:
                        if a.shape[1] > 1 and a.stride(1) != 1:
                            raise KgenError(
                                "%s: the last dimension must be contiguous "
                                "(stride %d)" % (what, a.stride(1)),
                                "KGEN_ERROR_INVALID_ARGUMENT")
                        stride = a.stride(0)
                        last = a.shape[1]
                        trows = a.shape[0]
                    else:
                        raise KgenError("%s: a [rows, n] tensor (or one row) "
                                        "is needed, got shape %s"
                                        % (what, tuple(a.shape)),
                                        "KGEN_ERROR_INVALID_ARGUMENT")
                    if length is not None and last != length:
                        raise KgenError("%s: rows of %d elements, the spec "
                                        "says %d" % (what, last, length),
                                        "KGEN_ERROR_INVALID_ARGUMENT")
                if p.get("access") != "vector":
                    # Per-row tensors: the first one sets the row count
                    # unless the caller gave it; none may have fewer rows
                    # than the launch needs (ceil(rows / group), or a
                    # gathered table's own row count).
                    kind, g = maps[i]
                    if rows is None and i == self._row_param:
                        rows = trows
                    elif kind == "table":
                        if g is not None and trows < g:
                            raise KgenError("%s: %d rows, the table has %d"
                                            % (what, trows, g),
                                            "KGEN_ERROR_INVALID_ARGUMENT")
                    elif rows is not None and g and \
                            trows < -(-rows // g):
                        raise KgenError(
                            "%s: %d rows, the launch has %d%s"
                            % (what, trows, rows, "" if g == 1 else
                               " (groups of %d: %d rows needed)"
                               % (g, -(-rows // g))),
                            "KGEN_ERROR_INVALID_ARGUMENT")
                arr[i].kind = ARG_TENSOR
                arr[i].dtype = dt
                arr[i].ptr = a.data_ptr()
                arr[i].row_stride = stride
                keep.append(a)
            elif kind == "scalar":
                if not isinstance(a, (int, float)) or isinstance(a, bool):
                    raise KgenError("%s: needs a number, got %s"
                                    % (what, type(a).__name__),
                                    "KGEN_ERROR_INVALID_ARGUMENT")
                arr[i].kind = ARG_SCALAR
                arr[i].dtype = DTYPES[p["dtype"]]
                if p["dtype"] in ("f32", "f16", "bf16"):
                    arr[i].f = float(a)
                else:
                    arr[i].i = int(a)
            elif kind == "dim":
                if not isinstance(a, int) or isinstance(a, bool) or a <= 0:
                    raise KgenError("%s: needs a positive int, got %r"
                                    % (what, a), "KGEN_ERROR_INVALID_ARGUMENT")
                arr[i].kind = ARG_DIM
                arr[i].i = a
            else:
                raise KgenError("%s: unknown param kind %r" % (what, kind),
                                "KGEN_ERROR_INVALID_SPEC")
        if rows is None:
            rows = 1
        variant = ctypes.c_size_t()
        _check(self.lib.kgen_select_variant(self._handle, arr, n, int(rows),
                                            ctypes.byref(variant)),
               "kgen_select_variant(%s)" % self.name)
        return Launch(self, arr, int(rows), keep, variant.value)

    def bind(self, *args, rows=None, groups=None):
        """Checks the arguments once; returns a Launch (call it to launch).
        groups: {tensor param name: G}, see the module's doc."""
        return self._build(args, rows, groups)

    def _key(self, args, rows, groups=None):
        key = [rows, tuple(sorted(groups.items())) if groups else None]
        for a in args:
            if hasattr(a, "data_ptr"):
                key.append(a.data_ptr())
                key.append(a.shape)
                key.append(a.stride())
                key.append(a.dtype)
            else:
                key.append(a)
                key.append(type(a))
        return tuple(key)

    def __call__(self, *args, rows=None, stream=None, groups=None):
        key = self._key(args, rows, groups)
        launch = self._cache.get(key)
        if launch is None:
            launch = self._build(args, rows, groups)
            if len(self._cache) >= self._CACHE_MAX:
                self._cache.clear()
            self._cache[key] = launch
        launch(stream)

    def variant_name(self, *args, rows=None, groups=None):
        """The entry that a launch with these arguments would use."""
        return self.variants[self._build(args, rows, groups).variant]


def _eval_len(v, dims):
    """A length of the spec: an int, or a text such as "2*d", "d",
    "128*q_heads" or "q_heads+k_heads" (a sum of k*name, name*k, name and
    k terms) evaluated with `dims`; None if unknown."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if not isinstance(v, str):
        return None
    total = 0
    for term in v.replace(" ", "").replace("-", "+-").split("+"):
        if not term:
            continue
        value = 1
        for factor in term.split("*"):
            sign = 1
            if factor.startswith("-"):
                sign, factor = -1, factor[1:]
            if factor in dims:
                value *= sign * dims[factor]
                continue
            try:
                value *= sign * int(factor)
            except ValueError:
                return None
        total += value
    return total


def _row_length(p, dims):
    """A tensor param's row length: the spec's row_length (an int), or its
    text ("2*d", "d") evaluated with `dims`; for heads padded inside a row
    (row_map.sub_rows.pitch), count * pitch. None if unknown."""
    sub = p.get("row_map", {}).get("sub_rows", {})
    if "pitch" in sub:
        count = _eval_len(sub.get("count"), dims)
        pitch = _eval_len(sub["pitch"], dims)
        return None if count is None or pitch is None else count * pitch
    return _eval_len(p.get("row_length"), dims)


def _row_map(p, dims, groups):
    """How a tensor param's rows relate to the launch's: ("group", G) when
    row program r reads row r // G (G None if unknown: not checked),
    ("table", n) for a gathered table of n rows (None: unknown)."""
    if p.get("kind") != "tensor":
        return ("group", 1)
    if groups and p["name"] in groups:
        g = groups[p["name"]]
        table = (p.get("row_map") or {}).get("table_rows")
        return ("table", _eval_len(table, dims)) if g == 0 \
            else ("group", int(g))
    m = p.get("row_map") or {}
    if m.get("gather") is not None:
        return ("table", _eval_len(m.get("table_rows"), dims))
    if m.get("rows_per_tensor_row") is not None:
        return ("group", _eval_len(m["rows_per_tensor_row"], dims))
    return ("group", 1)


def read_manifest(kernel_dir):
    """manifest.tsv of a `kgen bundle` folder: a list of dicts with name, op,
    dtype, arch, length (int; 0 for the dynamic kernel), ptx, spec."""
    rows = []
    with open(os.path.join(kernel_dir, "manifest.tsv")) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            name, op, dtype, arch, length = cols[:5]
            rows.append({
                "name": name, "op": op, "dtype": dtype, "arch": arch,
                "length": int(length),
                "ptx": os.path.join(kernel_dir, name + ".ptx"),
                "spec": os.path.join(kernel_dir, name + ".json"),
            })
    return rows


def find_kernel(kernel_dir, op, dtype, length, arch=None, manifest=None):
    """Creates the bundle's kernel for (op, dtype, length[, arch]); length 0
    is the dynamic kernel. Raises KgenError if the manifest has none."""
    for e in manifest if manifest is not None else read_manifest(kernel_dir):
        if e["op"] == op and e["dtype"] == dtype and e["length"] == length \
                and (arch is None or e["arch"] == arch):
            return Kernel(e["ptx"], e["spec"])
    raise KgenError("kgen_ctypes: no %s %s kernel of length %d%s in %s"
                    % (op, dtype, length, "" if arch is None else " for " +
                       arch, kernel_dir))


def _main(argv):
    if len(argv) < 2:
        print("usage: kgen_ctypes.py KERNEL_DIR [LIBKGEN_RUNTIME_SO]")
        return 2
    load(argv[2] if len(argv) > 2 else None)
    manifest = read_manifest(argv[1])
    for e in manifest:
        k = Kernel(e["ptx"], e["spec"])
        assert k.op == e["op"] and k.dtype == e["dtype"], e["name"]
    print("kgen_ctypes: %s: created all %d kernels of %s (no GPU needed)"
          % (_lib_path, len(manifest), argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))

"""kgen's reference semantics from Python through libkgen_reference.so
(ctypes, no compiler, no GPU): rmsnorm and silu_and_mul in f32 against the
formulas written here, and the errors a caller gets.

    python3 test/python/reference_test.py build/ops/libkgen_reference.so
"""
import array
import ctypes
import math
import sys


class RefArg(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_void_p),
                ("row_stride", ctypes.c_int64), ("value", ctypes.c_double)]


def tensor(name, buf):
    return RefArg(name.encode(), buf.buffer_info()[0], 0, 0.0)


def value(name, v):
    return RefArg(name.encode(), None, 0, float(v))


def run(lib, op, dtype, args, rows, length=0):
    err = ctypes.create_string_buffer(512)
    arr = (RefArg * len(args))(*args)
    rc = lib.kgen_reference_run(op.encode(), dtype.encode(), length, arr,
                                len(args), rows, err, len(err))
    return rc, err.value.decode()


def close(got, want, rtol=1e-5, atol=1e-6):
    return abs(got - want) <= atol + rtol * abs(want)


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.kgen_reference_run.argtypes = [
        ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64,
        ctypes.POINTER(RefArg), ctypes.c_size_t, ctypes.c_int64,
        ctypes.c_char_p, ctypes.c_size_t]
    failures = []

    rows, hidden, eps = 3, 8, 1e-6
    x = array.array("f", [((i * 7) % 11 - 5) / 3 for i in range(rows * hidden)])
    w = array.array("f", [0.5 + i / 8 for i in range(hidden)])
    y = array.array("f", [float("nan")] * (rows * hidden))
    rc, msg = run(lib, "rmsnorm", "f32",
                  [tensor("x", x), tensor("weight", w), tensor("y", y),
                   value("eps", eps), value("hidden", hidden)], rows)
    if rc != 0:
        failures.append("rmsnorm: " + msg)
    for r in range(rows):
        row = x[r * hidden:(r + 1) * hidden]
        inv = 1 / math.sqrt(sum(v * v for v in row) / hidden + eps)
        for i in range(hidden):
            want = w[i] * row[i] * inv
            if not close(y[r * hidden + i], want):
                failures.append(f"rmsnorm y[{r},{i}] = {y[r * hidden + i]}, "
                                f"expected {want}")

    d = 5
    x2 = array.array("f", [(i % 9 - 4) / 2 for i in range(rows * 2 * d)])
    y2 = array.array("f", [float("nan")] * (rows * d))
    rc, msg = run(lib, "silu_and_mul", "f32",
                  [tensor("x", x2), tensor("y", y2), value("d", d)], rows)
    if rc != 0:
        failures.append("silu_and_mul: " + msg)
    for r in range(rows):
        for i in range(d):
            a, b = x2[r * 2 * d + i], x2[r * 2 * d + d + i]
            want = a / (1 + math.exp(-a)) * b
            if not close(y2[r * d + i], want):
                failures.append(f"silu_and_mul y[{r},{i}] = {y2[r * d + i]}, "
                                f"expected {want}")

    # Errors name what is wrong.
    for args, op, dtype, want in [
            ([], "rmsnrom", "f32", "unknown op 'rmsnrom'"),
            ([], "rmsnorm", "i8", "'i8' is not a dtype of rmsnorm"),
            ([tensor("x", x), tensor("y", y), value("hidden", hidden)],
             "rmsnorm", "f32", "tensor 'weight' of rmsnorm has no argument"),
            ([tensor("x", x2), tensor("y", y2), value("d", d),
              value("scale", 2)], "silu_and_mul", "f32",
             "silu_and_mul has no tensor, scalar or dim 'scale'"),
            ([tensor("x", x2), tensor("y", y2), value("d", 0.5)],
             "silu_and_mul", "f32", "dim 'd' must be a whole number >= 1")]:
        rc, msg = run(lib, op, dtype, args, rows)
        if rc != -1 or want not in msg:
            failures.append(f"{op} {dtype}: expected '{want}', got {rc} "
                            f"'{msg}'")

    for f in failures:
        print("FAIL:", f)
    print(f"reference_test: {'FAILED' if failures else 'passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

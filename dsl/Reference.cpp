//===- Reference.cpp - kgen's ops on host memory, from C ------------------===//
#include "dsl/kgen_reference.h"

#include "dsl/Interpreter.h"
#include "dsl/Registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <map>
#include <stdexcept>

using namespace kgen;

namespace {

int failWith(const std::string &msg, char *err, size_t errLen) {
  if (err && errLen) {
    size_t n = std::min(msg.size(), errLen - 1);
    std::memcpy(err, msg.data(), n);
    err[n] = '\0';
  }
  return -1;
}

/// Binds `args` to `k`'s tensors, params and dims by name; throws
/// std::invalid_argument for a missing, unknown or repeated name.
Bindings bind(const OpDef &op, const Kernel &k, int64_t length,
              const kgen_ref_arg *args, size_t nargs, int64_t rows) {
  std::map<std::string, const kgen_ref_arg *> byName;
  for (size_t i = 0; i < nargs; ++i) {
    if (!args[i].name)
      throw std::invalid_argument(fmt::format("argument {} has no name", i));
    if (!byName.emplace(args[i].name, &args[i]).second)
      throw std::invalid_argument(
          fmt::format("argument '{}' is given twice", args[i].name));
  }
  auto take = [&](const std::string &name, const char *what) {
    auto it = byName.find(name);
    if (it == byName.end())
      throw std::invalid_argument(
          fmt::format("{} '{}' of {} has no argument", what, name, op.name));
    const kgen_ref_arg *a = it->second;
    byName.erase(it);
    return a;
  };
  Bindings b;
  b.rows = rows;
  for (const std::string &d : k.dims) {
    // A fixed-length op's length is a constant of its formula, not a dim.
    if (length && d == op.mainDim && !byName.count(d)) {
      b.dims.push_back(length);
      continue;
    }
    double v = take(d, "dim")->value;
    if (!(v >= 1 && v <= double(int64_t(1) << 40)) || v != int64_t(v))
      throw std::invalid_argument(
          fmt::format("dim '{}' must be a whole number >= 1, got {}", d, v));
    b.dims.push_back(int64_t(v));
  }
  for (const TensorDecl &t : k.tensors) {
    const kgen_ref_arg *a = take(t.name, "tensor");
    b.tensors.push_back({a->data, a->row_stride});
  }
  for (const ParamDecl &p : k.params)
    b.params.push_back(take(p.name, "scalar")->value);
  if (!byName.empty())
    throw std::invalid_argument(
        fmt::format("{} has no tensor, scalar or dim '{}'", op.name,
                    byName.begin()->first));
  return b;
}

} // namespace

extern "C" int kgen_reference_run(const char *opName, const char *dtypeName,
                                  int64_t length, const kgen_ref_arg *args,
                                  size_t nargs, int64_t rows, char *err,
                                  size_t errLen) {
  try {
    if (!opName || !dtypeName || (nargs && !args))
      return failWith("kgen_reference_run: op, dtype or args is NULL", err,
                      errLen);
    const OpDef *op = findOp(opName);
    if (!op)
      return failWith(fmt::format("unknown op '{}'", opName), err, errLen);
    std::optional<DType> dt = parseDType(dtypeName);
    if (!dt || !op->supportsDType(*dt))
      return failWith(
          fmt::format("'{}' is not a dtype of {}", dtypeName, op->name), err,
          errLen);
    if (length < 0 || !op->supportsLength(length))
      return failWith(fmt::format("{} is built for {} {} only, not {}",
                                  op->name, op->mainDim,
                                  fmt::join(op->lengths, ", "), length),
                      err, errLen);
    if (rows < 0)
      return failWith(fmt::format("rows must be >= 0, got {}", rows), err,
                      errLen);
    std::map<std::string, int64_t> dims;
    Kernel k = op->instantiate(*dt, length, dims);
    interpret(k, bind(*op, k, length, args, nargs, rows));
    return 0;
  } catch (const std::exception &e) {
    return failWith(e.what(), err, errLen);
  } catch (...) {
    return failWith("kgen_reference_run: unknown error", err, errLen);
  }
}

extern "C" int kgen_reference_tolerance(const char *dtypeName, double *rtol,
                                        double *atol) {
  std::optional<DType> dt = dtypeName ? parseDType(dtypeName) : std::nullopt;
  if (!dt || !rtol || !atol)
    return -1;
  Tolerance tol = defaultTolerance(*dt);
  *rtol = tol.rtol;
  *atol = tol.atol;
  return 0;
}

//===- FuzzDsl.cpp - libFuzzer target: the DSL builder --------------------===//
//
// The fuzz bytes are a small byte code that builds kernels through the
// public Builder API (two builders, so that values of different kernels
// meet): dims, tensors of every kind, slices, casts, unary, binary and
// select, reductions, stores and build(). Each built kernel then runs in the
// interpreter on small host tensors. A UserError is the DSL refusing a
// mistake, which is fine; any other exception, a crash or a leak is not.
//
// Byte code (read front to back, 0 past the end): an op byte, op % 24 the
// op (the cases of step()), (op / 24) % 2 the builder; then its operands.
//
//===----------------------------------------------------------------------===//

#include "dsl/Builder.h"
#include "dsl/Float.h"
#include "dsl/Interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace kgen;

namespace {

[[noreturn]] void violated(const std::string &what) {
  std::fprintf(stderr, "kgen-libfuzzer-dsl: %s\n", what.c_str());
  std::abort();
}

/// KGEN_FUZZ_DSL_TRACE=1: each op and how it ended, to read a finding.
bool tracing() {
  static const bool trace = [] {
    const char *v = std::getenv("KGEN_FUZZ_DSL_TRACE");
    return v && *v == '1';
  }();
  return trace;
}

/// KGEN_FUZZ_DSL_STRICT=1: a LenOverflow escaping the builder (a length past
/// int64 reported without the user's line) is a finding too. Off by default:
/// heads() and storeSlice() still let it escape, which would hide the rest.
bool strictLenOverflow() {
  static const bool strict = [] {
    const char *v = std::getenv("KGEN_FUZZ_DSL_STRICT");
    return v && *v == '1';
  }();
  return strict;
}

class Reader {
public:
  Reader(const uint8_t *data, size_t size) : data(data), size(size) {}
  bool done() const { return at >= size; }
  uint8_t byte() { return at < size ? data[at++] : 0; }
  unsigned pick(unsigned n) { return byte() % n; }
  int64_t int8() { return static_cast<int8_t>(byte()); }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= uint64_t(byte()) << (8 * i);
    return v;
  }

private:
  const uint8_t *data;
  size_t size;
  size_t at = 0;
};

/// Thrown by the harness for an operand it cannot make (its own Len
/// arithmetic overflowed): the op is skipped.
struct Skip {};

constexpr size_t MaxPool = 64;

struct World {
  std::optional<Builder> builders[2];
  std::vector<Len> lens;
  std::vector<Tensor> tensors{Tensor()}; // [0]: an empty Tensor
  std::vector<Expr> exprs{Expr()};       // [0]: an empty Expr

  template <typename T> void keep(std::vector<T> &pool, T v) {
    if (pool.size() < MaxPool)
      pool.push_back(std::move(v));
    else
      pool[1 + pool.size() % (MaxPool - 1)] = std::move(v);
  }
};

std::string name(Reader &in) {
  static const char *const pool[] = {"",  "x",   "y",   "w", "b", "h",
                                     "d", "n",   "eps", "s", "q", "k",
                                     "p", "cos", "out", "t"};
  uint8_t b = in.byte();
  return b < 16 ? pool[b] : "v" + std::to_string(b);
}

DType dtype(Reader &in) { return static_cast<DType>(in.pick(8)); }

Len len(Reader &in, const World &w) {
  uint8_t k = in.byte();
  auto pooled = [&]() -> Len {
    return w.lens.empty() ? Len(1) : w.lens[in.pick(w.lens.size())];
  };
  try {
    switch (k % 6) {
    case 0:
      return Len(in.int8());
    case 1:
    case 2:
      return pooled();
    case 3:
      return pooled() * in.int8();
    case 4:
      return pooled() + Len(in.int8());
    default: {
      static const int64_t big[] = {INT64_MAX,        INT64_MIN,
                                    int64_t(1) << 62, -(int64_t(1) << 62),
                                    1 << 20,          0};
      return pooled() + Len(big[in.pick(6)]);
    }
    }
  } catch (const LenOverflow &) {
    throw Skip();
  }
}

double number(Reader &in) {
  switch (in.pick(8)) {
  case 0:
    return 0;
  case 1:
    return 1;
  case 2:
    return 0.5;
  case 3:
    return in.int8();
  case 4:
    return std::numeric_limits<double>::quiet_NaN();
  case 5:
    return -std::numeric_limits<double>::infinity();
  case 6:
    return 0x1p63;
  default: {
    uint64_t bits = in.u64();
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    return d;
  }
  }
}

Operand operand(Reader &in, const World &w) {
  switch (in.pick(8)) {
  case 0:
  case 1:
  case 2:
  case 3:
    return Operand(w.exprs[in.pick(w.exprs.size())]);
  case 4:
  case 5:
    return Operand(w.tensors[in.pick(w.tensors.size())]);
  case 6:
    return Operand(number(in));
  default:
    return Operand(static_cast<int>(in.int8()));
  }
}

const Tensor &tensor(Reader &in, const World &w) {
  return w.tensors[in.pick(w.tensors.size())];
}

std::vector<HeadsPart> parts(Reader &in, const World &w) {
  std::vector<HeadsPart> ps(in.pick(4));
  for (HeadsPart &p : ps) {
    p.name = name(in);
    p.count = len(in, w);
  }
  return ps;
}

/// Runs kernel `k` in the interpreter on small tensors sized from its
/// declarations, with values from the input.
void interpretBuilt(const Kernel &k, Reader &in) {
  Bindings b;
  for (size_t d = 0; d < k.dims.size(); ++d)
    b.dims.push_back(1 + in.pick(4));
  b.rows = in.pick(5);
  constexpr int64_t MaxElements = 1 << 16;
  std::vector<std::vector<unsigned char>> storage;
  uint64_t seed = in.byte() * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return seed >> 33;
  };
  try {
    if (k.domain.eval(b.dims) > 4096)
      return;
    for (const TensorDecl &t : k.tensors) {
      int64_t rowLength =
          t.layout == Layout::RowScalar ? 1 : t.rowLength.eval(b.dims);
      int64_t tableRows = t.map.gather >= 0 ? t.map.tableRows.eval(b.dims) : 0;
      // The interpreter evaluates these too: past int64 is not this test's.
      t.map.group.eval(b.dims);
      t.map.subLength.eval(b.dims);
      t.map.subFirst.eval(b.dims);
      t.map.subCount.eval(b.dims);
      if (rowLength < 1 || rowLength > MaxElements || tableRows > 4096)
        return;
      HostTensor h;
      int64_t stride = rowLength;
      if (t.layout == Layout::Rows && in.pick(4) == 0) {
        stride += 1 + in.pick(8);
        h.rowStride = stride;
      }
      int64_t rows = t.layout == Layout::Vector
                         ? 1
                         : std::max<int64_t>({b.rows, tableRows, 1});
      int64_t elements = (rows - 1) * stride + rowLength;
      if (elements > MaxElements)
        return;
      std::vector<unsigned char> data(elements * sizeInBytes(t.dtype));
      for (int64_t e = 0; e < elements; ++e) {
        unsigned char *at = data.data() + e * sizeInBytes(t.dtype);
        if (isInt(t.dtype)) // gather indices: mostly in the table
          encode(t.dtype, double(int64_t(next() % 6) - 1), at);
        else
          for (int64_t i = 0; i < sizeInBytes(t.dtype); ++i)
            at[i] = static_cast<unsigned char>(next());
      }
      storage.push_back(std::move(data));
      h.data = storage.back().data();
      b.tensors.push_back(h);
    }
  } catch (const LenOverflow &) {
    return;
  }
  for (size_t p = 0; p < k.params.size(); ++p)
    b.params.push_back(number(in));
  InterpretOptions options;
  if (in.pick(4) == 0)
    options.perturbSeed = in.byte();
  if (tracing())
    std::fprintf(stderr, "  interpret '%s': %zu nodes, %lld rows\n",
                 k.name.c_str(), k.nodes.size(), (long long)b.rows);
  try {
    interpret(k, b, options);
  } catch (const std::invalid_argument &e) {
    violated(std::string("the interpreter refuses a built kernel: ") +
             e.what());
  }
  for (size_t t = 0; t < k.tensors.size(); ++t)
    if (k.tensors[t].isWritten)
      (void)outputTolerance(k, static_cast<int>(t));
}

/// One op of the byte code.
void step(Reader &in, World &w) {
  uint8_t op = in.byte();
  if (tracing())
    std::fprintf(stderr, "op %d (builder %d): ", op % 24, (op / 24) % 2);
  std::optional<Builder> &slot = w.builders[(op / 24) % 2];
  if (!slot)
    slot.emplace("k" + std::to_string((op / 24) % 2));
  Builder &b = *slot;
  switch (op % 24) {
  case 0: {
    std::string n = name(in);
    w.keep(w.lens, b.dim(n));
    return;
  }
  case 1: {
    std::string n = name(in);
    DType t = dtype(in);
    Len l = len(in, w);
    w.keep(w.tensors, b.input(n, t, l));
    return;
  }
  case 2: {
    std::string n = name(in);
    DType t = dtype(in);
    Len l = len(in, w);
    w.keep(w.tensors, b.vector(n, t, l));
    return;
  }
  case 3: {
    std::string n = name(in);
    DType t = dtype(in);
    Len l = len(in, w), g = len(in, w);
    w.keep(w.tensors, b.grouped(n, t, l, g));
    return;
  }
  case 4: {
    std::string n = name(in);
    DType t = dtype(in);
    Len g = len(in, w);
    w.keep(w.tensors, b.perRow(n, t, g));
    return;
  }
  case 5: {
    std::string n = name(in);
    DType t = dtype(in);
    Len l = len(in, w);
    const Tensor &index = tensor(in, w);
    Len rows = len(in, w);
    w.keep(w.tensors, b.gather(n, t, l, index, rows));
    return;
  }
  case 6:
  case 7: {
    std::vector<HeadsPart> ps = parts(in, w);
    DType t = dtype(in);
    Len l = len(in, w);
    w.keep(w.tensors,
           op % 24 == 6 ? b.heads(ps, t, l) : b.outputHeads(ps, t, l));
    return;
  }
  case 8: {
    std::string n = name(in);
    DType t = dtype(in);
    Len l = len(in, w);
    w.keep(w.tensors, b.output(n, t, l));
    return;
  }
  case 9: {
    std::string n = name(in);
    DType t = dtype(in);
    w.keep(w.exprs, b.scalar(n, t));
    return;
  }
  case 10: {
    std::string n = name(in);
    Operand v = operand(in, w);
    w.keep(w.tensors, b.output(n, v));
    return;
  }
  case 11: {
    const Tensor &dst = tensor(in, w);
    b.store(dst, operand(in, w));
    return;
  }
  case 12: {
    const Tensor &dst = tensor(in, w);
    Len start = len(in, w);
    int64_t stride = in.int8();
    b.storeSlice(dst, start, stride, operand(in, w));
    return;
  }
  case 13: {
    const Tensor &dst = tensor(in, w);
    Len start = len(in, w);
    std::vector<Operand> ps;
    for (unsigned i = in.pick(4); i > 0; --i)
      ps.push_back(operand(in, w));
    b.storeConcat(dst, start, ps);
    return;
  }
  case 14: {
    const Tensor &t = tensor(in, w);
    Len start = len(in, w), length = len(in, w);
    int64_t stride = in.int8();
    w.keep(w.exprs, t.slice(start, length, stride));
    return;
  }
  case 15: {
    const Tensor &t = tensor(in, w);
    w.keep(w.exprs, t.to(dtype(in)));
    return;
  }
  case 16: {
    const Expr &e = w.exprs[in.pick(w.exprs.size())];
    w.keep(w.exprs, e.to(dtype(in)));
    return;
  }
  case 17: {
    Expr (*const fns[])(Operand) = {operator-, abs,  exp, log,    sqrt,
                                    rsqrt,     tanh, erf, sigmoid};
    unsigned f = in.pick(9);
    w.keep(w.exprs, fns[f](operand(in, w)));
    return;
  }
  case 18: {
    unsigned f = in.pick(12);
    Operand x = operand(in, w), y = operand(in, w);
    Expr e;
    switch (f) {
    case 0:
      e = x + y;
      break;
    case 1:
      e = x - y;
      break;
    case 2:
      e = x * y;
      break;
    case 3:
      e = x / y;
      break;
    case 4:
      e = max(x, y);
      break;
    case 5:
      e = min(x, y);
      break;
    case 6:
      e = x < y;
      break;
    case 7:
      e = x <= y;
      break;
    case 8:
      e = x > y;
      break;
    case 9:
      e = x >= y;
      break;
    case 10:
      e = x == y;
      break;
    default:
      e = x != y;
      break;
    }
    w.keep(w.exprs, e);
    return;
  }
  case 19: {
    Operand c = operand(in, w), x = operand(in, w), y = operand(in, w);
    w.keep(w.exprs, select(c, x, y));
    return;
  }
  case 20: {
    Expr (*const fns[])(Operand) = {sum, mean, amax, amin};
    unsigned f = in.pick(4);
    w.keep(w.exprs, fns[f](operand(in, w)));
    return;
  }
  case 21: {
    Kernel k = b.build();
    slot.reset(); // the next op starts a new kernel; old values stay pooled
    interpretBuilt(k, in);
    return;
  }
  case 22: {
    const Expr &e = w.exprs[in.pick(w.exprs.size())];
    const Tensor &t = tensor(in, w);
    (void)e.dtype();
    (void)e.isRow();
    (void)t.name();
    return;
  }
  default:
    slot.reset();
    slot.emplace(name(in));
    return;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Reader in(data, size);
  World w;
  while (!in.done()) {
    try {
      step(in, w);
      if (tracing())
        std::fprintf(stderr, "ok\n");
    } catch (const UserError &e) {
      // The DSL refused a mistake; the builder must stay usable.
      if (tracing())
        std::fprintf(stderr, "UserError: %s\n", e.what());
    } catch (const Skip &) {
    } catch (const LenOverflow &e) {
      if (tracing())
        std::fprintf(stderr, "LenOverflow: %s\n", e.what());
      if (strictLenOverflow())
        violated(std::string("a LenOverflow escaped the builder: ") + e.what());
    } catch (const std::exception &e) {
      violated(std::string("the builder threw a non-UserError: ") + e.what());
    }
  }
  return 0;
}

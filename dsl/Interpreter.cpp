//===- Interpreter.cpp - The reference semantics of a kgen kernel ---------===//
#include "dsl/Interpreter.h"

#include "dsl/Float.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>

namespace kgen {
namespace {

[[noreturn]] void bad(const Kernel &k, const std::string &what) {
  throw std::invalid_argument(
      fmt::format("kgen::interpret: kernel '{}': {}", k.name, what));
}

std::string tensorName(const Kernel &k, int t) {
  return fmt::format("tensor '{}' (index {})", k.tensors[t].name, t);
}

int64_t toI64(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 0x1p63)
    return std::numeric_limits<int64_t>::max();
  if (v < -0x1p63)
    return std::numeric_limits<int64_t>::min();
  return (int64_t)v;
}

/// Wraps an int64 result to the width of t (two's complement).
double wrapInt(DType t, int64_t v) {
  if (t == DType::I32)
    return (double)(int32_t)(uint32_t)(uint64_t)v;
  if (t == DType::I8)
    return (double)(int8_t)(uint8_t)(uint64_t)v;
  return (double)v;
}

/// torch.maximum / torch.minimum: NaN propagates; max(-0,+0) = +0.
double fmaxNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double fminNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

double unaryOp(UnaryOp op, DType t, double x) {
  if (isInt(t)) {
    int64_t i = toI64(x);
    switch (op) {
    case UnaryOp::Neg:
      return wrapInt(t, (int64_t)(0 - (uint64_t)i));
    case UnaryOp::Abs:
      return wrapInt(t, i < 0 ? (int64_t)(0 - (uint64_t)i) : i);
    default:
      break; // transcendental on an int: computed in double below
    }
  }
  switch (op) {
  case UnaryOp::Neg:
    return -x;
  case UnaryOp::Abs:
    return std::fabs(x);
  case UnaryOp::Exp:
    return std::exp(x);
  case UnaryOp::Log:
    return std::log(x);
  case UnaryOp::Sqrt:
    return std::sqrt(x);
  case UnaryOp::Rsqrt:
    return 1.0 / std::sqrt(x);
  case UnaryOp::Tanh:
    return std::tanh(x);
  case UnaryOp::Erf:
    return std::erf(x);
  case UnaryOp::Sigmoid:
    return 1.0 / (1.0 + std::exp(-x));
  case UnaryOp::Round: {
    double r = std::round(x); // ties away from zero; move them to even
    return std::fabs(x - std::trunc(x)) == 0.5 ? 2 * std::round(x / 2) : r;
  }
  case UnaryOp::CeilPow2: {
    double a = std::fabs(x);
    if (a == 0 || !std::isfinite(a))
      return a;
    int e;
    double m = std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1)
    // 2^128 rounds to infinity as the node's f32 result.
    return std::max(m == 0.5 ? a : std::ldexp(1.0, e), 0x1p-126);
  }
  }
  return x;
}

/// `t` is the operands' dtype (the node's, except for comparisons).
double binaryOp(BinaryOp op, DType t, double a, double b) {
  switch (op) {
  case BinaryOp::Lt:
    return a < b;
  case BinaryOp::Le:
    return a <= b;
  case BinaryOp::Gt:
    return a > b;
  case BinaryOp::Ge:
    return a >= b;
  case BinaryOp::Eq:
    return a == b;
  case BinaryOp::Ne:
    return a != b;
  default:
    break;
  }
  if (isInt(t)) {
    int64_t x = toI64(a), y = toI64(b);
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    int64_t r = 0;
    switch (op) {
    case BinaryOp::Add:
      r = (int64_t)(ux + uy);
      break;
    case BinaryOp::Sub:
      r = (int64_t)(ux - uy);
      break;
    case BinaryOp::Mul:
      r = (int64_t)(ux * uy);
      break;
    case BinaryOp::Div:
      if (y == 0)
        r = 0;
      else if (x == std::numeric_limits<int64_t>::min() && y == -1)
        r = x; // wraps
      else
        r = x / y; // truncates toward zero
      break;
    case BinaryOp::Max:
      r = x > y ? x : y;
      break;
    case BinaryOp::Min:
      r = x < y ? x : y;
      break;
    default:
      break;
    }
    return wrapInt(t, r);
  }
  switch (op) {
  case BinaryOp::Add:
    return a + b;
  case BinaryOp::Sub:
    return a - b;
  case BinaryOp::Mul:
    return a * b;
  case BinaryOp::Div:
    return a / b;
  case BinaryOp::Max:
    return fmaxNaN(a, b);
  case BinaryOp::Min:
    return fminNaN(a, b);
  default:
    return 0;
  }
}

/// The float fast path: + - * / and sqrt are correctly rounded in float, and
/// a double has the 2 * 24 + 2 bits that make rounding its exact result to
/// f32 give the same value; neg, abs and casts between floats are exact.
bool hasFloatPath(const Node &n, DType opType) {
  if (!isFloat(n.dtype) || !isFloat(opType))
    return false;
  if (n.kind == NodeKind::Cast)
    return true;
  if (n.kind == NodeKind::Unary)
    return n.unary == UnaryOp::Neg || n.unary == UnaryOp::Abs ||
           n.unary == UnaryOp::Sqrt;
  return n.kind == NodeKind::Binary &&
         (n.binary == BinaryOp::Add || n.binary == BinaryOp::Sub ||
          n.binary == BinaryOp::Mul || n.binary == BinaryOp::Div);
}

/// out[e] = f(a[e * sa], b[e * sb]) in float, rounded to t. A stride of 0
/// repeats a per-row scalar or a constant.
template <typename F>
void floatLoop(DType t, double *out, int64_t len, const double *a, int64_t sa,
               const double *b, int64_t sb, F f) {
  if (t == DType::F32) {
    for (int64_t e = 0; e < len; ++e)
      out[e] = f(float(a[e * sa]), float(b[e * sb]));
    return;
  }
  for (int64_t e = 0; e < len; ++e)
    out[e] = roundFloat(t, f(float(a[e * sa]), float(b[e * sb])));
}

void floatNode(const Node &n, double *out, int64_t len, const double *a,
               int64_t sa, const double *b, int64_t sb) {
  const DType t = n.dtype;
  if (n.kind == NodeKind::Cast)
    return floatLoop(t, out, len, a, sa, a, sa,
                     [](float x, float) { return x; });
  if (n.kind == NodeKind::Unary) {
    switch (n.unary) {
    case UnaryOp::Neg:
      return floatLoop(t, out, len, a, sa, a, sa,
                       [](float x, float) { return -x; });
    case UnaryOp::Abs:
      return floatLoop(t, out, len, a, sa, a, sa,
                       [](float x, float) { return std::fabs(x); });
    default:
      return floatLoop(t, out, len, a, sa, a, sa,
                       [](float x, float) { return std::sqrt(x); });
    }
  }
  switch (n.binary) {
  case BinaryOp::Add:
    return floatLoop(t, out, len, a, sa, b, sb,
                     [](float x, float y) { return x + y; });
  case BinaryOp::Sub:
    return floatLoop(t, out, len, a, sa, b, sb,
                     [](float x, float y) { return x - y; });
  case BinaryOp::Mul:
    return floatLoop(t, out, len, a, sa, b, sb,
                     [](float x, float y) { return x * y; });
  default:
    return floatLoop(t, out, len, a, sa, b, sb,
                     [](float x, float y) { return x / y; });
  }
}

/// A tensor's RowMap with its lengths evaluated.
struct Map {
  int64_t group = 1, subLength = 0, subFirst = 0, subCount = 0, tableRows = 0;
  int64_t subPitch = 0; ///< sub-rows: elements between their starts
};

/// Everything interpret() needs, checked once.
struct Plan {
  int64_t domain = 0;
  std::vector<int64_t> rowLength; ///< By tensor.
  std::vector<int64_t> rowStride; ///< By tensor (Rows layout).
  std::vector<int64_t> pitch;     ///< By tensor: its elements' step (1).
  std::vector<Map> maps;          ///< By tensor.
  std::vector<int64_t> viewStart; ///< By node (Load) / store.
  std::vector<int64_t> storeStart;
  std::vector<bool> isRow; ///< By node, derived from the structure.
};

/// Where a row program's row of a tensor lies.
struct Place {
  int tensor;
  int64_t element;
  bool valid;
};

int operandCount(NodeKind kind) {
  switch (kind) {
  case NodeKind::Load:
  case NodeKind::Param:
  case NodeKind::Const:
    return 0;
  case NodeKind::Unary:
  case NodeKind::Cast:
  case NodeKind::Reduce:
    return 1;
  case NodeKind::Binary:
    return 2;
  case NodeKind::Select:
    return 3;
  }
  return -1;
}

/// The row a row program sees: a sub-row for heads().
int64_t viewLength(const Plan &p, int t) {
  return p.maps[t].subLength > 0 ? p.maps[t].subLength : p.rowLength[t];
}

/// Checks a view [start, start + (n-1)*stride] against a row.
void checkView(const Kernel &k, int tensor, int64_t start, int64_t stride,
               int64_t n, int64_t rowLength, const std::string &what) {
  if (stride < 1 || start < 0 || start + (n - 1) * stride >= rowLength)
    bad(k, fmt::format("malformed kernel: {} of {} covers elements {} to {} "
                       "(stride {}) of a row of {}",
                       what, tensorName(k, tensor), start,
                       start + (n - 1) * stride, stride, rowLength));
}

Plan check(const Kernel &k, const Bindings &b) {
  Plan p;
  if (b.dims.size() != k.dims.size())
    bad(k, fmt::format("Bindings::dims has {} values but the kernel has {} "
                       "dims",
                       b.dims.size(), k.dims.size()));
  for (size_t d = 0; d < k.dims.size(); ++d) {
    if (b.dims[d] < 1)
      bad(k, fmt::format("dim '{}' is {}; dims must be >= 1", k.dims[d],
                         b.dims[d]));
    if (d < k.dimMax.size() && b.dims[d] > k.dimMax[d])
      bad(k, fmt::format("dim '{}' is {}; it must be <= {}", k.dims[d],
                         b.dims[d], k.dimMax[d]));
  }
  if (b.rows < 0)
    bad(k, fmt::format("rows is {}; it must be >= 0", b.rows));
  if (b.tensors.size() != k.tensors.size())
    bad(k, fmt::format("Bindings::tensors has {} entries but the kernel has "
                       "{} tensors",
                       b.tensors.size(), k.tensors.size()));
  if (b.params.size() != k.params.size())
    bad(k, fmt::format("Bindings::params has {} values but the kernel has {} "
                       "scalar params",
                       b.params.size(), k.params.size()));
  for (size_t i = 0; i < k.params.size(); ++i) {
    const ParamDecl &d = k.params[i];
    double v = roundTo(d.dtype, b.params[i]);
    if (std::isfinite(d.min) && !(v >= d.min)) // an f32 bound: f32 text
      bad(k, fmt::format("scalar '{}' is {}; it must be >= {}", d.name,
                         float(v), float(d.min)));
  }

  for (size_t t = 0; t < k.tensors.size(); ++t) {
    const TensorDecl &decl = k.tensors[t];
    const HostTensor &h = b.tensors[t];
    int64_t len =
        decl.layout == Layout::RowScalar ? 1 : decl.rowLength.eval(b.dims);
    if (len < 1)
      bad(k, fmt::format("malformed kernel: {} has a row length of {}",
                         tensorName(k, (int)t), len));
    p.rowLength.push_back(len);
    if (b.rows > 0 && !h.data)
      bad(k, fmt::format("{} has null data but rows = {}",
                         tensorName(k, (int)t), b.rows));
    const RowMap &m = decl.map;
    Map e{m.group.eval(b.dims),     m.subLength.eval(b.dims),
          m.subFirst.eval(b.dims),  m.subCount.eval(b.dims),
          m.tableRows.eval(b.dims), m.subPitch.eval(b.dims)};
    if (e.group < 1 || e.subLength < 0 || e.subFirst < 0 ||
        (e.subLength > 0 && e.subCount < 1) ||
        (m.gather >= 0 && e.tableRows < 1) || e.subPitch < 0)
      bad(k, fmt::format("malformed kernel: {} has a row map with group {}, "
                         "sub-rows [{}, +{}) of {}, table rows {}",
                         tensorName(k, (int)t), e.group, e.subFirst, e.subCount,
                         e.subLength, e.tableRows));
    // Padded heads: a row spans count * pitch elements.
    int64_t span = len;
    if (e.subPitch > 0) {
      if (e.subPitch < e.subLength)
        bad(k, fmt::format("{} has heads {} elements apart but {} long; the "
                           "head pitch must be >= the head length",
                           tensorName(k, (int)t), e.subPitch, e.subLength));
      if (__builtin_mul_overflow(e.subCount, e.subPitch, &span))
        bad(k, fmt::format("{} has {} heads {} elements apart, past int64",
                           tensorName(k, (int)t), e.subCount, e.subPitch));
    } else {
      e.subPitch = e.subLength;
    }
    // A pitched per-group output: a row spans len * pitch elements.
    int64_t pitch = decl.pitch == Len(0) ? 1 : decl.pitch.eval(b.dims);
    if (pitch < 1 || (pitch > 1 && __builtin_mul_overflow(len, pitch, &span)))
      bad(k, fmt::format("{} has {} elements {} apart; the pitch must be >= 1 "
                         "and the row within int64",
                         tensorName(k, (int)t), len, pitch));
    int64_t stride = span;
    // Per-head scalars (outputPerHead) may also interleave their tokens
    // inside each head's run: T tokens `stride` apart within a pitch; so
    // may a pitched output's rows, within its pitch.
    bool perHead = decl.layout == Layout::RowScalar && hasRowStride(decl);
    bool pitched = decl.pitch != Len(0);
    if (hasRowStride(decl) && h.rowStride > 0) {
      int64_t tokens = (b.rows + e.group - 1) / e.group, run = 0;
      bool interleaved = (perHead || pitched) &&
                         !__builtin_mul_overflow(h.rowStride, tokens, &run) &&
                         run <= (perHead ? e.subPitch : pitch);
      if (h.rowStride < span && !interleaved)
        bad(k, fmt::format("{} has rowStride {} but its rows have {} "
                           "elements; the row stride must be >= the row "
                           "length (or <= 0 for contiguous){}",
                           tensorName(k, (int)t), h.rowStride, span,
                           perHead   ? ", or its tokens fit one head pitch "
                                       "(rowStride * tokens <= pitch)"
                           : pitched ? ", or its rows fit one pitch "
                                       "(rowStride * rows <= pitch)"
                                     : ""));
      stride = h.rowStride;
    }
    p.rowStride.push_back(stride);
    p.pitch.push_back(pitch);
    auto validTensor = [&](int i) {
      return i >= -1 && i < (int)k.tensors.size();
    };
    if (!validTensor(m.next) || !validTensor(m.gather) ||
        (m.next >= 0 && k.tensors[m.next].layout != decl.layout) ||
        (m.gather >= 0 && (k.tensors[m.gather].layout != Layout::RowScalar ||
                           !isInt(k.tensors[m.gather].dtype))))
      bad(k, fmt::format("malformed kernel: {} has a row map naming a "
                         "tensor that does not fit",
                         tensorName(k, (int)t)));
    p.maps.push_back(e);
  }

  bool anyRow = false;
  p.isRow.resize(k.nodes.size());
  p.viewStart.resize(k.nodes.size());
  for (size_t i = 0; i < k.nodes.size(); ++i) {
    const Node &n = k.nodes[i];
    if ((int)n.operands.size() != operandCount(n.kind))
      bad(k, fmt::format("malformed kernel: node {} has {} operands", i,
                         n.operands.size()));
    bool row = false;
    for (int o : n.operands) {
      if (o < 0 || o >= (int)i)
        bad(k, fmt::format("malformed kernel: node {} uses node {}, which "
                           "does not come before it",
                           i, o));
      row |= p.isRow[o];
    }
    switch (n.kind) {
    case NodeKind::Load:
      if (n.index < 0 || n.index >= (int)k.tensors.size())
        bad(k, fmt::format("malformed kernel: node {} loads tensor {}", i,
                           n.index));
      row = k.tensors[n.index].layout != Layout::RowScalar;
      break;
    case NodeKind::Param:
      if (n.index < 0 || n.index >= (int)k.params.size())
        bad(k, fmt::format("malformed kernel: node {} reads param {}", i,
                           n.index));
      break;
    case NodeKind::Reduce:
      if (!p.isRow[n.operands[0]] || n.group < 0)
        bad(k, fmt::format("malformed kernel: node {} reduces a per-row "
                           "scalar or groups of {}",
                           i, n.group));
      row = n.group > 0;
      break;
    default:
      break;
    }
    p.isRow[i] = row;
    anyRow |= row;
  }
  for (const Store &s : k.stores)
    if (s.tensor < 0 || s.tensor >= (int)k.tensors.size() || s.value < 0 ||
        s.value >= (int)k.nodes.size())
      bad(k, "malformed kernel: a store names a tensor or node that does not "
             "exist");

  if (anyRow) {
    p.domain = k.domain.eval(b.dims);
    if (p.domain < 1)
      bad(k, fmt::format("malformed kernel: the row domain is {}", p.domain));
  }
  for (size_t i = 0; i < k.nodes.size(); ++i)
    if (k.nodes[i].group > 0 && p.domain % k.nodes[i].group)
      bad(k, fmt::format("malformed kernel: node {} reduces groups of {} in "
                         "rows of {}",
                         i, k.nodes[i].group, p.domain));
  for (size_t i = 0; i < k.nodes.size(); ++i) {
    const Node &n = k.nodes[i];
    if (n.kind != NodeKind::Load ||
        k.tensors[n.index].layout == Layout::RowScalar)
      continue;
    p.viewStart[i] = n.start.eval(b.dims);
    checkView(k, n.index, p.viewStart[i], n.stride, p.domain,
              viewLength(p, n.index), fmt::format("the load of node {}", i));
  }
  for (const Store &s : k.stores) {
    Layout layout = k.tensors[s.tensor].layout;
    bool row = p.isRow[s.value];
    if (row && layout != Layout::Rows)
      bad(k, fmt::format("malformed kernel: a row value is stored into {}, "
                         "which is not a [rows, n] tensor",
                         tensorName(k, s.tensor)));
    if (!row && layout != Layout::RowScalar)
      bad(k, fmt::format("malformed kernel: a per-row scalar is stored into "
                         "{}, which is not a per-row scalar tensor",
                         tensorName(k, s.tensor)));
    if (s.group < 0 || (s.group > 0 && (!row || p.domain % s.group)))
      bad(k, fmt::format("malformed kernel: a store of groups of {} into {}",
                         s.group, tensorName(k, s.tensor)));
    int64_t start = row ? s.start.eval(b.dims) : 0;
    if (row)
      checkView(k, s.tensor, start, s.stride,
                s.group ? p.domain / s.group : p.domain,
                viewLength(p, s.tensor), "a store");
    p.storeStart.push_back(start);
  }
  return p;
}

/// v moved by up to half an ulp of t, by a hash of (seed, v): a rounding is
/// a function of the exact result, so equal sums (a constant row's threads)
/// move alike. Out of line, to keep the unperturbed loops tight.
[[gnu::noinline]] double withNoise(uint64_t seed, DType t, double v) {
  uint64_t h;
  std::memcpy(&h, &v, sizeof h);
  h ^= seed + 0x9e3779b97f4a7c15ULL + uint64_t(t);
  // splitmix64's finalizer: every input bit reaches every output bit.
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  double u = double(h >> 11) * 0x1p-53 - 0.5;
  return v + u * ulp(t, v);
}

} // namespace

void interpret(const Kernel &k, const Bindings &b,
               const InterpretOptions &options) {
  const Plan p = check(k, b);
  // An arithmetic result v of dtype t: rounded to t; or, perturbed, moved
  // by up to half an ulp of t (the most a correct rounding moves it) and
  // left unrounded, so the noise is continuous (a rounding that almost never
  // flips would otherwise hide an amplification). An exact result (x - x,
  // x / 1) stays exact, as it does on a GPU.
  const uint64_t noiseSeed = options.perturbSeed.value_or(0);
  const bool perturbing = options.perturbSeed.has_value();
  const bool fastPath = options.floatFastPath && !perturbing;
  auto arith = [&](DType t, double v) {
    double rounded = roundTo(t, v);
    if (!perturbing || rounded == v || !isFloat(t))
      return rounded;
    return withNoise(noiseSeed, t, v);
  };
  // A perturbed sum adds as a GPU block does: each thread a run of 4 to 256
  // elements (held chunks, loops), then the runs' sums in a tree whose every
  // node takes noise: another order's partials are not this tree's, and may
  // round where these are exact. The seed picks the run, and whether its
  // partial sums take noise or are rounded in turn (equal terms drift).
  const bool driftingRuns = noiseSeed % 2;
  const size_t sumRun = size_t(4) << (noiseSeed / 2 % 7);
  std::function<double(DType, const double *, size_t)> pairwiseSum =
      [&](DType t, const double *v, size_t n) -> double {
    if (n <= sumRun) {
      double acc = v[0];
      for (size_t i = 1; i < n; ++i)
        acc = driftingRuns ? roundTo(t, acc + v[i]) : arith(t, acc + v[i]);
      return acc;
    }
    size_t half = n / 2;
    double sum = pairwiseSum(t, v, half) + pairwiseSum(t, v + half, n - half);
    return isFloat(t) ? withNoise(noiseSeed, t, sum) : roundTo(t, sum);
  };
  const size_t numNodes = k.nodes.size();

  // vals[i] holds node i's value for the current row: domain elements for a
  // row value, one for a per-row scalar. Row-independent nodes (params,
  // constants) are evaluated once.
  std::vector<std::vector<double>> vals(numNodes);
  for (size_t i = 0; i < numNodes; ++i)
    vals[i].assign(p.isRow[i] ? (size_t)p.domain : 1, 0.0);

  auto elem = [&](int node, int64_t i) -> double {
    return vals[node][p.isRow[node] ? i : 0];
  };
  auto addr = [&](int t, int64_t element) -> char * {
    return (char *)b.tensors[t].data +
           element * sizeInBytes(k.tensors[t].dtype);
  };
  // Where row program r's row of a Rows / RowScalar tensor starts: the
  // tensor (a heads() view spans several) and the element offset. A gather
  // whose index falls outside the table gives valid = false.
  std::function<Place(int, int64_t)> place = [&](int t, int64_t r) -> Place {
    const RowMap &m = k.tensors[t].map;
    const Map &e = p.maps[t];
    int64_t q = r / e.group, h = r % e.group;
    if (m.gather >= 0) {
      Place ix = place(m.gather, r);
      int64_t idx =
          toI64(decode(k.tensors[m.gather].dtype, addr(ix.tensor, ix.element)));
      if (idx < 0 || idx >= e.tableRows)
        return {t, 0, false};
      return {t, idx * p.rowStride[t], true};
    }
    if (e.subLength > 0) {
      for (int part = t; part >= 0; part = k.tensors[part].map.next) {
        const Map &pm = p.maps[part];
        if (h < pm.subFirst || h >= pm.subFirst + pm.subCount)
          continue;
        if (k.tensors[part].layout == Layout::Vector) // partVectors()
          return {part, 0, true};
        return {part, q * p.rowStride[part] + (h - pm.subFirst) * pm.subPitch,
                true};
      }
      bad(k, fmt::format("malformed kernel: no tensor of the heads view of "
                         "{} holds sub-row {}",
                         tensorName(k, t), h));
    }
    if (k.tensors[t].layout == Layout::RowScalar)
      return {t, q, true};
    return {t, q * p.rowStride[t], true};
  };

  for (int64_t r = 0; r < b.rows; ++r) {
    for (size_t i = 0; i < numNodes; ++i) {
      const Node &n = k.nodes[i];
      std::vector<double> &out = vals[i];
      const int64_t len = (int64_t)out.size();
      switch (n.kind) {
      case NodeKind::Load: {
        const TensorDecl &t = k.tensors[n.index];
        Place at{n.index, 0, true};
        if (t.layout != Layout::Vector || p.maps[n.index].subLength > 0)
          at = place(n.index, r);
        if (t.layout != Layout::RowScalar)
          at.element += p.viewStart[i];
        if (!at.valid) { // a gather index outside the table
          std::fill(out.begin(), out.end(),
                    std::numeric_limits<double>::quiet_NaN());
          break;
        }
        decodeRun(t.dtype, addr(at.tensor, at.element), n.stride, len,
                  out.data());
        if (t.dtype != n.dtype)
          for (double &v : out)
            v = roundTo(n.dtype, v);
        break;
      }
      case NodeKind::Param:
        out[0] = roundTo(n.dtype,
                         roundTo(k.params[n.index].dtype, b.params[n.index]));
        break;
      case NodeKind::Const:
        out[0] = roundTo(n.dtype, n.constant);
        break;
      case NodeKind::Unary:
        if (fastPath && hasFloatPath(n, k.nodes[n.operands[0]].dtype)) {
          int a = n.operands[0];
          floatNode(n, out.data(), len, vals[a].data(), p.isRow[a],
                    vals[a].data(), p.isRow[a]);
          break;
        }
        for (int64_t e = 0; e < len; ++e)
          out[e] =
              arith(n.dtype, unaryOp(n.unary, n.dtype, elem(n.operands[0], e)));
        break;
      case NodeKind::Binary: {
        DType opType = k.nodes[n.operands[0]].dtype;
        if (fastPath && hasFloatPath(n, opType) &&
            isFloat(k.nodes[n.operands[1]].dtype)) {
          int a = n.operands[0], c = n.operands[1];
          floatNode(n, out.data(), len, vals[a].data(), p.isRow[a],
                    vals[c].data(), p.isRow[c]);
          break;
        }
        for (int64_t e = 0; e < len; ++e)
          out[e] =
              arith(n.dtype, binaryOp(n.binary, opType, elem(n.operands[0], e),
                                      elem(n.operands[1], e)));
        break;
      }
      case NodeKind::Select:
        for (int64_t e = 0; e < len; ++e)
          out[e] = roundTo(n.dtype, elem(n.operands[0], e) != 0
                                        ? elem(n.operands[1], e)
                                        : elem(n.operands[2], e));
        break;
      case NodeKind::Cast:
        if (fastPath && hasFloatPath(n, k.nodes[n.operands[0]].dtype)) {
          int a = n.operands[0];
          floatNode(n, out.data(), len, vals[a].data(), p.isRow[a],
                    vals[a].data(), p.isRow[a]);
          break;
        }
        for (int64_t e = 0; e < len; ++e)
          out[e] = roundTo(n.dtype, elem(n.operands[0], e));
        break;
      case NodeKind::Reduce: {
        const std::vector<double> &in = vals[n.operands[0]];
        // The whole row, or each run of n.group elements.
        size_t run = n.group ? size_t(n.group) : in.size();
        for (size_t first = 0; first < in.size(); first += run) {
          const double *x = in.data() + first;
          double acc = x[0];
          if (n.reduce == ReduceOp::Sum || n.reduce == ReduceOp::Mean) {
            acc = 0;
            if (perturbing) {
              acc = pairwiseSum(n.dtype, x, run);
            } else {
              for (size_t e = 0; e < run; ++e)
                acc += x[e];
            }
            if (n.reduce == ReduceOp::Mean)
              acc /= (double)run;
          } else {
            for (size_t e = 1; e < run; ++e)
              acc = n.reduce == ReduceOp::Max ? fmaxNaN(acc, x[e])
                                              : fminNaN(acc, x[e]);
          }
          acc = arith(n.dtype, acc);
          if (n.group)
            std::fill(out.begin() + first, out.begin() + first + run, acc);
          else
            out[0] = acc;
        }
        break;
      }
      }
    }

    // Stores, after the whole row has been evaluated.
    std::vector<double> picked;
    for (size_t s = 0; s < k.stores.size(); ++s) {
      const Store &st = k.stores[s];
      const TensorDecl &t = k.tensors[st.tensor];
      const std::vector<double> &v = vals[st.value];
      Place at = place(st.tensor, r);
      if (t.layout == Layout::RowScalar) {
        encode(t.dtype, v[0], addr(at.tensor, at.element));
        continue;
      }
      if (st.group) { // element g * group of the value to element g
        picked.clear();
        for (size_t e = 0; e < v.size(); e += size_t(st.group))
          picked.push_back(v[e]);
        encodeRun(t.dtype, picked.data(), int64_t(picked.size()),
                  addr(at.tensor, at.element + p.storeStart[s]),
                  st.stride * p.pitch[st.tensor]);
        continue;
      }
      encodeRun(t.dtype, v.data(), int64_t(v.size()),
                addr(at.tensor, at.element + p.storeStart[s]), st.stride);
    }
  }
}

Tolerance defaultTolerance(DType outDtype) {
  switch (outDtype) {
  case DType::F32:
    return {1e-5, 1e-5};
  case DType::F16:
    return {1e-3, 0x1p-9};
  case DType::BF16:
    return {1e-2, 0x1p-6};
  case DType::F8E4M3:
    return {0x1p-6, 0x1p-2};
  case DType::F8E5M2:
    return {0x1p-14, 0x1p-1};
  case DType::I32:
  case DType::I64:
  case DType::I8:
  case DType::Bool:
    return {0, 0};
  }
  return {0, 0};
}

/// Whether a GPU may compute `n` other than the interpreter: transcendental
/// math (libdevice, approximations) and sums (another order).
bool inexact(const Node &n) {
  if (n.kind == NodeKind::Unary)
    return n.unary != UnaryOp::Neg && n.unary != UnaryOp::Abs &&
           n.unary != UnaryOp::Round && n.unary != UnaryOp::CeilPow2;
  return n.kind == NodeKind::Reduce &&
         (n.reduce == ReduceOp::Sum || n.reduce == ReduceOp::Mean);
}

Tolerance outputTolerance(const Kernel &k, int tensor) {
  Tolerance tol = defaultTolerance(k.tensors.at(tensor).dtype);
  bool fromFloat = false, approximate = false;
  std::vector<bool> seen(k.nodes.size());
  std::vector<int> work;
  for (const Store &s : k.stores)
    if (s.tensor == tensor)
      work.push_back(s.value);
  while (!work.empty()) {
    int n = work.back();
    work.pop_back();
    if (seen.at(n))
      continue;
    seen[n] = true;
    const Node &node = k.nodes[n];
    if (node.kind == NodeKind::Cast && isFloat(node.dtype))
      tol.rtol = std::max(tol.rtol, defaultTolerance(node.dtype).rtol);
    fromFloat |= node.kind == NodeKind::Cast && !isFloat(node.dtype) &&
                 isFloat(k.nodes[node.operands[0]].dtype);
    approximate |= inexact(node);
    work.insert(work.end(), node.operands.begin(), node.operands.end());
  }
  // An integer from a float that is only within tolerance may be a step off.
  if (!isFloat(k.tensors[tensor].dtype) && fromFloat && approximate)
    tol.atol = 1;
  return tol;
}

bool withinTolerance(DType t, double got, double ref, Tolerance tol) {
  if (std::isnan(got) || std::isnan(ref))
    return std::isnan(got) && std::isnan(ref);
  if (std::isinf(got) || std::isinf(ref))
    return got == ref;
  if (!isFloat(t))
    return std::fabs(got - ref) <= tol.atol;
  return std::fabs(got - ref) <= tol.atol + tol.rtol * std::fabs(ref);
}

double roundingSlack(DType outDtype, double ref,
                     const std::vector<double> &perturbed) {
  if (!isFloat(outDtype) || !std::isfinite(ref))
    return 0;
  double spread = 0;
  for (double v : perturbed)
    if (std::isfinite(v))
      spread = std::max(spread, std::fabs(v - ref));
  // A narrower output's rtol covers a flipped rounding (one ulp); past that
  // the f32 work before its cast amplified the noise.
  if (outDtype != DType::F32 && spread <= ulp(outDtype, ref))
    return 0;
  return kSpreadFactor * spread;
}

} // namespace kgen

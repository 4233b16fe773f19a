//===- ViewOpsTest.cpp - Ops over heads, gathers and grouped rows on a GPU ===//
//
// KernelTest.cpp knows ops with one dim over plain [rows, n] tensors. The ops
// whose tensors have a RowMap (dsl/Graph.h) are tested here: rope_* (q and k
// heads rotated in place by a cos/sin cache gathered by positions), qk_*
// (their norm, a weight per part, with or without rope), rope_hf
// (out of place, cos/sin [T, head_dim] grouped by heads), adaln* (scale
// and shift [B, C] grouped by tokens_per_batch), per_token_group_quant_*
// (a row program per group of a token's row, a scale per group) and the
// group-scale norms (*rmsnorm_quant*_group[_transposed]: a scale per group,
// row-major or transposed) and SwiGLU's (silu_and_mul_quant*_group, as
// per_token_group_quant on the halves of one row).
// One test
// per bundle kernel (adaln: per length, the specialized and the dynamic
// kernel together). An int8 output has no NaN to poison with: an element
// left unwritten reads -1 and is caught where the reference is not -1.
//
// Each case lays the tensors out in device allocations, runs interpret() on
// host copies of the same initial contents and, after the launch, copies back
// every allocation whole:
//  - elements a store of the kernel writes must match the interpreter within
//    defaultTolerance (NaN only where the reference is NaN: a position
//    outside the cache);
//  - every other element must be unchanged bit for bit: the pass-through
//    part of partial rope, inputs, row padding, the 64-byte guard after each
//    allocation and the element before a misaligned base. Padding, guards and
//    the v part of a fused qkv are 0xFF bytes (NaN in every float dtype), so
//    a kernel that reads them also spreads NaN into its results.
// Layouts: contiguous; every base one element further (the runtime must pick
// the fallback variant, the last); strided (rope: q and k as views of a fused
// qkv row, the cache with padded rows; adaln: padded rows).
//
// Environment (see KernelTest.cpp, which has main()): KGEN_KERNEL_DIR
// (unset: skip), KGEN_GPU_TEST_SEED, KGEN_GPU_TEST_FAKE_CUDA and
// KGEN_GPU_TEST_LENGTHS (the adaln lengths instead of the bundle's own and
// ExtraAdaLNLengths).
//
//===----------------------------------------------------------------------===//

#include "GpuCommon.h"

#include "dsl/Float.h"
#include "dsl/Interpreter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

using namespace kgen;
using namespace kgen::gpu;

namespace {

constexpr int64_t GuardBytes = 64;
constexpr int64_t MaxPos = 4096;
/// adaln lengths run besides the bundle's specialized ones: the dynamic
/// kernel alone where the bundle has no specialized kernel (1000 never has
/// one; 100, 1152 and 3072 unless bundled), with it otherwise.
constexpr int64_t ExtraAdaLNLengths[] = {100, 1000, 1152, 3072};

uint64_t seed() {
  static uint64_t s = []() -> uint64_t {
    if (const char *e = std::getenv("KGEN_GPU_TEST_SEED"))
      return std::strtoull(e, nullptr, 10);
    auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    return (uint64_t(now) ^ (uint64_t(getpid()) << 20)) % 1000000;
  }();
  return s;
}

/// Set when a launch left the context unusable: later tests, here and in
/// KernelTest.cpp, fail at once.
std::string &contextBroken = brokenContext();

/// splitmix64: cheap enough to fill megabytes per case.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * double(next() >> 11) * 0x1p-53;
  }
};

/// One device allocation and its host copies.
struct Buf {
  std::string name;
  DType dtype;
  int64_t elem = 0;
  std::vector<uint8_t> init; ///< before the launch
  std::vector<uint8_t> ref;  ///< after interpret()
  /// After interpret() with random rounding (kPerturbedRuns of them), made
  /// on the first miss of the case (roundingSlack decides the slack).
  std::vector<std::vector<uint8_t>> perturbed;
  /// Per element: 0, no kernel store writes it; 1, a store does; 2, a
  /// store of a value read from a gathered row (NaN where its index is
  /// outside the table).
  std::vector<uint8_t> written;
  DeviceBuffer dev;
  int64_t elems() const { return int64_t(init.size()) / elem; }
};

/// Where a DSL tensor lies: `rows` rows of `len` elements, `stride` apart
/// from element `offset` of buffer `buf`.
struct View {
  int buf = -1;
  int64_t offset = 0, stride = 0, len = 0, rows = 0;
  bool passStride = false; ///< else row_stride 0 (contiguous) is passed
};

struct Case {
  std::string what;
  std::map<std::string, int64_t> dims;
  std::vector<int64_t> dimValues; ///< by DSL dim index, set by runCase
  std::vector<double> params;     ///< by DSL param index, set by runCase
  int64_t rows = 0;
  std::vector<Buf> bufs;
  std::vector<View> views; ///< by DSL tensor index
  /// Rows (tokens) whose elements stored from the cache row (written 2) are
  /// NaN: positions outside the cache. The inputs are finite, so nothing
  /// else may be NaN.
  std::vector<bool> nanRows;
};

enum class Lay { Contiguous, Misaligned, Strided };

int tensorIndex(const Kernel &k, const std::string &name) {
  for (size_t t = 0; t < k.tensors.size(); ++t)
    if (k.tensors[t].name == name)
      return int(t);
  throw std::runtime_error(k.name + " has no tensor '" + name + "'");
}

/// A new allocation of `elems` elements and the guard, all poison.
int addBuf(Case &c, const std::string &name, DType dt, int64_t elems) {
  Buf b{name, dt, sizeInBytes(dt)};
  b.init.assign((elems + std::max<int64_t>(1, GuardBytes / b.elem)) * b.elem,
                0xff);
  c.bufs.push_back(std::move(b));
  return int(c.bufs.size()) - 1;
}

/// Places tensor `name` in buffer `buf` (-1: one of its own); an input's rows
/// get uniform values in [lo, hi].
void place(const Kernel &k, Case &c, const std::string &name, int buf,
           int64_t offset, int64_t rows, int64_t len, int64_t stride,
           bool passStride, Rng &rng, double lo = -3, double hi = 3) {
  int t = tensorIndex(k, name);
  const TensorDecl &td = k.tensors[t];
  if (buf < 0)
    buf = addBuf(c, name, td.dtype, offset + rows * stride);
  c.views.resize(k.tensors.size());
  c.views[t] = View{buf, offset, stride, len, rows, passStride};
  Buf &b = c.bufs[buf];
  // In parallel (a cos/sin cache is up to 1M elements per case), a stream
  // per row.
  uint64_t base = rng.next();
  parallelFor(td.isInput ? rows : 0, [&](size_t r) {
    Rng row{base ^ (r * 0xd1b54a32d192ed03ull)};
    for (int64_t i = 0; i < len; ++i)
      encode(td.dtype, row.uniform(lo, hi),
             b.init.data() + (offset + r * stride + i) * b.elem);
  });
}

/// Elements in 16 bytes: rows padded by this stay 16-byte aligned.
int64_t pad16(DType dt) { return std::max<int64_t>(1, 16 / sizeInBytes(dt)); }

bool hasTensor(const Kernel &k, const char *name) {
  return std::any_of(k.tensors.begin(), k.tensors.end(),
                     [&](const TensorDecl &t) { return t.name == name; });
}

/// rope_* (in place), qk_* or rope_hf: T tokens of hq + hk heads. Contiguous:
/// q, k (and q_out, k_out) in buffers of their own; otherwise q and k are views
/// of vLLM's fused qkv row (v stays poison: never read), q_out and k_out of
/// one output row with 16 bytes of padding. Strided in-place heads are also
/// padded, q's by 16 bytes and k's by 32 (each part its own head stride).
/// `pairs` sets rotary_pairs for the kernels that take it (rope_*_rotary).
Case ropeCase(const Kernel &k, bool hf, int64_t T, int64_t hq, int64_t hk,
              Lay lay, const std::vector<int64_t> &pos, Rng &rng,
              int64_t pairs = 0) {
  Case c;
  DType dt = k.tensors[tensorIndex(k, "q")].dtype;
  int64_t D = k.tensors[tensorIndex(k, "q")].map.subLength.constant;
  int64_t off = lay == Lay::Misaligned;
  // The q-only forms (rope_*_q) rotate q of the same fused row; its k part
  // stays poison and must stay so.
  bool key = hasTensor(k, "k");
  // Elements between heads of the in-place q and k (and v).
  bool padded = !hf && lay == Lay::Strided;
  int64_t Pq = padded ? D + pad16(dt) : D, Pk = padded ? D + 2 * pad16(dt) : D;
  c.dims = {{"q_heads", hq}};
  if (key)
    c.dims["k_heads"] = hk;
  if (!hf) {
    c.dims["q_head_stride"] = Pq;
    if (key)
      c.dims["k_head_stride"] = Pk;
  }
  c.rows = T * (hq + (key ? hk : 0));
  for (const char *suffix : {"", "_out"}) {
    std::string q = std::string("q") + suffix, k2 = std::string("k") + suffix;
    if (*suffix && !hf)
      break;
    if (lay == Lay::Contiguous) {
      place(k, c, q, -1, 0, T, hq * D, hq * D, false, rng);
      if (key)
        place(k, c, k2, -1, 0, T, hk * D, hk * D, false, rng);
      continue;
    }
    int64_t w = *suffix ? (hq + hk) * D + pad16(dt) : hq * Pq + 2 * hk * Pk;
    int b = addBuf(c, *suffix ? "qk_out" : "qkv", dt, off + T * w);
    place(k, c, q, b, off, T, hq * Pq, w, true, rng);
    if (key)
      place(k, c, k2, b, off + hq * Pq, T, hk * Pk, w, true, rng);
  }
  if (hf) {
    for (const char *n : {"cos", "sin"})
      place(k, c, n, -1, off, T, D, D, false, rng, -1, 1);
    return c;
  }
  // qk_rmsnorm and qk_norm_rope_*: a weight per part, near 1 as trained
  // norms' are.
  if (hasTensor(k, "q_weight"))
    for (const char *w : {"q_weight", "k_weight"})
      place(k, c, w, -1, off, 1, D, D, false, rng, 0.5, 1.5);
  if (!hasTensor(k, "positions"))
    return c;
  c.dims["max_pos"] = MaxPos;
  if (pairs)
    c.dims["rotary_pairs"] = pairs;
  place(k, c, "positions", -1, off, T, 1, 1, false, rng);
  Buf &p = c.bufs.back();
  for (int64_t t = 0; t < T; ++t)
    encode(p.dtype, double(pos[t]), p.init.data() + (off + t) * p.elem);
  const TensorDecl &cache = k.tensors[tensorIndex(k, "cos_sin_cache")];
  int64_t r = pairs ? 2 * pairs : cache.rowLength.constant;
  place(k, c, "cos_sin_cache", -1, off, MaxPos, r,
        r + (lay == Lay::Strided ? pad16(cache.dtype) : 0), lay == Lay::Strided,
        rng, -1, 1);
  return c;
}

/// adaln*: B batch items of N tokens of C channels.
Case adalnCase(const Kernel &k, int64_t B, int64_t N, int64_t C, Lay lay,
               Rng &rng) {
  Case c;
  int64_t a = pad16(k.tensors[tensorIndex(k, "x")].dtype);
  int64_t off = lay == Lay::Misaligned;
  bool pass = lay == Lay::Strided;
  int64_t s = pass ? (C + a - 1) / a * a + a : C;
  c.dims = {{"hidden", C}, {"tokens_per_batch", N}};
  c.rows = B * N;
  // layernorm's rows off centre: the variance must not cancel (see
  // KernelTest.cpp). On 16, not 32: the modulation doubles the error, and at
  // 32 the unchanged two-level kernels reached 1.2 times the f32 tolerance.
  double centre = k.name == "adaln" ? 16 : 0;
  place(k, c, "x", -1, off, B * N, C, s, pass, rng, centre - 3, centre + 3);
  place(k, c, "scale", -1, off, B, C, s, pass, rng, -1, 1);
  place(k, c, "shift", -1, off, B, C, s, pass, rng, -1, 1);
  place(k, c, "y", -1, off, B * N, C, s, pass, rng);
  return c;
}

/// per_token_group_quant_*: T tokens of G groups of the kernel's length,
/// each token's groups in one row of x and of y (padded: rows 16 bytes
/// longer), a scale per group: [T, G] row-major, or with the padded rows
/// column-major (vLLM's TMA-aligned layout: each group's T scales in a run
/// of T rounded up to 4, token stride 1). silu_and_mul_quant*_group: the
/// same, its "gate" and "up" the two halves of one x row [T, 2 * G * g].
Case groupQuantCase(const Kernel &k, int64_t T, int64_t G, Lay lay, Rng &rng) {
  Case c;
  bool gated = hasTensor(k, "gate");
  int64_t g =
      k.tensors[tensorIndex(k, gated ? "gate" : "x")].map.subLength.constant;
  int64_t off = lay == Lay::Misaligned;
  bool pass = lay == Lay::Strided;
  int64_t pitch = pass ? (T + 3) / 4 * 4 : 1;
  c.dims = {{"groups", G}, {"scale_group_stride", pitch}};
  c.rows = T * G;
  if (gated) {
    DType dt = k.tensors[tensorIndex(k, "gate")].dtype;
    int64_t row = 2 * G * g + (pass ? pad16(dt) : 0);
    int x = addBuf(c, "x", dt, off + T * row);
    place(k, c, "gate", x, off, T, G * g, row, true, rng);
    place(k, c, "up", x, off + G * g, T, G * g, row, true, rng);
  }
  for (const char *n : {"x", "y"}) {
    if (!hasTensor(k, n))
      continue;
    DType dt = k.tensors[tensorIndex(k, n)].dtype;
    place(k, c, n, -1, off, T, G * g, G * g + (pass ? pad16(dt) : 0), pass,
          rng);
  }
  int buf = addBuf(c, "scale", DType::F32, off + G * std::max(pitch, T));
  place(k, c, "scale", buf, off, T, 1, pass ? 1 : G, pass, rng);
  return c;
}

/// *rmsnorm_quant*_group[_transposed]: T rows of G groups of g elements
/// (padded: rows 16 bytes longer), the residual in place, a weight near 1,
/// scales [T, G]: row-major, or for the _transposed forms with the padded
/// rows transposed (vLLM's is_scale_transposed, each group's T scales in a
/// run of T rounded up to 4, row stride 1).
Case groupNormCase(const Kernel &k, int64_t g, int64_t T, int64_t G, Lay lay,
                   Rng &rng) {
  Case c;
  int64_t off = lay == Lay::Misaligned;
  bool pass = lay == Lay::Strided;
  bool transposed = std::find(k.dims.begin(), k.dims.end(),
                              "scale_group_stride") != k.dims.end();
  int64_t pitch = transposed && pass ? (T + 3) / 4 * 4 : 1;
  c.dims = {{"groups", G}};
  if (transposed)
    c.dims["scale_group_stride"] = pitch;
  c.rows = T;
  for (const char *n : {"x", "residual", "y"}) {
    if (!hasTensor(k, n))
      continue;
    DType dt = k.tensors[tensorIndex(k, n)].dtype;
    place(k, c, n, -1, off, T, G * g, G * g + (pass ? pad16(dt) : 0), pass,
          rng);
  }
  place(k, c, "weight", -1, off, 1, G * g, G * g, false, rng, 0.5, 1.5);
  int buf = addBuf(c, "scale", DType::F32, off + G * std::max(pitch, T));
  place(k, c, "scale", buf, off, T, G, pitch > 1 ? 1 : G, pitch > 1, rng);
  return c;
}

/// Whether node `id` reads a gathered row (memo: -1 unknown, else 0 or 1).
bool readsGather(const Kernel &k, int id, std::vector<int> &memo) {
  if (memo[id] < 0) {
    const Node &n = k.nodes[id];
    memo[id] =
        n.kind == NodeKind::Load
            ? k.tensors[n.index].map.gather >= 0
            : std::any_of(n.operands.begin(), n.operands.end(),
                          [&](int o) { return readsGather(k, o, memo); });
  }
  return memo[id];
}

/// Marks the elements the kernel's stores write (Buf::written).
void markWritten(const Kernel &k, Case &c, const std::vector<int64_t> &dims) {
  std::vector<int> memo(k.nodes.size(), -1);
  auto gathered = [&](const Store &s) { return readsGather(k, s.value, memo); };
  for (Buf &b : c.bufs)
    b.written.assign(b.elems(), 0);
  for (size_t t = 0; t < k.tensors.size(); ++t) {
    const TensorDecl &td = k.tensors[t];
    if (!td.isWritten)
      continue;
    const View &v = c.views[t];
    int64_t sub = td.map.subLength.eval(dims);
    int64_t count = sub ? td.map.subCount.eval(dims) : 1;
    std::vector<char> cols = storedColumns(k, t, dims, v.len);
    std::vector<char> nanCols = storedColumns(k, t, dims, v.len, gathered);
    int64_t len = int64_t(cols.size());
    int64_t pitch =
        td.map.subPitch != Len(0) ? td.map.subPitch.eval(dims) : len;
    int64_t step = td.pitch != Len(0) ? td.pitch.eval(dims) : 1;
    for (int64_t r = 0; r < v.rows; ++r)
      for (int64_t j = 0; j < count; ++j)
        for (int64_t i = 0; i < len; ++i)
          if (cols[i])
            c.bufs[v.buf]
                .written[v.offset + r * v.stride + j * pitch + i * step] =
                nanCols[i] ? 2 : 1;
  }
}

/// interpret() on Buf::ref (or, given a seed, randomly rounded on
/// Buf::perturbed[slot]), a copy of init, in parallel over chunks of row
/// programs. A chunk is whole groups (a group shares its grouped rows, its
/// position, its token's heads) or, where every grouped tensor has the one
/// group and none has sub-rows (adaln), a part of one group (B = 1 is one
/// group).
std::string reference(const Kernel &k, Case &c,
                      const std::vector<int64_t> &dims,
                      const std::vector<double> &params,
                      std::optional<uint64_t> seed = std::nullopt,
                      int slot = 0) {
  // Where each buffer's result goes, set up before the parallel part.
  std::vector<uint8_t *> target;
  for (Buf &b : c.bufs) {
    std::vector<uint8_t> *out = &b.ref;
    if (seed) {
      b.perturbed.resize(std::max<size_t>(b.perturbed.size(), slot + 1));
      out = &b.perturbed[slot];
    }
    *out = b.init;
    target.push_back(out->data());
  }
  auto group = [&](const TensorDecl &td) -> int64_t { // 0: not split
    bool split = td.layout != Layout::Vector && td.map.gather < 0;
    return split ? td.map.group.eval(dims) : 0;
  };
  int64_t g = 1;
  for (const TensorDecl &td : k.tensors)
    g = std::lcm(g, std::max<int64_t>(1, group(td)));
  bool inGroup = true;
  for (const TensorDecl &td : k.tensors)
    inGroup &=
        td.map.subLength.eval(dims) == 0 && (group(td) <= 1 || group(td) == g);
  if (c.rows % g)
    return "rows are not whole groups of " + std::to_string(g);
  int64_t groups = c.rows / g, per = (groups + 63) / 64;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t q = 0; q < groups; q += per) {
    int64_t f = q * g, l = std::min(groups, q + per) * g;
    int64_t parts = inGroup && per == 1 ? std::max<int64_t>(1, 64 / groups) : 1;
    for (int64_t j = 0; j < parts; ++j)
      ranges.push_back(
          {f + (l - f) * j / parts, f + (l - f) * (j + 1) / parts});
  }
  std::mutex m;
  std::string err;
  parallelFor(ranges.size(), [&](size_t i) {
    auto [first, last] = ranges[i];
    Bindings b{dims, last - first, {}, params};
    for (size_t t = 0; t < k.tensors.size(); ++t) {
      const View &v = c.views[t];
      Buf &buf = c.bufs[v.buf];
      int64_t at = v.offset;
      if (int64_t gt = group(k.tensors[t]))
        at += first / gt * v.stride;
      b.tensors.push_back({target[v.buf] + at * buf.elem, v.stride});
    }
    try {
      InterpretOptions o;
      if (seed)
        o.perturbSeed = *seed + i;
      interpret(k, b, o);
    } catch (const std::exception &e) {
      std::lock_guard<std::mutex> lock(m);
      err = e.what();
    }
  });
  return err;
}

/// The tensor, row and column of element i of buffer `buf`; tensor -1 for
/// padding and guards.
std::tuple<int, int64_t, int64_t> locate(const Case &c, int buf, int64_t i) {
  for (size_t t = 0; t < c.views.size(); ++t) {
    const View &v = c.views[t];
    int64_t rel = i - v.offset;
    if (v.buf == buf && rel >= 0 && rel / v.stride < v.rows &&
        rel % v.stride < v.len)
      return {int(t), rel / v.stride, rel % v.stride};
  }
  return {-1, 0, 0};
}

/// "q row 3 col 17", or the buffer element of padding and guards.
std::string where(const Kernel &k, const Case &c, int buf, int64_t i) {
  auto [t, row, col] = locate(c, buf, i);
  if (t < 0)
    return c.bufs[buf].name + " element " + std::to_string(i) +
           " (padding or guard)";
  return k.tensors[t].name + " row " + std::to_string(row) + " col " +
         std::to_string(col);
}

/// The elements i in [0, n) for which f(i, worst) holds, counted in
/// parallel; the first in `first` (-1 if none); f may raise `worst`.
int64_t countIf(int64_t n, const std::function<bool(int64_t, double &)> &f,
                int64_t &first, double &worst) {
  int64_t chunks = std::min<int64_t>(n, 64);
  std::vector<int64_t> count(chunks), firsts(chunks, -1);
  std::vector<double> worsts(chunks);
  parallelFor(chunks, [&](size_t p) {
    for (int64_t i = n * p / chunks; i < n * int64_t(p + 1) / chunks; ++i)
      if (f(i, worsts[p]) && !count[p]++)
        firsts[p] = i;
  });
  int64_t total = 0;
  first = -1;
  for (int64_t p = 0; p < chunks; ++p) {
    total += count[p];
    first = first < 0 ? firsts[p] : first;
    worst = std::max(worst, worsts[p]);
  }
  return total;
}

/// Whether the case's views meet variant `v`'s tensor_align (the policy's
/// decision, read from the spec): each base, and each rows tensor's row
/// stride, a multiple of its bytes.
bool aligned(const RtKernel &k, size_t v, const Case &c) {
  for (const auto &[name, bytes] : k.tensorAlign[v]) {
    int t = tensorIndex(k.dsl, name);
    const View &view = c.views[t];
    int64_t e = c.bufs[view.buf].elem;
    if ((view.offset * e) % bytes ||
        (k.dsl.tensors[t].layout == Layout::Rows && (view.stride * e) % bytes))
      return false;
  }
  return true;
}

/// The first variant whose conditions hold, as the runtime picks: "_vec",
/// "_vec_nN" (rows of exactly N elements), "_vec_rows" (at least its
/// min_rows rows), "_vec_cluster" (at most its max_rows) and "_vec_warp"
/// (rows in its domain_range) need their tensor_align and dim_multiple;
/// the last variant (the fallback) takes anything.
size_t expectedVariant(const RtKernel &k, const Case &c, int64_t domain) {
  for (size_t v = 0; v + 1 < k.variants.size(); ++v) {
    const std::string &name = k.variants[v];
    size_t at = name.rfind("_vec");
    bool fits = at != std::string::npos && aligned(k, v, c);
    for (const auto &[dim, m] : k.dimMultiple[v])
      fits &= c.dims.count(dim) && c.dims.at(dim) % m == 0;
    if (fits && name.compare(at, 6, "_vec_n") == 0)
      fits = std::stoll(name.substr(at + 6)) == domain;
    if (fits && k.minRows[v] > 0) // "_vec_rows"
      fits = c.rows >= k.minRows[v];
    if (fits && k.maxRows[v] > 0) // "_vec_cluster"
      fits = c.rows <= k.maxRows[v];
    if (fits && k.domainRange[v].second > 0) // "_vec_warp"
      fits =
          domain >= k.domainRange[v].first && domain <= k.domainRange[v].second;
    if (fits && k.held[v].chunks > 0) { // the best of the held variants
      if (std::optional<size_t> held = expectedHeld(k, domain, c.rows))
        return *held;
      fits = false;
    }
    if (fits)
      return v;
  }
  return k.variants.size() - 1;
}

/// One rope kernel or one adaln length (its specialized and dynamic
/// kernels), or a placeholder that skips.
struct TestSpec {
  std::string name, skip;
  bool noGpu = false; ///< the skip is for want of KGEN_KERNEL_DIR (exit 77)
  std::optional<ManifestEntry> spec, dyn;
  int64_t length = 0;
};

void PrintTo(const TestSpec &s, std::ostream *os) { *os << s.name; }

class ViewOpTest : public ::testing::TestWithParam<TestSpec> {
protected:
  void run();
  void testRope(bool hf);
  void testAdaLN();
  void testGroupQuant();
  void testGroupNorm();
  /// Runs make(T, G, layout) for each T of `tokens`, G of 1, 3 and 56
  /// groups and each layout, until a case fails.
  void
  runGroupCases(std::initializer_list<int64_t> tokens,
                const std::function<Case(int64_t, int64_t, Lay, Rng &)> &make);
  /// Interprets, then launches every kernel on `c` and compares; false after
  /// a failure that makes going on pointless.
  bool runCase(Case &c);
  bool launch(const RtKernel &k, Case &c, int64_t domain);
  void compare(const std::string &what, Case &c, int buf,
               const std::vector<uint8_t> &got);

  const rt::Driver *d = nullptr;
  std::vector<const RtKernel *> kernels;
  Kernel dsl;
  const OpDef *op = nullptr;
  int cases = 0, launches = 0;
  int withinSlack = 0; // values outside the tolerance, within slack
  double worst = 0;
  std::map<std::string, int> variantUse;
};

bool ViewOpTest::runCase(Case &c) {
  ++cases;
  c.what += " (seed " + std::to_string(seed()) + ")";
  SCOPED_TRACE(c.what);
  for (size_t t = 0; t < dsl.tensors.size(); ++t)
    if (t >= c.views.size() || c.views[t].buf < 0)
      throw std::runtime_error("the test does not place tensor '" +
                               dsl.tensors[t].name + "'");
  std::vector<int64_t> dims;
  for (const std::string &d : dsl.dims)
    if (c.dims.count(d))
      dims.push_back(c.dims.at(d));
    else
      throw std::runtime_error("the test does not set dim '" + d + "'");
  markWritten(dsl, c, dims);
  std::vector<double> params;
  for (const ParamDecl &p : dsl.params)
    params.push_back(op->scalars.count(p.name) ? op->scalars.at(p.name) : 0.0);
  c.dimValues = dims;
  c.params = params;
  std::string err = reference(dsl, c, dims, params);
  if (!err.empty()) {
    ADD_FAILURE() << "interpret: " << err;
    return false;
  }
  // The mask is the test's reading of the stores: the interpreter must
  // write exactly there, and give NaN exactly where the case expects it.
  for (size_t b = 0; b < c.bufs.size(); ++b) {
    const Buf &buf = c.bufs[b];
    int64_t first;
    double unused = 0;
    auto wrong = [&](int64_t i, double &) {
      const uint8_t *r = buf.ref.data() + i * buf.elem;
      if (!buf.written[i])
        return std::memcmp(r, buf.init.data() + i * buf.elem, buf.elem) != 0;
      int64_t row = std::get<1>(locate(c, int(b), i));
      bool nan = row < int64_t(c.nanRows.size()) && c.nanRows[row] &&
                 buf.written[i] == 2;
      return std::isnan(decode(buf.dtype, r)) != nan;
    };
    if (countIf(buf.elems(), wrong, first, unused)) {
      ADD_FAILURE() << "interpret() disagrees with the test at "
                    << where(dsl, c, int(b), first)
                    << ": it wrote where no store writes, or its NaN are not "
                       "where the case expects them";
      return false;
    }
  }
  for (Buf &b : c.bufs)
    if (!b.dev.allocate(d, b.init.size(), err)) {
      ADD_FAILURE() << err;
      return false;
    }
  for (const RtKernel *k : kernels)
    if (!launch(*k, c, dsl.domain.eval(dims)))
      return false;
  return !HasFatalFailure();
}

bool ViewOpTest::launch(const RtKernel &k, Case &c, int64_t domain) {
  std::string what = k.entry.name + ": ";
  std::vector<kgen_arg> args;
  // By the spec's param names: its order is not assumed.
  for (const kgen_param_info &pi : k.params) {
    kgen_arg a{pi.kind, pi.dtype};
    if (pi.kind == KGEN_ARG_TENSOR) {
      int t = tensorIndex(dsl, pi.name);
      EXPECT_EQ(pi.dtype, toKgen(dsl.tensors[t].dtype))
          << what << "the spec's dtype of " << pi.name << " is not the DSL's";
      const View &v = c.views[t];
      const Buf &b = c.bufs[v.buf];
      a.ptr = reinterpret_cast<const void *>(b.dev.ptr() + v.offset * b.elem);
      a.row_stride = v.passStride ? v.stride : 0;
    } else if (pi.kind == KGEN_ARG_SCALAR) {
      double s = op->scalars.count(pi.name) ? op->scalars.at(pi.name) : 0.0;
      a.f = s;
      a.i = int64_t(s);
    } else if (c.dims.count(pi.name)) {
      a.i = c.dims.at(pi.name);
    } else {
      ADD_FAILURE() << what << "the spec has a dim '" << pi.name
                    << "' the test does not set";
      return false;
    }
    args.push_back(a);
  }
  size_t variant = 0;
  if (kgen_select_variant(k.k, args.data(), args.size(), c.rows, &variant) !=
      KGEN_OK) {
    ADD_FAILURE() << what << "kgen_select_variant: " << kgen_last_error();
    return false;
  }
  EXPECT_EQ(k.variants[variant], k.variants[expectedVariant(k, c, domain)])
      << what << "the runtime picked another variant";
  const std::string &entry = k.variants[variant];
  what += entry + ": ";
  ++variantUse[entry.substr(entry.rfind('_') + 1)];

  auto cuOk = [&](CUresult r, const char *call) {
    if (r != CUDA_SUCCESS) {
      contextBroken = what + c.what + ": " + d->errorText(r, call);
      ADD_FAILURE() << contextBroken;
    }
    return r == CUDA_SUCCESS;
  };
  // The previous kernel wrote in place: start from the same contents.
  for (Buf &b : c.bufs)
    if (!cuOk(d->memcpyHtoD(b.dev.ptr(), b.init.data(), b.init.size()),
              "cuMemcpyHtoD"))
      return false;
  kgen_status st = launchKernel(k, args.data(), args.size(), c.rows, nullptr);
  if (st != KGEN_OK) {
    if (st == KGEN_ERROR_CUDA)
      contextBroken = what + c.what + ": " + kgen_last_error();
    ADD_FAILURE() << what << "kgen_launch: " << kgen_last_error();
    return false;
  }
  if (!cuOk(d->ctxSynchronize(), "cuCtxSynchronize"))
    return false;
  ++launches;
  for (size_t b = 0; b < c.bufs.size(); ++b) {
    std::vector<uint8_t> got(c.bufs[b].init.size());
    if (!cuOk(d->memcpyDtoH(got.data(), c.bufs[b].dev.ptr(), got.size()),
              "cuMemcpyDtoH"))
      return false;
    compare(what, c, int(b), got);
  }
  return true;
}

void ViewOpTest::compare(const std::string &what, Case &c, int buf,
                         const std::vector<uint8_t> &got) {
  Buf &b = c.bufs[buf];
  // An integer from approximate floats may be a step off (outputTolerance).
  Tolerance tol = isFloat(b.dtype) || !hasTensor(dsl, b.name.c_str())
                      ? defaultTolerance(b.dtype)
                      : outputTolerance(dsl, tensorIndex(dsl, b.name));
  auto at = [&](const std::vector<uint8_t> &v, int64_t i) {
    return v.data() + i * b.elem;
  };
  int64_t firstBad, firstChanged;
  int64_t changed = countIf(
      b.elems(),
      [&](int64_t i, double &) {
        return !b.written[i] &&
               std::memcmp(at(got, i), at(b.init, i), b.elem) != 0;
      },
      firstChanged, worst);
  int64_t bad = countIf(
      b.elems(),
      [&](int64_t i, double &w) {
        if (!b.written[i])
          return false;
        double gv = decode(b.dtype, at(got, i)),
               rv = decode(b.dtype, at(b.ref, i));
        if (!withinTolerance(b.dtype, gv, rv, tol))
          return true;
        if (std::isfinite(rv))
          w = std::max(w, std::abs(gv - rv) /
                              (tol.atol + tol.rtol * std::abs(rv)));
        return false;
      },
      firstBad, worst);
  if (bad && isFloat(b.dtype)) {
    // Ill-conditioned? Recheck with the rounding slack.
    bool fresh = b.perturbed.empty(); // other buffers' misses made them
    for (int i = 0; fresh && i < kPerturbedRuns; ++i) {
      // Seeds apart by more than the chunks of one run.
      std::string err = reference(dsl, c, c.dimValues, c.params,
                                  seed() * 1000003 + uint64_t(i) * 4096, i);
      if (!err.empty()) {
        ADD_FAILURE() << "interpret: " << err;
        return;
      }
    }
    int64_t before = bad;
    double unused = 0;
    bad = countIf(
        b.elems(),
        [&](int64_t i, double &) {
          if (!b.written[i])
            return false;
          double gv = decode(b.dtype, at(got, i)),
                 rv = decode(b.dtype, at(b.ref, i));
          std::vector<double> moved;
          for (const std::vector<uint8_t> &run : b.perturbed)
            moved.push_back(decode(b.dtype, at(run, i)));
          Tolerance t = tol;
          t.atol += roundingSlack(b.dtype, rv, moved);
          return !withinTolerance(b.dtype, gv, rv, t);
        },
        firstBad, unused);
    withinSlack += int(before - bad);
  }
  std::ostringstream ss;
  ss.precision(9);
  if (bad)
    ss << where(dsl, c, buf, firstBad) << ": got "
       << decode(b.dtype, at(got, firstBad)) << " expected "
       << decode(b.dtype, at(b.ref, firstBad));
  EXPECT_EQ(bad, 0) << what << b.name << ": " << bad
                    << " written elements differ from interpret() (atol "
                    << tol.atol << " rtol " << tol.rtol << "), first at "
                    << ss.str();
  EXPECT_EQ(changed, 0) << what << b.name << ": " << changed
                        << " elements that no store writes changed, first at "
                        << (changed ? where(dsl, c, buf, firstChanged) : "");
}

void ViewOpTest::testRope(bool hf) {
  const RtKernel &k = *kernels[0];
  ASSERT_EQ(dsl.tensors[tensorIndex(dsl, "q")].map.subLength.constant,
            k.entry.length)
      << "head_dim of the DSL kernel vs the manifest";
  DType posType = DType::I64;
  bool gathers = hasTensor(dsl, "positions"); // not hf, not qk_rmsnorm
  if (gathers) {
    // The positions' dtype as the spec declares it (i64 or i32).
    size_t i = 0;
    ASSERT_EQ(kgen_kernel_find_param(k.k, "positions", &i), KGEN_OK)
        << kgen_last_error();
    posType = k.params[i].dtype == KGEN_I32 ? DType::I32 : DType::I64;
    ASSERT_EQ(posType, dsl.tensors[tensorIndex(dsl, "positions")].dtype)
        << "the spec's positions dtype is not the DSL's";
  }
  Rng rng{seed() ^ std::hash<std::string>()(k.entry.name)};
  const char *layName[] = {"q, k contiguous", "fused qkv, bases +1 element",
                           hf ? "fused qkv" : "fused qkv, padded cache rows"};
  auto name = [&](int64_t T, int64_t hq, int64_t hk, Lay lay) {
    return "T " + std::to_string(T) + " heads " + std::to_string(hq) + "+" +
           std::to_string(hk) + " " + layName[int(lay)];
  };
  // rope_*_rotary: every rotary_dim from 2 to head_dim, full and partial,
  // multiples of the vector width, of 4 or 2 elements (`_vec_m4`, `_vec_m2`:
  // rotary_dim 24 and 20, GPT-NeoX's and StableLM's) and odd pairs.
  int64_t D = k.entry.length;
  bool rotary = std::count(dsl.dims.begin(), dsl.dims.end(), "rotary_pairs");
  std::vector<int64_t> pairsList = {rotary ? D / 2 : 0};
  if (rotary)
    for (int64_t p : {D / 4, 3 * D / 8, int64_t(16), int64_t(12), int64_t(10),
                      int64_t(1), int64_t(5)})
      if (p <= D / 2 && p != D / 2)
        pairsList.push_back(p);
  const std::pair<int64_t, int64_t> heads[] = {{32, 8}, {4, 4}, {1, 1}};
  for (int64_t pairs : pairsList)
    for (int64_t T : {1, 7, 130})
      for (auto [hq, hk] : heads)
        for (Lay lay : {Lay::Contiguous, Lay::Misaligned, Lay::Strided}) {
          if (pairs != pairsList[0] && (T == 1 || hq == 4))
            continue; // the other rotary dims on fewer shapes
          std::vector<int64_t> pos(T);
          for (int64_t &p : pos)
            p = int64_t(rng.next() % MaxPos);
          if (T > 2) { // the first and the last row of the cache
            pos[1] = 0;
            pos[2] = MaxPos - 1;
          }
          Case c = ropeCase(dsl, hf, T, hq, hk, lay, pos, rng, pairs);
          c.what = name(T, hq, hk, lay) +
                   (pairs ? ", rotary_dim " + std::to_string(2 * pairs) : "");
          if (!runCase(c))
            return;
        }
  if (!gathers)
    return;

  // Positions outside [0, max_pos): the rotated elements of every head of
  // those tokens are NaN (the cache row reads as NaN); the rest keep their
  // contents, or for qk_norm_rope's partial forms are normalized.
  // Far values whose low 32 bits are in range catch an index cut to 32 bits.
  std::vector<int64_t> outside =
      posType == DType::I32
          ? std::vector<int64_t>{-1, MaxPos, INT32_MIN, INT32_MAX}
          : std::vector<int64_t>{-1, MaxPos, (1ll << 32) + 5, -(1ll << 32) + 7,
                                 -(1ll << 62)};
  for (auto [T, hq, hk] :
       {std::tuple<int64_t, int64_t, int64_t>{7, 4, 4}, {130, 32, 8}})
    for (Lay lay : {Lay::Misaligned, Lay::Strided}) {
      std::vector<int64_t> pos(T);
      for (int64_t t = 0; t < T; ++t)
        pos[t] = t % 3 == 1 ? outside[(t / 3) % outside.size()]
                            : int64_t(rng.next() % MaxPos);
      Case c = ropeCase(dsl, false, T, hq, hk, lay, pos, rng, pairsList.back());
      c.what = name(T, hq, hk, lay) + ", every third position outside";
      for (int64_t t = 0; t < T; ++t)
        c.nanRows.push_back(t % 3 == 1);
      if (!runCase(c))
        return;
    }
}

void ViewOpTest::testAdaLN() {
  int64_t C = GetParam().length;
  Rng rng{seed() ^ std::hash<std::string>()(GetParam().name)};
  const char *layName[] = {"contiguous", "bases +1 element", "padded rows"};
  for (int64_t B : {1, 3})
    for (int64_t N : {1, 5, 64})
      for (Lay lay : {Lay::Contiguous, Lay::Misaligned, Lay::Strided}) {
        Case c = adalnCase(dsl, B, N, C, lay, rng);
        c.what = "B " + std::to_string(B) + " N " + std::to_string(N) +
                 " hidden " + std::to_string(C) + " " + layName[int(lay)];
        if (!runCase(c))
          return;
      }
  // Enough rows for the variant for many rows (kgen.min_rows = 8192), with
  // N not a power of two.
  Case c = adalnCase(dsl, 2, 4100, C, Lay::Contiguous, rng);
  c.what = "B 2 N 4100 hidden " + std::to_string(C) + " contiguous";
  runCase(c);
}

void ViewOpTest::runGroupCases(
    std::initializer_list<int64_t> tokens,
    const std::function<Case(int64_t, int64_t, Lay, Rng &)> &make) {
  Rng rng{seed() ^ std::hash<std::string>()(GetParam().name)};
  const char *layName[] = {"contiguous", "bases +1 element", "padded rows"};
  for (int64_t T : tokens)
    for (int64_t G : {1, 3, 56})
      for (Lay lay : {Lay::Contiguous, Lay::Misaligned, Lay::Strided}) {
        Case c = make(T, G, lay, rng);
        c.what = "T " + std::to_string(T) + " groups " + std::to_string(G) +
                 " " + layName[int(lay)];
        if (!runCase(c))
          return;
      }
}

void ViewOpTest::testGroupQuant() {
  // The last T takes 56 groups past the variant for many rows (its min_rows).
  int64_t manyRows = 0;
  for (const RtKernel *k : kernels)
    for (int64_t m : k->minRows)
      manyRows = std::max(manyRows, m);
  runGroupCases({1, 7, 130, manyRows / 56 + 1},
                [&](int64_t T, int64_t G, Lay lay, Rng &rng) {
                  return groupQuantCase(dsl, T, G, lay, rng);
                });
}

void ViewOpTest::testGroupNorm() {
  const int64_t g = GetParam().length;
  runGroupCases({1, 7, 130, 600}, [&](int64_t T, int64_t G, Lay lay, Rng &rng) {
    return groupNormCase(dsl, g, T, G, lay, rng);
  });
}

void ViewOpTest::run() {
  const TestSpec &s = GetParam();
  if (!s.skip.empty()) {
    noGpuSkipFlag() |= s.noGpu;
    GTEST_SKIP() << s.skip;
  }
  if (!contextBroken.empty())
    GTEST_FAIL() << "not run: the CUDA context is unusable after "
                 << contextBroken;
  std::string why;
  d = openGpu(why);
  if (!d) {
    noGpuSkipFlag() = true;
    GTEST_SKIP() << "no GPU: " << why;
  }
  RtKernel loaded[2];
  for (int i = 0; i < 2; ++i) {
    const std::optional<ManifestEntry> &e = i ? s.dyn : s.spec;
    std::string err;
    if (e) {
      ASSERT_TRUE(
          loadKernel(std::getenv("KGEN_KERNEL_DIR"), *e, loaded[i], err))
          << err;
      kernels.push_back(&loaded[i]);
    }
  }
  dsl = kernels[0]->dsl;
  op = kernels[0]->op;
  auto t0 = std::chrono::steady_clock::now();
  try {
    if (op->name == "rope_hf")
      testRope(true);
    else if (op->name.rfind("rope_", 0) == 0 || op->name.rfind("qk_", 0) == 0)
      testRope(false);
    else if (op->name.rfind("adaln", 0) == 0)
      testAdaLN();
    else if (op->name.rfind("per_token_group_quant", 0) == 0 ||
             op->name.rfind("silu_and_mul_quant", 0) == 0)
      testGroupQuant();
    else if (op->name.find("rmsnorm_quant") != std::string::npos &&
             (op->name.find("_group_transposed") != std::string::npos ||
              (op->name.size() > 6 &&
               op->name.compare(op->name.size() - 6, 6, "_group") == 0)))
      testGroupNorm();
    else
      GTEST_FAIL() << op->name << " has row maps but ViewOpsTest.cpp has no "
                   << "shapes for it: add them";
  } catch (const std::exception &e) {
    GTEST_FAIL() << "test harness: " << e.what();
  }
  std::ostringstream vu;
  for (const auto &[variant, n] : variantUse)
    vu << (vu.tellp() ? ", " : "") << variant << " x" << n;
  std::chrono::duration<double> secs = std::chrono::steady_clock::now() - t0;
  std::cout << "[kgen-gpu] " << op->name << "_" << kgen::name(kernels[0]->dtype)
            << " " << op->mainDim << "=" << s.length << ": " << cases
            << " cases, " << launches << " launches (" << vu.str()
            << "), worst |err|/tol " << worst
            << (withinSlack
                    ? ", within rounding slack " + std::to_string(withinSlack)
                    : "")
            << ", " << secs.count() << " s\n";
}

/// The ops KernelTest.cpp leaves out (the test of its registerTests()).
bool isViewOp(const OpDef *op) {
  return op &&
         (!op->lengths.empty() || op->build(DType::F32, 0).dims.size() != 1);
}

/// Evaluated by InitGoogleTest in main(), so the manifest is read once.
std::vector<TestSpec> viewOpTests() {
  auto skip = [](std::string why, bool noGpu) {
    return std::vector<TestSpec>{{"Skipped", std::move(why), noGpu}};
  };
  const char *dir = std::getenv("KGEN_KERNEL_DIR");
  if (!dir || !*dir)
    return skip("KGEN_KERNEL_DIR is not set: point it at a folder from `kgen "
                "bundle` to test its kernels",
                true);
  // KernelTest.cpp draws its own seed: this one reproduces these tests.
  std::cout << "[kgen-gpu] view ops: seed " << seed()
            << " (KGEN_GPU_TEST_SEED)\n";
  std::vector<ManifestEntry> manifest;
  std::string err;
  if (!readManifest(dir, manifest, err)) // KgenGpuManifest.Load fails
    return skip(err, false);
  std::vector<TestSpec> out;
  // adaln: per (op, dtype, arch) the dynamic kernel, by specialized length.
  std::map<std::string, std::pair<std::optional<ManifestEntry>,
                                  std::map<int64_t, ManifestEntry>>>
      groups;
  for (const ManifestEntry &e : manifest) {
    const OpDef *op = findOp(e.op);
    if (!isViewOp(op))
      continue;
    if (!op->lengths.empty()) // rope, group quant: a kernel per length
      out.push_back({e.name, "", false, e, std::nullopt, e.length});
    else if (e.length)
      groups[e.op + "_" + e.dtype + "_" + e.arch].second[e.length] = e;
    else
      groups[e.op + "_" + e.dtype + "_" + e.arch].first = e;
  }
  for (auto &[key, group] : groups) {
    auto &[dyn, spec] = group;
    std::set<int64_t> lengths;
    for (const auto &[l, e] : spec)
      lengths.insert(l);
    if (dyn)
      lengths.insert(std::begin(ExtraAdaLNLengths),
                     std::end(ExtraAdaLNLengths));
    if (const char *only = std::getenv("KGEN_GPU_TEST_LENGTHS")) {
      std::vector<int64_t> l = parseIntList(only); // as KernelTest.cpp
      lengths = std::set<int64_t>(l.begin(), l.end());
    }
    const ManifestEntry &any = dyn ? *dyn : spec.begin()->second;
    for (int64_t l : lengths) {
      if (!dyn && !spec.count(l))
        continue;
      std::optional<ManifestEntry> sp;
      if (spec.count(l))
        sp = spec.at(l);
      out.push_back({any.op + "_" + any.dtype + "_" + findOp(any.op)->mainDim +
                         std::to_string(l) + "_" + any.arch,
                     "", false, sp, dyn, l});
    }
  }
  if (out.empty())
    return skip("the bundle has no rope, adaln or group quant kernels", false);
  return out;
}

TEST_P(ViewOpTest, Kernel) { run(); }

INSTANTIATE_TEST_SUITE_P(KgenGpuViewOps, ViewOpTest,
                         ::testing::ValuesIn(viewOpTests()),
                         [](const ::testing::TestParamInfo<TestSpec> &i) {
                           return i.param.name;
                         });

} // namespace

//===- Runner.cpp - Runs kgen-fuzz cases on a GPU against the interpreter -===//
#include "Runner.h"

#include "dsl/Float.h"
#include "dsl/Interpreter.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <sstream>

namespace kgen::fuzz {

namespace {

/// Poisoned bytes after every allocation: a kernel that writes past its
/// rows changes them.
constexpr int64_t kGuardBytes = 64;
/// Values repeat a random tile of this many elements (a prime, so rows
/// differ): large cases cost a memcpy, not a random draw per element.
constexpr int64_t kTileElems = 4093;

/// Where one tensor lives in its allocation, in elements.
struct Place {
  int64_t elem = 0, rowLength = 0, offset = 0, stride = 0, elems = 0;
  int64_t rowsHeld = 0; ///< rows of the tensor (1 for a vector)
  bool inPlace = false;
  /// Whether element q of the allocation lies in a row the kernel writes.
  bool inRow(int64_t q) const {
    if (q < offset)
      return false;
    int64_t i = q - offset, r = i / stride;
    return r < rowsHeld && i % stride < rowLength;
  }
};

/// A random input of case `c` in dtype `t`: finite but for Values::Specials.
double drawValue(const FuzzCase &c, DType t, std::mt19937_64 &rng,
                 double centre) {
  std::uniform_real_distribution<double> u(centre - 3.0, centre + 3.0);
  double x = u(rng);
  switch (c.values) {
  case Values::Normal:
  case Values::Constant:
    return x;
  case Values::Scaled: {
    // Within a quarter of the dtype's largest value: finite once rounded.
    double limit = t == DType::F16 ? 16384.0 : 1e37;
    return std::clamp(std::ldexp(x, c.exponent), -limit, limit);
  }
  case Values::Specials: {
    static const double specials[] = {std::nan(""), INFINITY, -INFINITY, 0.0,
                                      -0.0,         1e-40,    -1e-42,    6e-8,
                                      -6e-8,        1e-39};
    if (rng() % 32 == 0)
      return specials[rng() % (sizeof specials / sizeof *specials)];
    return x;
  }
  }
  return x;
}

} // namespace

bool Bundle::open(const std::string &d, std::string &err) {
  dir = d;
  if (!gpu::readManifest(dir, entries, err))
    return false;
  for (const gpu::ManifestEntry &e : entries) {
    const OpDef *op = findOp(e.op);
    std::optional<DType> dt = parseDType(e.dtype);
    if (!op || !dt || skippedMap.count(e.op))
      continue;
    Kernel k;
    try {
      std::map<std::string, int64_t> dims;
      k = op->instantiate(*dt, e.length, dims);
    } catch (const std::exception &ex) {
      skippedMap[e.op] = ex.what();
      continue;
    }
    std::string why;
    if (k.dims.size() != 1)
      why = "more than one dim";
    for (const TensorDecl &td : k.tensors)
      if (!td.map.isIdentity())
        why = "tensor '" + td.name +
              "' has a row map (heads, groups or a "
              "gather): test/gpu/ViewOpsTest.cpp covers it";
    if (!why.empty()) {
      skippedMap[e.op] = why;
      offerMap.erase(e.op);
      continue;
    }
    OpOffer &o = offerMap[e.op];
    o.op = e.op;
    o.centred = e.op.find("layernorm") != std::string::npos ||
                e.op.find("adaln") != std::string::npos;
    if (std::find(o.dtypes.begin(), o.dtypes.end(), *dt) == o.dtypes.end())
      o.dtypes.push_back(*dt);
    if (e.length == 0)
      o.dynamic = true;
    else if (std::find(o.lengths.begin(), o.lengths.end(), e.length) ==
             o.lengths.end())
      o.lengths.push_back(e.length);
    int64_t bytes = 0;
    for (const TensorDecl &td : k.tensors)
      if (td.layout == Layout::Rows) // per element of the main dim
        bytes += sizeInBytes(td.dtype) *
                 std::max<int64_t>(1, td.rowLength.eval({1}));
    rowBytes[e.op] = std::max(rowBytes[e.op], bytes);
  }
  if (offerMap.empty()) {
    err = dir + ": no kernel of an op kgen-fuzz can drive";
    return false;
  }
  return true;
}

int64_t Bundle::bytesPerRowElem(const std::string &op) const {
  auto it = rowBytes.find(op);
  return it == rowBytes.end() ? 1 : it->second;
}

const gpu::RtKernel *Bundle::kernel(const std::string &op, DType dtype,
                                    int64_t length, std::string &err) {
  for (const gpu::ManifestEntry &e : entries) {
    if (e.op != op || e.dtype != name(dtype) || e.length != length)
      continue;
    auto &slot = loaded[e.name];
    if (!slot) {
      auto k = std::make_unique<gpu::RtKernel>();
      if (!gpu::loadKernel(dir, e, *k, err))
        return nullptr;
      slot = std::move(k);
    }
    return slot.get();
  }
  err = "the bundle has no " + op + " " + std::string(name(dtype)) + " " +
        (length ? "kernel of length " + std::to_string(length)
                : "dynamic kernel");
  return nullptr;
}

Outcome Runner::run(const FuzzCase &c) {
  Outcome out;
  std::string err;
  const gpu::RtKernel *k =
      bundle.kernel(c.op, c.dtype, c.specialized ? c.length : 0, err);
  if (!k) {
    out.kind = Outcome::Skip;
    out.what = err;
    return out;
  }
  const Kernel &dsl = k->dsl;
  const OpDef *op = k->op;
  auto forEach = [&](size_t n, const std::function<void(size_t)> &fn) {
    gpu::parallelFor(n, fn, threads);
  };
  const int64_t L = c.length;
  const size_t nt = dsl.tensors.size();
  if (slots.size() < nt)
    slots.resize(nt);
  std::vector<Place> place(nt);
  std::mt19937_64 rng(c.valueSeed);
  double centre =
      bundle.offers().count(c.op) && bundle.offers().at(c.op).centred ? 32.0
                                                                      : 0.0;
  auto fail = [&](const std::string &what) {
    out.kind = Outcome::Fail;
    out.what = what;
    return out;
  };

  for (size_t t = 0; t < nt; ++t) {
    const TensorDecl &td = dsl.tensors[t];
    Place &p = place[t];
    p.elem = sizeInBytes(td.dtype);
    p.rowLength = td.layout == Layout::RowScalar ? 1 : td.rowLength.eval({L});
    p.offset = c.misalign;
    p.inPlace = td.isInput && td.isWritten;
    if (td.layout == Layout::Rows) {
      p.stride = p.rowLength + c.pad;
      p.rowsHeld = c.rows;
    } else if (td.layout == Layout::RowScalar) {
      p.stride = 1;
      p.rowsHeld = c.rows;
    } else {
      p.stride = p.rowLength;
      p.rowsHeld = 1;
    }
    p.elems = p.offset + p.rowsHeld * p.stride + kGuardBytes / p.elem;
    Slot &s = slots[t];
    size_t bytes = size_t(p.elems * p.elem);
    if (s.buf.size() < bytes) {
      s.buf.reset();
      if (!s.buf.allocate(d, bytes, err)) {
        out.kind = Outcome::Skip;
        out.what = err;
        return out;
      }
    }
    // Everything off the rows is poison (0xFF: NaN in every float dtype),
    // so a kernel that reads it spreads NaN and one that writes it shows.
    s.init.assign(bytes, 0xff);
    if (!td.isInput)
      continue;
    if (td.layout == Layout::Rows) {
      int64_t n = std::min(kTileElems, p.rowsHeld * p.stride);
      std::vector<uint8_t> tile(size_t(std::max<int64_t>(n, 1) * p.elem));
      for (int64_t i = 0; i < n; ++i)
        encode(td.dtype, drawValue(c, td.dtype, rng, centre),
               tile.data() + i * p.elem);
      for (int64_t r = 0; r < p.rowsHeld; ++r) {
        uint8_t *row = s.init.data() + (p.offset + r * p.stride) * p.elem;
        if (c.values == Values::Constant) {
          for (int64_t i = 0; i < p.rowLength; ++i)
            std::memcpy(row + i * p.elem, tile.data() + (r % n) * p.elem,
                        p.elem);
          continue;
        }
        // Element i of row r is tile[(r * stride + i) % n].
        int64_t from = (r * p.stride) % n, done = 0;
        while (done < p.rowLength) {
          int64_t m = std::min(p.rowLength - done, n - from);
          std::memcpy(row + done * p.elem, tile.data() + from * p.elem,
                      m * p.elem);
          done += m;
          from = 0;
        }
      }
    } else {
      // Weights, biases and per-row scalars: in [0.5, 1.5].
      std::uniform_real_distribution<double> u(0.5, 1.5);
      for (int64_t r = 0; r < p.rowsHeld; ++r)
        for (int64_t i = 0; i < p.rowLength; ++i)
          encode(td.dtype, u(rng),
                 s.init.data() + (p.offset + r * p.stride + i) * p.elem);
    }
  }
  for (size_t t = 0; t < nt; ++t) {
    CUresult r = d->memcpyHtoD(slots[t].buf.ptr(), slots[t].init.data(),
                               slots[t].init.size());
    if (r != CUDA_SUCCESS) {
      out.fatal = true;
      return fail(d->errorText(r, "cuMemcpyHtoD"));
    }
  }

  std::vector<kgen_arg> args;
  if (!gpu::buildArgs(
          *k,
          [&](size_t t) {
            const Place &p = place[t];
            return gpu::TensorArg{
                slots[t].buf.ptr() + p.offset * p.elem,
                dsl.tensors[t].layout == Layout::Rows ? p.stride : 0};
          },
          L, args, err))
    return fail(err);
  kgen_status st = kgen_launch(k->k, args.data(), args.size(), c.rows, nullptr);
  if (st != KGEN_OK) {
    out.fatal = st == KGEN_ERROR_CUDA;
    return fail(std::string("kgen_launch refused a valid case: ") +
                kgen_last_error());
  }
  CUresult r = d->ctxSynchronize();
  if (r != CUDA_SUCCESS) {
    out.fatal = true;
    return fail(d->errorText(r, "cuCtxSynchronize"));
  }
  for (size_t t = 0; t < nt; ++t) {
    if (!dsl.tensors[t].isWritten)
      continue;
    Slot &s = slots[t];
    s.got.resize(s.init.size());
    r = d->memcpyDtoH(s.got.data(), s.buf.ptr(), s.got.size());
    if (r != CUDA_SUCCESS) {
      out.fatal = true;
      return fail(d->errorText(r, "cuMemcpyDtoH"));
    }
  }

  // Invariants over whole allocations: off the rows nothing changed; on
  // them everything written, and no NaN unless the inputs hold some. Rows
  // are scanned in parallel chunks; the first wrong element is reported.
  for (size_t t = 0; t < nt; ++t) {
    const TensorDecl &td = dsl.tensors[t];
    if (!td.isWritten)
      continue;
    const Place &p = place[t];
    const uint8_t *got = slots[t].got.data(), *init = slots[t].init.data();
    const int64_t e = p.elem;
    // An fp8 NaN may be 0xFF itself: poison tells nothing there.
    const bool checkUnwritten =
        !p.inPlace && !(e == 1 && c.values == Values::Specials);
    const bool checkNan = c.values != Values::Specials;
    auto at = [&](int64_t q, const char *what) {
      int64_t i = q - p.offset;
      return std::string(what) + ": " + td.name + "[" + std::to_string(q) +
             "] (row " + std::to_string(q < p.offset ? -1 : i / p.stride) +
             ", element " + std::to_string(q < p.offset ? -1 : i % p.stride) +
             ")";
    };
    // The first differing element of [from, to) against init, or -1.
    auto changed = [&](int64_t from, int64_t to) -> int64_t {
      if (from >= to ||
          !std::memcmp(got + from * e, init + from * e, (to - from) * e))
        return -1;
      for (int64_t q = from; q < to; ++q)
        if (std::memcmp(got + q * e, init + q * e, e))
          return q;
      return -1;
    };
    const int64_t chunks = std::clamp<int64_t>(p.rowsHeld / 64, 1, 64);
    std::vector<int64_t> firstBad(chunks, -1);
    std::vector<const char *> kind(chunks, "");
    forEach(chunks, [&](size_t ch) {
      int64_t r0 = p.rowsHeld * ch / chunks,
              r1 = p.rowsHeld * (ch + 1) / chunks;
      for (int64_t r = r0; r < r1; ++r) {
        int64_t start = p.offset + r * p.stride;
        for (int64_t q = start; q < start + p.rowLength; ++q) {
          const uint8_t *g = got + q * e;
          if (checkUnwritten && gpu::isPoison(g, e)) {
            firstBad[ch] = q, kind[ch] = "left unwritten";
            return;
          }
          if (checkNan && gpu::isNanBits(td.dtype, g)) {
            firstBad[ch] = q, kind[ch] = "NaN from finite inputs";
            return;
          }
        }
        int64_t q = changed(start + p.rowLength, start + p.stride);
        if (q >= 0) {
          firstBad[ch] = q, kind[ch] = "wrote outside its rows";
          return;
        }
      }
    });
    for (int64_t ch = 0; ch < chunks; ++ch)
      if (firstBad[ch] >= 0)
        return fail(at(firstBad[ch], kind[ch]));
    int64_t q = changed(0, p.offset);
    if (q < 0)
      q = changed(p.offset + p.rowsHeld * p.stride, p.elems);
    if (q >= 0)
      return fail(at(q, "wrote outside its rows"));
  }

  // The interpreter on sampled rows, each as a batch of one.
  std::vector<int64_t> sample;
  for (int64_t r = 0; r < std::min<int64_t>(c.rows, 4); ++r)
    sample.push_back(r);
  for (int64_t r = std::max<int64_t>(4, c.rows - 2); r < c.rows; ++r)
    sample.push_back(r);
  for (int i = 0; i < 4 && c.rows > 8; ++i)
    sample.push_back(4 + int64_t(rng() % uint64_t(c.rows - 6)));
  std::sort(sample.begin(), sample.end());
  sample.erase(std::unique(sample.begin(), sample.end()), sample.end());
  std::vector<double> params;
  for (const ParamDecl &pd : dsl.params) {
    auto it = op->scalars.find(pd.name);
    params.push_back(it == op->scalars.end() ? 0.0 : it->second);
  }
  auto reference = [&](int64_t row, const InterpretOptions &o) {
    std::vector<std::vector<uint8_t>> bufs(nt);
    Bindings b;
    b.dims = {L};
    b.rows = 1;
    b.params = params;
    for (size_t t = 0; t < nt; ++t) {
      const Place &p = place[t];
      int64_t r = dsl.tensors[t].layout == Layout::Vector ? 0 : row;
      const uint8_t *src =
          slots[t].init.data() + (p.offset + r * p.stride) * p.elem;
      bufs[t].assign(src, src + p.rowLength * p.elem);
      b.tensors.push_back({bufs[t].data(), 0});
    }
    interpret(dsl, b, o);
    return bufs;
  };
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> errors(sample.size());
  std::vector<double> worst(sample.size(), 0.0);
  forEach(sample.size(), [&](size_t si) {
    int64_t row = sample[si];
    std::vector<std::vector<uint8_t>> ref;
    try {
      ref = reference(row, {});
    } catch (const std::exception &ex) {
      errors[si] = std::string("interpret: ") + ex.what();
      return;
    }
    std::vector<std::vector<std::vector<uint8_t>>> perturbed;
    for (size_t t = 0; t < nt && errors[si].empty(); ++t) {
      const TensorDecl &td = dsl.tensors[t];
      if (!td.isWritten)
        continue;
      const Place &p = place[t];
      Tolerance tol = outputTolerance(dsl, int(t));
      int64_t r = td.layout == Layout::Vector ? 0 : row;
      for (int64_t i = 0; i < p.rowLength; ++i) {
        double want = decode(td.dtype, ref[t].data() + i * p.elem);
        double got =
            decode(td.dtype, slots[t].got.data() +
                                 (p.offset + r * p.stride + i) * p.elem);
        auto ratio = [&](const Tolerance &tl) {
          double bound = tl.atol + tl.rtol * std::fabs(want);
          if (std::isfinite(want) && std::isfinite(got) && bound > 0)
            worst[si] = std::max(worst[si], std::fabs(got - want) / bound);
        };
        if (withinTolerance(td.dtype, got, want, tol)) {
          ratio(tol);
          continue;
        }
        if (isFloat(td.dtype) && std::isfinite(want)) {
          // An ill-conditioned output: the slack random rounding shows.
          if (perturbed.empty())
            for (int s = 0; s < kPerturbedRuns; ++s) {
              InterpretOptions o;
              o.perturbSeed = c.valueSeed + 7919 * s;
              perturbed.push_back(reference(row, o));
            }
          std::vector<double> moved;
          for (const auto &pr : perturbed)
            moved.push_back(decode(td.dtype, pr[t].data() + i * p.elem));
          Tolerance wide = tol;
          wide.atol += roundingSlack(td.dtype, want, moved);
          if (withinTolerance(td.dtype, got, want, wide)) {
            ratio(wide);
            continue;
          }
        }
        std::ostringstream m;
        m.precision(9);
        m << td.name << " row " << row << " element " << i << ": got " << got
          << ", the interpreter " << want << " (atol " << tol.atol << ", rtol "
          << tol.rtol << ")";
        errors[si] = m.str();
        break;
      }
    }
  });
  out.refSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  for (size_t si = 0; si < sample.size(); ++si) {
    out.worst = std::max(out.worst, worst[si]);
    if (!errors[si].empty())
      return fail(errors[si]);
  }
  return out;
}

std::string runCaseText(const std::string &dir, const std::string &text) {
  std::string err;
  std::optional<FuzzCase> c = parseCase(text, err);
  if (!c)
    return "bad case: " + err;
  static std::map<std::string, std::unique_ptr<Bundle>> bundles;
  auto &b = bundles[dir];
  if (!b) {
    b = std::make_unique<Bundle>();
    if (!b->open(dir, err)) {
      b.reset();
      return err;
    }
  }
  const rt::Driver *d = gpu::openGpu(err);
  if (!d)
    return "no GPU: " + err;
  Runner runner(d, *b);
  Outcome o = runner.run(*c);
  return o.kind == Outcome::Fail   ? o.what
         : o.kind == Outcome::Skip ? "skipped: " + o.what
                                   : "";
}

} // namespace kgen::fuzz

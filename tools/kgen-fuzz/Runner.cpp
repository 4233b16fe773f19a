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

/// Values repeat a random tile of this many elements (a prime, so rows
/// differ): large cases cost a memcpy, not a random draw per element.
constexpr int64_t kTileElems = 4093;

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
    std::vector<DimDraw> roles;
    if (!dimRoles(k, op->mainDim, e.length, roles, why)) {
      skippedMap[e.op] = why;
      offerMap.erase(e.op);
      continue;
    }
    OpOffer &o = offerMap[e.op];
    o.op = e.op;
    o.centred = e.op.find("layernorm") != std::string::npos ||
                e.op.find("adaln") != std::string::npos;
    // Bounds may differ by length: keep each length's kernel's.
    for (DimDraw &d : roles)
      for (const DimDraw &was : o.dims)
        if (was.name == d.name)
          d.maxByLength.insert(was.maxByLength.begin(), was.maxByLength.end());
    o.dims = roles;
    for (const TensorDecl &td : k.tensors) {
      o.heads |= td.map.subLength != Len(0);
      o.gather |= td.map.gather >= 0;
    }
    if (std::find(o.dtypes.begin(), o.dtypes.end(), *dt) == o.dtypes.end())
      o.dtypes.push_back(*dt);
    if (e.length == 0)
      o.dynamic = true;
    else if (std::find(o.lengths.begin(), o.lengths.end(), e.length) ==
             o.lengths.end())
      o.lengths.push_back(e.length);
    int64_t bytes = 0; // per element of the main dim (plain rows' sizing)
    std::vector<int64_t> ones(k.dims.size(), 1);
    for (const TensorDecl &td : k.tensors)
      if (td.layout == Layout::Rows)
        bytes += sizeInBytes(td.dtype) *
                 std::max<int64_t>(1, td.rowLength.eval(ones));
    rowBytes[e.op] = std::max(rowBytes[e.op], bytes);
  }
  if (offerMap.empty()) {
    err = dir + ": no kernel of an op kgen-fuzz can drive";
    return false;
  }
  return true;
}

int64_t Bundle::caseBytes(const FuzzCase &c) {
  auto o = offerMap.find(c.op);
  const OpOffer *offer = o == offerMap.end() ? nullptr : &o->second;
  if (!offer || (offer->dims.empty() && !offer->heads && !offer->gather)) {
    auto it = rowBytes.find(c.op);
    return c.rows * (c.length + c.pad + c.misalign) *
           (it == rowBytes.end() ? 1 : it->second);
  }
  const OpDef *op = findOp(c.op);
  int64_t length = c.specialized ? c.length : 0;
  std::string key =
      c.op + "/" + std::string(name(c.dtype)) + "/" + std::to_string(length);
  auto it = shapes.find(key);
  if (it == shapes.end()) {
    std::map<std::string, int64_t> dims;
    it = shapes.emplace(key, op->instantiate(c.dtype, length, dims)).first;
  }
  Shape s;
  std::string err;
  return shapeCase(it->second, *op, c, s, err) ? s.bytes : 0;
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
  lastKernel = nullptr;
  auto skip = [&](const std::string &why) {
    out.kind = Outcome::Skip;
    out.what = why;
    return out;
  };
  const gpu::RtKernel *k =
      bundle.kernel(c.op, c.dtype, c.specialized ? c.length : 0, err);
  if (!k)
    return skip(err);
  out.kernel = k->entry.name;
  const Kernel &dsl = k->dsl;
  const OpDef *op = k->op;
  Shape sh;
  if (!shapeCase(dsl, *op, c, sh, err))
    return skip(err);
  auto forEach = [&](size_t n, const std::function<void(size_t)> &fn) {
    gpu::parallelFor(n, fn, threads);
  };
  const size_t nt = dsl.tensors.size(), ns = sh.slotSize.size();
  const std::vector<Place> &place = sh.places;
  if (slots.size() < ns)
    slots.resize(ns);
  std::mt19937_64 rng(c.valueSeed);
  double centre =
      bundle.offers().count(c.op) && bundle.offers().at(c.op).centred ? 32.0
                                                                      : 0.0;
  auto fail = [&](const std::string &what) {
    out.kind = Outcome::Fail;
    out.what = what;
    return out;
  };

  for (size_t s = 0; s < ns; ++s) {
    Slot &sl = slots[s];
    size_t bytes = size_t(sh.slotSize[s] * sh.slotElem[s]);
    if (sl.buf.size() < bytes) {
      sl.buf.reset();
      if (!sl.buf.allocate(d, bytes, err))
        return skip(err);
    }
    // Everything off the rows is poison (0xFF: NaN in every float dtype),
    // so a kernel that reads it spreads NaN and one that writes it shows.
    sl.init.assign(bytes, 0xff);
  }
  for (size_t t = 0; t < nt; ++t) {
    const TensorDecl &td = dsl.tensors[t];
    const Place &p = place[t];
    std::vector<uint8_t> &init = slots[p.slot].init;
    if (!td.isInput)
      continue;
    if (isGatherIndex(dsl, t)) {
      drawPositions(dsl, sh, t, c, rng, init);
    } else if (td.layout == Layout::Rows) {
      // Grouped and gathered rows (scale, a cos/sin cache) centre on 0. A
      // gathered table, or rows shared by a token's heads (rope_hf's cos
      // and sin), holds constants, not activations: it is not scaled, so
      // products with it stay finite.
      double at = td.map.isIdentity() ? centre : 0.0;
      FuzzCase drawn = c;
      bool shared =
          td.map.subLength == Len(0) && isHeadsGroup(dsl, td.map.group);
      if ((td.map.gather >= 0 || shared) && c.values == Values::Scaled)
        drawn.values = Values::Normal;
      int64_t n = std::min(kTileElems, p.rowsHeld * p.stride);
      std::vector<uint8_t> tile(size_t(std::max<int64_t>(n, 1) * p.elem));
      for (int64_t i = 0; i < n; ++i)
        encode(td.dtype, drawValue(drawn, td.dtype, rng, at),
               tile.data() + i * p.elem);
      for (int64_t r = 0; r < p.rowsHeld; ++r) {
        uint8_t *row = init.data() + (p.offset + r * p.stride) * p.elem;
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
                 init.data() + (p.offset + r * p.stride + i) * p.elem);
    }
  }
  std::vector<CUdeviceptr> base(ns);
  for (size_t s = 0; s < ns; ++s) {
    base[s] = slots[s].buf.ptr();
    CUresult r =
        d->memcpyHtoD(base[s], slots[s].init.data(), slots[s].init.size());
    if (r != CUDA_SUCCESS) {
      out.fatal = true;
      return fail(d->errorText(r, "cuMemcpyHtoD"));
    }
  }

  std::vector<kgen_arg> args;
  if (!launchArgs(*k, sh, base, args, err))
    return fail(err);
  kgen_status st =
      kgen_launch(k->k, args.data(), args.size(), sh.launchRows, nullptr);
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
  // The slots holding a written tensor, each with its tensors by offset.
  std::vector<std::vector<size_t>> inSlot(ns);
  std::vector<char> written(ns, 0);
  for (size_t t = 0; t < nt; ++t) {
    inSlot[place[t].slot].push_back(t);
    written[place[t].slot] |= dsl.tensors[t].isWritten;
  }
  for (size_t s = 0; s < ns; ++s) {
    if (!written[s])
      continue;
    Slot &sl = slots[s];
    sl.got.resize(sl.init.size());
    r = d->memcpyDtoH(sl.got.data(), sl.buf.ptr(), sl.got.size());
    if (r != CUDA_SUCCESS) {
      out.fatal = true;
      return fail(d->errorText(r, "cuMemcpyDtoH"));
    }
  }

  // Invariants over whole allocations: off the rows, and on elements no
  // store writes, nothing changed; elements a store writes are written, and
  // no NaN unless the inputs hold some. Rows are scanned in parallel chunks;
  // the first wrong element is reported.
  for (size_t s = 0; s < ns; ++s) {
    if (!written[s])
      continue;
    // The tensors of a slot share its pitch and rows (RowMaps.cpp).
    const Place &p0 = place[inSlot[s].front()];
    const uint8_t *got = slots[s].got.data(), *init = slots[s].init.data();
    const int64_t e = p0.elem, stride = p0.stride, rowsHeld = p0.rowsHeld;
    std::string names;
    for (size_t t : inSlot[s])
      names += (names.empty() ? "" : "+") + dsl.tensors[t].name;
    auto at = [&](int64_t q, const char *what) {
      int64_t i = q - p0.offset;
      return std::string(what) + ": " + names + "[" + std::to_string(q) +
             "] (row " + std::to_string(q < p0.offset ? -1 : i / stride) +
             ", element " + std::to_string(q < p0.offset ? -1 : i % stride) +
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
    const int64_t chunks = std::clamp<int64_t>(rowsHeld / 64, 1, 64);
    std::vector<int64_t> firstBad(chunks, -1);
    std::vector<const char *> kind(chunks, "");
    forEach(chunks, [&](size_t ch) {
      int64_t r0 = rowsHeld * ch / chunks, r1 = rowsHeld * (ch + 1) / chunks;
      auto bad = [&](int64_t q, const char *what) {
        firstBad[ch] = q, kind[ch] = what;
        return true;
      };
      auto badRow = [&](int64_t r) {
        int64_t pos = p0.offset + r * stride;
        for (size_t t : inSlot[s]) {
          const TensorDecl &td = dsl.tensors[t];
          const Place &p = place[t];
          int64_t from = p.offset + r * stride;
          if (int64_t q = changed(pos, from); q >= 0)
            return bad(q, "wrote outside its rows");
          pos = from + p.rowLength;
          if (!td.isWritten) {
            if (int64_t q = changed(from, pos); q >= 0)
              return bad(q, "wrote a tensor it only reads");
            continue;
          }
          // An fp8 NaN may be 0xFF itself, and 0xFF is an int8's -1: poison
          // tells nothing there (the comparison with interpret() does).
          const bool checkUnwritten = !p.inPlace && isFloat(td.dtype) &&
                                      !(e == 1 && c.values == Values::Specials);
          const bool checkNan = c.values != Values::Specials;
          for (int64_t i = 0; i < p.rowLength; ++i) {
            int64_t q = from + i;
            const uint8_t *g = got + q * e;
            if (!p.isStored(i)) {
              if (std::memcmp(g, init + q * e, e))
                return bad(q, "changed an element no store writes");
              continue;
            }
            if (checkUnwritten && gpu::isPoison(g, e))
              return bad(q, "left unwritten");
            if (checkNan && gpu::isNanBits(td.dtype, g))
              return bad(q, "NaN from finite inputs");
          }
        }
        if (int64_t q = changed(pos, p0.offset + r * stride + stride); q >= 0)
          return bad(q, "wrote outside its rows");
        return false;
      };
      for (int64_t r = r0; r < r1 && !badRow(r); ++r) {
      }
    });
    for (int64_t ch = 0; ch < chunks; ++ch)
      if (firstBad[ch] >= 0)
        return fail(at(firstBad[ch], kind[ch]));
    int64_t q = changed(0, p0.offset);
    if (q < 0)
      q = changed(p0.offset + rowsHeld * stride, sh.slotSize[s]);
    if (q >= 0)
      return fail(at(q, "wrote outside its rows"));
  }

  // The interpreter on sampled blocks of row programs (one row, or one
  // token's heads), each as a launch of its own.
  const int64_t blocks = sh.launchRows / sh.step;
  std::vector<int64_t> sample;
  for (int64_t b = 0; b < std::min<int64_t>(blocks, 4); ++b)
    sample.push_back(b);
  for (int64_t b = std::max<int64_t>(4, blocks - 2); b < blocks; ++b)
    sample.push_back(b);
  for (int i = 0; i < 4 && blocks > 8; ++i)
    sample.push_back(4 + int64_t(rng() % uint64_t(blocks - 6)));
  std::sort(sample.begin(), sample.end());
  sample.erase(std::unique(sample.begin(), sample.end()), sample.end());
  std::vector<double> params;
  for (const ParamDecl &pd : dsl.params) {
    auto it = op->scalars.find(pd.name);
    params.push_back(it == op->scalars.end() ? 0.0 : it->second);
  }
  // The tensor rows block b's programs see: [first, last] of a tensor of
  // group g (vectors and gathered tables are read in place).
  auto rowsOf = [&](int64_t b, const Place &p) {
    int64_t r0 = b * sh.step;
    return std::make_pair(r0 / p.group, (r0 + sh.step - 1) / p.group);
  };
  auto reference = [&](int64_t blk, const InterpretOptions &o) {
    std::vector<std::vector<uint8_t>> bufs(nt);
    Bindings b;
    b.dims = sh.dims;
    b.rows = sh.step;
    b.params = params;
    for (size_t t = 0; t < nt; ++t) {
      const Place &p = place[t];
      uint8_t *src = slots[p.slot].init.data() + p.offset * p.elem;
      if (!p.group) { // interpret() writes neither
        b.tensors.push_back({src, p.stride});
        continue;
      }
      auto [first, last] = rowsOf(blk, p);
      int64_t len = p.rowLength * p.elem;
      bufs[t].resize(size_t((last - first + 1) * len));
      for (int64_t row = first; row <= last; ++row)
        std::memcpy(bufs[t].data() + (row - first) * len,
                    src + row * p.stride * p.elem, len);
      b.tensors.push_back({bufs[t].data(), 0});
    }
    interpret(dsl, b, o);
    return bufs;
  };
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> errors(sample.size());
  std::vector<double> worst(sample.size(), 0.0);
  forEach(sample.size(), [&](size_t si) {
    int64_t blk = sample[si];
    std::vector<std::vector<uint8_t>> ref;
    try {
      ref = reference(blk, {});
    } catch (const std::exception &ex) {
      errors[si] = std::string("interpret: ") + ex.what();
      return;
    }
    std::vector<std::vector<std::vector<uint8_t>>> perturbed;
    for (size_t t = 0; t < nt && errors[si].empty(); ++t) {
      const TensorDecl &td = dsl.tensors[t];
      const Place &p = place[t];
      if (!td.isWritten || !p.group)
        continue;
      Tolerance tol = outputTolerance(dsl, int(t));
      auto [first, last] = rowsOf(blk, p);
      for (int64_t row = first; row <= last && errors[si].empty(); ++row)
        for (int64_t i = 0; i < p.rowLength; ++i) {
          if (!p.isStored(i))
            continue;
          int64_t j = (row - first) * p.rowLength + i;
          double want = decode(td.dtype, ref[t].data() + j * p.elem);
          double got =
              decode(td.dtype, slots[p.slot].got.data() +
                                   (p.offset + row * p.stride + i) * p.elem);
          auto ratio = [&](const Tolerance &tl) {
            double bound = tl.atol + tl.rtol * std::fabs(want);
            if (std::isfinite(want) && std::isfinite(got) && bound > 0)
              worst[si] = std::max(worst[si], std::fabs(got - want) / bound);
          };
          if (withinTolerance(td.dtype, got, want, tol)) {
            ratio(tol);
            continue;
          }
          double slack = 0;
          if (isFloat(td.dtype) && std::isfinite(want)) {
            // An ill-conditioned output: the slack random rounding shows.
            if (perturbed.empty())
              for (int s = 0; s < kPerturbedRuns; ++s) {
                InterpretOptions o;
                o.perturbSeed = c.valueSeed + 7919 * s;
                perturbed.push_back(reference(blk, o));
              }
            std::vector<double> moved;
            for (const auto &pr : perturbed)
              moved.push_back(decode(td.dtype, pr[t].data() + j * p.elem));
            Tolerance wide = tol;
            slack = roundingSlack(td.dtype, want, moved);
            wide.atol += slack;
            if (withinTolerance(td.dtype, got, want, wide)) {
              ratio(wide);
              continue;
            }
          }
          std::ostringstream m;
          m.precision(9);
          m << td.name << " row " << row << " element " << i << ": got " << got
            << ", the interpreter " << want << " (atol " << tol.atol
            << ", rtol " << tol.rtol << ", rounding slack " << slack << ")";
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
  // The fewest bytes a launch moves: each input's rows read once, each
  // written tensor's written once; of a gathered table, at most a row a
  // case row.
  lastBytes = 0;
  for (size_t t = 0; t < nt; ++t) {
    const Place &p = place[t];
    int64_t rowsRead = p.group == 0 && p.rowsHeld > 1
                           ? std::min(p.rowsHeld, c.rows)
                           : p.rowsHeld;
    int64_t rowBytes = p.rowLength * p.elem;
    if (dsl.tensors[t].isInput)
      lastBytes += rowsRead * rowBytes;
    if (dsl.tensors[t].isWritten)
      lastBytes += p.rowsHeld * rowBytes;
  }
  lastKernel = k;
  lastArgs = args;
  lastRows = sh.launchRows;
  return out;
}

bool Runner::timeLast(Timing &out, std::string &err) {
  if (!lastKernel) {
    err = "no case passed to time";
    return false;
  }
  auto launch = [&](CUstream stream, std::string &e) {
    kgen_status st = kgen_launch(lastKernel->k, lastArgs.data(),
                                 lastArgs.size(), lastRows, stream);
    if (st != KGEN_OK)
      e = std::string("kgen_launch: ") + kgen_last_error();
    return st == KGEN_OK;
  };
  return timeLaunches(d, launch, lastBytes, out, err);
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

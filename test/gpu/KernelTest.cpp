//===- KernelTest.cpp - Bundled kernels on a GPU against the interpreter --===//
//
// For every kernel of a bundle folder (KGEN_KERNEL_DIR: manifest.tsv +
// NAME.ptx + NAME.json, as `kgen bundle` writes it) and every shape
// rows x length, this launches the kernel through the runtime and compares
// its output with interpret() (dsl/Interpreter.h) within outputTolerance().
// One test per (op, dtype, length): it runs the specialized kernel of that
// length (if the bundle has one) and the dynamic kernel on the same inputs.
//
// Each shape runs in three layouts:
//   aligned     contiguous rows, the allocations' own (256-byte) alignment;
//   misaligned  every tensor's base pointer one element further: the runtime
//               must pick the fallback variant (index 1);
//   strided     rows padded to a 16-byte multiple plus 16 bytes; the padding
//               is poisoned and must stay so.
// Output allocations (with a 64-byte guard after the last row and the
// element before a misaligned base) are poisoned with 0xFF bytes (a NaN in
// every float dtype) before every launch; after it the whole allocation is
// copied back: every element of every row must be written and not NaN (the
// inputs are finite, so no reference is NaN), everything else must still be
// poison. The interpreter is slow, so values are compared on sampled rows:
// all of them up to 40 rows, else the first 8, the last 8 and 16 spread in
// between.
//
// Large inputs are cheap: each input tensor repeats a random tile of a prime
// number of elements (so consecutive rows differ), written with device-to-
// device copies; the host rebuilds a sampled row from the tile.
//
// Environment:
//   KGEN_KERNEL_DIR          the bundle folder; unset: the test skips.
//   KGEN_GPU_TEST_SEED       seed of the inputs (default: random, printed).
//   KGEN_GPU_TEST_MAX_BYTES  skip shapes moving more (default 4.25 GiB).
//   KGEN_GPU_TEST_ROWS       rows to test (default 1,7,128,4096,65536).
//   KGEN_GPU_TEST_LENGTHS    lengths (default 1,7,16,32,100,128,2048,3584,
//                            4095,4096,8192,16384, plus the bundle's own).
//   KGEN_GPU_TEST_FAKE_CUDA  a libcuda stand-in to load instead (for testing
//                            this harness without a GPU: emu_cuda).
//
//===----------------------------------------------------------------------===//

#include "CheckKernelPtx.h"
#include "GpuCommon.h"

#include "dsl/Float.h"
#include "dsl/Interpreter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include <unistd.h>

using namespace kgen;
using namespace kgen::gpu;

namespace {

// A prime, so that no row length divides the tile: rows differ.
constexpr int64_t TileElems = 1048573;
constexpr int64_t GuardBytes = 64;

struct Config {
  std::string dir;
  uint64_t seed = 0;
  uint64_t maxBytes = 17ull << 28; // 4.25 GiB: 4 GiB shapes still run
  std::vector<int64_t> rows = {1, 7, 128, 4096, 65536};
  // 16 and 128: rows of part of a warp, several a block (a dynamic kernel's
  // re-read variant, q/k norms over a head).
  std::vector<int64_t> lengths = {1,    7,    16,   32,   100,  128,
                                  2048, 3584, 4095, 4096, 8192, 16384};
};

Config &config() {
  static Config c;
  return c;
}

/// Set when a launch left the context unusable (a sticky CUDA error): later
/// tests, here and in ViewOpsTest.cpp, fail at once.
std::string &contextBroken = brokenContext();

/// Set when a test skipped for want of a driver or a GPU: main() then exits
/// 77 (ctest's SKIP_RETURN_CODE) if nothing failed. Shared with
/// ViewOpsTest.cpp.
bool &skippedForNoGpu = noGpuSkipFlag();

struct Group {
  std::string op, dtype;
  int64_t length;
  const ManifestEntry *spec = nullptr; // the kernel specialized on `length`
  const ManifestEntry *dyn = nullptr;  // the dynamic kernel
};

enum class LayoutKind { Aligned, Misaligned, Strided };
const char *layoutName(LayoutKind l) {
  switch (l) {
  case LayoutKind::Aligned:
    return "aligned";
  case LayoutKind::Misaligned:
    return "misaligned(+1 elem)";
  case LayoutKind::Strided:
    return "strided";
  }
  return "?";
}

uint64_t mix(uint64_t h, const std::string &s) {
  for (char c : s)
    h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

/// Where one tensor lives on the device for one case.
struct TensorPlace {
  int64_t rowLength = 0;
  int64_t elem = 0;
  int64_t offset = 0; ///< elements from the allocation start
  int64_t stride = 0; ///< elements between rows (Rows tensors)
  int64_t elems = 0;  ///< elements allocated
  bool passStride = false;
  bool inPlace = false; ///< an input the kernel also writes
  DeviceBuffer buf;
  DeviceBuffer pristine; ///< inputs written in place: the input, kept
  uint64_t shift =
      0; ///< inputs: element p of the allocation is tile[(shift+p)%T]
};

struct ScanResult {
  int64_t unwritten = 0, nan = 0, padding = 0;
  int64_t firstUnwritten = -1, firstNan = -1, firstPadding = -1;
  void merge(const ScanResult &o) {
    auto first = [](int64_t a, int64_t b) {
      return a < 0 ? b : b < 0 ? a : std::min(a, b);
    };
    unwritten += o.unwritten;
    nan += o.nan;
    padding += o.padding;
    firstUnwritten = first(firstUnwritten, o.firstUnwritten);
    firstNan = first(firstNan, o.firstNan);
    firstPadding = first(firstPadding, o.firstPadding);
  }
};

/// Checks a whole output allocation copied to the host (the same checks as
/// CheckKernel.cu, which does it on the GPU). `expect`: a pristine copy for
/// tensors written in place, else null (outside the rows must be poison).
ScanResult scanOutput(const uint8_t *buf, const uint8_t *expect, DType dt,
                      const TensorPlace &t, int64_t rows) {
  const int64_t e = t.elem;
  const int64_t chunks = std::min<int64_t>(rows, 256);
  std::vector<ScanResult> parts(chunks);
  parallelFor(chunks, [&](size_t c) {
    ScanResult &s = parts[c];
    int64_t r0 = rows * c / chunks, r1 = rows * (c + 1) / chunks;
    auto pad = [&](int64_t from, int64_t to) { // element range
      for (int64_t i = from; i < std::min(to, t.elems); ++i) {
        bool same = expect ? std::memcmp(buf + i * e, expect + i * e, e) == 0
                           : isPoison(buf + i * e, e);
        if (!same) {
          if (s.firstPadding < 0)
            s.firstPadding = i;
          ++s.padding;
        }
      }
    };
    if (c == 0)
      pad(0, t.offset);
    for (int64_t r = r0; r < r1; ++r) {
      int64_t start = t.offset + r * t.stride;
      for (int64_t i = start; i < start + t.rowLength; ++i) {
        const uint8_t *p = buf + i * e;
        if (isNanBits(dt, p)) {
          if (!expect && isPoison(p, e)) {
            if (s.firstUnwritten < 0)
              s.firstUnwritten = i;
            ++s.unwritten;
          } else {
            if (s.firstNan < 0)
              s.firstNan = i;
            ++s.nan;
          }
        }
      }
      pad(start + t.rowLength, start + t.stride);
    }
    if (static_cast<int64_t>(c) + 1 == chunks)
      pad(t.offset + rows * t.stride, t.elems);
  });
  ScanResult all;
  for (const ScanResult &p : parts)
    all.merge(p);
  return all;
}

int dtypeKind(DType t) {
  switch (t) {
  case DType::F32:
    return 0;
  case DType::F16:
    return 1;
  case DType::BF16:
    return 2;
  case DType::F8E4M3:
    return 3;
  case DType::F8E5M2:
    return 4;
  default:
    return 5;
  }
}

/// The output checker of CheckKernel.cu on the GPU.
class GpuChecker {
public:
  /// Loads the module once; false (with the reason in why()) if it cannot.
  bool ready(const rt::Driver *drv) {
    if (tried)
      return fn != nullptr;
    tried = true;
    d = drv;
    CUresult r = d->moduleLoadDataEx(&mod, CheckKernelPtx, 0, nullptr, nullptr);
    if (r != CUDA_SUCCESS) {
      reason = d->errorText(r, "cuModuleLoadDataEx(checker)");
      std::cout << "[kgen-gpu] GPU output checker unavailable (" << reason
                << "): whole outputs are copied and scanned on the host\n";
      return false;
    }
    r = d->moduleGetFunction(&fn, mod, "kgen_check_output");
    if (r != CUDA_SUCCESS) {
      reason = d->errorText(r, "cuModuleGetFunction(checker)");
      fn = nullptr;
      return false;
    }
    if (!res.allocate(d, 8 * sizeof(uint64_t), reason)) {
      fn = nullptr;
      return false;
    }
    return true;
  }
  const std::string &why() const { return reason; }
  void disable(const std::string &r) {
    fn = nullptr;
    reason = r;
    std::cout << "[kgen-gpu] GPU output checker disabled (" << r
              << "): whole outputs are copied and scanned on the host\n";
  }
  int gpuScans = 0, crossChecks = 0;

  bool run(const TensorPlace &t, CUdeviceptr expect, DType dt, int64_t rows,
           ScanResult &out, std::string &err) {
    uint64_t init[8] = {0, 0, 0, ~0ull, ~0ull, ~0ull, 0, 0};
    CUresult r = d->memcpyHtoD(res.ptr(), init, sizeof init);
    if (r != CUDA_SUCCESS) {
      err = d->errorText(r, "cuMemcpyHtoD");
      return false;
    }
    CUdeviceptr buf = t.buf.ptr();
    long long elems = t.elems, off = t.offset, stride = t.stride,
              rowLen = t.rowLength, nrows = rows;
    int esize = static_cast<int>(t.elem), kind = dtypeKind(dt);
    CUdeviceptr resPtr = res.ptr();
    void *params[] = {&buf, &expect, &elems,  &esize, &kind,
                      &off, &stride, &rowLen, &nrows, &resPtr};
    unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows + 1, 16384));
    r = d->launchKernel(fn, grid, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr);
    if (r != CUDA_SUCCESS) {
      err = d->errorText(r, "cuLaunchKernel(checker)");
      return false;
    }
    uint64_t got[8];
    r = d->memcpyDtoH(got, res.ptr(), sizeof got);
    if (r != CUDA_SUCCESS) {
      err = d->errorText(r, "cuMemcpyDtoH(checker)");
      return false;
    }
    if (got[6] != static_cast<uint64_t>(t.elems)) {
      err = "the checker visited " + std::to_string(got[6]) + " of " +
            std::to_string(t.elems) + " elements";
      return false;
    }
    auto first = [](uint64_t v) { return v == ~0ull ? -1 : int64_t(v); };
    out = ScanResult();
    out.unwritten = int64_t(got[0]);
    out.nan = int64_t(got[1]);
    out.padding = int64_t(got[2]);
    out.firstUnwritten = first(got[3]);
    out.firstNan = first(got[4]);
    out.firstPadding = first(got[5]);
    return true;
  }

private:
  const rt::Driver *d = nullptr;
  bool tried = false;
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  DeviceBuffer res;
  std::string reason;
};

GpuChecker &checker() {
  static GpuChecker *c = new GpuChecker(); // leaked: outlives the tests
  return *c;
}

bool sameScan(const ScanResult &a, const ScanResult &b) {
  return a.unwritten == b.unwritten && a.nan == b.nan &&
         a.padding == b.padding && a.firstUnwritten == b.firstUnwritten &&
         a.firstNan == b.firstNan && a.firstPadding == b.firstPadding;
}

std::string scanText(const ScanResult &s) {
  std::ostringstream ss;
  ss << "unwritten " << s.unwritten << " (first " << s.firstUnwritten
     << "), NaN " << s.nan << " (first " << s.firstNan << "), outside rows "
     << s.padding << " (first " << s.firstPadding << ")";
  return ss.str();
}

/// Outputs up to this size are also scanned on the host, to cross-check the
/// GPU checker.
constexpr size_t CrossCheckBytes = 16u << 20;

std::vector<int64_t> sampledRows(int64_t rows) {
  std::vector<int64_t> out;
  if (rows <= 40) {
    for (int64_t r = 0; r < rows; ++r)
      out.push_back(r);
    return out;
  }
  for (int64_t r = 0; r < 8; ++r)
    out.push_back(r);
  for (int64_t j = 0; j < 16; ++j)
    out.push_back(8 + (rows - 16) * (j + 1) / 17);
  for (int64_t r = rows - 8; r < rows; ++r)
    out.push_back(r);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string fmtValue(double v) {
  std::ostringstream ss;
  ss.precision(9);
  ss << v;
  return ss.str();
}

class KernelGroupTest : public ::testing::Test {
public:
  explicit KernelGroupTest(Group g) : g(std::move(g)) {}
  void TestBody() override;

private:
  Group g;
  const rt::Driver *d = nullptr;
  Kernel dsl;
  const OpDef *op = nullptr;
  int64_t L = 0;
  // Inputs: a random tile per Rows input tensor, host values per Vector input.
  std::map<int, std::vector<uint8_t>> tiles;
  // Statistics for the summary line.
  int launches = 0, skippedShapes = 0, cases = 0;
  double worstRatio = 0;
  std::string worstWhere;
  std::map<std::string, int> variantUse;
  int alignedFallbacks = 0; // aligned rows, fallback for dim_multiple
  int withinSlack = 0;      // values outside the tolerance, within slack
  double refSecs = 0;       // host reference time

  void runShape(const RtKernel *kernels[2], int64_t rows, LayoutKind layout,
                uint64_t seed);
};

void KernelGroupTest::TestBody() {
  auto t0 = std::chrono::steady_clock::now();
  if (!contextBroken.empty())
    GTEST_FAIL() << "not run: the CUDA context is unusable after "
                 << contextBroken;
  std::string why;
  d = openGpu(why);
  if (!d) {
    skippedForNoGpu = true;
    GTEST_SKIP() << "no GPU: " << why;
  }

  RtKernel spec, dyn;
  const RtKernel *kernels[2] = {nullptr, nullptr};
  if (g.spec) {
    std::string err;
    ASSERT_TRUE(loadKernel(config().dir, *g.spec, spec, err)) << err;
    kernels[0] = &spec;
  }
  if (g.dyn) {
    std::string err;
    ASSERT_TRUE(loadKernel(config().dir, *g.dyn, dyn, err)) << err;
    kernels[1] = &dyn;
  }
  const RtKernel &any = kernels[0] ? *kernels[0] : *kernels[1];
  dsl = any.dsl;
  op = any.op;
  L = g.length;
  ASSERT_EQ(dsl.dims.size(), 1u) << "the test knows ops with one dim only";
  ASSERT_EQ(dsl.dims[0], op->mainDim);

  uint64_t seed =
      mix(config().seed, g.op + "/" + g.dtype + "/" + std::to_string(g.length));
  // A random tile per Rows input: activations uniform in [-3, 3]. Ops that
  // subtract the row's mean get rows centred on 32, where a variance taken
  // as mean(x^2) - mean(x)^2 cancels (x^2 ~ 1024 against a variance of 3)
  // and misses the f32 tolerance (on an H200 by 6.6 to 18 times at 64), while
  // the mean's own rounding stays within it (64 took it to 1.2 times).
  double centre = g.op.find("layernorm") != std::string::npos ? 32.0 : 0.0;
  for (size_t t = 0; t < dsl.tensors.size(); ++t) {
    const TensorDecl &td = dsl.tensors[t];
    if (!td.isInput || td.layout != Layout::Rows)
      continue;
    std::mt19937_64 rng(seed + 7919 * t);
    std::uniform_real_distribution<double> u(centre - 3.0, centre + 3.0);
    int64_t e = sizeInBytes(td.dtype);
    std::vector<uint8_t> &tile = tiles[int(t)];
    tile.resize(TileElems * e);
    for (int64_t i = 0; i < TileElems; ++i)
      encode(td.dtype, u(rng), tile.data() + i * e);
  }

  uint64_t caseSeed = seed;
  for (int64_t rows : config().rows) {
    // Bytes the shape moves: each input read once, each output written once.
    double moved = 0;
    for (const TensorDecl &td : dsl.tensors) {
      int64_t len = td.layout == Layout::RowScalar ? 1 : td.rowLength.eval({L});
      double n = td.layout == Layout::Vector ? len : double(rows) * len;
      moved += n * sizeInBytes(td.dtype);
    }
    if (moved > double(config().maxBytes)) {
      ++skippedShapes;
      std::cout << "[kgen-gpu] skip " << g.op << "_" << g.dtype << " rows "
                << rows << " " << op->mainDim << " " << L << ": moves "
                << humanBytes(moved) << " > "
                << humanBytes(double(config().maxBytes)) << "\n";
      continue;
    }
    for (LayoutKind layout :
         {LayoutKind::Aligned, LayoutKind::Misaligned, LayoutKind::Strided}) {
      caseSeed = caseSeed * 6364136223846793005ull + 1442695040888963407ull;
      runShape(kernels, rows, layout, caseSeed);
      if (HasFatalFailure() || !contextBroken.empty())
        return;
    }
  }
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::ostringstream vu;
  for (const auto &[name, n] : variantUse)
    vu << (vu.tellp() ? ", " : "") << name << " x" << n;
  std::cout << "[kgen-gpu] " << g.op << "_" << g.dtype << " " << op->mainDim
            << "=" << L << ": " << cases << " cases, " << launches
            << " launches (" << vu.str() << "), worst |err|/tol "
            << fmtValue(worstRatio)
            << (worstWhere.empty() ? "" : " at " + worstWhere)
            << (skippedShapes
                    ? ", skipped shapes " + std::to_string(skippedShapes)
                    : "")
            << (alignedFallbacks ? ", aligned rows on the fallback "
                                   "(dim_multiple) " +
                                       std::to_string(alignedFallbacks)
                                 : "")
            << (withinSlack
                    ? ", within rounding slack " + std::to_string(withinSlack)
                    : "")
            << ", " << fmtValue(std::round(secs * 100) / 100)
            << " s (reference " << fmtValue(std::round(refSecs * 100) / 100)
            << " s)\n";
}

void KernelGroupTest::runShape(const RtKernel *kernels[2], int64_t rows,
                               LayoutKind layout, uint64_t seed) {
  const size_t nt = dsl.tensors.size();
  std::vector<TensorPlace> place(nt);
  std::string err;
  const int64_t off = layout == LayoutKind::Misaligned ? 1 : 0;
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint8_t>> hostVector(nt); // Vector inputs

  for (size_t t = 0; t < nt; ++t) {
    const TensorDecl &td = dsl.tensors[t];
    TensorPlace &p = place[t];
    p.elem = sizeInBytes(td.dtype);
    p.rowLength = td.layout == Layout::RowScalar ? 1 : td.rowLength.eval({L});
    p.offset = off;
    p.stride = p.rowLength;
    p.inPlace = td.isInput && td.isWritten;
    int64_t guard = std::max<int64_t>(1, GuardBytes / p.elem);
    if (td.layout == Layout::Rows) {
      if (layout == LayoutKind::Strided) {
        int64_t a = std::max<int64_t>(1, 16 / p.elem);
        p.stride = (p.rowLength + a - 1) / a * a + a;
        p.passStride = true;
      }
      p.elems = off + rows * p.stride + guard;
    } else if (td.layout == Layout::Vector) {
      p.elems = off + p.rowLength + guard;
    } else {
      p.elems = off + rows + guard;
      p.stride = 1;
    }
    ASSERT_TRUE(p.buf.allocate(d, p.elems * p.elem, err)) << err;
    if (p.inPlace) {
      ASSERT_TRUE(p.pristine.allocate(d, p.elems * p.elem, err)) << err;
    }
    if (td.isInput && td.layout == Layout::Rows) {
      // Allocation element q holds tile[(shift + q) % T].
      p.shift = rng() % TileElems;
      const std::vector<uint8_t> &tile = tiles[int(t)];
      std::vector<uint8_t> rotated(tile.size());
      size_t cut = p.shift * p.elem;
      std::memcpy(rotated.data(), tile.data() + cut, tile.size() - cut);
      std::memcpy(rotated.data() + tile.size() - cut, tile.data(), cut);
      ASSERT_TRUE(fillRepeating(d, p.buf.ptr(), p.elems * p.elem, rotated, err))
          << err;
    } else if (td.isInput) {
      // Vectors (weights, biases) and per-row scalars: uniform in [0.5, 1.5].
      std::uniform_real_distribution<double> u(0.5, 1.5);
      std::vector<uint8_t> &h = hostVector[t];
      h.resize(p.elems * p.elem);
      for (int64_t i = 0; i < p.elems; ++i)
        encode(td.dtype, u(rng), h.data() + i * p.elem);
      CUresult r = d->memcpyHtoD(p.buf.ptr(), h.data(), h.size());
      ASSERT_EQ(r, CUDA_SUCCESS) << d->errorText(r, "cuMemcpyHtoD");
    }
    if (p.inPlace) {
      CUresult r = d->memcpyDtoD(p.pristine.ptr(), p.buf.ptr(), p.buf.size());
      ASSERT_EQ(r, CUDA_SUCCESS) << d->errorText(r, "cuMemcpyDtoD");
    }
  }

  // The reference on sampled rows, each interpreted as a batch of one row.
  std::vector<int64_t> sample = sampledRows(rows);
  // refOut[s][t]: written tensor t of sampled row s.
  std::vector<std::vector<std::vector<uint8_t>>> refOut(
      sample.size(), std::vector<std::vector<uint8_t>>(nt));
  std::vector<double> params;
  for (const ParamDecl &pd : dsl.params) {
    auto it = op->scalars.find(pd.name);
    params.push_back(it == op->scalars.end() ? 0.0 : it->second);
  }
  // Sampled row s's written tensors, interpreted as a batch of one row
  // (randomly rounded with `o`'s seed for the rounding slack).
  auto referenceRow = [&](size_t s, const InterpretOptions &o) {
    std::vector<std::vector<uint8_t>> outRow(nt);
    int64_t r = sample[s];
    Bindings b;
    b.dims = {L};
    b.rows = 1;
    b.params = params;
    std::vector<std::vector<uint8_t>> rowIn(nt);
    for (size_t t = 0; t < nt; ++t) {
      const TensorDecl &td = dsl.tensors[t];
      const TensorPlace &p = place[t];
      HostTensor h;
      if (!td.isInput) {
        outRow[t].assign(p.rowLength * p.elem, 0xff);
        h.data = outRow[t].data();
      } else if (td.layout == Layout::Rows) {
        std::vector<uint8_t> &in = rowIn[t];
        in.resize(p.rowLength * p.elem);
        const std::vector<uint8_t> &tile = tiles[int(t)];
        int64_t q0 = p.offset + r * p.stride;
        for (int64_t c = 0; c < p.rowLength; ++c) {
          int64_t q = int64_t((p.shift + q0 + c) % TileElems);
          std::memcpy(in.data() + c * p.elem, tile.data() + q * p.elem, p.elem);
        }
        h.data = in.data();
      } else if (td.layout == Layout::Vector) {
        rowIn[t].assign(hostVector[t].begin() + p.offset * p.elem,
                        hostVector[t].begin() +
                            (p.offset + p.rowLength) * p.elem);
        h.data = rowIn[t].data();
      } else {
        rowIn[t].assign(hostVector[t].begin() + (p.offset + r) * p.elem,
                        hostVector[t].begin() + (p.offset + r + 1) * p.elem);
        h.data = rowIn[t].data();
      }
      b.tensors.push_back(h);
    }
    interpret(dsl, b, o);
    for (size_t t = 0; t < nt; ++t)
      if (place[t].inPlace)
        outRow[t] = std::move(rowIn[t]); // the row after the in-place store
    return outRow;
  };
  std::mutex errMutex;
  std::string refError;
  auto refStart = std::chrono::steady_clock::now();
  parallelFor(sample.size(), [&](size_t s) {
    try {
      refOut[s] = referenceRow(s, {});
    } catch (const std::exception &ex) {
      std::lock_guard<std::mutex> lock(errMutex);
      refError = ex.what();
    }
  });
  refSecs +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - refStart)
          .count();
  ASSERT_TRUE(refError.empty()) << "interpret: " << refError;
  ++cases;

  // Which variant the runtime must pick: the vector variant needs 16-byte
  // aligned bases and, for [rows, n] tensors, 16-byte row strides (a
  // vector's or a per-row tensor's stride says nothing about alignment).
  bool rowsAligned = off == 0;
  for (size_t t = 0; t < nt; ++t)
    if (dsl.tensors[t].layout == Layout::Rows &&
        (place[t].stride * place[t].elem) % 16)
      rowsAligned = false;

  static HostStaging staging;

  for (int kk = 0; kk < 2; ++kk) {
    const RtKernel *k = kernels[kk];
    if (!k)
      continue;
    std::ostringstream what;
    what << k->entry.name << " rows " << rows << " " << op->mainDim << " " << L
         << " " << layoutName(layout) << " (seed " << config().seed << ")";

    std::vector<kgen_arg> args;
    std::string argErr;
    ASSERT_TRUE(buildArgs(
        *k,
        [&](size_t t) {
          const TensorPlace &p = place[t];
          return TensorArg{p.buf.ptr() + p.offset * p.elem,
                           p.passStride ? p.stride : 0};
        },
        L, args, argErr))
        << what.str() << ": " << argErr;

    size_t variant = 0;
    ASSERT_EQ(
        kgen_select_variant(k->k, args.data(), args.size(), rows, &variant),
        KGEN_OK)
        << what.str() << ": " << kgen_last_error();
    size_t last = k->variants.size() - 1;
    bool dimsOk = true;
    for (const auto &[name, m] : k->dimMultiple[0])
      if (name == op->mainDim && m > 0 && L % m)
        dimsOk = false;
    // Aligned: "_vec_warp" if L is in its domain_range (on at least its
    // min_rows rows), the exact-length variant ("_vec_nN", N == L) if there
    // is one, else the held variant ("_vec_holdC[_wide]") the spec's rule picks
    // (expectedHeld), else "_vec_cluster" on at most its max_rows, else
    // "_vec_rows" on at least its min_rows, else "_vec". Otherwise the
    // fallback, last.
    size_t expected = last;
    std::optional<size_t> held = expectedHeld(*k, L, rows);
    if (rowsAligned && dimsOk) {
      for (size_t v = 0; v < k->variants.size(); ++v) {
        const std::string &name = k->variants[v];
        size_t at = name.rfind("_vec_n");
        if (k->held[v].chunks > 0) {
          if (held) {
            expected = *held;
            break;
          }
        } else if (k->domainRange[v].second > 0) {
          if (L >= k->domainRange[v].first && L <= k->domainRange[v].second &&
              rows >= k->minRows[v]) {
            expected = v;
            break;
          }
        } else if (at != std::string::npos) {
          if (std::stoll(name.substr(at + 6)) == L) {
            expected = v;
            break;
          }
        } else if (k->maxRows[v] > 0) {
          if (rows <= k->maxRows[v]) {
            expected = v;
            break;
          }
        } else if (k->minRows[v] > 0) {
          if (rows >= k->minRows[v]) {
            expected = v;
            break;
          }
        } else if (name.size() > 4 &&
                   name.compare(name.size() - 4, 4, "_vec") == 0) {
          expected = v;
          break;
        }
      }
    }
    if (rowsAligned && !dimsOk && kk == 1)
      ++alignedFallbacks;
    EXPECT_EQ(variant, expected)
        << what.str() << ": the runtime picked " << k->variants[variant]
        << " but " << k->variants[expected] << " was expected";
    const std::string &entry = k->variants[variant];
    what << " variant " << entry;
    ++variantUse[(kk == 0 ? "spec " : "dyn ") +
                 entry.substr(entry.rfind('_') + 1)];

    for (size_t t = 0; t < nt; ++t) {
      const TensorPlace &p = place[t];
      CUresult r = CUDA_SUCCESS;
      if (!dsl.tensors[t].isInput)
        r = d->memsetD8(p.buf.ptr(), 0xff, p.buf.size());
      else if (p.inPlace) // the first kernel overwrote it
        r = d->memcpyDtoD(p.buf.ptr(), p.pristine.ptr(), p.buf.size());
      ASSERT_EQ(r, CUDA_SUCCESS) << d->errorText(r, "poison/restore");
    }
    kgen_status st = launchKernel(*k, args.data(), args.size(), rows, nullptr);
    if (st != KGEN_OK) {
      std::string msg = kgen_last_error();
      if (st == KGEN_ERROR_CUDA)
        contextBroken = what.str() + ": " + msg;
      GTEST_FAIL() << what.str() << ": kgen_launch: " << msg;
    }
    ++launches;
    CUresult r = d->ctxSynchronize();
    if (r != CUDA_SUCCESS) {
      contextBroken = what.str() + ": " + d->errorText(r, "cuCtxSynchronize");
      GTEST_FAIL() << contextBroken;
    }

    for (size_t t = 0; t < nt; ++t) {
      const TensorDecl &td = dsl.tensors[t];
      if (!td.isWritten)
        continue;
      const TensorPlace &p = place[t];
      int64_t scanRows = td.layout == Layout::Vector ? 1 : rows;
      // The whole allocation: on the GPU, and on the host where it is small
      // (or the GPU checker is unusable).
      ScanResult sr;
      bool haveGpu = false;
      if (checker().ready(d)) {
        std::string cerr;
        haveGpu = checker().run(p, p.inPlace ? p.pristine.ptr() : 0, td.dtype,
                                scanRows, sr, cerr);
        checker().gpuScans += haveGpu;
        if (!haveGpu) {
          ADD_FAILURE() << what.str() << ": GPU checker: " << cerr
                        << " (falling back to host scans)";
          checker().disable(cerr);
        }
      }
      const uint8_t *full = nullptr;
      std::vector<uint8_t> pristineHost;
      if (!haveGpu || p.buf.size() <= CrossCheckBytes) {
        uint8_t *host = staging.get(p.buf.size());
        ASSERT_NE(host, nullptr) << "out of host memory";
        r = d->memcpyDtoH(host, p.buf.ptr(), p.buf.size());
        ASSERT_EQ(r, CUDA_SUCCESS) << d->errorText(r, "cuMemcpyDtoH");
        if (p.inPlace) {
          pristineHost.resize(p.buf.size());
          r = d->memcpyDtoH(pristineHost.data(), p.pristine.ptr(),
                            p.buf.size());
          ASSERT_EQ(r, CUDA_SUCCESS) << d->errorText(r, "cuMemcpyDtoH");
        }
        full = host;
        ScanResult hs =
            scanOutput(host, p.inPlace ? pristineHost.data() : nullptr,
                       td.dtype, p, scanRows);
        checker().crossChecks += haveGpu;
        if (haveGpu && !sameScan(hs, sr)) {
          ADD_FAILURE() << what.str() << ": " << td.name
                        << ": the GPU checker says " << scanText(sr)
                        << " but the host scan says " << scanText(hs)
                        << ": the checker is broken; host scans from now on";
          checker().disable("disagreed with the host scan");
        }
        sr = hs;
      }
      auto rc = [&](int64_t q) {
        std::ostringstream ss;
        int64_t rel = q - p.offset;
        if (rel < 0)
          ss << "element " << rel << " before the base";
        else
          ss << "row " << rel / p.stride << " col " << rel % p.stride;
        return ss.str();
      };
      EXPECT_EQ(sr.unwritten, 0)
          << what.str() << ": " << td.name << ": " << sr.unwritten
          << " elements not written (still poison), first at "
          << rc(sr.firstUnwritten);
      EXPECT_EQ(sr.nan, 0) << what.str() << ": " << td.name << ": " << sr.nan
                           << " NaN elements, first at " << rc(sr.firstNan);
      EXPECT_EQ(sr.padding, 0)
          << what.str() << ": " << td.name << ": " << sr.padding
          << " elements outside the rows changed (padding, guard or before "
             "the base), first at "
          << rc(sr.firstPadding);

      // Values of the sampled rows.
      Tolerance tol = outputTolerance(dsl, int(t));
      // kPerturbedRuns randomly rounded references of sampled row s, made
      // on the first miss in it (dsl/Interpreter.h, roundingSlack).
      std::map<size_t, std::vector<std::vector<std::vector<uint8_t>>>>
          perturbed;
      auto perturbedRow = [&](size_t s) -> const auto & {
        auto [it, fresh] = perturbed.try_emplace(s);
        for (int i = 0; fresh && i < kPerturbedRuns; ++i) {
          InterpretOptions o;
          o.perturbSeed = seed + s * kPerturbedRuns + i;
          it->second.push_back(referenceRow(s, o));
        }
        return it->second;
      };
      int64_t bad = 0;
      std::string firstBad;
      std::vector<uint8_t> rowBuf(p.rowLength * p.elem);
      for (size_t s = 0; s < sample.size(); ++s) {
        int64_t row = td.layout == Layout::Vector ? 0 : sample[s];
        int64_t q0 = p.offset + row * p.stride;
        const uint8_t *got;
        if (full) {
          got = full + q0 * p.elem;
        } else {
          r = d->memcpyDtoH(rowBuf.data(), p.buf.ptr() + q0 * p.elem,
                            rowBuf.size());
          ASSERT_EQ(r, CUDA_SUCCESS) << d->errorText(r, "cuMemcpyDtoH");
          got = rowBuf.data();
        }
        const uint8_t *ref = refOut[s][t].data();
        for (int64_t c = 0; c < p.rowLength; ++c) {
          double gv = decode(td.dtype, got + c * p.elem);
          double rv = decode(td.dtype, ref + c * p.elem);
          bool ok = withinTolerance(td.dtype, gv, rv, tol);
          if (!ok && isFloat(td.dtype)) {
            // Ill-conditioned? Recheck with the rounding slack.
            const auto &runs = perturbedRow(s);
            std::vector<double> moved;
            for (const auto &run : runs)
              moved.push_back(decode(td.dtype, run[t].data() + c * p.elem));
            Tolerance slack = tol;
            slack.atol += roundingSlack(td.dtype, rv, moved);
            ok = withinTolerance(td.dtype, gv, rv, slack);
            withinSlack += ok;
          }
          if (!ok) {
            if (!bad++) {
              std::ostringstream ss;
              ss << "row " << sample[s] << " col " << c << ": got "
                 << fmtValue(gv) << " expected " << fmtValue(rv);
              firstBad = ss.str();
            }
          } else if (std::isfinite(rv)) {
            double ratio =
                std::abs(gv - rv) / (tol.atol + tol.rtol * std::abs(rv));
            if (ratio > worstRatio) {
              worstRatio = ratio;
              worstWhere = k->entry.name + " rows " + std::to_string(rows) +
                           " row " + std::to_string(sample[s]) + " col " +
                           std::to_string(c) + " got " + fmtValue(gv) +
                           " ref " + fmtValue(rv);
            }
          }
        }
      }
      EXPECT_EQ(bad, 0) << what.str() << ": " << td.name << ": " << bad
                        << " mismatches on " << sample.size()
                        << " sampled rows (tolerance atol " << tol.atol
                        << " rtol " << tol.rtol << "), first at " << firstBad;
    }
  }
}

/// Loads every kernel of the bundle (no GPU needed): specs parse, entries
/// exist in the PTX with the ABI's parameter count.
class ManifestTest : public ::testing::Test {
public:
  explicit ManifestTest(std::vector<ManifestEntry> m)
      : manifest(std::move(m)) {}
  void TestBody() override {
    for (const ManifestEntry &e : manifest) {
      RtKernel k;
      std::string err;
      EXPECT_TRUE(loadKernel(config().dir, e, k, err)) << err;
    }
  }

private:
  std::vector<ManifestEntry> manifest;
};

class SkipTest : public ::testing::Test {
public:
  explicit SkipTest(std::string why) : why(std::move(why)) {}
  void TestBody() override {
    skippedForNoGpu = true;
    GTEST_SKIP() << why;
  }

private:
  std::string why;
};

class FailTest : public ::testing::Test {
public:
  explicit FailTest(std::string why) : why(std::move(why)) {}
  void TestBody() override { GTEST_FAIL() << why; }

private:
  std::string why;
};

std::vector<ManifestEntry> &manifest() {
  static std::vector<ManifestEntry> m;
  return m;
}

void registerTests() {
  const char *dir = std::getenv("KGEN_KERNEL_DIR");
  if (!dir || !*dir) {
    ::testing::RegisterTest(
        "KgenGpu", "Kernels", nullptr, nullptr, __FILE__, __LINE__, [] {
          return new SkipTest("KGEN_KERNEL_DIR is not set: point it at a "
                              "folder from `kgen bundle` (manifest.tsv, "
                              "NAME.ptx, NAME.json) to test its kernels");
        });
    return;
  }
  Config &c = config();
  c.dir = dir;
  if (const char *s = std::getenv("KGEN_GPU_TEST_SEED"))
    c.seed = std::strtoull(s, nullptr, 10);
  else
    // Not std::random_device: with a static libstdc++ it needs glibc 2.36's
    // arc4random, and the GPU machine may have an older glibc.
    c.seed = static_cast<uint64_t>(
                 std::chrono::steady_clock::now().time_since_epoch().count() ^
                 (uint64_t(getpid()) << 20)) %
             1000000;
  if (const char *s = std::getenv("KGEN_GPU_TEST_MAX_BYTES"))
    c.maxBytes = std::strtoull(s, nullptr, 10);
  if (const char *s = std::getenv("KGEN_GPU_TEST_ROWS"))
    c.rows = parseIntList(s);
  bool lengthsGiven = false;
  if (const char *s = std::getenv("KGEN_GPU_TEST_LENGTHS")) {
    c.lengths = parseIntList(s);
    lengthsGiven = true;
  }
  std::cout << "[kgen-gpu] kernels " << c.dir << ", seed " << c.seed
            << " (KGEN_GPU_TEST_SEED), max " << humanBytes(double(c.maxBytes))
            << " per shape\n";

  std::string err;
  if (!readManifest(c.dir, manifest(), err)) {
    ::testing::RegisterTest("KgenGpuManifest", "Load", nullptr, nullptr,
                            __FILE__, __LINE__,
                            [err] { return new FailTest(err); });
    return;
  }
  ::testing::RegisterTest("KgenGpuManifest", "Load", nullptr, nullptr, __FILE__,
                          __LINE__,
                          [] { return new ManifestTest(manifest()); });

  // Group by (op, dtype, length): the specialized kernel of a length and the
  // dynamic kernel run together. Keys keep the manifest's op/dtype order.
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>,
           std::vector<const ManifestEntry *>>
      byOpDtype;
  for (const ManifestEntry &e : manifest()) {
    auto key = std::make_pair(e.op, e.dtype);
    if (!byOpDtype.count(key))
      order.push_back(key);
    byOpDtype[key].push_back(&e);
  }
  for (const auto &key : order) {
    const ManifestEntry *dyn = nullptr;
    std::map<int64_t, const ManifestEntry *> spec;
    for (const ManifestEntry *e : byOpDtype[key]) {
      if (e->length == 0)
        dyn = e;
      else
        spec[e->length] = e;
    }
    std::set<int64_t> lengths(c.lengths.begin(), c.lengths.end());
    if (!lengthsGiven)
      for (const auto &[len, e] : spec)
        lengths.insert(len);
    const OpDef *op = findOp(key.first);
    // This harness knows ops with one dim over plain rows; the others
    // (heads, gathers, grouped rows) are tested by ViewOpsTest.cpp.
    if (op &&
        (!op->lengths.empty() || op->build(DType::F32, 0).dims.size() != 1))
      continue;
    for (int64_t len : lengths) {
      Group g{key.first, key.second, len, nullptr, dyn};
      auto it = spec.find(len);
      if (it != spec.end())
        g.spec = it->second;
      if (!g.spec && !g.dyn)
        continue;
      std::string name = key.first + "_" + key.second + "_" +
                         (op ? op->mainDim : std::string("len")) +
                         std::to_string(len);
      ::testing::RegisterTest("KgenGpu", name.c_str(), nullptr, nullptr,
                              __FILE__, __LINE__,
                              [g] { return new KernelGroupTest(g); });
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  // Line-buffered even into a file: a run killed by a timeout keeps its log.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  ::testing::InitGoogleTest(&argc, argv);
  if (const char *fake = std::getenv("KGEN_GPU_TEST_FAKE_CUDA"))
    rt::setDriverLibraryForTesting(fake);
  registerTests();
  int rc = RUN_ALL_TESTS();
  if (checker().gpuScans)
    std::cout << "[kgen-gpu] output checker: " << checker().gpuScans
              << " outputs scanned on the GPU, " << checker().crossChecks
              << " of them also on the host (they must agree)\n";
  if (rc == 0 && skippedForNoGpu)
    return 77; // ctest: skipped, not passed
  return rc;
}

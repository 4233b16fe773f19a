//===- Bench.cpp - First timings of bundled kernels -----------------------===//
//
//   kgen-bench KERNEL_DIR [OUT_DIR]
//
// Measures in one run:
//  - device-to-device copy bandwidth: cuMemcpyDtoD between two 1 GiB
//    buffers, bytes read + written, median of 20 (after 3 warm-ups);
//  - rmsnorm bf16 at 16384 x hidden 4096 / 8192 and silu_and_mul bf16 at
//    16384 x d 4096 / 8192, each with the kernel specialized on the length
//    and the dynamic kernel, on aligned buffers (the vector variant), plus
//    the specialized kernels on buffers one element off (the fallback
//    variant). Per configuration: the median of 40 single launches, each
//    after an L2 flush (a 256 MiB cuMemsetD8), each timed alone with events.
//    GB/s counts the fewest bytes: every input read once, every output
//    written once, the weight once.
// Inputs are random (never zeros). Prints a compact table last and writes
// bench.csv and bench.md to OUT_DIR (when given).
//
//===----------------------------------------------------------------------===//

#include "GpuCommon.h"

#include "dsl/Float.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace kgen;
using namespace kgen::gpu;

namespace {

const rt::Driver *d = nullptr;

#define CHECK_CU(call)                                                         \
  do {                                                                         \
    CUresult r_ = (call);                                                      \
    if (r_ != CUDA_SUCCESS) {                                                  \
      std::fprintf(stderr, "kgen-bench: %s\n",                                 \
                   d->errorText(r_, #call).c_str());                           \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

struct Stats {
  double median = 0, min = 0, max = 0, p10 = 0, p90 = 0;
  int n = 0;
};

Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty())
    return s;
  std::sort(v.begin(), v.end());
  s.n = static_cast<int>(v.size());
  s.median = v.size() % 2 ? v[v.size() / 2]
                          : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  s.min = v.front();
  s.max = v.back();
  s.p10 = v[v.size() / 10];
  s.p90 = v[v.size() * 9 / 10];
  return s;
}

struct Events {
  CUevent start = nullptr, stop = nullptr;
  Events() {
    CHECK_CU(d->eventCreate(&start, CU_EVENT_DEFAULT));
    CHECK_CU(d->eventCreate(&stop, CU_EVENT_DEFAULT));
  }
  ~Events() {
    d->eventDestroy(start);
    d->eventDestroy(stop);
  }
  float elapsedMs() {
    CHECK_CU(d->eventSynchronize(stop));
    float ms = 0;
    CHECK_CU(d->eventElapsedTime(&ms, start, stop));
    return ms;
  }
};

struct Row {
  std::string what;    // "rmsnorm bf16 16384x4096"
  std::string kernel;  // manifest name
  std::string variant; // entry launched
  std::string layout;  // aligned / misaligned
  std::string schedule;
  double bytes = 0;
  Stats us;
  double gbps = 0, pct = 0;
};

/// Random bf16/f16/f32 values in [lo, hi], filled by repeating a prime-sized
/// tile over the buffer.
void fillRandom(CUdeviceptr p, size_t bytes, DType dt, double lo, double hi,
                uint64_t seed) {
  const int64_t e = sizeInBytes(dt);
  const int64_t n = 1048573;
  std::vector<uint8_t> tile(n * e);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < n; ++i)
    encode(dt, u(rng), tile.data() + i * e);
  std::string err;
  if (!fillRepeating(d, p, bytes, tile, err)) {
    std::fprintf(stderr, "kgen-bench: %s\n", err.c_str());
    std::exit(1);
  }
}

const ManifestEntry *findEntry(const std::vector<ManifestEntry> &m,
                               const std::string &op, const std::string &dtype,
                               int64_t length) {
  for (const ManifestEntry &e : m)
    if (e.op == op && e.dtype == dtype && e.length == length)
      return &e;
  return nullptr;
}

std::string fmt(const char *f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) {
    std::fprintf(stderr, "usage: kgen-bench KERNEL_DIR [OUT_DIR]\n");
    return 2;
  }
  if (const char *fake = std::getenv("KGEN_GPU_TEST_FAKE_CUDA"))
    rt::setDriverLibraryForTesting(fake);
  std::string dir = argv[1];
  std::string outDir = argc > 2 ? argv[2] : "";
  std::string why;
  d = openGpu(why);
  if (!d) {
    std::printf("kgen-bench: skipped: no GPU: %s\n", why.c_str());
    return 0;
  }
  std::vector<ManifestEntry> manifest;
  if (!readManifest(dir, manifest, why)) {
    std::fprintf(stderr, "kgen-bench: %s\n", why.c_str());
    return 1;
  }
  // Sizes can shrink for a harness check on the emulator.
  const double scale = std::getenv("KGEN_BENCH_SMALL") ? 1.0 / 64 : 1.0;
  const int copyIters = 20, kernelIters = 40, warmups = 3;

  CUdevice dev = 0;
  int sms = 0, l2 = 0, clock = 0, memClock = 0, busWidth = 0, cc = 0, ccm = 0;
  d->ctxGetDevice(&dev);
  d->deviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  d->deviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
  d->deviceGetAttribute(&clock, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
  d->deviceGetAttribute(&memClock, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev);
  d->deviceGetAttribute(&busWidth, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
                        dev);
  d->deviceGetAttribute(&cc, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  d->deviceGetAttribute(&ccm, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                        dev);
  std::ostringstream devText;
  devText << "sm_" << cc << ccm << ", " << sms << " SMs, L2 " << humanBytes(l2)
          << ", SM clock " << clock / 1000 << " MHz, "
          << "memory bus " << busWidth << " bit";
  std::printf("kgen-bench: %s\n", devText.str().c_str());

  // 1. Device-to-device copy bandwidth.
  const size_t copyBytes = size_t((1ull << 30) * scale);
  double copyGBps = 0;
  Stats copyUs;
  {
    DeviceBuffer a, b;
    if (!a.allocate(d, copyBytes, why) || !b.allocate(d, copyBytes, why)) {
      std::fprintf(stderr, "kgen-bench: %s\n", why.c_str());
      return 1;
    }
    fillRandom(a.ptr(), copyBytes, DType::F32, -3, 3, 1);
    CHECK_CU(d->memsetD8(b.ptr(), 0x5a, copyBytes));
    Events ev;
    std::vector<double> us;
    for (int i = 0; i < warmups + copyIters; ++i) {
      CHECK_CU(d->eventRecord(ev.start, nullptr));
      CHECK_CU(d->memcpyDtoD(b.ptr(), a.ptr(), copyBytes));
      CHECK_CU(d->eventRecord(ev.stop, nullptr));
      double t = ev.elapsedMs() * 1000.0;
      if (i >= warmups)
        us.push_back(t);
    }
    copyUs = stats(us);
    copyGBps = 2.0 * copyBytes / (copyUs.median * 1e-6) / 1e9;
    std::printf("kgen-bench: memcpy DtoD %s: median %.1f us, %.1f GB/s "
                "(read + write)\n",
                humanBytes(double(copyBytes)).c_str(), copyUs.median, copyGBps);
  }

  // 2. Kernels.
  DeviceBuffer flush;
  const size_t flushBytes = size_t((256ull << 20) * scale);
  if (!flush.allocate(d, flushBytes, why)) {
    std::fprintf(stderr, "kgen-bench: %s\n", why.c_str());
    return 1;
  }
  std::vector<Row> table;
  std::vector<std::string> problems;
  // Env overrides, for schedule sweeps: KGEN_BENCH_ROWS (default 16384),
  // KGEN_BENCH_CONFIGS "op:length,...", KGEN_BENCH_KINDS "spec,dyn,mis" and
  // KGEN_BENCH_DTYPE (default bf16).
  const char *rowsEnv = std::getenv("KGEN_BENCH_ROWS");
  const int64_t rows = int64_t((rowsEnv ? std::atoll(rowsEnv) : 16384) * scale);
  struct Config {
    std::string op;
    int64_t length;
  };
  std::vector<Config> configs = {{"rmsnorm", 4096},
                                 {"rmsnorm", 8192},
                                 {"silu_and_mul", 4096},
                                 {"silu_and_mul", 8192}};
  if (const char *env = std::getenv("KGEN_BENCH_CONFIGS")) {
    configs.clear();
    std::stringstream list(env);
    std::string item;
    while (std::getline(list, item, ','))
      if (size_t colon = item.find(':'); colon != std::string::npos)
        configs.push_back(
            {item.substr(0, colon), std::atoll(item.c_str() + colon + 1)});
  }
  std::string kinds = std::getenv("KGEN_BENCH_KINDS")
                          ? std::getenv("KGEN_BENCH_KINDS")
                          : "spec,dyn,mis";
  const std::string dtype = std::getenv("KGEN_BENCH_DTYPE")
                                ? std::getenv("KGEN_BENCH_DTYPE")
                                : "bf16";
  uint64_t seed = 42;
  for (const Config &c : configs) {
    for (int which = 0; which < 3; ++which) {
      static const char *kindNames[] = {"spec", "dyn", "mis"};
      if (kinds.find(kindNames[which]) == std::string::npos)
        continue;
      // 0: specialized aligned, 1: dynamic aligned, 2: specialized misaligned
      const ManifestEntry *e =
          findEntry(manifest, c.op, dtype, which == 1 ? 0 : c.length);
      std::string label = c.op + " " + dtype + " " + std::to_string(rows) +
                          "x" + std::to_string(c.length);
      if (!e) {
        problems.push_back(label + ": no " +
                           (which == 1 ? std::string("dynamic")
                                       : "length " + std::to_string(c.length)) +
                           " kernel in the manifest");
        continue;
      }
      RtKernel k;
      if (!loadKernel(dir, *e, k, why)) {
        problems.push_back(why);
        continue;
      }
      const int64_t off = which == 2 ? 1 : 0;
      // Buffers for every tensor of the DSL kernel, by spec param.
      std::vector<DeviceBuffer> bufs(k.dsl.tensors.size());
      std::vector<kgen_arg> args;
      double bytes = 0;
      bool ok = true;
      for (size_t t = 0; t < k.dsl.tensors.size() && ok; ++t) {
        const TensorDecl &td = k.dsl.tensors[t];
        int64_t len = td.rowLength.eval({c.length});
        int64_t n = td.layout == Layout::Vector ? len : rows * len;
        int64_t es = sizeInBytes(td.dtype);
        // Minimum bytes: each input read once, each output written once; a
        // tensor written in place is both.
        bytes += double(n) * es * (td.isInput && td.isWritten ? 2 : 1);
        ok = bufs[t].allocate(d, size_t(n + off) * es, why);
        if (!ok)
          break;
        if (td.isInput)
          fillRandom(bufs[t].ptr(), bufs[t].size(), td.dtype,
                     td.layout == Layout::Vector ? 0.5 : -3.0,
                     td.layout == Layout::Vector ? 1.5 : 3.0, seed++);
        else
          CHECK_CU(d->memsetD8(bufs[t].ptr(), 0xff, bufs[t].size()));
      }
      if (!ok) {
        problems.push_back(label + ": " + why);
        continue;
      }
      if (!buildArgs(
              k,
              [&](size_t t) {
                return TensorArg{bufs[t].ptr() +
                                     off * sizeInBytes(k.dsl.tensors[t].dtype),
                                 0};
              },
              c.length, args, why)) {
        problems.push_back(label + ": " + why);
        continue;
      }
      size_t variant = 0;
      if (kgen_select_variant(k.k, args.data(), args.size(), rows, &variant) !=
          KGEN_OK) {
        problems.push_back(label + ": " + kgen_last_error());
        continue;
      }
      Events ev;
      std::vector<double> us;
      bool failed = false;
      for (int i = 0; i < warmups + kernelIters && !failed; ++i) {
        CHECK_CU(d->memsetD8(flush.ptr(), static_cast<unsigned char>(i),
                             flushBytes));
        CHECK_CU(d->eventRecord(ev.start, nullptr));
        if (kgen_launch(k.k, args.data(), args.size(), rows, nullptr) !=
            KGEN_OK) {
          problems.push_back(label + ": kgen_launch: " + kgen_last_error());
          failed = true;
          break;
        }
        CHECK_CU(d->eventRecord(ev.stop, nullptr));
        double t = ev.elapsedMs() * 1000.0;
        if (i >= warmups)
          us.push_back(t);
      }
      if (failed)
        continue;
      CHECK_CU(d->ctxSynchronize());
      Row r;
      r.what = label;
      r.kernel = e->name;
      r.variant = k.variants[variant];
      r.layout = off ? "misaligned" : "aligned";
      r.schedule = k.schedule[variant];
      r.bytes = bytes;
      r.us = stats(us);
      r.gbps = bytes / (r.us.median * 1e-6) / 1e9;
      r.pct = 100.0 * r.gbps / copyGBps;
      table.push_back(r);
    }
  }

  // Details.
  if (!outDir.empty()) {
    std::ofstream csv(outDir + "/bench.csv");
    csv << "config,kernel,variant,layout,bytes,median_us,min_us,p10_us,p90_us,"
           "max_us,n,gbps,pct_of_memcpy,schedule\n";
    csv << "memcpy DtoD " << copyBytes << " B,,,," << 2 * copyBytes << ","
        << copyUs.median << "," << copyUs.min << "," << copyUs.p10 << ","
        << copyUs.p90 << "," << copyUs.max << "," << copyUs.n << "," << copyGBps
        << ",100,\n";
    for (const Row &r : table)
      csv << r.what << "," << r.kernel << "," << r.variant << "," << r.layout
          << "," << r.bytes << "," << r.us.median << "," << r.us.min << ","
          << r.us.p10 << "," << r.us.p90 << "," << r.us.max << "," << r.us.n
          << "," << r.gbps << "," << r.pct << ",\"" << r.schedule << "\"\n";
    std::ofstream md(outDir + "/bench.md");
    md << "# kgen-bench\n\n"
       << devText.str() << "\n\n"
       << "memcpy DtoD " << humanBytes(double(copyBytes)) << ": median "
       << fmt("%.1f", copyUs.median) << " us (min " << fmt("%.1f", copyUs.min)
       << ", max " << fmt("%.1f", copyUs.max) << "), " << fmt("%.1f", copyGBps)
       << " GB/s read+write, n=" << copyUs.n << "\n\nKernels: median of "
       << kernelIters << " single launches, each after a "
       << humanBytes(double(flushBytes)) << " L2 flush.\n\n"
       << "| config | kernel | variant | layout | MB | median us | p10 | p90 "
          "| GB/s | % memcpy | schedule |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Row &r : table)
      md << "| " << r.what << " | " << r.kernel << " | " << r.variant << " | "
         << r.layout << " | " << fmt("%.1f", r.bytes / 1e6) << " | "
         << fmt("%.1f", r.us.median) << " | " << fmt("%.1f", r.us.p10) << " | "
         << fmt("%.1f", r.us.p90) << " | " << fmt("%.0f", r.gbps) << " | "
         << fmt("%.1f", r.pct) << " | " << r.schedule << " |\n";
    for (const std::string &p : problems)
      md << "\nPROBLEM: " << p << "\n";
  }

  // The compact table, last.
  for (const std::string &p : problems)
    std::printf("kgen-bench: PROBLEM: %s\n", p.c_str());
  std::printf("\n%-32s %-5s %-10s %10s %8s %7s\n", "config", "kind", "variant",
              "median us", "GB/s", "%copy");
  std::printf("%-32s %-5s %-10s %10.1f %8.1f %7.1f\n",
              ("memcpy DtoD " + humanBytes(double(copyBytes))).c_str(), "-",
              "-", copyUs.median, copyGBps, 100.0);
  for (const Row &r : table) {
    std::string kind =
        r.kernel.find("_dyn_") != std::string::npos ? "dyn" : "spec";
    std::string var = r.variant.substr(r.variant.rfind('_') + 1);
    if (r.layout == "misaligned")
      var += "(+1)";
    std::printf("%-32s %-5s %-10s %10.1f %8.1f %7.1f\n", r.what.c_str(),
                kind.c_str(), var.c_str(), r.us.median, r.gbps, r.pct);
  }
  return problems.empty() ? 0 : 1;
}

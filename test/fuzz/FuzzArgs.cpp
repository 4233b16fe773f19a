//===- FuzzArgs.cpp - libFuzzer target: argument checks, variant choice ---===//
//
// Kernels from the real specs of corpus/spec (KGEN_FUZZ_SPEC_DIR); the fuzz
// bytes pick one and its arguments (kinds, dtypes, pointers, strides, dims,
// scalars), rows and multiprocessors. kgen_select_variant,
// kgen_launch_config_get, kgen_pack_params and kgen_launch (on the fake
// driver, KGEN_FAKE_CUDA_PATH) must agree, and launch what they describe.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "../runtime/FakeCuda.h"
#include "runtime/Driver.h"
#include "runtime/Spec.h"
#include "runtime/kgen_runtime.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace kgen::rt;
using kgen::fuzz::checkConfig;
using kgen::fuzz::checkStatus;
using kgen::fuzz::violated;

namespace {

struct FuzzKernel {
  std::string file;
  Spec spec;
  kgen_kernel *kernel = nullptr;
  /// The multiprocessors the fake reports for it: a kernel's module keeps
  /// the count it was loaded with.
  int multiprocessors = 0;
};

std::vector<FuzzKernel> *kernels = nullptr;
FakeCudaState *fake = nullptr;

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void loadKernels() {
  kernels = new std::vector<FuzzKernel>();
  std::vector<std::string> files;
  if (DIR *dir = opendir(KGEN_FUZZ_SPEC_DIR)) {
    while (dirent *e = readdir(dir))
      if (std::string name = e->d_name;
          name.size() > 5 && name.substr(name.size() - 5) == ".json")
        files.push_back(name);
    closedir(dir);
  }
  std::sort(files.begin(), files.end()); // the same order on every run
  static const int mps[] = {0, 1, 132};
  for (const std::string &name : files) {
    std::string json = readFile(std::string(KGEN_FUZZ_SPEC_DIR) + "/" + name);
    FuzzKernel k;
    k.file = name;
    std::string err;
    if (!parseSpec(json, k.spec, err))
      violated("%s: %s", name.c_str(), err.c_str());
    // Each multiprocessor count gets a PTX text (a module) of its own.
    for (int mp : mps) {
      FuzzKernel copy = k;
      copy.multiprocessors = mp;
      std::string ptx = kgen::fuzz::ptxFor(k.spec) + "// multiprocessors " +
                        std::to_string(mp) + "\n";
      if (kgen_kernel_create(ptx.data(), ptx.size(), json.data(), json.size(),
                             &copy.kernel) != KGEN_OK)
        violated("%s: %s", name.c_str(), kgen_last_error());
      kernels->push_back(std::move(copy));
    }
  }
  if (kernels->empty())
    violated("no spec in " KGEN_FUZZ_SPEC_DIR);
}

/// Stores any int in an enum field, as a C caller may (a static_cast of an
/// out-of-range value would be undefined behaviour here).
template <typename Enum> void setRaw(Enum &field, int value) {
  std::memcpy(&field, &value, sizeof(field));
}

int64_t pickInt64(FuzzedDataProvider &in, int64_t typical) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
  case 0:
    return in.ConsumeIntegral<int64_t>();
  case 1:
    return in.PickValueInArray<int64_t>(
        {0, -1, 1, INT32_MAX, int64_t(INT32_MAX) + 1, INT64_MAX, INT64_MIN,
         int64_t(INT32_MAX) * 1024, int64_t(INT32_MAX) * 1024 + 1, 8191, 8192,
         int64_t(1) << 62});
  case 2:
    return typical * in.ConsumeIntegralInRange(1, 4) +
           in.ConsumeIntegralInRange(-2, 2);
  default:
    return typical;
  }
}

int64_t pickDim(FuzzedDataProvider &in) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
  case 0:
    return pickInt64(in, 4096);
  case 1:
    return in.ConsumeIntegralInRange<int64_t>(1, 70000);
  default:
    return in.PickValueInArray<int64_t>({8, 16, 64, 128, 256, 512, 1024, 1152,
                                         2048, 4096, 5120, 8192, 16384, 65536,
                                         3, 100, 4104});
  }
}

uint64_t pickPointer(FuzzedDataProvider &in) {
  switch (in.ConsumeIntegralInRange(0, 5)) {
  case 0:
    return in.ConsumeIntegral<uint64_t>();
  case 1:
    return 0;
  default:
    return (uint64_t(0x7f00) << 32) +
           (in.ConsumeIntegralInRange<uint64_t>(0, 4096) << 8) +
           in.PickValueInArray<uint64_t>({0, 0, 0, 1, 2, 4, 8, 16, 32, 64});
  }
}

/// The launch the fake recorded must be the one the configuration gives.
void checkFakeLaunch(const FuzzKernel &k, const kgen_launch_config &c,
                     const std::vector<uint64_t> &slots) {
  if (fake->launches.size() != 1)
    violated("%zu launches recorded", fake->launches.size());
  const FakeLaunch &l = fake->launches.back();
  if (l.entry != c.entry || l.grid[0] != c.grid[0] || l.grid[1] != 1 ||
      l.block[0] != c.block[0] || l.block[1] != c.block[1] ||
      l.sharedBytes != c.shared_bytes)
    violated("%s: launched %s grid %u block %u x %u, configured %s grid %u "
             "block %u x %u",
             k.file.c_str(), l.entry.c_str(), l.grid[0], l.block[0], l.block[1],
             c.entry, c.grid[0], c.block[0], c.block[1]);
  // KGEN_GRID_DEPENDENCY=0 launches plainly.
  const char *env = std::getenv("KGEN_GRID_DEPENDENCY");
  bool dependent = c.grid_dependency && !(env && std::strcmp(env, "0") == 0);
  if (l.programmaticDependent != dependent)
    violated("programmatic dependent launch %d", l.programmaticDependent);
  for (size_t i = 0; i < c.num_slots; ++i) {
    uint64_t got = l.params[i], want = slots[i];
    if (got != want)
      violated("%s: slot %zu launched %llx, packed %llx", k.file.c_str(), i,
               static_cast<unsigned long long>(got),
               static_cast<unsigned long long>(want));
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  if (!setDriverLibraryForTesting(KGEN_FAKE_CUDA_PATH))
    violated("the driver was opened before the fake could be set");
  void *lib = dlopen(KGEN_FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
  auto get =
      lib ? reinterpret_cast<FakeCudaState *(*)()>(dlsym(lib, "fakeCudaState"))
          : nullptr;
  if (!get)
    violated("cannot load " KGEN_FAKE_CUDA_PATH ": %s", dlerror());
  fake = get();
  if (kgen_device_open(0, nullptr) != KGEN_OK)
    violated("kgen_device_open on the fake driver");
  loadKernels();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  const FuzzKernel &k =
      (*kernels)[in.ConsumeIntegralInRange<size_t>(0, kernels->size() - 1)];
  const Spec &spec = k.spec;

  // Mostly the spec's kinds and dtypes, so that the later checks run.
  std::vector<kgen_arg> args(spec.params.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Param &p = spec.params[i];
    kgen_arg &a = args[i];
    a.kind = p.kind;
    a.dtype = p.dtype;
    if (in.ConsumeIntegralInRange(0, 31) == 0)
      setRaw(a.kind, in.ConsumeIntegralInRange(-1, 3));
    if (in.ConsumeIntegralInRange(0, 31) == 0)
      setRaw(a.dtype, in.ConsumeIntegralInRange(-1, 8));
    switch (p.kind) {
    case KGEN_ARG_TENSOR:
      a.ptr = reinterpret_cast<const void *>(pickPointer(in));
      a.row_stride = in.ConsumeBool() ? 0 : pickInt64(in, 4096);
      break;
    case KGEN_ARG_SCALAR:
      a.f = in.ConsumeFloatingPoint<double>();
      a.i = pickInt64(in, 7);
      break;
    case KGEN_ARG_DIM:
      a.i = pickDim(in);
      break;
    }
  }
  int64_t rows = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(0, 300)
                                  : pickInt64(in, 40000);
  size_t nargs = args.size();
  if (in.ConsumeIntegralInRange(0, 63) == 0)
    nargs = in.ConsumeIntegralInRange<size_t>(0, args.size() + 1);
  // One argument more than the spec's, never read when nargs is refused.
  args.push_back(kgen_arg{});
  const kgen_arg *argv =
      in.ConsumeIntegralInRange(0, 127) ? args.data() : nullptr;

  size_t variant = ~size_t(0);
  kgen_status sel = kgen_select_variant(k.kernel, argv, nargs, rows, &variant);
  checkStatus(sel, "kgen_select_variant");
  if (sel != KGEN_OK && variant != ~size_t(0))
    violated("a failed kgen_select_variant wrote its variant");

  kgen_launch_config c{};
  kgen_status cfg = kgen_launch_config_get(k.kernel, argv, nargs, rows,
                                           k.multiprocessors, &c);
  checkStatus(cfg, "kgen_launch_config_get");
  if (rows >= 1 && cfg != sel)
    violated("kgen_launch_config_get gave %d where kgen_select_variant gave "
             "%d",
             cfg, sel);
  std::vector<uint64_t> slots;
  if (cfg == KGEN_OK) {
    checkConfig(spec, c, variant);
    slots.assign(c.num_slots, 0);
    kgen_status pack =
        kgen_pack_params(k.kernel, argv, nargs, rows, k.multiprocessors,
                         slots.data(), slots.size());
    checkStatus(pack, "kgen_pack_params");
    if (pack != KGEN_OK)
      violated("kgen_pack_params refused what kgen_launch_config_get took");
  }
  // Another count of multiprocessors only spreads rows differently.
  int mp = in.ConsumeIntegralInRange(-1, 300);
  kgen_launch_config other{};
  kgen_status spread =
      kgen_launch_config_get(k.kernel, argv, nargs, rows, mp, &other);
  checkStatus(spread, "kgen_launch_config_get");
  if (rows >= 1 && mp >= 0 && spread != sel)
    violated("%d multiprocessors gave %d, select %d", mp, spread, sel);
  if (spread == KGEN_OK)
    checkConfig(spec, other, variant);

  fake->reset();
  fake->multiprocessors = k.multiprocessors;
  fake->paramSlots = cfg == KGEN_OK ? c.num_slots : 0;
  kgen_status launch = kgen_launch(k.kernel, argv, nargs, rows, nullptr);
  checkStatus(launch, "kgen_launch");
  if (launch != sel)
    violated("kgen_launch gave %d where kgen_select_variant gave %d", launch,
             sel);
  if (launch == KGEN_OK && rows > 0)
    checkFakeLaunch(k, c, slots);
  else if (!fake->launches.empty())
    violated("kgen_launch launched without rows or after a failure");
  return 0;
}

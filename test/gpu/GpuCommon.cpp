//===- GpuCommon.cpp - Shared by the GPU tests and the bench --------------===//
#include "GpuCommon.h"

#include "dsl/DType.h"
#include "runtime/Json.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

namespace kgen::gpu {

bool readTextFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

static std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

bool readManifest(const std::string &dir, std::vector<ManifestEntry> &out,
                  std::string &err) {
  std::string text;
  std::string path = dir + "/manifest.tsv";
  if (!readTextFile(path, text)) {
    err = "cannot read " + path;
    return false;
  }
  out.clear();
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty() || line[0] == '#')
      continue;
    std::vector<std::string> f = split(line, '\t');
    if (f.size() < 5) {
      err = path + ":" + std::to_string(lineNo) +
            ": expected at least 5 "
            "tab-separated fields";
      return false;
    }
    ManifestEntry e{f[0], f[1], f[2], f[3], 0};
    char *end = nullptr;
    e.length = std::strtoll(f[4].c_str(), &end, 10);
    if (end == f[4].c_str() || e.length < 0) {
      err = path + ":" + std::to_string(lineNo) + ": bad length '" + f[4] + "'";
      return false;
    }
    out.push_back(e);
  }
  if (out.empty()) {
    err = path + " lists no kernels";
    return false;
  }
  return true;
}

std::vector<std::string>
expectedAbi(const Kernel &k, const std::vector<std::string> &dynamicDims) {
  std::vector<std::string> abi;
  for (const TensorDecl &t : k.tensors)
    abi.push_back("ptr:" + t.name);
  for (const TensorDecl &t : k.tensors)
    if (hasRowStride(t))
      abi.push_back("stride:" + t.name);
  for (const ParamDecl &p : k.params)
    abi.push_back("scalar:" + p.name);
  for (const std::string &d : k.dims)
    if (std::find(dynamicDims.begin(), dynamicDims.end(), d) !=
        dynamicDims.end())
      abi.push_back("dim:" + d);
  abi.push_back("rows");
  return abi;
}

std::vector<std::string> ptxParamTypes(const std::string &ptx,
                                       const std::string &entry, bool &found) {
  std::vector<std::string> types;
  std::string key = ".entry " + entry + "(";
  size_t at = ptx.find(key);
  size_t close = at == std::string::npos ? at : ptx.find(')', at);
  found = close != std::string::npos;
  if (!found)
    return types;
  for (size_t p = ptx.find(".param", at); p != std::string::npos && p < close;
       p = ptx.find(".param", p + 6)) {
    // ".param .u64 .ptr .global .align 1 NAME" -> ".u64"
    size_t t = ptx.find('.', p + 6);
    size_t end = ptx.find_first_of(" \t\n,)", t);
    types.push_back(ptx.substr(t, end - t));
  }
  return types;
}

int ptxParamCount(const std::string &ptx, const std::string &entry) {
  bool found;
  std::vector<std::string> t = ptxParamTypes(ptx, entry, found);
  return found ? static_cast<int>(t.size()) : -1;
}

RtKernel &RtKernel::operator=(RtKernel &&o) noexcept {
  if (this != &o) {
    kgen_kernel_destroy(k);
    k = o.k;
    o.k = nullptr;
    entry = std::move(o.entry);
    op = o.op;
    dtype = o.dtype;
    dsl = std::move(o.dsl);
    variants = std::move(o.variants);
    dimMultiple = std::move(o.dimMultiple);
    tensorAlign = std::move(o.tensorAlign);
    held = std::move(o.held);
    minRows = std::move(o.minRows);
    maxRows = std::move(o.maxRows);
    domainRange = std::move(o.domainRange);
    schedule = std::move(o.schedule);
    aot = o.aot;
    paramNames = std::move(o.paramNames);
    params = std::move(o.params);
  }
  return *this;
}

// Without a linked `kgen aot` library there is no generated launcher.
__attribute__((weak)) AotLaunch findAotLaunch(const std::string &,
                                              const std::string &, int64_t) {
  return nullptr;
}

std::map<AotLaunch, int64_t> &aotLaunches() {
  static std::map<AotLaunch, int64_t> counts;
  return counts;
}

kgen_status launchKernel(const RtKernel &k, const kgen_arg *args, size_t nargs,
                         int64_t rows, void *stream) {
  if (!k.aot)
    return kgen_launch(k.k, args, nargs, rows, stream);
  {
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    ++aotLaunches()[k.aot];
  }
  return k.aot(args, nargs, rows, stream);
}

RtKernel::~RtKernel() { kgen_kernel_destroy(k); }

static bool createKernel(const std::string &ptx, const std::string &json,
                         kgen_kernel **out, std::string &err) {
  if (kgen_kernel_create(ptx.data(), ptx.size(), json.data(), json.size(),
                         out) != KGEN_OK) {
    err = std::string("kgen_kernel_create: ") + kgen_last_error();
    return false;
  }
  return true;
}

bool loadKernel(const std::string &dir, const ManifestEntry &e, RtKernel &out,
                std::string &err) {
  out = RtKernel();
  out.entry = e;
  out.aot = findAotLaunch(e.op, e.dtype, e.length);
  out.op = findOp(e.op);
  if (!out.op) {
    err = e.name + ": unknown op '" + e.op + "'";
    return false;
  }
  std::optional<DType> dt = parseDType(e.dtype);
  if (!dt) {
    err = e.name + ": unknown dtype '" + e.dtype + "'";
    return false;
  }
  out.dtype = *dt;
  try {
    std::map<std::string, int64_t> dims;
    out.dsl = out.op->instantiate(*dt, e.length, dims);
  } catch (const std::exception &ex) {
    err = e.name + ": building the DSL kernel failed: " + ex.what();
    return false;
  }
  std::string ptx, json;
  if (!readTextFile(dir + "/" + e.name + ".ptx", ptx) ||
      !readTextFile(dir + "/" + e.name + ".json", json)) {
    err = e.name + ": cannot read " + dir + "/" + e.name + ".{ptx,json}";
    return false;
  }
  kgen_kernel *k = nullptr;
  if (!createKernel(ptx, json, &k, err)) {
    err = e.name + ": " + err;
    return false;
  }
  out.k = k;
  kgen_kernel_info info{};
  kgen_kernel_get_info(k, &info);
  std::vector<std::string> dynamicDims;
  for (size_t i = 0; i < info.num_params; ++i) {
    kgen_param_info p{};
    kgen_kernel_get_param(k, i, &p);
    out.params.push_back(p);
    out.paramNames.push_back(p.name);
    if (p.kind == KGEN_ARG_DIM)
      dynamicDims.push_back(p.name);
  }
  std::vector<std::string> abi = expectedAbi(out.dsl, dynamicDims);
  // What the C API does not tell: the abi's types, dim_multiple and the
  // schedule.
  rt::json::Value root;
  std::string jsonErr;
  if (!rt::json::parse(json, root, jsonErr)) {
    err = e.name + ": JSON: " + jsonErr;
    return false;
  }
  if (const rt::json::Value *policy = root.find("launch_policy"))
    for (const auto &f : launch::kLaunchPolicyFields)
      if (const rt::json::Value *x = policy->find(f.name))
        out.policy.*f.field = x->integer;
  const rt::json::Value *vars = root.find("variants");
  kgen_kernel_get_info(out.k, &info);
  for (size_t v = 0; v < info.num_variants; ++v) {
    kgen_variant_info vi{};
    kgen_kernel_get_variant(out.k, v, &vi);
    out.variants.push_back(vi.entry);
    bool found;
    std::vector<std::string> types = ptxParamTypes(ptx, vi.entry, found);
    if (!found || types.size() != abi.size()) {
      err = e.name + ": entry " + vi.entry + " has " +
            (found ? std::to_string(types.size()) : std::string("no")) +
            " params in the PTX but the ABI has " + std::to_string(abi.size()) +
            " slots";
      return false;
    }
    // The spec's slots are the ones LowerToGPU builds, each of the type the
    // PTX declares: what an engine's own launcher packs from the spec.
    const rt::json::Value *slots =
        vars && v < vars->array.size() ? vars->array[v].find("abi") : nullptr;
    if (!slots || slots->array.size() != abi.size()) {
      err = e.name + ": entry " + vi.entry + ": the spec's abi has " +
            (slots ? std::to_string(slots->array.size()) : std::string("no")) +
            " slots, LowerToGPU builds " + std::to_string(abi.size());
      return false;
    }
    for (size_t i = 0; i < abi.size(); ++i) {
      const rt::json::Value &slot = slots->array[i];
      auto text = [&](const char *key) {
        const rt::json::Value *x = slot.find(key);
        return x ? x->string : std::string();
      };
      std::string name = text("slot");
      if (name != "rows")
        name += ":" + text("param");
      std::string type = text("type");
      if (name != abi[i]) {
        err = e.name + ": entry " + vi.entry + " abi slot " +
              std::to_string(i) + " is '" + name + "' in the spec, '" + abi[i] +
              "' in LowerToGPU";
        return false;
      }
      // .u64/.s64/.b64 are one width; so are .u32/.s32/.b32.
      std::string want = type == "f32"   ? ".f32"
                         : type == "i32" ? ".u32"
                                         : ".u64";
      auto same = [](const std::string &a, const std::string &b) {
        return a.size() == b.size() && a.size() == 4 &&
               (a == b ||
                (a[1] != 'f' && b[1] != 'f' && a.substr(2) == b.substr(2)));
      };
      if (!same(types[i], want)) {
        err = e.name + ": entry " + vi.entry + " param " + std::to_string(i) +
              " is " + types[i] + " in the PTX but the spec's abi slot '" +
              abi[i] + "' is of type '" + type + "'";
        return false;
      }
    }
  }
  for (size_t v = 0; v < out.variants.size(); ++v) {
    std::vector<std::pair<std::string, int64_t>> mult, align;
    std::string sched;
    if (vars && v < vars->array.size()) {
      const rt::json::Value &var = vars->array[v];
      if (const rt::json::Value *m = var.find("dim_multiple"))
        for (const auto &[name, val] : m->object)
          mult.emplace_back(name, val.integer);
      if (const rt::json::Value *a = var.find("tensor_align"))
        for (const auto &[name, val] : a->object)
          align.emplace_back(name, val.integer);
      auto num = [&](const rt::json::Value *obj, const char *key) {
        const rt::json::Value *x = obj ? obj->find(key) : nullptr;
        if (!x)
          return std::string("?");
        if (x->kind == rt::json::Value::Kind::Bool)
          return std::string(x->boolean ? "yes" : "no");
        return std::to_string(x->integer);
      };
      const rt::json::Value *s = var.find("schedule");
      sched = "block " + num(&var, "block") + ", rows/block " +
              num(&var, "rows_per_block") + ", vector " + num(s, "vector") +
              ", threads/row " + num(s, "threads_per_row") + ", chunks " +
              num(s, "chunks") + ", reread " + num(s, "reread");
    }
    RtKernel::Held held;
    if (vars && v < vars->array.size())
      if (const rt::json::Value *lt = vars->array[v].find("launch_threads")) {
        const rt::json::Value *c = lt->find("chunks");
        const rt::json::Value *e = lt->find("chunk_elements");
        const rt::json::Value *b = vars->array[v].find("block");
        held = {c ? c->integer : 0, e ? e->integer : 0, b ? b->integer : 0};
      }
    int64_t minRows = 0, maxRows = 0;
    std::pair<int64_t, int64_t> range{0, 0};
    if (vars && v < vars->array.size()) {
      if (const rt::json::Value *m = vars->array[v].find("min_rows"))
        minRows = m->integer;
      if (const rt::json::Value *m = vars->array[v].find("max_rows"))
        maxRows = m->integer;
      if (const rt::json::Value *d = vars->array[v].find("domain_range")) {
        const rt::json::Value *lo = d->find("min");
        const rt::json::Value *hi = d->find("max");
        range = {lo ? lo->integer : 0, hi ? hi->integer : 0};
      }
    }
    out.dimMultiple.push_back(mult);
    out.tensorAlign.push_back(align);
    out.schedule.push_back(sched);
    out.held.push_back(held);
    out.minRows.push_back(minRows);
    out.maxRows.push_back(maxRows);
    out.domainRange.push_back(range);
  }
  if (out.variants.empty()) {
    err = e.name + ": the spec has no variants";
    return false;
  }
  return true;
}

std::optional<size_t> expectedHeld(const RtKernel &k, int64_t length,
                                   int64_t rows) {
  const int64_t most = k.policy.heldThreadsFor(rows);
  std::optional<size_t> best;
  std::tuple<bool, int64_t, int64_t, int64_t> bestKey;
  for (size_t v = 0; v < k.held.size(); ++v) {
    const RtKernel::Held &h = k.held[v];
    if (h.chunks <= 0 || length % h.chunkElements)
      continue;
    int64_t nvec = length / h.chunkElements;
    // One chunk a thread: a power of two of threads, rows of at most
    // max_one_chunk_threads chunks, first when it fits; more: whole warps.
    int64_t threads = 32 * ((nvec + 32 * h.chunks - 1) / (32 * h.chunks));
    if (h.chunks == 1)
      threads = std::bit_ceil(uint64_t(nvec));
    if (threads > h.maxThreads || (h.chunks - 1) * threads > nvec ||
        (h.chunks == 1 && threads > k.policy.maxOneChunkThreads))
      continue;
    auto key = std::make_tuple(h.chunks != 1, threads * h.chunks - nvec,
                               std::max(threads, most), std::abs(h.chunks - 4));
    if (!best || key < bestKey) {
      best = v;
      bestKey = key;
    }
  }
  return best;
}

bool isNanBits(DType t, const uint8_t *p) {
  switch (t) {
  case DType::F32: {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return (v & 0x7fffffffu) > 0x7f800000u;
  }
  case DType::F16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return (v & 0x7fff) > 0x7c00;
  }
  case DType::BF16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return (v & 0x7fff) > 0x7f80;
  }
  case DType::F8E4M3:
    return (p[0] & 0x7f) == 0x7f;
  case DType::F8E5M2:
    return (p[0] & 0x7f) > 0x7c;
  default:
    return false;
  }
}

bool isPoison(const uint8_t *p, int64_t bytes) {
  for (int64_t i = 0; i < bytes; ++i)
    if (p[i] != 0xff)
      return false;
  return true;
}

std::vector<char>
storedColumns(const Kernel &k, size_t t, const std::vector<int64_t> &dims,
              int64_t rowLength,
              const std::function<bool(const Store &)> &which) {
  const TensorDecl &td = k.tensors[t];
  int64_t sub = td.map.subLength.eval(dims);
  int64_t len = sub ? sub : rowLength, domain = k.domain.eval(dims);
  int head = td.map.head >= 0 ? td.map.head : int(t);
  std::vector<char> cols(size_t(len), 0);
  for (const Store &s : k.stores) {
    if (s.tensor != head || (which && !which(s)))
      continue;
    if (td.layout == Layout::RowScalar) {
      cols[0] = 1;
      continue;
    }
    for (int64_t i = 0, at = s.start.eval(dims); i < domain; ++i)
      if (at + i * s.stride < len)
        cols[at + i * s.stride] = 1;
  }
  return cols;
}

bool buildArgs(
    const RtKernel &k, const std::function<TensorArg(size_t)> &tensor,
    const std::function<std::optional<int64_t>(const std::string &)> &dim,
    std::vector<kgen_arg> &out, std::string &err) {
  out.clear();
  const Kernel &dsl = k.dsl;
  for (const kgen_param_info &pi : k.params) {
    kgen_arg a{};
    a.kind = pi.kind;
    a.dtype = pi.dtype;
    if (pi.kind == KGEN_ARG_TENSOR) {
      size_t t = 0;
      while (t < dsl.tensors.size() && dsl.tensors[t].name != pi.name)
        ++t;
      if (t == dsl.tensors.size()) {
        err =
            std::string("spec tensor ") + pi.name + " is not in the DSL kernel";
        return false;
      }
      TensorArg ta = tensor(t);
      a.dtype = toKgen(dsl.tensors[t].dtype);
      a.ptr = reinterpret_cast<const void *>(ta.ptr);
      a.row_stride = ta.rowStride;
    } else if (pi.kind == KGEN_ARG_SCALAR) {
      auto it = k.op->scalars.find(pi.name);
      double v = it == k.op->scalars.end() ? 0.0 : it->second;
      if (pi.dtype == KGEN_F32)
        a.f = float(v);
      else
        a.i = int64_t(v);
    } else if (std::optional<int64_t> v = dim(pi.name)) {
      a.i = *v;
    } else {
      err = std::string("no value for dim ") + pi.name;
      return false;
    }
    out.push_back(a);
  }
  return true;
}

bool buildArgs(const RtKernel &k,
               const std::function<TensorArg(size_t)> &tensor,
               int64_t mainLength, std::vector<kgen_arg> &out,
               std::string &err) {
  return buildArgs(
      k, tensor,
      [&](const std::string &name) -> std::optional<int64_t> {
        if (name == k.op->mainDim)
          return mainLength;
        return std::nullopt;
      },
      out, err);
}

kgen_dtype toKgen(DType t) {
  switch (t) {
  case DType::F32:
    return KGEN_F32;
  case DType::F16:
    return KGEN_F16;
  case DType::BF16:
    return KGEN_BF16;
  case DType::F8E4M3:
    return KGEN_F8E4M3;
  case DType::F8E5M2:
    return KGEN_F8E5M2;
  case DType::I32:
    return KGEN_I32;
  case DType::I8:
    return KGEN_I8;
  case DType::I64:
  case DType::Bool:
    return KGEN_I64;
  }
  return KGEN_F32;
}

const rt::Driver *openGpu(std::string &why) {
  kgen_status st = KGEN_OK;
  const rt::Driver *d = rt::driver(&why, &st);
  if (!d)
    return nullptr;
  int count = 0;
  if (d->deviceGetCount(&count) != CUDA_SUCCESS || count < 1) {
    why = "no CUDA device";
    return nullptr;
  }
  if (kgen_device_open(0, nullptr) != KGEN_OK) {
    why = kgen_last_error();
    return nullptr;
  }
  return d;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&o) noexcept { *this = std::move(o); }

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&o) noexcept {
  if (this != &o) {
    reset();
    d = o.d;
    p = o.p;
    bytes = o.bytes;
    o.p = 0;
    o.bytes = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() {
  if (p && d)
    d->memFree(p);
  p = 0;
  bytes = 0;
}

bool DeviceBuffer::allocate(const rt::Driver *drv, size_t n, std::string &err) {
  reset();
  d = drv;
  CUresult r = d->memAlloc(&p, n ? n : 1);
  if (r != CUDA_SUCCESS) {
    err = d->errorText(r, "cuMemAlloc") + " (" + humanBytes(double(n)) + ")";
    p = 0;
    return false;
  }
  bytes = n;
  return true;
}

bool fillRepeating(const rt::Driver *d, CUdeviceptr dst, size_t bytes,
                   const std::vector<uint8_t> &pattern, std::string &err) {
  if (!bytes)
    return true;
  size_t first = std::min(bytes, pattern.size());
  CUresult r = d->memcpyHtoD(dst, pattern.data(), first);
  if (r != CUDA_SUCCESS) {
    err = d->errorText(r, "cuMemcpyHtoD");
    return false;
  }
  // Copies whole periods only, so that element i stays pattern[i % period].
  size_t filled = first;
  while (filled < bytes) {
    size_t n = std::min(filled, bytes - filled);
    r = d->memcpyDtoD(dst + filled, dst, n);
    if (r != CUDA_SUCCESS) {
      err = d->errorText(r, "cuMemcpyDtoD");
      return false;
    }
    filled += n;
  }
  return true;
}

namespace {
using MemHostAllocFn = CUresult (*)(void **, size_t, unsigned);
using MemFreeHostFn = CUresult (*)(void *);

struct PinnedApi {
  MemHostAllocFn alloc = nullptr;
  MemFreeHostFn free = nullptr;
};

const PinnedApi &pinnedApi() {
  static PinnedApi api = [] {
    PinnedApi a;
    if (std::getenv("KGEN_GPU_NO_PINNED"))
      return a;
    // The runtime already loaded libcuda.so.1; only look it up.
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
      return a;
    a.alloc = reinterpret_cast<MemHostAllocFn>(dlsym(lib, "cuMemHostAlloc"));
    a.free = reinterpret_cast<MemFreeHostFn>(dlsym(lib, "cuMemFreeHost"));
    if (!a.alloc || !a.free)
      a = PinnedApi();
    return a;
  }();
  return api;
}
} // namespace

HostStaging::~HostStaging() {
  if (!data)
    return;
  if (isPinned)
    pinnedApi().free(data);
  else
    std::free(data);
}

uint8_t *HostStaging::get(size_t bytes) {
  if (bytes <= capacity)
    return data;
  if (data) {
    if (isPinned)
      pinnedApi().free(data);
    else
      std::free(data);
    data = nullptr;
  }
  capacity = 0;
  isPinned = false;
  size_t want = bytes + (bytes >> 3); // some slack: fewer regrowths
  const PinnedApi &api = pinnedApi();
  void *p = nullptr;
  if (api.alloc && api.alloc(&p, want, 0) == CUDA_SUCCESS && p) {
    isPinned = true;
  } else {
    p = std::malloc(want);
    if (!p)
      return nullptr;
  }
  data = static_cast<uint8_t *>(p);
  capacity = want;
  return data;
}

void parallelFor(size_t n, const std::function<void(size_t)> &fn,
                 unsigned threads) {
  if (!threads)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, n));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i)
      fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++)
        fn(i);
    });
  for (std::thread &t : pool)
    t.join();
}

bool &noGpuSkipFlag() {
  static bool skipped = false;
  return skipped;
}

std::string &brokenContext() {
  static std::string what;
  return what;
}

std::string humanBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

std::vector<int64_t> parseIntList(const std::string &s) {
  std::vector<int64_t> out;
  for (const std::string &part : split(s, ','))
    if (!part.empty())
      out.push_back(std::strtoll(part.c_str(), nullptr, 10));
  return out;
}

} // namespace kgen::gpu

// The GPU programs link libstdc++ statically, and its random.o (pulled in by
// the COW-string instantiations) references arc4random, which glibc has only
// since 2.36: the GPU machine's glibc may be older. Nothing here uses
// std::random_device, so this definition (linked before libstdc++.a is
// searched, since this object is always needed) satisfies the reference and
// the programs need glibc 2.35 (libgcc's _dl_find_object) at most.
extern "C" uint32_t arc4random(void) {
  static std::atomic<uint64_t> state{0x9e3779b97f4a7c15ull};
  uint64_t z = state.fetch_add(0x9e3779b97f4a7c15ull) +
               static_cast<uint64_t>(
                   std::chrono::steady_clock::now().time_since_epoch().count());
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<uint32_t>(z ^ (z >> 31));
}

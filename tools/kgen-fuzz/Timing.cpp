//===- Timing.cpp - Times of a checked case, beside memcpy's --------------===//
#include "Timing.h"

#include "GpuCommon.h"

#include <algorithm>
#include <dlfcn.h>
#include <vector>

namespace kgen::fuzz {
namespace {

constexpr size_t kFlushBytes = size_t(256) << 20; // past any L2 so far
constexpr int kColdSamples = 25;
constexpr int kWarmLaunches = 20; // a graph's, per replay
constexpr int kWarmReplays = 7;

/// The graph calls, from the libcuda.so.1 the runtime loaded: only this
/// tool needs them, so the runtime's Driver does not carry them. Null
/// members where the library lacks one (the emulator has none).
struct GraphApi {
  decltype(&::cuStreamCreate) streamCreate = nullptr;
  decltype(&::cuStreamDestroy) streamDestroy = nullptr;
  decltype(&::cuStreamBeginCapture) beginCapture = nullptr;
  decltype(&::cuStreamEndCapture) endCapture = nullptr;
  decltype(&::cuGraphInstantiateWithFlags) instantiate = nullptr;
  decltype(&::cuGraphLaunch) launch = nullptr;
  decltype(&::cuGraphExecDestroy) execDestroy = nullptr;
  decltype(&::cuGraphDestroy) destroy = nullptr;
  decltype(&::cuMemcpyDtoDAsync) copyAsync = nullptr;
  bool complete() const {
    return streamCreate && streamDestroy && beginCapture && endCapture &&
           instantiate && launch && execDestroy && destroy && copyAsync;
  }
};

const GraphApi &graphApi() {
  static const GraphApi api = [] {
    GraphApi a;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
      return a;
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, name));
    };
    get(a.streamCreate, "cuStreamCreate");
    get(a.streamDestroy, "cuStreamDestroy_v2");
    get(a.beginCapture, "cuStreamBeginCapture_v2");
    get(a.endCapture, "cuStreamEndCapture");
    get(a.instantiate, "cuGraphInstantiateWithFlags");
    get(a.launch, "cuGraphLaunch");
    get(a.execDestroy, "cuGraphExecDestroy");
    get(a.destroy, "cuGraphDestroy");
    get(a.copyAsync, "cuMemcpyDtoDAsync_v2");
    return a;
  }();
  return api;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Events {
  const rt::Driver *d;
  CUevent start = nullptr, stop = nullptr;
  explicit Events(const rt::Driver *d) : d(d) {
    d->eventCreate(&start, CU_EVENT_DEFAULT);
    d->eventCreate(&stop, CU_EVENT_DEFAULT);
  }
  ~Events() {
    if (start)
      d->eventDestroy(start);
    if (stop)
      d->eventDestroy(stop);
  }
  /// Microseconds between start and stop, recorded around `body` on
  /// `stream`; negative when a call failed.
  template <typename Body> double around(CUstream stream, Body body) {
    if (!start || !stop || d->eventRecord(start, stream) != CUDA_SUCCESS ||
        !body() || d->eventRecord(stop, stream) != CUDA_SUCCESS ||
        d->eventSynchronize(stop) != CUDA_SUCCESS)
      return -1;
    float ms = 0;
    if (d->eventElapsedTime(&ms, start, stop) != CUDA_SUCCESS)
      return -1;
    return ms * 1000.0;
  }
};

/// The warm time of `launch` per call in a CUDA graph; 0 when graphs are
/// not there or the capture failed (the stream path is then taken).
double graphUs(const rt::Driver *d, const LaunchFn &launch, Events &ev) {
  const GraphApi &g = graphApi();
  if (!g.complete())
    return 0;
  CUstream s = nullptr;
  if (g.streamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
    return 0;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  std::string err;
  bool captured =
      g.beginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS;
  bool launched = captured;
  for (int i = 0; launched && i < kWarmLaunches; ++i)
    launched = launch(s, err);
  if (captured)
    captured = g.endCapture(s, &graph) == CUDA_SUCCESS && launched;
  double us = 0;
  if (captured && g.instantiate(&exec, graph, 0) == CUDA_SUCCESS &&
      g.launch(exec, s) == CUDA_SUCCESS &&
      d->streamSynchronize(s) == CUDA_SUCCESS) {
    std::vector<double> per;
    for (int r = 0; r < kWarmReplays; ++r) {
      double t =
          ev.around(s, [&] { return g.launch(exec, s) == CUDA_SUCCESS; });
      if (t < 0) {
        per.clear();
        break;
      }
      per.push_back(t / kWarmLaunches);
    }
    us = median(per);
  }
  if (exec)
    g.execDestroy(exec);
  if (graph)
    g.destroy(graph);
  g.streamDestroy(s);
  return us;
}

} // namespace

bool timeLaunches(const rt::Driver *d, const LaunchFn &launch, int64_t bytes,
                  Timing &out, std::string &err) {
  out = Timing();
  out.bytes = bytes;
  static gpu::DeviceBuffer flush, copy;
  if (flush.size() < kFlushBytes && !flush.allocate(d, kFlushBytes, err))
    return false;
  // memcpy reads half the bytes and writes the other half.
  size_t half = size_t(std::max<int64_t>(bytes / 2, 1));
  if (copy.size() < 2 * half) {
    copy.reset();
    if (!copy.allocate(d, 2 * half, err))
      return false;
  }
  Events ev(d);
  auto flushL2 = [&] {
    return d->memsetD8(flush.ptr(), 0, kFlushBytes) == CUDA_SUCCESS;
  };
  auto kernel = [&] { return launch(nullptr, err); };
  auto memcpy = [&] {
    return d->memcpyDtoD(copy.ptr() + half, copy.ptr(), half) == CUDA_SUCCESS;
  };
  auto cold = [&](auto body, double &result) {
    std::vector<double> t;
    for (int i = 0; i < kColdSamples; ++i) {
      if (!flushL2())
        return false;
      double us = ev.around(nullptr, body);
      if (us < 0)
        return false;
      t.push_back(us);
    }
    result = median(t);
    return true;
  };
  auto stream = [&](auto body, double &result) {
    std::vector<double> per;
    for (int r = 0; r < kWarmReplays; ++r) {
      double us = ev.around(nullptr, [&] {
        for (int i = 0; i < kWarmLaunches; ++i)
          if (!body())
            return false;
        return true;
      });
      if (us < 0)
        return false;
      per.push_back(us / kWarmLaunches);
    }
    result = median(per);
    return true;
  };
  if (!cold(kernel, out.coldUs) || !cold(memcpy, out.memcpyColdUs)) {
    if (err.empty())
      err = "a timed launch, memset or event failed";
    return false;
  }
  // Warm, memcpy as the kernel: in a graph of copies where there is one (a
  // loop of synchronous copies runs at the API's rate on small cases).
  out.warmUs = graphUs(d, launch, ev);
  out.graph = out.warmUs > 0;
  if (out.graph) {
    auto copyOn = [&](CUstream s, std::string &e) {
      bool ok = graphApi().copyAsync(copy.ptr() + half, copy.ptr(), half, s) ==
                CUDA_SUCCESS;
      if (!ok)
        e = "cuMemcpyDtoDAsync failed";
      return ok;
    };
    out.memcpyWarmUs = graphUs(d, copyOn, ev);
  }
  if ((!out.graph && !stream(kernel, out.warmUs)) ||
      (out.memcpyWarmUs <= 0 && !stream(memcpy, out.memcpyWarmUs))) {
    if (err.empty())
      err = "a timed launch failed";
    return false;
  }
  return d->ctxSynchronize() == CUDA_SUCCESS ||
         (err = "cuCtxSynchronize failed after timing", false);
}

} // namespace kgen::fuzz

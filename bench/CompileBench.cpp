//===- CompileBench.cpp - DSL to PTX compile time (Google Benchmark) ------===//
//
// Compile latency is a product feature: the time from a DSL kernel to PTX and
// its spec, in-process. Reported: the first kernel in a fresh Compiler (the
// MLIR context is created then), later kernels per op, and the whole bundled
// library (every op x f32/f16/bf16 x 4 archs, dynamic length).
//
//===----------------------------------------------------------------------===//
#include "codegen/Pipeline/Pipeline.h"
#include "ops/Registry.h"

#include <benchmark/benchmark.h>

using namespace kgen;

namespace {

bool compileOne(codegen::Compiler &c, const ops::OpDef &op, DType dt,
                const std::string &arch, int64_t len) {
  codegen::CompileOptions opts;
  opts.arch = arch;
  if (!op.supportsLength(len))
    len = op.lengths.front();
  Kernel k = op.instantiate(dt, len, opts.dims);
  codegen::Artifact art;
  std::string error;
  return c.compile(k, {op.name, std::string(name(dt)), "k"}, opts,
                   codegen::Stage::Spec, art, error);
}

void firstKernel(benchmark::State &state) {
  const ops::OpDef &op = *ops::findOp("rmsnorm");
  for (auto _ : state) {
    codegen::Compiler c; // a fresh context each time
    if (!compileOne(c, op, DType::BF16, "sm_90", 4096))
      state.SkipWithError("compile failed");
  }
}
BENCHMARK(firstKernel)->Unit(benchmark::kMillisecond)->UseRealTime();

void laterKernel(benchmark::State &state, const std::string &opName,
                 int64_t len) {
  const ops::OpDef &op = *ops::findOp(opName);
  codegen::Compiler c;
  compileOne(c, op, DType::BF16, "sm_90", len); // warm the context
  for (auto _ : state)
    if (!compileOne(c, op, DType::BF16, "sm_90", len))
      state.SkipWithError("compile failed");
}

void wholeLibrary(benchmark::State &state) {
  const char *archs[] = {"sm_75", "sm_80", "sm_90", "sm_100"};
  int64_t kernels = 0;
  for (auto _ : state) {
    codegen::Compiler c;
    kernels = 0;
    for (const char *arch : archs)
      for (const ops::OpDef &op : ops::registry())
        for (DType dt : op.dtypes) {
          if (!compileOne(c, op, dt, arch, 0))
            state.SkipWithError("compile failed");
          ++kernels;
        }
  }
  state.counters["kernels"] = kernels;
}
BENCHMARK(wholeLibrary)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

int registerPerOp = [] {
  for (const ops::OpDef &op : ops::registry()) {
    benchmark::RegisterBenchmark(("later/" + op.name + "/4096").c_str(),
                                 laterKernel, op.name, 4096)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("later/" + op.name + "/dynamic").c_str(),
                                 laterKernel, op.name, 0)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  return 0;
}();

} // namespace

BENCHMARK_MAIN();

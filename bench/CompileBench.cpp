//===- CompileBench.cpp - DSL to PTX compile time (Google Benchmark) ------===//
//
// Compile latency is a product feature: the time from a DSL kernel to PTX and
// its spec, in-process. Reported: the first kernel in a fresh Compiler (the
// MLIR context is created then), later kernels per op, and the whole bundled
// library (every op x f32/f16/bf16 x 4 archs, dynamic length).
//
//===----------------------------------------------------------------------===//
#include "codegen/Pipeline/Pipeline.h"
#include "dsl/Registry.h"

#include <benchmark/benchmark.h>

using namespace kgen;

namespace {

bool compileOne(codegen::Compiler &c, const OpDef &op, DType dt,
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
  const OpDef &op = *findOp("rmsnorm");
  for (auto _ : state) {
    codegen::Compiler c; // a fresh context each time
    if (!compileOne(c, op, DType::BF16, "sm_90", 4096))
      state.SkipWithError("compile failed");
  }
}
BENCHMARK(firstKernel)->Unit(benchmark::kMillisecond)->UseRealTime();

void laterKernel(benchmark::State &state, const std::string &opName,
                 int64_t len) {
  const OpDef &op = *findOp(opName);
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
      for (const OpDef &op : registeredOps())
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

/// In main, not at static initialization: the ops register themselves then,
/// in an unspecified order relative to this file.
void registerPerOp() {
  for (const OpDef &op : registeredOps()) {
    benchmark::RegisterBenchmark(("later/" + op.name + "/4096").c_str(),
                                 laterKernel, op.name, 4096)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("later/" + op.name + "/dynamic").c_str(),
                                 laterKernel, op.name, 0)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
}

} // namespace

int main(int argc, char **argv) {
  registerPerOp();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

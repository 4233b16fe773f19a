//===- InterpretBench.cpp - The interpreter's cost per element ------------===//
//
// kgen-fuzz checks every GPU case against interpret(), so its cost per
// element bounds the fuzzer's rate. Per bundled op and dtype (f32, bf16), on
// 64 rows of 4096 random values: elements per second with the float fast
// path (`fast`) and with every node in double (`double`).
//
//===----------------------------------------------------------------------===//
#include "test/ops/RandomBindings.h"

#include <benchmark/benchmark.h>

#include <string>

using namespace kgen;

namespace {

void interpretOp(benchmark::State &state, const OpDef *op, DType dt,
                 bool fast) {
  std::map<std::string, int64_t> fixed;
  Kernel k =
      op->instantiate(dt, op->lengths.empty() ? 0 : op->lengths.front(), fixed);
  test::RandomBindings rb =
      test::bindRandom(*op, k, fixed, 4096, 64, 1, /*special=*/0.0);
  InterpretOptions o;
  o.floatFastPath = fast;
  for (auto _ : state)
    interpret(k, rb.bindings, o);
  int64_t domain = k.domain.eval(rb.bindings.dims);
  state.SetItemsProcessed(state.iterations() * rb.bindings.rows * domain);
}

} // namespace

int main(int argc, char **argv) {
  for (const OpDef &op : registeredOps())
    for (DType dt : {DType::F32, DType::BF16})
      for (bool fast : {true, false}) {
        if (!op.bundled || !op.supportsDType(dt))
          continue;
        std::string label = op.name + "/" + std::string(name(dt)) +
                            (fast ? "/fast" : "/double");
        benchmark::RegisterBenchmark(label.c_str(), interpretOp, &op, dt, fast)
            ->Unit(benchmark::kMillisecond);
      }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}

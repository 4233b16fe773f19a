//===- kgen-opt.cpp - The kgen optimizer driver (for lit) -----------------===//
#include "codegen/Pipeline/Pipeline.h"
#include "codegen/Transforms/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::kgen::registerKgenPasses();
  kgen::codegen::registerPipeline();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::kgen::KgenDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kgen optimizer driver\n", registry));
}

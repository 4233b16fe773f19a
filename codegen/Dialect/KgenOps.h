//===- KgenOps.h - Operations of the kgen dialect ---------------*- C++ -*-===//
#ifndef KGEN_CODEGEN_DIALECT_KGENOPS_H
#define KGEN_CODEGEN_DIALECT_KGENOPS_H

#include "codegen/Dialect/KgenDialect.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "codegen/Dialect/KgenOps.h.inc"

#endif // KGEN_CODEGEN_DIALECT_KGENOPS_H

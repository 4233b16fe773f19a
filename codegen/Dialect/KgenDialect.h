//===- KgenDialect.h - The kgen dialect -------------------------*- C++ -*-===//
#ifndef KGEN_CODEGEN_DIALECT_KGENDIALECT_H
#define KGEN_CODEGEN_DIALECT_KGENDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "runtime/LaunchPolicy.h"

#include "codegen/Dialect/KgenDialect.h.inc"
#include "codegen/Dialect/KgenEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "codegen/Dialect/KgenTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "codegen/Dialect/KgenAttrs.h.inc"

namespace mlir::kgen {
/// The element type of a !kgen.rows/vector/scalars type; null otherwise.
Type getTensorElementType(Type t);

/// Whether kernel argument `arg` takes a row stride parameter: a rows tensor,
/// or a scalars tensor a kgen.heads spreads over tokens and heads (per-head
/// outputs, whose tokens are a stride apart as rows are).
bool hasRowStride(BlockArgument arg);

/// Which clone of a kernel it is (a VariantAttr, kgen-make-variants).
inline constexpr llvm::StringLiteral kVariantAttr = "kgen.variant";
/// The kernel's kgen.variant; null before kgen-make-variants.
VariantAttr getVariant(Operation *kernel);
/// Its kind; `vec` before kgen-make-variants (a lit test of one pass).
VariantKind getVariantKind(Operation *kernel);

/// On a dim argument of a kernel: the largest value a launch passes (the
/// DSL's bound, which the runtime checks).
inline constexpr llvm::StringLiteral kMaxAttr = "kgen.max";
/// On an f32 scalar argument of a kernel: the least value a launch passes
/// (the DSL's bound, which the runtime checks).
inline constexpr llvm::StringLiteral kMinAttr = "kgen.min";

/// The module attribute kgen-launch-policy sets.
inline constexpr llvm::StringLiteral kLaunchPolicyAttr = "kgen.launch_policy";
/// The launch policy of `op`'s module: its kgen.launch_policy, else the
/// defaults (a module that skipped kgen-launch-policy, as in a lit test).
::kgen::launch::LaunchPolicy getLaunchPolicy(Operation *op);
} // namespace mlir::kgen

#endif // KGEN_CODEGEN_DIALECT_KGENDIALECT_H

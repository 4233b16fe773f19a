//===- KgenDialect.td - The kgen dialect -------------------*- tablegen -*-===//
#ifndef KGEN_DIALECT_TD
#define KGEN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Kgen_Dialect : Dialect {
  let name = "kgen";
  let summary = "Row programs: fused kernels that map over the rows of tensors";
  let description = [{
    A `kgen.kernel` holds one row program. Row values are 1-D tensors over the
    kernel's domain (`kgen.domain`); per-row values are scalars. Elementwise
    math on rows uses the upstream `arith` and `math` ops on tensors. Memory is
    reached only through `kgen.load` and `kgen.store`, whose views the
    alignment analysis turns into vector widths.
  }];
  let cppNamespace = "::mlir::kgen";
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

class Kgen_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kgen_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Types: kernel arguments that are tensors in global memory.
//===----------------------------------------------------------------------===//

class Kgen_TensorType<string name, string typeMnemonic, string doc>
    : TypeDef<Kgen_Dialect, name> {
  let mnemonic = typeMnemonic;
  let summary = doc;
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def Kgen_RowsType : Kgen_TensorType<"Rows", "rows",
    "a [rows, n] tensor; row r is visible to row program r; its row pitch "
    "is a run-time argument">;
def Kgen_ColumnVectorType : Kgen_TensorType<"ColumnVector", "vector",
    "a [n] tensor shared by every row (a weight or a bias)">;
def Kgen_ScalarsType : Kgen_TensorType<"Scalars", "scalars",
    "a [rows] tensor: one element per row">;

def Kgen_AnyTensorArg : AnyTypeOf<[Kgen_RowsType, Kgen_ColumnVectorType,
                                   Kgen_ScalarsType]>;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Kgen_ScheduleAttr : AttrDef<Kgen_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "How a row program is spread over GPU threads";
  let description = [{
    `vector`: elements each thread handles per chunk (16 bytes of the widest
    row dtype). `threads_per_row`: a power of two or whole warps; a row's chunks are
    interleaved over them so that neighbouring threads read neighbouring
    chunks. `rows_per_block`: rows a thread block works on. `chunks`: chunks
    per thread kept in registers. `reread`: reductions are done in separate
    passes that read the inputs again, instead of keeping the row in
    registers. `tiles` (kernels without reductions only): a row is split
    over that many consecutive blocks, each covering `chunks` chunks per
    thread, so that few rows still fill the GPU. `launchThreads`: the
    threads of a row are chosen at launch, so that they suit a row length
    known only then: held rows take one row per block, whole warps up to
    `threads_per_row`, each holding up to `chunks` chunks; re-read rows
    (`chunks` = 0) take a block of x threads a row (a power of two) by y
    rows, x * y up to `threads_per_row`. `launchRowsPerBlock`: rows a block
    takes at launch (0: `rows_per_block`, at most that); a launch of too
    few rows to give every multiprocessor a block takes fewer, down to one.
    `cluster`: the `tiles` blocks of a row (2 to 8, one row each) form a
    thread-block cluster (sm_90 and newer) and combine the row's reductions
    through distributed shared memory, so that a reduction over a long row
    spreads over several SMs. `maxRegisters` (kgen-occupancy; 0: not yet
    decided): the registers a thread may take (`.maxnreg`). `busyRow`: the
    row is held under a cap for three blocks an SM, which the lowering
    meets by recomputing values after each barrier rather than keeping them.
    The prefetches (kgen-prefetch): `prefetchBlocks` > 0, the held row's
    lines go to L2 before the kernel waits on the grids ahead, in grids of
    at most that many blocks, or with `prefetchFirst` in the first that
    many blocks of any grid; `prefetchLines`: the row's lines are split
    over its threads rather than prefetched a chunk at a time.
    `prefetchAhead`: once its loads are issued, a block prefetches the row
    of a later block.
  }];
  let extraClassDeclaration = [{
    /// This schedule with kgen-occupancy's decisions.
    ScheduleAttr withRegisters(int64_t maxRegisters, bool busyRow) const;
    /// This schedule with kgen-prefetch's decisions.
    ScheduleAttr withPrefetch(int64_t blocks, bool first, bool lines,
                              bool ahead) const;
  }];
  let parameters = (ins "int64_t":$vector, "int64_t":$threadsPerRow,
                        "int64_t":$rowsPerBlock, "int64_t":$chunks,
                        "bool":$reread,
                        DefaultValuedParameter<"int64_t", "1">:$tiles,
                        DefaultValuedParameter<"bool", "false">:$launchThreads,
                        DefaultValuedParameter<"int64_t", "0">:$launchRowsPerBlock,
                        DefaultValuedParameter<"bool", "false">:$cluster,
                        DefaultValuedParameter<"int64_t", "0">:$maxRegisters,
                        DefaultValuedParameter<"bool", "false">:$busyRow,
                        DefaultValuedParameter<"int64_t", "0">:$prefetchBlocks,
                        DefaultValuedParameter<"bool", "false">:$prefetchFirst,
                        DefaultValuedParameter<"bool", "false">:$prefetchLines,
                        DefaultValuedParameter<"bool", "false">:$prefetchAhead);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Kgen_VariantKind : I32EnumAttr<"VariantKind", "which clone of a kernel", [
    I32EnumAttrCase<"vec", 0>, I32EnumAttrCase<"any", 1>,
    I32EnumAttrCase<"exact", 2>, I32EnumAttrCase<"held", 3>,
    I32EnumAttrCase<"warp", 4>, I32EnumAttrCase<"rows", 5>,
    I32EnumAttrCase<"cluster", 6>, I32EnumAttrCase<"narrow", 7>]> {
  let cppNamespace = "::mlir::kgen";
  let genSpecializedAttr = 0;
}

def Kgen_VariantAttr : AttrDef<Kgen_Dialect, "Variant"> {
  let mnemonic = "variant";
  let summary = "Which clone of a kernel this is, and when it is launched";
  let description = [{
    Set by kgen-make-variants on each clone (`kgen.variant`); the runtime
    launches the first variant, lowest `priority` first (the spec lists them
    so; ties keep the module's order), whose assumptions the arguments
    meet. Every kind but `any` assumes 16-byte aligned tensors and dims that
    place accesses a multiple of 16 (a bounded dim: of a chunk, or for
    `narrow` of less) (`kgen.align`, `kgen.divisibility`); `any` assumes
    element alignment only.
    - `vec`: the aligned kernel; `any`: the fallback.
    - `exact`: rows of exactly `length` elements (`_vec_nN`), compiled as
      the kernel specialized on it.
    - `held`: rows of any length held in `chunks` chunks a thread over whole
      warps the launch picks (`_vec_holdC`), on at most `maxThreads` threads
      (0: the schedule's most); `wide`: the blocks past the narrow one's
      `maxThreads` (`_vec_hold4_wide`), under their own register cap.
    - `warp`: rows of `minLength` to `maxLength` elements, a warp a row,
      launched from `minRows` rows (`_vec_warp`).
    - `rows`: launched from `minRows` rows (`_vec_rows`).
    - `cluster`: launched on at most `maxRows` rows, a row over a cluster of
      blocks (`_vec_cluster`).
    - `narrow`: as `vec`, but its bounded dims (`kgen.max`: rope's rotary
      pairs) are a multiple of a smaller power of two only (`_vec_mD`), for
      the values `vec` does not take.
  }];
  let parameters = (ins
      EnumParameter<Kgen_VariantKind>:$kind,
      DefaultValuedParameter<"int64_t", "0">:$length,
      DefaultValuedParameter<"int64_t", "0">:$chunks,
      DefaultValuedParameter<"int64_t", "0">:$maxThreads,
      DefaultValuedParameter<"bool", "false">:$wide,
      DefaultValuedParameter<"int64_t", "0">:$minLength,
      DefaultValuedParameter<"int64_t", "0">:$maxLength,
      DefaultValuedParameter<"int64_t", "0">:$minRows,
      DefaultValuedParameter<"int64_t", "0">:$maxRows,
      DefaultValuedParameter<"int64_t", "0">:$priority);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether the variant assumes 16-byte alignment (all but `any`).
    bool isAligned() const { return getKind() != VariantKind::any; }
  }];
}

def Kgen_LaunchPolicyAttr : AttrDef<Kgen_Dialect, "LaunchPolicy"> {
  let mnemonic = "launch_policy";
  let summary = "The block shapes a module's kernels launch with";
  let description = [{
    The `kgen::launch::LaunchPolicy` (runtime/LaunchPolicy.h) that
    kgen-make-variants and kgen-schedule follow, set on the module by
    kgen-launch-policy. The spec records it, and the runtime launches the
    kernels whose shape is chosen at launch by it. `fields` holds every
    field, by its spec name, as an i64.
  }];
  let parameters = (ins "::mlir::DictionaryAttr":$fields);
  let assemblyFormat = "`<` $fields `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static LaunchPolicyAttr get(::mlir::MLIRContext *ctx,
                                const ::kgen::launch::LaunchPolicy &policy);
    ::kgen::launch::LaunchPolicy getPolicy() const;
  }];
}

#endif // KGEN_DIALECT_TD

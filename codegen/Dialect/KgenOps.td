//===- KgenOps.td - Operations of the kgen dialect ---------*- tablegen -*-===//
#ifndef KGEN_OPS_TD
#define KGEN_OPS_TD

include "codegen/Dialect/KgenDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/EnumAttr.td"

def Kgen_KernelOp : Kgen_Op<"kernel", [
    FunctionOpInterface, IsolatedFromAbove, Symbol]> {
  let summary = "A fused kernel: one row program run for every row";
  let description = [{
    Arguments are, in order: tensors (`!kgen.rows`, `!kgen.vector`,
    `!kgen.scalars`), scalar parameters (f32, i32, i64) and the dims that are
    not specialized (index). Each carries a `kgen.name` argument attribute.
    `dims` records the dims the kernel was specialized on. After scheduling a
    `schedule` attribute says how rows map to threads.

    ```mlir
    kgen.kernel @scale(%x: !kgen.rows<f32> {kgen.name = "x"},
                       %y: !kgen.rows<f32> {kgen.name = "y"})
        attributes {dims = {n = 4 : i64}} {
      %n = arith.constant 4 : index
      kgen.domain %n
      %c0 = arith.constant 0 : index
      %v = kgen.load %x[%c0] : !kgen.rows<f32> -> tensor<4xf32>
      kgen.store %v, %y[%c0] : tensor<4xf32>, !kgen.rows<f32>
      kgen.return
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       DictionaryAttr:$dims,
                       OptionalAttr<Kgen_ScheduleAttr>:$schedule,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    /// The kgen.name of argument i.
    ::llvm::StringRef getArgName(unsigned i);
    /// The kgen.domain op of the body.
    class DomainOp getDomainOp();
  }];
}

def Kgen_ReturnOp : Kgen_Op<"return", [Pure, Terminator,
                                       HasParent<"KernelOp">]> {
  let summary = "Ends a row program";
  let assemblyFormat = "attr-dict";
}

def Kgen_DomainOp : Kgen_Op<"domain", [HasParent<"KernelOp">]> {
  let summary = "Declares the length of every row value of the kernel";
  let description = [{
    Exactly one per kernel. Row values are tensors of this length: static
    when the dims it depends on are specialized, `?` otherwise.
  }];
  let arguments = (ins Index:$length);
  let assemblyFormat = "$length attr-dict";
}

def Kgen_LoadOp : Kgen_Op<"load", [MemoryEffects<[MemRead]>]> {
  let summary = "Reads a strided view of the current row of a tensor";
  let description = [{
    Element i of the result is element `start + i * stride` of row r of a
    `!kgen.rows` tensor (of the vector, for `!kgen.vector`). Loading a
    `!kgen.scalars` tensor gives its element r as a scalar.
    `vector_width` is set by the alignment analysis: how many elements one
    memory access may move. For a stride-2 view paired with the view one
    element after it (x[b::2] and x[b+1::2]), it is the width of the
    accesses that move the contiguous span the two cover.
  }];
  let arguments = (ins Kgen_AnyTensorArg:$source, Optional<Index>:$start,
                       DefaultValuedAttr<I64Attr, "1">:$stride,
                       OptionalAttr<I64Attr>:$vector_width);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $source (`[` $start^ `]`)? attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kgen_StoreOp : Kgen_Op<"store", [MemoryEffects<[MemWrite]>,
                                      AttrSizedOperandSegments]> {
  let summary = "Writes a row value into a strided view of the current row";
  let description = [{
    The converse of `kgen.load`: element i of `value` goes to element
    `start + i * stride` of row r of `dest`; a scalar value goes to element r
    of a `!kgen.scalars` tensor. With `group` G, element i * G of `value`
    goes there instead: one element per run of G (a per-group output, such
    as a `kgen.group_reduce` result), row lengths a multiple of G. A group
    store's `pitch` spaces those elements `pitch` apart (column-major
    scales, with a row stride of 1).
  }];
  let arguments = (ins AnyType:$value, Kgen_AnyTensorArg:$dest,
                       Optional<Index>:$start, Optional<Index>:$pitch,
                       DefaultValuedAttr<I64Attr, "1">:$stride,
                       OptionalAttr<I64Attr>:$vector_width,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$group);
  let assemblyFormat = [{
    $value `,` $dest (`[` $start^ `]`)? (`pitch` $pitch^)? attr-dict `:`
    type($value) `,` type($dest)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Row maps: which row of a tensor a row program sees. They apply to kernel
// arguments only (views do not nest), so the lowering computes each one's
// row pointer once per thread.
//===----------------------------------------------------------------------===//

def Kgen_GroupOp : Kgen_Op<"group", [Pure,
    AllTypesMatch<["source", "result"]>]> {
  let summary = "A tensor whose rows are shared by groups of row programs";
  let description = [{
    Row program r sees row `r / group` of `source` (a `!kgen.rows` or
    `!kgen.scalars` argument): per-batch vectors, positions per token.

    ```mlir
    %shift_b = kgen.group %shift by %n : !kgen.rows<bf16>
    ```
  }];
  let arguments = (ins Kgen_AnyTensorArg:$source, Index:$group);
  let results = (outs Kgen_AnyTensorArg:$result);
  let assemblyFormat = "$source `by` $group attr-dict `:` type($source)";
  let hasVerifier = 1;
}

def Kgen_HeadsOp : Kgen_Op<"heads", [Pure, AttrSizedOperandSegments]> {
  let summary = "Rows of sub-rows (heads) across one or more tensors";
  let description = [{
    Each row of part i holds `counts[i]` sub-rows of `length` elements. With
    G = sum(counts), row program r sees sub-row h = r % G of token r / G,
    which lives in the part whose range of sub-rows holds h (q's heads, then
    k's): one row program per (token, head) over several tensors. Sub-row j
    of part i starts `pitches[i]` * j elements into the row (heads padded
    inside a row); without pitches, `length` * j. With `!kgen.vector` parts
    (one vector of `length` per part, such as QK-norm's q and k weights),
    row program r sees the vector of the part holding h. With
    `!kgen.scalars` parts (`length` 1), row program r sees element
    `t * stride + (h - first) * pitch` of its part, where the part's row
    stride is a kernel parameter as a rows tensor's (per-head outputs).

    ```mlir
    %qk = kgen.heads [%q, %k] counts [%hq, %hk] length %d
        : !kgen.rows<bf16>, !kgen.rows<bf16> -> !kgen.rows<bf16>
    %qp = kgen.heads [%q] counts [%hq] pitches [%pq] length %d
        : !kgen.rows<bf16> -> !kgen.rows<bf16>
    %w = kgen.heads [%wq, %wk] counts [%hq, %hk] length %d
        : !kgen.vector<bf16>, !kgen.vector<bf16> -> !kgen.rows<bf16>
    ```
  }];
  let arguments = (ins Variadic<AnyTypeOf<[Kgen_RowsType,
                                           Kgen_ColumnVectorType,
                                           Kgen_ScalarsType]>>:$parts,
                       Variadic<Index>:$counts, Variadic<Index>:$pitches,
                       Index:$length);
  let results = (outs AnyTypeOf<[Kgen_RowsType, Kgen_ScalarsType]>:$result);
  let assemblyFormat = [{
    `[` $parts `]` `counts` `[` $counts `]`
    (`pitches` `[` $pitches^ `]`)? `length` $length attr-dict `:`
    type($parts) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kgen_GatherOp : Kgen_Op<"gather", [MemoryEffects<[MemRead]>,
    AllTypesMatch<["table", "result"]>]> {
  let summary = "Rows of a table picked by a per-row index";
  let description = [{
    Row program r sees row `index[r]` of `table`, which has `rows` rows. An
    index outside [0, rows) makes every element the row program loads from
    the result NaN; no memory outside the table is read.

    ```mlir
    %cs = kgen.gather %cache[%pos] rows %max_pos
        : !kgen.rows<f32>, !kgen.scalars<i64>
    ```
  }];
  let arguments = (ins Kgen_RowsType:$table, Kgen_ScalarsType:$index,
                       Index:$rows);
  let results = (outs Kgen_RowsType:$result);
  let assemblyFormat = [{
    $table `[` $index `]` `rows` $rows attr-dict `:` type($table) `,`
    type($index)
  }];
  let hasVerifier = 1;
}

def Kgen_ReduceKindAttr : I32EnumAttr<"ReduceKind", "row reduction", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"sqdev", 3>,
    I32EnumAttrCase<"expsum", 4>]> {
  let cppNamespace = "::mlir::kgen";
}

def Kgen_ReduceOp : Kgen_Op<"reduce", [Pure]> {
  let summary = "Reduces a row value to one value per row";
  let description = [{
    `sum` adds in f32 in an unspecified order; `max` and `min` propagate NaN.
    `sqdev` is the sum of the squared deviations of the row's elements from
    their mean, combined from partial counts, sums and sums of squared
    deviations (Chan, Golub and LeVeque's pairwise update, as PyTorch's
    Welford reductions): one reduction level where `sum((x - mean(x))^2)`
    takes two. `expsum` is `sum(exp(x - max(x)))`, its exponentials as
    `math.exp` with the op's `kgen.exp_fastmath` attribute (arith flags,
    none when absent), from partial maxima and sums rescaled to the larger
    maximum (the online softmax): one level where softmax's max then sum
    take two.
  }];
  let arguments = (ins Kgen_ReduceKindAttr:$kind, 1DTensorOf<[F32]>:$input);
  let results = (outs F32:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input) `->` type($result)";
}

def Kgen_GroupReduceOp : Kgen_Op<"group_reduce", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Reduces each run of `group` elements of a row value";
  let description = [{
    Element i of the result is the reduction (`sum`, `max` or `min`, as
    `kgen.reduce`'s) of the run of `group` consecutive elements holding
    element i. The row's length is a multiple of `group`.

    ```mlir
    %top = kgen.group_reduce max %a group 128 : tensor<?xf32>
    ```
  }];
  let arguments = (ins Kgen_ReduceKindAttr:$kind, 1DTensorOf<[F32]>:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$group);
  let results = (outs 1DTensorOf<[F32]>:$result);
  let assemblyFormat = "$kind $input `group` $group attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Kgen_BroadcastOp : Kgen_Op<"broadcast", [Pure]> {
  let summary = "Makes a row value whose elements all equal a per-row value";
  let arguments = (ins AnyTypeOf<[AnyFloat, AnySignlessInteger, Index]>:$input);
  let results = (outs 1DTensorOf<[AnyType]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // KGEN_OPS_TD

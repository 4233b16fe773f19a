//===- Passes.td - kgen passes -----------------------------*- tablegen -*-===//
#ifndef KGEN_PASSES_TD
#define KGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def KgenFastMath : Pass<"kgen-fast-math", "ModuleOp"> {
  let summary = "Cheaper arithmetic whose error the tolerance covers";
  let description = [{
    Division of a row by a per-row scalar becomes multiplication by the
    scalar's reciprocal (computed once per row; a subnormal divisor is
    scaled first). In kernels whose float outputs are all 16-bit or fp8,
    `math.exp` gets `fastmath<afn>` (lowered to ex2.approx of x * log2(e))
    and an element-wise f32 `x / y` becomes `x * (1 / y)` with the
    reciprocal marked `afn` (rcp.approx.f32).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def KgenOnePassVariance : Pass<"kgen-one-pass-variance", "ModuleOp"> {
  let summary = "Sum of squared deviations from the mean in one reduction";
  let description = [{
    In the variants for few rows (the cluster kind: `_vec_cluster`),
    rewrites `reduce sum ((x - m) * (x - m))`, where `m` is the row's mean
    (`reduce sum x` divided by the row length), into `reduce sqdev x`. The
    variance then needs no reduction of a reduction: one cluster barrier
    fewer a row.
  }];
  let dependentDialects = ["::mlir::kgen::KgenDialect"];
}

def KgenOnlineSoftmax : Pass<"kgen-online-softmax", "ModuleOp"> {
  let summary = "softmax's sum of exponentials in one reduction";
  let description = [{
    In the variants for few rows (the cluster kind: `_vec_cluster`),
    rewrites `reduce sum (exp(x - m))`, where `m` is `reduce max x`, into
    `reduce expsum x` (carrying the exponential's fastmath flags): one
    cluster barrier fewer a row.
  }];
  let dependentDialects = ["::mlir::kgen::KgenDialect"];
}

def KgenLaunchPolicy : Pass<"kgen-launch-policy", "ModuleOp"> {
  let summary = "Set the launch policy the schedule and the runtime share";
  let description = [{
    Sets the module's `kgen.launch_policy` from the options (each a field of
    `kgen::launch::LaunchPolicy`, runtime/LaunchPolicy.h, whose defaults they
    take). kgen-make-variants and kgen-schedule read it; the spec records it,
    and the runtime shapes the launches it chooses by it. A profile sets the
    options as any pass's (codegen/Profiles).
  }];
  let options = [
    Option<"rowsBlock", "rows-block", "int64_t",
           "::kgen::launch::LaunchPolicy{}.rowsBlock",
           "Threads a block of rows with reductions is packed into">,
    Option<"minBlockThreads", "min-block-threads", "int64_t",
           "::kgen::launch::LaunchPolicy{}.minBlockThreads",
           "The fewest threads a block of whole-warp rows takes">,
    Option<"minBlockChunks", "min-block-chunks", "int64_t",
           "::kgen::launch::LaunchPolicy{}.minBlockChunks",
           "...and the fewest chunks its rows hold">,
    Option<"maxOneChunkThreads", "max-one-chunk-threads", "int64_t",
           "::kgen::launch::LaunchPolicy{}.maxOneChunkThreads",
           "The most threads of a row held a chunk a thread (`_vec_hold1`)">,
    Option<"warpRowChunks", "warp-row-chunks", "int64_t",
           "::kgen::launch::LaunchPolicy{}.warpRowChunks",
           "Chunks a lane of `_vec_warp` holds">,
    Option<"manyRows", "many-rows", "int64_t",
           "::kgen::launch::LaunchPolicy{}.manyRows",
           "Rows from which `_vec_rows` is launched">,
    Option<"manyRowsThreads", "many-rows-threads", "int64_t",
           "::kgen::launch::LaunchPolicy{}.manyRowsThreads",
           "The most threads a row takes on many rows">,
    Option<"maxThreadsPerRow", "max-threads-per-row", "int64_t",
           "::kgen::launch::LaunchPolicy{}.maxThreadsPerRow",
           "...and on fewer rows">,
    Option<"rereadChunks", "reread-chunks", "int64_t",
           "::kgen::launch::LaunchPolicy{}.rereadChunks",
           "Chunks a thread takes a pass over a re-read row the launch shapes">
  ];
}

def KgenMakeVariants : Pass<"kgen-make-variants", "ModuleOp"> {
  let summary = "Clone each kernel into an aligned and a fallback variant";
  let description = [{
    The `_vec` clone assumes every tensor's base pointer and row pitch are
    16-byte aligned and every dynamic dim a multiple of 16 (`kgen.align`,
    `kgen.divisibility` argument attributes, as Triton's divisibility
    specialization); the `_any` clone assumes only element alignment. A
    kernel of dynamic length also gets `_vec_nN` clones (kind `exact`)
    for rows of exactly N elements (common hidden sizes), compiled like a
    kernel specialized on N, and, when it reduces, `_vec_holdC` clones
    (kind `held`) that hold a row of any length in C chunks per
    thread over whole warps the runtime chooses at launch. The runtime
    launches the first variant whose assumptions the arguments meet (the
    best-fitting of the `_vec_holdC` ones). Each clone's `kgen.variant` is a
    `#kgen.variant` naming its kind and that kind's fields.

    A kernel of static length that reduces, over rows of whole chunks, also
    gets `_vec_rows` (kind `rows`): the runtime launches it only on many
    rows, and the schedule gives it one row per block and at most 128
    threads per row (dropped where those are `_vec`'s threads). With
    `clusters` (sm_90 and newer), such a kernel over rows of at least 256
    chunks also gets `_vec_cluster` (kind `cluster`), first: the runtime
    launches it only on few rows, and the schedule spreads each row over a
    cluster of blocks.

    A kernel whose accesses a bounded dim places (`kgen.max`: rope's rotary
    pairs) also gets, after `_vec`, `_vec_mD` clones (kind `narrow`) for
    each power of two D below a chunk's elements, down to 2: the bounded
    dim a multiple of D only, so that its other values move D elements an
    access rather than one (`narrow-bounded-dims`).
  }];
  let options = [
    Option<"clusters", "clusters", "bool", "false",
           "Make `_vec_cluster` variants (the target has clusters)">,
    Option<"narrowBoundedDims", "narrow-bounded-dims", "bool", "true",
           "Make `_vec_mD` variants for bounded dims that are not whole "
           "chunks">,
    // Tuning (a profile sets these; codegen/Profiles).
    ListOption<"exactLengths", "exact-lengths", "int64_t",
               "Row lengths a dynamic kernel gets `_vec_nN` variants for",
               "llvm::cl::list_init<int64_t>({2048, 4096, 8192, 16384})">,
    ListOption<"heldChunks", "held-chunks", "int64_t",
               "Chunks a thread of the `_vec_holdC` variants holds",
               "llvm::cl::list_init<int64_t>({2, 4, 8})">,
    Option<"maxHeldElements", "max-held-elements", "int64_t", "64",
           "Row-load elements a thread of a held variant may hold">,
    Option<"splitHeldChunks", "split-held-chunks", "int64_t", "4",
           "A widest held variant of this many chunks is split in two...">,
    Option<"splitHeldThreads", "split-held-threads", "int64_t", "256",
           "...at this many threads (`_vec_hold4` and `_vec_hold4_wide`)">,
    Option<"heldThreadsAsGood", "held-threads-as-good", "int64_t", "256",
           "Threads up to which a held variant replaces a `_vec_nN` one">,
    Option<"warpMinRows", "warp-min-rows", "int64_t", "4096",
           "Rows from which `_vec_warp` is launched">,
    Option<"clusterChunksPerRow", "cluster-chunks-per-row", "int64_t", "64",
           "`_vec_cluster` takes at most a row's chunks / this many rows">,
    Option<"clusterMinChunks", "cluster-min-chunks", "int64_t", "256",
           "The shortest row, in chunks, that gets `_vec_cluster`">,
    Option<"expSumClusterChunksPerRow", "exp-sum-cluster-chunks-per-row",
           "int64_t", "128", "cluster-chunks-per-row for an online softmax">,
    Option<"expSumClusterMinChunks", "exp-sum-cluster-min-chunks", "int64_t",
           "1024", "cluster-min-chunks for an online softmax">,
    Option<"twoLevelClusterChunksPerRow", "two-level-cluster-chunks-per-row",
           "int64_t", "32",
           "cluster-chunks-per-row where `_vec` reduces in two levels and "
           "the cluster in one">,
    Option<"twoLevelClusterMaxRows", "two-level-cluster-max-rows", "int64_t",
           "32", "...and the most rows such a cluster variant takes">,
    Option<"nestedClusterMinChunks", "nested-cluster-min-chunks", "int64_t",
           "2048", "cluster-min-chunks where the cluster reduces in two "
           "levels">,
    Option<"nestedClusterMaxRows", "nested-cluster-max-rows", "int64_t", "8",
           "...and the most rows such a cluster variant takes">,
  ];
  let dependentDialects = ["::mlir::kgen::KgenDialect"];
}

def KgenSchedule : Pass<"kgen-schedule", "ModuleOp"> {
  let summary = "Choose how rows are spread over threads";
  let description = [{
    Attaches `#kgen.schedule` to each kernel: a chunk of 16 bytes of the
    widest row dtype per thread, threads per row so that each thread holds a
    few chunks (several loads in flight), the most rows per block and the
    rows a block takes at launch, and whether the row stays in registers
    between reductions and writes (when it fits) or is re-read (dynamic or
    very long rows).
  }];
  let options = [
    Option<"threadsPerRow", "threads-per-row", "int64_t", "0",
           "Force the threads per row (a power of two; 0 = choose)">,
    Option<"rowsPerBlock", "rows-per-block", "int64_t", "0",
           "Force the rows per block, at launch too (0 = choose)">,
    Option<"registersPerSM", "registers-per-sm", "int64_t", "65536",
           "Registers of an SM (the target's)">,
    Option<"maxBlockThreads", "max-block-threads", "int64_t", "1024",
           "Threads a block may take (the target's)">,
    // Tuning (a profile sets these; codegen/Profiles).
    Option<"maxRegisterElements", "max-register-elements", "int64_t", "128",
           "Held row elements a thread may keep before the row is re-read">,
    Option<"targetChunks", "target-chunks", "int64_t", "4",
           "Chunks a thread aims to hold of a row that reduces">,
    Option<"targetChunksElementwise", "target-chunks-elementwise", "int64_t",
           "1", "...of a row that does not">,
    Option<"splitTargetMinChunks", "split-target-min-chunks", "int64_t", "256",
           "The shortest row, in chunks, whose held rows split target-chunks">,
    Option<"elementwiseBlock", "elementwise-block", "int64_t", "128",
           "Threads per block of kernels without reductions">,
    Option<"dynamicThreads", "dynamic-threads", "int64_t", "256",
           "Threads per row of dynamic rows the launch does not shape">,
    Option<"wideRowThreads", "wide-row-threads", "int64_t", "512",
           "The most threads a row that reduces on few rows may take">,
    Option<"maxHeldThreads", "max-held-threads", "int64_t", "512",
           "The most threads a row held over launched threads may take">,
    Option<"maxHeldChunks", "max-held-chunks", "int64_t", "8",
           "The most chunks a thread holds of each row load">,
    Option<"narrowRowThreads", "narrow-row-threads", "int64_t", "4",
           "Threads a row takes of many short rows stored narrower">,
    Option<"narrowRowsMinThreads", "narrow-rows-min-threads", "int64_t",
           "229376", "...from launches of this many threads">,
    Option<"clusterBlockChunks", "cluster-block-chunks", "int64_t", "128",
           "Chunks each block of a cluster aims to take of its row">,
    Option<"minTileThreads", "min-tile-threads", "int64_t", "128",
           "The fewest threads a tile of a row without reductions takes">,
    Option<"streamingRowsLoads", "streaming-rows-loads", "int64_t", "0",
           "Chunks a thread of the many-rows variant of a row without "
           "reductions holds, over the views it loads (0: no such variant)">,
    Option<"streamingRowsMinThreads", "streaming-rows-min-threads",
           "int64_t", "1048576", "...from launches of this many threads">,
  ];
  let dependentDialects = ["::mlir::kgen::KgenDialect"];
}

def KgenVectorize : Pass<"kgen-vectorize", "ModuleOp"> {
  let summary = "Alignment and contiguity analysis: vector width per access";
  let description = [{
    Sets `vector_width` on each row load and store: the widest power of two
    elements, at most the schedule's chunk, such that the access is
    contiguous and its address is provably aligned to that many elements'
    bytes, given the kernel's `kgen.align` / `kgen.divisibility` assumptions
    and the divisibility of the view's start.
  }];
}

def KgenOccupancy : Pass<"kgen-occupancy", "ModuleOp"> {
  let summary = "Cap each kernel's registers for the blocks an SM keeps";
  let description = [{
    Sets each scheduled kernel's `maxRegisters` (the `.maxnreg` its function
    gets) and `busyRow` in its `#kgen.schedule`, from the row it holds and
    its block: enough registers for the held row, and no more than keeps
    the resident threads the options name. With `busy-rows`, a long bf16
    row of a kernel with a second reduction level or a narrower output is
    held under a cap for three blocks an SM. Runs after kgen-vectorize (a
    row held in vectors takes its cap; one accessed element by element
    does not).
  }];
  let options = [
    Option<"registersPerSM", "registers-per-sm", "int64_t", "65536",
           "Registers of an SM (the target's)">,
    // Tuning (a profile sets these; codegen/Profiles).
    Option<"busyRows", "busy-rows", "bool", "false",
           "Three blocks an SM for long busy bf16 rows (measured on sm_90)">,
    Option<"lateRowRegisters", "late-row-registers", "bool", "false",
           "Count rows loaded late (chosen per group of rows, or in a "
           "cluster) in the register cap of wide blocks (sm_100: ptxas "
           "spilled without them)">,
    Option<"minResidentThreads", "min-resident-threads", "int64_t", "512",
           "Threads an SM keeps resident under the register cap">,
    Option<"rereadResidentThreads", "reread-resident-threads", "int64_t",
           "768", "...for a kernel that re-reads its rows">,
    Option<"busyResidentThreads", "busy-resident-threads", "int64_t", "768",
           "...for busy rows (busy-rows)">,
    Option<"busyRowChunks", "busy-row-chunks", "int64_t", "8",
           "Chunks a thread holds of a busy row (busy-rows)">,
    Option<"busyRowBlock", "busy-row-block", "int64_t", "256",
           "The widest block of busy rows (busy-rows)">,
    Option<"wideBlock", "wide-block", "int64_t", "256",
           "Launched threads from which a block of few chunks a thread is "
           "wide">,
    Option<"fewChunks", "few-chunks", "int64_t", "4",
           "The most chunks a thread of a wide block holds">,
    Option<"wideBlockResidentThreads", "wide-block-resident-threads",
           "int64_t", "1024", "Threads an SM keeps resident of wide blocks">,
    Option<"registersBesideRow", "registers-beside-row", "int64_t", "24",
           "Registers a wide block's thread needs besides its row's words">,
    Option<"widestHeldThreads", "widest-held-threads", "int64_t", "448",
           "Threads of the `_vec_hold4_wide` block two of which an SM keeps">,
    Option<"groupResidentThreads", "group-resident-threads", "int64_t",
           "1024", "...for a held row quantized per group (a group_reduce)">,
    Option<"groupRowChunks", "group-row-chunks", "int64_t", "4",
           "The most chunks a thread holds of such a row">,
    Option<"streamingResidentThreads", "streaming-resident-threads",
           "int64_t", "0",
           "Threads an SM keeps resident of a vectorized kernel without "
           "reductions or row maps (0: the rules above)">,
    Option<"streamingOneRowResidentThreads",
           "streaming-one-row-resident-threads", "int64_t", "0",
           "...of such a kernel whose thread holds one chunk of one view "
           "(0: as any other)">
  ];
}

def KgenPrefetch : Pass<"kgen-prefetch", "ModuleOp"> {
  let summary = "Decide which held rows are prefetched to L2, and how";
  let description = [{
    Sets each held kernel's prefetches in its `#kgen.schedule`
    (`prefetchBlocks`, `prefetchFirst`, `prefetchLines`, `prefetchAhead`):
    with `prefetch` (kernels that wait on the grids before them), the held
    row's lines go to L2 before the wait, in grids of at most
    prefetch-blocks blocks or in the first prefetch-blocks blocks of any
    grid; with `prefetch-ahead`, a block of a kernel that reduces prefetches
    a later block's row once its own loads are issued.
  }];
  let options = [
    Option<"prefetch", "prefetch", "bool", "false",
           "Prefetch a held row's lines to L2 before any memory access (for "
           "kernels that wait on the grids before them; the target's)">,
    // Tuning (a profile sets these; codegen/Profiles).
    Option<"prefetchAhead", "prefetch-ahead", "bool", "false",
           "Once a held row's loads are issued, prefetch a later block's row "
           "to L2 (measured on sm_90)">,
    Option<"prefetchChunks", "prefetch-chunks", "int64_t", "4",
           "Chunks a thread holds up to which it prefetches its own chunks' "
           "lines">,
    Option<"prefetchBlocks", "prefetch-blocks", "int64_t", "256",
           "The largest grid whose every block prefetches">
  ];
}

def KgenLowerToGPU : Pass<"kgen-lower-to-gpu", "ModuleOp"> {
  let summary = "Lower scheduled row programs to gpu.func kernels";
  let description = [{
    Each kernel becomes a `gpu.func` in `gpu.module @kgen`: thread i of a
    row handles chunks i, i + threads_per_row, ... of the row; loads and
    stores become `llvm.load`/`llvm.store` of `vector_width` elements (with a
    masked tail); reductions are per-thread, then warp shuffles, then shared
    memory across the warps of a row. A `launchThreads` schedule takes its
    threads from the launched block (`nvvm.maxntid` bounds them) and masks
    each thread's last chunk as a whole. A block of several rows reads how
    many it holds from its size (`nvvm.maxntid` bounds it), so that the
    launch may give it fewer. Parameters are raw pointers, row
    strides (elements), scalars, dynamic dims and the row count; the order is
    recorded in the `kgen.abi` attribute for the spec. Each function takes
    the register cap its schedule names (kgen-occupancy).
  }];
  let options = [
    // Tuning (a profile sets these; codegen/Profiles).
    Option<"clusterPreloadChunks", "cluster-preload-chunks", "int64_t", "2",
           "Chunks a thread of a cluster holds up to which it loads every "
           "row with the reductions'">,
    Option<"prefetchAheadBytes", "prefetch-ahead-bytes", "int64_t",
           "6291456", "How far ahead, in bytes of row inputs, prefetch-ahead "
           "reaches">,
    Option<"prefetchAheadMinRows", "prefetch-ahead-min-rows", "int64_t",
           "1024", "Rows a grid needs for prefetch-ahead">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect"
  ];
}

def KgenExpandFP8 : Pass<"kgen-expand-fp8", "ModuleOp"> {
  let summary = "Expand conversions to fp8 into integer arithmetic";
  let description = [{
    LLVM has no fp8 types. Each `arith.truncf` from f32 to f8E4M3FN or
    f8E5M2 becomes round-to-nearest-even on the f32 bits, saturating to the
    largest finite value (PTX's `cvt.rn.satfinite`; NaN stays NaN), and
    yields the byte through an `arith.bitcast`, so that fp8 stores move i8.
    Works on any GPU (sm_75 has no fp8 conversion instruction). With
    `native` (sm_90 and newer; sm_89 with PTX 8.1), pairs of values become
    `nvvm.convert.f32x2.to.f8x2` instead: the same rounding, saturation and
    NaN, in one instruction per two values.
  }];
  let options = [
    Option<"native", "native", "bool", "false",
           "Use cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 (sm_90 and newer)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def KgenSaturatingConvert : Pass<"kgen-saturating-convert", "ModuleOp"> {
  let summary = "Float to 8- and 16-bit integers in one cvt per element";
  let description = [{
    The DSL's float-to-integer conversion clamps to the integer type's range,
    truncates and maps NaN to 0: `select(cmpf uno f f, 0, fptosi(minimumf(
    maximumf(f, lo), hi)))`. For i8 and i16 that chain becomes
    `llvm.nvvm.f2i.rz` (PTX `cvt.rzi.s32.f32`, which saturates and maps NaN
    to 0) per element and an integer clamp; with `math.roundeven` before it,
    `llvm.nvvm.f2i.rn` of the unrounded value.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def KgenGridDependency : Pass<"kgen-grid-dependency", "ModuleOp"> {
  let summary = "Programmatic dependent launch in every kernel (sm_90+)";
  let description = [{
    Runs on the nvvm/llvm form: each kernel (`llvm.func` with `nvvm.kernel`)
    gets `nvvm.griddepcontrol wait`, then `nvvm.griddepcontrol
    launch_dependents`, in the block that dominates every op that touches
    memory or synchronizes, before the first of them there. Prefetches,
    pure ops and libdevice calls may come before it. Launched with
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, a kernel's blocks
    may then be placed while the kernel before it on the stream finishes,
    and wait for its writes there. Only for sm_90 and newer.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

#endif // KGEN_PASSES_TD

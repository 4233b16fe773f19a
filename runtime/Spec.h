//===- Spec.h - The kernel spec (JSON, versions 2 and 3) --------*- C++ -*-===//
//
// What the runtime knows about a compiled kernel: its logical parameters, and
// the variants (PTX entries) to try in order with their requirements and
// parameter ABI. Names are resolved to indices when parsing, so launching
// never looks anything up by name.
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_RUNTIME_SPEC_H
#define KGEN_RUNTIME_SPEC_H

#include "runtime/LaunchPolicy.h"
#include "runtime/kgen_runtime.h"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kgen::rt {

/// "f32", "bf16", ...
const char *dtypeName(kgen_dtype dtype);
/// Bytes per element; 0 for an out-of-range value.
int64_t dtypeSize(kgen_dtype dtype);
bool parseDtype(std::string_view name, kgen_dtype &out);
/// True if `dtype` is one of the enumerators (callers may pass anything).
bool isValidDtype(int dtype);
const char *argKindName(kgen_arg_kind kind);

/// A tensor's row length: `scale * dims[dimParam]` when dimParam >= 0, else
/// the constant `scale`.
struct RowLength {
  int64_t scale = 0;
  int dimParam = -1;
  std::string text; // as written in the spec
};

struct Param {
  /// rows: [rows, n] with a row stride; vector: [n] shared by all rows;
  /// scalars: [rows], one element per row.
  enum class Access { Rows, Vector, Scalars };

  std::string name;
  kgen_arg_kind kind = KGEN_ARG_TENSOR;
  kgen_dtype dtype = KGEN_F32;
  // Tensors only.
  Access access = Access::Rows;
  RowLength rowLength;
  /// Padded heads (row_map.sub_rows.pitch, kgen_spec 3): `headCount` heads
  /// of `headLength` elements, `headPitch` apart. A row spans count * pitch,
  /// `span` ("q_heads*q_head_stride"); else `span` is the row length's text.
  bool padded = false;
  RowLength headCount, headLength, headPitch;
  /// Elements a pitch apart ("pitch", kgen_spec 4; per-group scales): padded
  /// with the row length's heads of one element each, rows for tokens.
  bool pitched = false;
  std::string span;
  bool writes = false;
  // Dims only: the largest value a launch may pass (the kernel relies on it).
  int64_t maxDim = INT64_MAX;
  // f32 scalars only: the least value a launch may pass (the kernel relies
  // on it), compared with the value as the kernel gets it (an f32).
  double minScalar = -std::numeric_limits<double>::infinity();
};

/// Whether `p` takes a row stride (kgen_arg.row_stride, a "stride" slot): rows
/// tensors, and per-head scalars (padded scalars), whose tokens lie a stride
/// apart and heads a pitch apart (vLLM's row- or column-major scales).
inline bool hasRowStride(const Param &p) {
  return p.kind == KGEN_ARG_TENSOR &&
         (p.access == Param::Access::Rows ||
          (p.access == Param::Access::Scalars && p.padded));
}

struct AbiSlot {
  enum class Kind { Ptr, Stride, Scalar, Dim, Rows };
  Kind kind = Kind::Rows;
  int param = -1; // unused for Rows
};

struct Variant {
  std::string entry;
  int block = 0;
  int rowsPerBlock = 1;
  int sharedBytes = 0;
  /// Blocks per group of rows_per_block rows: each row is split into that
  /// many tiles (kernels without reductions, and rows over a thread-block
  /// cluster, which the PTX declares: the spec's "cluster").
  int tiles = 1;
  /// The tiles of a row form a cluster (the PTX's .reqnctapercluster).
  bool cluster = false;
  /// (tensor param, bytes): pointer and row stride in bytes must be
  /// multiples.
  std::vector<std::pair<int, int64_t>> tensorAlign;
  /// (dim param, multiple): the dim's value must be a multiple.
  std::vector<std::pair<int, int64_t>> dimMultiple;
  std::vector<AbiSlot> abi;
  /// > 0: only for rows of exactly this many elements (Spec::domain).
  int64_t exactDomain = 0;
  /// maxDomain > 0: only for rows of minDomain to maxDomain elements (Spec::
  /// domain, whole chunks of chunkElements), held a warp a row; a block
  /// takes LaunchPolicy::launchedRowsFor rows, at most launchRowsPerBlock.
  int64_t minDomain = 0;
  int64_t maxDomain = 0;
  /// > 0: only for launches of at least this many rows.
  int64_t minRows = 0;
  /// > 0: only for launches of at most this many rows.
  int64_t maxRows = 0;
  /// > 0: a launch may give a block fewer rows than rowsPerBlock (of block /
  /// rowsPerBlock threads each): this many, or fewer when the rows are few
  /// (see launchRowsPerBlock). 0: always rowsPerBlock.
  int64_t launchRowsPerBlock = 0;
  /// The launch chooses the threads of a row (Spec::domain, a whole number
  /// of chunks of chunkElements).
  bool launchThreads = false;
  /// > 1: the row is held in up to this many chunks per thread, over the
  /// fewest whole warps that hold it, one row a block (see launchThreads).
  /// 1: a chunk a thread, rows of at most max_one_chunk_threads chunks; 0: the
  /// row is re-read. These two take a block of x threads a row by y rows, x
  /// * y at most `block` (see launchedRowsBlock).
  int64_t heldChunks = 0;
  int64_t chunkElements = 0;
};

/// How a launch sizes a variant's grid and block: the spec's "launch":
/// {"rule": NAME}, formulas in docs/launching.md.
enum class LaunchRule {
  RowsPerBlock,       ///< "rows_per_block": the spec's rows and block
  LaunchRowsPerBlock, ///< "launch_rows_per_block": fewer rows on few rows
  DomainRange,        ///< "domain_range": rows by the row's chunks too
  LaunchThreads,      ///< "launch_threads": threads by the row, one row
  LaunchThreadsRows,  ///< "launch_threads_rows": x threads by y rows
};

/// The rule of a variant with these fields. Inline, so that the spec writer
/// (codegen, which does not link the runtime) names the rule the runtime
/// applies: the reader checks the name against this.
inline LaunchRule launchRuleOf(bool launchThreads, int64_t heldChunks,
                               bool launchRowsPerBlock, bool domainRange) {
  if (launchThreads)
    return heldChunks > 1 ? LaunchRule::LaunchThreads
                          : LaunchRule::LaunchThreadsRows;
  if (!launchRowsPerBlock)
    return LaunchRule::RowsPerBlock;
  return domainRange ? LaunchRule::DomainRange : LaunchRule::LaunchRowsPerBlock;
}

inline LaunchRule launchRule(const Variant &v) {
  return launchRuleOf(v.launchThreads, v.heldChunks, v.launchRowsPerBlock > 0,
                      v.maxDomain > 0);
}

inline const char *launchRuleName(LaunchRule rule) {
  switch (rule) {
  case LaunchRule::RowsPerBlock:
    return "rows_per_block";
  case LaunchRule::LaunchRowsPerBlock:
    return "launch_rows_per_block";
  case LaunchRule::DomainRange:
    return "domain_range";
  case LaunchRule::LaunchThreads:
    return "launch_threads";
  case LaunchRule::LaunchThreadsRows:
    return "launch_threads_rows";
  }
  return "?";
}

/// Threads a launch_threads variant takes for rows of `length` elements:
/// whole warps of `heldChunks` chunks each, or with one chunk a thread the
/// power of two at or above the row's chunks; a re-read variant's `block`.
/// May exceed v.block (the variant does not fit) or leave chunk slots idle
/// (launchIdleSlots).
int64_t launchThreads(const Variant &v, int64_t length);
/// Chunk slots those threads leave idle.
int64_t launchIdleSlots(const Variant &v, int64_t length);
/// Rows each block of a launch of `rows` rows of `length` elements holds, on
/// a device of `multiprocessors` (0: unknown), by the spec's `policy`.
int64_t launchRowsPerBlock(const Variant &v, const launch::LaunchPolicy &policy,
                           int64_t length, int64_t rows, int multiprocessors);
/// The block (threads a row, rows) a launch_threads variant of at most one
/// chunk a thread (held or re-read) takes for `rows` rows of `length`
/// elements, on a device of `multiprocessors` (0: unknown), by the spec's
/// `policy`.
std::pair<int64_t, int64_t>
launchedRowsBlock(const Variant &v, const launch::LaunchPolicy &policy,
                  int64_t length, int64_t rows, int multiprocessors);

struct Spec {
  int version = 0;
  std::string op;
  std::string dtype;
  std::string arch;
  std::string hash;
  std::map<std::string, int64_t> dims; // static dims
  std::vector<Param> params;
  std::vector<Variant> variants;
  /// The length of the kernel's row values (optional; needed by
  /// Variant::exactDomain).
  RowLength domain;
  bool hasDomain = false;
  /// The policy the kernel was compiled by ("launch_policy"; absent fields
  /// take the defaults): launches the runtime shapes follow it.
  launch::LaunchPolicy policy;
  /// Every entry waits for the kernels before it (griddepcontrol.wait)
  /// before touching memory: it may be launched as a programmatic dependent.
  bool gridDependency = false;

  /// "<op>_<dtype>", used to prefix messages.
  std::string name() const { return op + "_" + dtype; }
  int findParam(std::string_view name) const;
};

/// Parses and validates a spec. On failure returns false with a message that
/// names the offending key (e.g. "params[3]: missing required key 'kind'").
bool parseSpec(std::string_view json, Spec &out, std::string &err);

} // namespace kgen::rt

#endif // KGEN_RUNTIME_SPEC_H

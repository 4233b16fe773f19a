//===- LaunchPolicy.h - Block shapes the schedule and the runtime share ---===//
//
// kgen-schedule picks the rows a block of a specialized kernel launches;
// the runtime picks the block of the kernels whose shape is chosen at
// launch. Both follow one LaunchPolicy: codegen records the one it compiled
// with in the spec ("launch_policy"), and the runtime launches by it, so that
// a dynamic kernel launches as the specialized one of its length would. A
// plain struct: the runtime has no MLIR and codegen no CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_RUNTIME_LAUNCHPOLICY_H
#define KGEN_RUNTIME_LAUNCHPOLICY_H

#include <cstdint>

namespace kgen::launch {

/// The defaults are the generic profile's; the measurements behind them are
/// in bench/results/launch-decisions.md, variant-thresholds.md and
/// schedule-thresholds.md.
struct LaunchPolicy {
  /// Threads per block the rows of kernels with reductions are packed into;
  /// rows of part of a warp launch that many threads a block.
  int64_t rowsBlock = 256;
  /// The fewest threads a block of rows that reduce over whole warps takes
  /// when its rows fill the GPU: smaller blocks ran faster down to this.
  int64_t minBlockThreads = 64;
  /// ...and the fewest chunks (16 bytes each) its rows hold: blocks moving
  /// less run into the rate at which the GPU starts blocks.
  int64_t minBlockChunks = 256;
  /// The most threads (and chunks) of a row held in one chunk a thread (a
  /// dynamic kernel's `_vec_hold1`), several rows a block.
  int64_t maxOneChunkThreads = 64;
  /// Chunks a lane holds in a dynamic kernel's `_vec_warp`: rows of more
  /// than maxOneChunkThreads and at most 32 * warpRowChunks chunks.
  int64_t warpRowChunks = 4;
  /// Rows from which a kernel's `_vec_rows` variant is launched; from there
  /// a row takes at most manyRowsThreads threads, else maxThreadsPerRow.
  int64_t manyRows = 8192;
  int64_t manyRowsThreads = 128;
  int64_t maxThreadsPerRow = 256;
  /// Chunks a thread takes a pass over a re-read row whose threads the
  /// launch picks.
  int64_t rereadChunks = 8;

  /// Rows a block of rows that reduce over whole warps (`threadsPerRow`
  /// threads each, rows of `chunks` chunks) launches with, by the two
  /// minimums above.
  constexpr int64_t launchedRowsFor(int64_t threadsPerRow,
                                    int64_t chunks) const {
    int64_t byThreads = (minBlockThreads + threadsPerRow - 1) / threadsPerRow;
    int64_t byChunks = (minBlockChunks + chunks - 1) / chunks;
    return byThreads > byChunks ? byThreads : byChunks;
  }

  /// Threads a row that a held launch of `rows` rows prefers to stay
  /// within, as the specialized kernels'.
  constexpr int64_t heldThreadsFor(int64_t rows) const {
    return rows >= manyRows ? manyRowsThreads : maxThreadsPerRow;
  }

  /// The first field out of its range (its spec name, "min_block_threads"),
  /// or nullptr. Thread counts are powers of two up to 1024, since blocks
  /// are built from them; the rest are positive and at most 2^30.
  const char *invalidField() const;
};

/// Each field by its name in a spec's "launch_policy" (and, with '-' for
/// '_', in kgen-launch-policy's options): readers and writers walk this.
struct LaunchPolicyField {
  const char *name;
  int64_t LaunchPolicy::*field;
  bool threads; ///< a power of two up to 1024
  int64_t most;
};

inline constexpr LaunchPolicyField kLaunchPolicyFields[] = {
    {"rows_block", &LaunchPolicy::rowsBlock, true, 1024},
    {"min_block_threads", &LaunchPolicy::minBlockThreads, true, 1024},
    {"min_block_chunks", &LaunchPolicy::minBlockChunks, false, 1 << 30},
    {"max_one_chunk_threads", &LaunchPolicy::maxOneChunkThreads, true, 1024},
    {"warp_row_chunks", &LaunchPolicy::warpRowChunks, false, 64},
    {"many_rows", &LaunchPolicy::manyRows, false, 1 << 30},
    {"many_rows_threads", &LaunchPolicy::manyRowsThreads, true, 1024},
    {"max_threads_per_row", &LaunchPolicy::maxThreadsPerRow, true, 1024},
    {"reread_chunks", &LaunchPolicy::rereadChunks, false, 64},
};

inline const char *LaunchPolicy::invalidField() const {
  for (const LaunchPolicyField &f : kLaunchPolicyFields) {
    int64_t v = this->*f.field;
    if (v < 1 || v > f.most || (f.threads && (v & (v - 1))))
      return f.name;
  }
  return nullptr;
}

} // namespace kgen::launch

#endif // KGEN_RUNTIME_LAUNCHPOLICY_H

//===- LaunchPolicy.h - Block shapes the schedule and the runtime share ---===//
//
// kgen-schedule picks the rows a block of a specialized kernel launches;
// the runtime picks the x threads by y rows blocks of the dynamic kernels
// (kgen::rt::launchedRowsBlock). Both take these numbers, so that a dynamic
// kernel launches as the specialized one of its length would. Plain
// constants: the runtime has no MLIR and codegen no CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_RUNTIME_LAUNCHPOLICY_H
#define KGEN_RUNTIME_LAUNCHPOLICY_H

#include <cstdint>

namespace kgen::launch {

/// Threads per block the rows of kernels with reductions are packed into;
/// rows of part of a warp launch that many threads a block.
inline constexpr int64_t kRowsBlock = 256;

/// The fewest threads a block of rows that reduce over whole warps takes at
/// launch, when its rows fill the GPU: smaller blocks ran faster down to
/// this many threads, and lost below it (bench/results/launch-decisions.md).
inline constexpr int64_t kMinBlockThreads = 64;

/// ...and the fewest chunks (16 bytes each) its rows hold: blocks moving
/// less run into the rate at which the GPU starts blocks
/// (bench/results/launch-decisions.md).
inline constexpr int64_t kMinBlockChunks = 256;

/// Rows a block of rows that reduce over whole warps (`threadsPerRow`
/// threads each, rows of `chunks` chunks) launches with, by the two rules
/// above. A schedule that takes as many or more launches them all.
constexpr int64_t launchedRowsFor(int64_t threadsPerRow, int64_t chunks) {
  int64_t byThreads = (kMinBlockThreads + threadsPerRow - 1) / threadsPerRow;
  int64_t byChunks = (kMinBlockChunks + chunks - 1) / chunks;
  return byThreads > byChunks ? byThreads : byChunks;
}

/// The most threads (and chunks) a row held in one chunk a thread takes
/// (a dynamic kernel's `_vec_hold1`): one chunk a thread beat one row a
/// block of several chunks a thread on short rows, but not where two
/// barriers come at 128 threads (bench/results/launch-decisions.md).
inline constexpr int64_t kMaxOneChunkThreads = 64;

/// Rows from which a kernel's `_vec_rows` variant is launched (kgen-make-
/// variants' min_rows; bench/results/variant-thresholds.md): many rows
/// take fewer threads a row (heldThreadsFor).
inline constexpr int64_t kManyRows = 8192;
/// Threads a row takes at most: kManyRowsThreads on many rows (one row a
/// block, up to 8 chunks a thread), kMaxThreadsPerRow otherwise
/// (bench/results/schedule-thresholds.md).
inline constexpr int64_t kManyRowsThreads = 128;
inline constexpr int64_t kMaxThreadsPerRow = 256;

/// Threads a row that a dynamic kernel's held launch of `rows` rows prefers
/// to stay within (the runtime's bestHeld), as the specialized kernels'.
constexpr int64_t heldThreadsFor(int64_t rows) {
  return rows >= kManyRows ? kManyRowsThreads : kMaxThreadsPerRow;
}

/// Chunks a lane holds in a dynamic kernel's `_vec_warp`: rows of more than
/// kMaxOneChunkThreads and at most 32 * kWarpRowChunks chunks are held by
/// one warp each, several rows a block (launchedRowsFor), as the
/// specialized kernels of those lengths run.
inline constexpr int64_t kWarpRowChunks = 4;

} // namespace kgen::launch

#endif // KGEN_RUNTIME_LAUNCHPOLICY_H

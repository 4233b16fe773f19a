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
/// launch, when its rows fill the GPU. On an H200 (bf16, 8 to 65536 rows):
/// one row of 64 or 128 threads a block ran up to 1.3x faster than 4 or 2
/// (hidden 2048 and 4096), 2 rows of 32 threads (adaln 1152, 8192 and 32768
/// rows) 1.08-1.11x faster than 8. Rows of fewer threads lost in blocks of
/// 64 (hidden 512 on 16 threads: 0.84x at 65536 rows).
inline constexpr int64_t kMinBlockThreads = 64;

/// ...and the fewest chunks (16 bytes each) its rows hold: blocks moving
/// less run into the rate at which the GPU starts blocks. On an H200 (bf16,
/// 65536 rows, rows of a warp, 2 / 4 / 8 rows a block), rmsnorm ran rows of
/// 256 at 39 / 75 / 88% of memcpy and rows of 512 at 77 / 94 / 93%
/// (layernorm and softmax alike; fused_add_rmsnorm 78 / 94 / 94 on both);
/// 1024 and 1152 did best on 2. At 4096 rows of 256 fused_add_rmsnorm lost
/// (69 / 61 / 58%).
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
/// (a dynamic kernel's `_vec_hold1`). On an H200 (bf16, 4096 and 65536
/// rows) one chunk a thread beat one row a block of several chunks a thread
/// on rows of 128 to 512 (65536 x 512: rmsnorm 79.7 -> 36.3 us, layernorm
/// 79.8 -> 47.4), but on 1024 over 128 threads layernorm and softmax lost
/// 3-26% (their two barriers).
inline constexpr int64_t kMaxOneChunkThreads = 64;

/// Chunks a lane holds in a dynamic kernel's `_vec_warp`: rows of more than
/// kMaxOneChunkThreads and at most 32 * kWarpRowChunks chunks are held by
/// one warp each, several rows a block (launchedRowsFor), as the
/// specialized kernels of those lengths run.
inline constexpr int64_t kWarpRowChunks = 4;

} // namespace kgen::launch

#endif // KGEN_RUNTIME_LAUNCHPOLICY_H

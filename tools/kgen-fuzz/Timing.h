//===- Timing.h - Times of a checked case, beside memcpy's ------*- C++ -*-===//
//
// A case is timed only after Runner::run passed it against the interpreter,
// on the same buffers: cold (each launch after a 256 MiB memset flushes L2,
// timed alone with events; the median), and warm (launches back to back in
// a CUDA graph, per launch; the median of several replays). memcpy moves
// the case's bytes in the same run, cold and in a graph of copies alike, so
// that each time reads as a fraction of what the memory gives.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_FUZZ_TIMING_H
#define KGEN_TOOLS_KGEN_FUZZ_TIMING_H

#include "runtime/Driver.h"

#include <cstdint>
#include <functional>
#include <string>

namespace kgen::fuzz {

struct Timing {
  double coldUs = 0, warmUs = 0;             ///< the kernel
  double memcpyColdUs = 0, memcpyWarmUs = 0; ///< the same bytes moved
  int64_t bytes = 0;  ///< the fewest a launch moves: inputs once, outputs once
  bool graph = false; ///< warm launches ran in a CUDA graph (else a stream)
};

/// Launches the case on `stream` (nullptr: the default one).
using LaunchFn = std::function<bool(CUstream stream, std::string &err)>;

/// Times `launch`, which moves `bytes`, as the header says. False with `err`
/// when a launch or the driver fails.
bool timeLaunches(const rt::Driver *d, const LaunchFn &launch, int64_t bytes,
                  Timing &out, std::string &err);

} // namespace kgen::fuzz

#endif // KGEN_TOOLS_KGEN_FUZZ_TIMING_H

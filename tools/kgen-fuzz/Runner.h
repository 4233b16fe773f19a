//===- Runner.h - kgen-fuzz cases against the interpreter ------*- C++ -*-===//
//
// A case's tensors are laid out (RowMaps.h) in allocations poisoned with
// 0xFF bytes (with a guard after each), its inputs drawn as FuzzCase says,
// launched through the runtime and copied back whole. It fails when an
// element off the rows (or one no store writes) changed, one a store writes
// was not written, a NaN came from finite inputs, or a sampled row differs
// from interpret() past outputTolerance() (plus the rounding slack random
// rounding shows).
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_FUZZ_RUNNER_H
#define KGEN_TOOLS_KGEN_FUZZ_RUNNER_H

#include "FuzzCase.h"
#include "RowMaps.h"
#include "Timing.h"

#include "GpuCommon.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kgen::fuzz {

/// The kernels of a `kgen bundle` folder that kgen-fuzz can drive: ops
/// whose dims besides the row length are head counts, group sizes or table
/// rows of their row maps (rope, adaln), or none.
class Bundle {
public:
  bool open(const std::string &dir, std::string &err);
  const std::map<std::string, OpOffer> &offers() const { return offerMap; }
  /// Ops of the bundle left out, with the reason.
  const std::map<std::string, std::string> &skipped() const {
    return skippedMap;
  }
  /// The kernel of (op, dtype, length; 0 = dyn), loaded once; null with
  /// `err` when the bundle has none.
  const gpu::RtKernel *kernel(const std::string &op, DType dtype,
                              int64_t length, std::string &err);
  /// The bytes case `c` allocates (ops of plain rows: per row element,
  /// summed over the Rows tensors, as sizes were always drawn).
  int64_t caseBytes(const FuzzCase &c);

private:
  std::string dir;
  std::vector<gpu::ManifestEntry> entries;
  std::map<std::string, OpOffer> offerMap;
  std::map<std::string, std::string> skippedMap;
  std::map<std::string, int64_t> rowBytes; ///< ops of plain rows
  std::map<std::string, std::unique_ptr<gpu::RtKernel>> loaded;
  std::map<std::string, Kernel> shapes; ///< caseBytes' kernels, by name
};

struct Outcome {
  enum Kind { Pass, Fail, Skip } kind = Pass;
  std::string what;      ///< Fail: the first wrong element; Skip: why
  double worst = 0;      ///< the largest |got - ref| / tolerance seen
  bool fatal = false;    ///< the CUDA context is unusable: stop
  double refSeconds = 0; ///< time in the interpreter
  std::string kernel;    ///< the bundle's kernel that ran ("" if none)
};

/// Runs cases one at a time on device 0 (or the emulator).
class Runner {
public:
  /// `threads` check a case's rows (0: every core).
  Runner(const rt::Driver *d, Bundle &bundle, unsigned threads = 0)
      : d(d), bundle(bundle), threads(threads) {}
  Outcome run(const FuzzCase &c);
  /// Times the case the last run() passed, on its buffers (Timing.h); false
  /// with `err` when there is none or a launch fails.
  bool timeLast(Timing &out, std::string &err);

private:
  struct Slot {
    gpu::DeviceBuffer buf;
    std::vector<uint8_t> init, got;
  };
  const rt::Driver *d;
  Bundle &bundle;
  unsigned threads;
  std::vector<Slot> slots;
  /// The last passing case's launch, and the fewest bytes it moves.
  const gpu::RtKernel *lastKernel = nullptr;
  std::vector<kgen_arg> lastArgs;
  int64_t lastRows = 0, lastBytes = 0;
};

/// Runs the case of format()'s text on the bundle in `dir`: "" when it
/// passes, else what failed. For reproducers (kgen-fuzz minimize prints one).
std::string runCaseText(const std::string &dir, const std::string &text);

} // namespace kgen::fuzz

#endif // KGEN_TOOLS_KGEN_FUZZ_RUNNER_H

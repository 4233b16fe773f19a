//===- FuzzCommon.h - Helpers shared by kgen's fuzz targets -----*- C++ -*-===//

#ifndef KGEN_TEST_FUZZ_FUZZCOMMON_H
#define KGEN_TEST_FUZZ_FUZZCOMMON_H

#include "runtime/Spec.h"
#include "runtime/kgen_runtime.h"

#include <climits>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kgen::fuzz {

/// A broken invariant: says which and aborts, so that libFuzzer keeps the
/// input as a crash.
[[noreturn]] inline void violated(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "kgen fuzz: invariant broken: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n  last error: %s\n", kgen_last_error());
  va_end(ap);
  std::abort();
}

/// A PTX text that declares every variant entry of `spec`, so that
/// kgen_kernel_create gets past its entry check; but not the entry of
/// variant `skip`, if in range (nor of the variants that share it).
inline std::string ptxFor(const kgen::rt::Spec &spec,
                          size_t skip = ~size_t(0)) {
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n";
  for (const kgen::rt::Variant &v : spec.variants)
    if (skip >= spec.variants.size() || v.entry != spec.variants[skip].entry)
      ptx += ".visible .entry " + v.entry + "(.param .u64 a) { ret; }\n";
  return ptx;
}

/// Checks what every C API call promises about its status and message.
inline void checkStatus(kgen_status st, const char *call) {
  if (st < KGEN_OK || st > KGEN_ERROR_INTERNAL)
    violated("%s returned status %d, not a kgen_status", call,
             static_cast<int>(st));
  if (st == KGEN_ERROR_INTERNAL)
    violated("%s failed internally", call);
  bool empty = kgen_last_error()[0] == '\0';
  if ((st == KGEN_OK) != empty)
    violated("%s returned %d with the message '%s'", call, static_cast<int>(st),
             kgen_last_error());
}

/// The checks every successful launch configuration passes: the grid and
/// block a driver would accept, and the variant's own entry and slots.
inline void checkConfig(const kgen::rt::Spec &spec, const kgen_launch_config &c,
                        size_t variant) {
  if (c.variant != variant || variant >= spec.variants.size())
    violated("launch config variant %zu, selected %zu of %zu", c.variant,
             variant, spec.variants.size());
  const kgen::rt::Variant &v = spec.variants[variant];
  if (v.entry != c.entry)
    violated("launch config entry '%s', variant's '%s'", c.entry,
             v.entry.c_str());
  if (c.grid[0] < 1 || c.grid[0] > INT32_MAX || c.grid[1] != 1 ||
      c.grid[2] != 1)
    violated("grid (%u, %u, %u)", c.grid[0], c.grid[1], c.grid[2]);
  uint64_t threads = uint64_t(c.block[0]) * c.block[1] * c.block[2];
  if (c.block[0] < 1 || c.block[1] < 1 || c.block[2] != 1 ||
      threads > uint64_t(v.block))
    violated("block (%u, %u, %u) for variant '%s' of block %d", c.block[0],
             c.block[1], c.block[2], v.entry.c_str(), v.block);
  if (c.cluster[0] != (v.cluster ? uint32_t(v.tiles) : 1u) ||
      c.cluster[1] != 1 || c.cluster[2] != 1)
    violated("cluster (%u, %u, %u)", c.cluster[0], c.cluster[1], c.cluster[2]);
  if (c.shared_bytes != uint32_t(v.sharedBytes) || c.num_slots != v.abi.size())
    violated("shared bytes %u or slots %zu differ from the variant's",
             c.shared_bytes, c.num_slots);
}

} // namespace kgen::fuzz

#endif // KGEN_TEST_FUZZ_FUZZCOMMON_H

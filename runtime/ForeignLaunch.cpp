//===- ForeignLaunch.cpp - Launch data for engines' own launchers ---------===//
//
// kgen_launch_config_get and kgen_pack_params: what kgen_launch would launch,
// for engines that launch the entry themselves. Both run kgen_launch's own
// steps (bindArgs, placeRows, packAbi), never a copy of its rules.
//
//===----------------------------------------------------------------------===//

#include "runtime/kgen_runtime.h"

#include "runtime/Args.h"
#include "runtime/Kernel.h"
#include "runtime/LastError.h"
#include "runtime/Spec.h"

#include <climits>
#include <string>
#include <vector>

using namespace kgen::rt;

namespace {

kgen_status fail(kgen_status st, std::string msg) {
  return setLastError(st, std::move(msg));
}

/// Checks the arguments as kgen_launch does and places the rows on a device
/// of `multiprocessors` (0: unknown) as it would.
kgen_status bind(const kgen_kernel *kernel, const kgen_arg *args, size_t nargs,
                 int64_t rows, int multiprocessors, BoundArgs &bound) {
  if (!kernel)
    return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: kernel is NULL");
  const Spec &spec = kernel->spec();
  std::string prefix = "kgen: " + kernel->name + ": ";
  // kgen_launch launches nothing for 0 rows: there is no launch to describe.
  if (rows < 1)
    return fail(KGEN_ERROR_INVALID_ARGUMENT,
                prefix + "rows is " + std::to_string(rows) +
                    ", must be >= 1 (a launch of 0 rows launches nothing)");
  if (multiprocessors < 0)
    return fail(KGEN_ERROR_INVALID_ARGUMENT,
                prefix + "multiprocessors is " +
                    std::to_string(multiprocessors) +
                    ", must be >= 0 (0: unknown)");
  std::string err;
  if (kgen_status st = bindArgs(spec, args, nargs, rows, bound, err))
    return fail(st, std::move(err));
  // bindArgs checked the grid without spreading; spreading few rows over
  // the multiprocessors only adds blocks where there are few, but a grid
  // beyond the limit must never pass clamped.
  int64_t grid = placeRows(spec, bound, multiprocessors);
  if (grid > INT32_MAX)
    return fail(KGEN_ERROR_INVALID_ARGUMENT,
                prefix + "rows " + std::to_string(rows) + " needs " +
                    std::to_string(grid) +
                    " blocks, more than the grid limit of 2^31-1");
  return KGEN_OK;
}

kgen_status launchConfig(const kgen_kernel *kernel, const kgen_arg *args,
                         size_t nargs, int64_t rows, int multiprocessors,
                         kgen_launch_config *out) {
  if (!out)
    return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: out is NULL");
  BoundArgs bound;
  if (kgen_status st = bind(kernel, args, nargs, rows, multiprocessors, bound))
    return st;
  const Spec &spec = kernel->spec();
  const Variant &v = spec.variants[bound.variant];
  kgen_launch_config c{};
  c.variant = bound.variant;
  c.entry = v.entry.c_str();
  c.grid[0] = bound.gridX;
  c.grid[1] = c.grid[2] = 1;
  c.block[0] = bound.blockX;
  c.block[1] = bound.blockY;
  c.block[2] = 1;
  c.cluster[0] = v.cluster ? static_cast<uint32_t>(v.tiles) : 1;
  c.cluster[1] = c.cluster[2] = 1;
  c.shared_bytes = static_cast<uint32_t>(v.sharedBytes);
  c.grid_dependency = spec.gridDependency;
  // griddepcontrol.wait returns at once in a kernel not launched as a
  // programmatic dependent: a plain launch only waits longer.
  c.plain_launch_ok = 1;
  c.num_slots = v.abi.size();
  *out = c;
  return clearLastError();
}

kgen_status packParams(const kgen_kernel *kernel, const kgen_arg *args,
                       size_t nargs, int64_t rows, int multiprocessors,
                       uint64_t *slots, size_t nslots) {
  if (!slots && nslots)
    return fail(KGEN_ERROR_INVALID_ARGUMENT, "kgen: slots is NULL");
  BoundArgs bound;
  if (kgen_status st = bind(kernel, args, nargs, rows, multiprocessors, bound))
    return st;
  const Spec &spec = kernel->spec();
  const Variant &v = spec.variants[bound.variant];
  if (nslots < v.abi.size())
    return fail(KGEN_ERROR_INVALID_ARGUMENT,
                "kgen: " + kernel->name + ": nslots is " +
                    std::to_string(nslots) + " but entry '" + v.entry +
                    "' takes " + std::to_string(v.abi.size()) +
                    " parameters: pass at least " +
                    std::to_string(v.abi.size()) + " slots");
  std::vector<uint64_t> storage;
  std::vector<void *> params;
  packAbi(spec, v, bound, storage, params);
  for (size_t i = 0; i < storage.size(); ++i)
    slots[i] = storage[i];
  return clearLastError();
}

} // namespace

extern "C" {

kgen_status kgen_launch_config_get(const kgen_kernel *kernel,
                                   const kgen_arg *args, size_t nargs,
                                   int64_t rows, int multiprocessors,
                                   kgen_launch_config *out) {
  return guarded([&] {
    return launchConfig(kernel, args, nargs, rows, multiprocessors, out);
  });
}

kgen_status kgen_pack_params(const kgen_kernel *kernel, const kgen_arg *args,
                             size_t nargs, int64_t rows, int multiprocessors,
                             uint64_t *slots, size_t nslots) {
  return guarded([&] {
    return packParams(kernel, args, nargs, rows, multiprocessors, slots,
                      nslots);
  });
}

} // extern "C"

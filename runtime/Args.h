//===- Args.h - Check launch arguments and pick a variant -------*- C++ -*-===//
//
// Everything kgen_launch decides before it touches the driver: argument
// checks, stride defaults, variant selection and grid size. Kept free of
// driver calls so that it is testable without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_RUNTIME_ARGS_H
#define KGEN_RUNTIME_ARGS_H

#include "runtime/Spec.h"
#include "runtime/kgen_runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kgen::rt {

/// Checked arguments, indexed by spec param.
struct BoundArgs {
  std::vector<uint64_t> ptr;    // tensors: device address
  std::vector<int64_t> stride;  // tensors: row stride in elements
  std::vector<int64_t> integer; // i32/i64 scalars and dims
  std::vector<float> real;      // f32 scalars
  int64_t rows = 0;
  size_t variant = 0;
  uint32_t gridX = 0;
  uint32_t blockX = 0; // the threads it takes here (placeRows)
  uint32_t blockY = 1; // rows of blockX threads (launched x by y blocks)
};

/// Runs all launch checks. On failure returns the status and sets `err` to a
/// message prefixed with "kgen: <kernel name>: ".
kgen_status bindArgs(const Spec &spec, const kgen_arg *args, size_t nargs,
                     int64_t rows, BoundArgs &out, std::string &err);

/// Sets the grid and block of `bound` (as bindArgs left it) for a device of
/// `multiprocessors` (0: unknown), and returns the grid before its clamp to
/// 32 bits. Few rows are spread over every multiprocessor.
int64_t placeRows(const Spec &spec, BoundArgs &bound, int multiprocessors);

/// Fills `storage` (one 8-byte slot per ABI entry) and `params` (pointers into
/// `storage`) for cuLaunchKernel.
void packAbi(const Spec &spec, const Variant &variant, const BoundArgs &bound,
             std::vector<uint64_t> &storage, std::vector<void *> &params);

} // namespace kgen::rt

#endif // KGEN_RUNTIME_ARGS_H

//===- RowMaps.h - Where a kgen-fuzz case's tensors lie ---------*- C++ -*-===//
//
// A case's launch, from its kernel's row maps (dsl/Graph.h): the dims, the
// row programs, and per tensor the allocation ("slot"), base, pitch and rows
// it holds. Plain rows hold one row per program; grouped ones (adaln's
// scale) one per group; heads() parts one per token, in slots of their own
// or sharing one fused row (q, k of vLLM's qkv); a gathered table holds its
// table rows. Used by the Runner and for sizing (Bundle::caseBytes).
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_FUZZ_ROWMAPS_H
#define KGEN_TOOLS_KGEN_FUZZ_ROWMAPS_H

#include "FuzzCase.h"

#include "GpuCommon.h"

#include <random>

namespace kgen::fuzz {

/// Where one tensor lies in its slot, in elements.
struct Place {
  int slot = 0;
  int64_t elem = 0, rowLength = 0, offset = 0, stride = 0;
  int64_t rowsHeld = 0; ///< rows of the tensor (1 for a vector)
  /// Row programs per tensor row; 0 for a vector or a gathered table, whose
  /// rows no program owns.
  int64_t group = 0;
  bool inPlace = false;
  /// Written tensors: per element of a row, whether a store writes it (rope
  /// partial leaves the tail of each head); empty when all are.
  std::vector<char> stored;
  bool isStored(int64_t i) const { return stored.empty() || stored[i]; }
};

struct Shape {
  std::vector<int64_t> dims; ///< by kernel dim index
  int64_t unit = 1;          ///< row programs per case row
  /// Row programs the interpreter runs together: 1 unless a tensor has
  /// sub-rows (heads), whose programs must start a group.
  int64_t step = 1;
  int64_t launchRows = 0;
  std::vector<Place> places;     ///< by tensor
  std::vector<int64_t> slotSize; ///< elements, the guard included
  std::vector<int64_t> slotElem; ///< bytes per element
  int64_t bytes = 0;             ///< all slots
};

/// The dims of `k` (the kernel of `length`, 0: dynamic) besides `mainDim`,
/// by their bound or their role in its row maps; false with `err` for a dim
/// with neither.
bool dimRoles(const Kernel &k, const std::string &mainDim, int64_t length,
              std::vector<DimDraw> &out, std::string &err);

/// Lays case `c` out for `k` (op `op`); false with `err` for a case that
/// does not fit the kernel (a dim it lacks, too many bytes).
bool shapeCase(const Kernel &k, const OpDef &op, const FuzzCase &c, Shape &out,
               std::string &err);

/// Whether tensor `t`'s values index a gathered table.
bool isGatherIndex(const Kernel &k, size_t t);

/// Whether `group` is a heads() view's, so rows of that group are shared by
/// one token's heads (rope_hf's cos and sin).
bool isHeadsGroup(const Kernel &k, const Len &group);

/// Writes the index tensor `t`'s values into its slot `init`: one per row
/// it holds, in [0, tableRows) as `c.positions` says.
void drawPositions(const Kernel &k, const Shape &s, size_t t, const FuzzCase &c,
                   std::mt19937_64 &rng, std::vector<uint8_t> &init);

/// The kgen_arg of each spec param of `k` (gpu::buildArgs): tensors at
/// `slotBase` plus their offset, every dim from the shape.
bool launchArgs(const gpu::RtKernel &k, const Shape &s,
                const std::vector<CUdeviceptr> &slotBase,
                std::vector<kgen_arg> &out, std::string &err);

} // namespace kgen::fuzz

#endif // KGEN_TOOLS_KGEN_FUZZ_ROWMAPS_H

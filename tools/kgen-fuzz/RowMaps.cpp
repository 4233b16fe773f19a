//===- RowMaps.cpp - Where a kgen-fuzz case's tensors lie -----------------===//
#include "RowMaps.h"

#include "dsl/Float.h"

#include <algorithm>
#include <numeric>

namespace kgen::fuzz {

namespace {

/// Poisoned bytes after every allocation: a kernel that writes past its
/// rows changes them.
constexpr int64_t kGuardBytes = 64;
/// No case allocates more: past it a --case text is refused, not wrapped.
constexpr int64_t kMostBytes = int64_t(1) << 40;

/// a * b and a + b into `out`, false past kMostBytes.
bool mul(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_mul_overflow(a, b, &out) && out <= kMostBytes;
}
bool add(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_add_overflow(a, b, &out) && out <= kMostBytes;
}

/// The elements of a row of `t` that a store writes (gpu::storedColumns,
/// repeated over a row's sub-rows, `pitch` apart); empty when all are.
std::vector<char> storedElements(const Kernel &k, size_t t,
                                 const std::vector<int64_t> &dims,
                                 int64_t rowLength, int64_t pitch) {
  std::vector<char> cols = gpu::storedColumns(k, t, dims, rowLength);
  int64_t len = int64_t(cols.size());
  if (!pitch)
    pitch = len;
  if (pitch == len &&
      std::all_of(cols.begin(), cols.end(), [](char c) { return c; }))
    return {};
  std::vector<char> row(size_t(rowLength), 0);
  for (int64_t j = 0; j * pitch < rowLength; ++j)
    std::copy(cols.begin(), cols.end(), row.begin() + j * pitch);
  return row;
}

/// Elements 0, pitch, 2 * pitch... of a row spanning `span`; empty (all)
/// for pitch 1.
std::vector<char> elementsApart(int64_t span, int64_t pitch) {
  if (pitch == 1)
    return {};
  std::vector<char> row(size_t(span), 0);
  for (int64_t i = 0; i < span; i += pitch)
    row[size_t(i)] = 1;
  return row;
}

} // namespace

bool dimRoles(const Kernel &k, const std::string &mainDim, int64_t length,
              std::vector<DimDraw> &out, std::string &err) {
  std::map<int, DimRole> role;
  auto mark = [&](const Len &l, DimRole r) {
    for (const auto &[d, coef] : l.terms)
      role.emplace(d, r); // the first role found wins
  };
  for (const TensorDecl &td : k.tensors)
    mark(td.map.subCount, DimRole::Heads);
  for (const TensorDecl &td : k.tensors)
    mark(td.map.group, DimRole::Group);
  for (const TensorDecl &td : k.tensors)
    mark(td.map.tableRows, DimRole::Table);
  for (const TensorDecl &td : k.tensors)
    mark(td.map.subPitch, DimRole::Pitch);
  for (const TensorDecl &td : k.tensors)
    mark(td.pitch, DimRole::ElementPitch);
  mark(k.domain, DimRole::Span);
  out.clear();
  for (size_t d = 0; d < k.dims.size(); ++d) {
    if (k.dims[d] == mainDim)
      continue;
    if (d < k.dimMax.size() && k.dimMax[d] != INT64_MAX) {
      out.push_back({k.dims[d], DimRole::Bounded, {{length, k.dimMax[d]}}});
      continue;
    }
    auto it = role.find(int(d));
    if (it == role.end()) {
      err = "dim '" + k.dims[d] +
            "' is no head count, group size, table size or factor of the "
            "row length: kgen-fuzz cannot draw it";
      return false;
    }
    out.push_back({k.dims[d], it->second});
  }
  return true;
}

bool isGatherIndex(const Kernel &k, size_t t) {
  for (const TensorDecl &td : k.tensors)
    if (td.map.gather == int(t))
      return true;
  return false;
}

bool isHeadsGroup(const Kernel &k, const Len &group) {
  return group != Len(1) && std::any_of(k.tensors.begin(), k.tensors.end(),
                                        [&](const TensorDecl &td) {
                                          return td.map.subLength != Len(0) &&
                                                 td.map.group == group;
                                        });
}

bool shapeCase(const Kernel &k, const OpDef &op, const FuzzCase &c, Shape &s,
               std::string &err) {
  s = Shape{};
  s.dims.assign(k.dims.size(), 0);
  for (size_t d = 0; d < k.dims.size(); ++d) {
    auto it = c.dims.find(k.dims[d]);
    if (k.dims[d] == op.mainDim)
      s.dims[d] = c.length;
    else if (it != c.dims.end())
      s.dims[d] = it->second;
    else {
      err = "the case has no dim." + k.dims[d] + " (" + op.name + "'s dims)";
      return false;
    }
  }
  for (const auto &[name, v] : c.dims)
    if (std::find(k.dims.begin(), k.dims.end(), name) == k.dims.end()) {
      err = op.name + " has no dim '" + name + "'";
      return false;
    }
  bool heads = false, gather = false;
  for (const TensorDecl &td : k.tensors) {
    heads |= td.map.subLength != Len(0);
    gather |= td.map.gather >= 0;
  }
  if (c.fused && !heads) {
    err = "fused=1: " + op.name + " has no heads() view";
    return false;
  }
  if (c.positions != Positions::Random && !gather) {
    err = std::string("positions=") + positionsName(c.positions) + ": " +
          op.name + " gathers no rows";
    return false;
  }
  const size_t nt = k.tensors.size();
  s.places.resize(nt);
  try {
    // Row programs come in units of every group (a token's heads, a batch
    // item's tokens); a case row is one unit.
    for (size_t t = 0; t < nt; ++t) {
      const TensorDecl &td = k.tensors[t];
      Place &p = s.places[t];
      p.elem = sizeInBytes(td.dtype);
      p.rowLength =
          td.layout == Layout::RowScalar ? 1 : td.rowLength.eval(s.dims);
      // Padded heads: a row spans count * pitch; a pitched tensor's
      // elements likewise length * pitch.
      if (td.map.subPitch != Len(0) &&
          !mul(td.map.subCount.eval(s.dims), td.map.subPitch.eval(s.dims),
               p.rowLength))
        throw LenOverflow("pitch");
      int64_t step = td.pitch != Len(0) ? td.pitch.eval(s.dims) : 1;
      int64_t length = p.rowLength;
      if (step > 1 && !mul(length, step, p.rowLength))
        throw LenOverflow("pitch");
      p.inPlace = td.isInput && td.isWritten;
      if (td.layout != Layout::Vector && td.map.gather < 0)
        p.group = td.map.group.eval(s.dims);
      if (p.group > 0)
        s.unit = std::lcm(s.unit, p.group);
      if (td.map.subLength.eval(s.dims) > 0)
        s.step = 0; // set to the unit below
      if (s.unit > (int64_t(1) << 40))
        throw LenOverflow("unit");
    }
    if (!s.step)
      s.step = s.unit;
    if (!mul(c.rows, s.unit, s.launchRows)) {
      err = "rows=" + std::to_string(c.rows) + " times " +
            std::to_string(s.unit) + " row programs is too many";
      return false;
    }
    for (size_t t = 0; t < nt; ++t) {
      const TensorDecl &td = k.tensors[t];
      Place &p = s.places[t];
      if (td.layout == Layout::Vector) {
        p.rowsHeld = 1;
        p.stride = p.rowLength;
      } else {
        p.rowsHeld =
            p.group ? s.launchRows / p.group : td.map.tableRows.eval(s.dims);
        p.stride = hasRowStride(td) ? p.rowLength + c.pad : 1;
      }
      if (td.isWritten && td.pitch != Len(0)) // every element, pitch apart
        p.stored = elementsApart(p.rowLength, td.pitch.eval(s.dims));
      else if (td.isWritten)
        p.stored = storedElements(
            k, t, s.dims, p.rowLength,
            td.map.subPitch != Len(0) ? td.map.subPitch.eval(s.dims) : 0);
    }
  } catch (const LenOverflow &) {
    err = "the case's dims overflow its lengths";
    return false;
  }
  // A slot per tensor, but fused heads() parts share their head's: one row
  // of all parts back to back, then the padding.
  for (size_t t = 0; t < nt; ++t) {
    const RowMap &m = k.tensors[t].map;
    bool part = c.fused && m.subLength != Len(0) && m.head >= 0 &&
                k.tensors[t].layout != Layout::Vector;
    if (part && m.head != int(t))
      continue; // placed with its head
    int slot = int(s.slotSize.size());
    int64_t at = c.misalign, row = 0;
    for (int q = int(t); q >= 0; q = part ? k.tensors[q].map.next : -1)
      row += s.places[q].rowLength;
    for (int q = int(t); q >= 0; q = part ? k.tensors[q].map.next : -1) {
      Place &p = s.places[q];
      p.slot = slot;
      p.offset = at;
      if (part)
        p.stride = row + c.pad;
      at += p.rowLength;
    }
    const Place &p = s.places[t];
    int64_t elems = 0, bytes = 0;
    if (!mul(p.rowsHeld, p.stride, elems) || !add(elems, p.offset, elems) ||
        !add(elems, std::max<int64_t>(1, kGuardBytes / p.elem), elems) ||
        !mul(elems, p.elem, bytes) || !add(s.bytes, bytes, s.bytes)) {
      err = "the case needs more than " + std::to_string(kMostBytes) + " bytes";
      return false;
    }
    s.slotSize.push_back(elems);
    s.slotElem.push_back(p.elem);
  }
  return true;
}

void drawPositions(const Kernel &k, const Shape &s, size_t t, const FuzzCase &c,
                   std::mt19937_64 &rng, std::vector<uint8_t> &init) {
  int64_t n = 1;
  for (const TensorDecl &td : k.tensors)
    if (td.map.gather == int(t))
      n = td.map.tableRows.eval(s.dims);
  const Place &p = s.places[t];
  DType dt = k.tensors[t].dtype;
  auto any = [&] { return int64_t(rng() % uint64_t(n)); };
  int64_t one = any(), prev = one;
  for (int64_t r = 0; r < p.rowsHeld; ++r) {
    int64_t v = one;
    switch (c.positions) {
    case Positions::Random:
      v = any();
      break;
    case Positions::Repeated:
      break;
    case Positions::Zero:
      v = 0;
      break;
    case Positions::Last:
      v = n - 1;
      break;
    case Positions::Mixed: {
      int64_t kind = int64_t(rng() % 4);
      v = kind == 0 ? 0 : kind == 1 ? n - 1 : kind == 2 ? prev : any();
      break;
    }
    }
    prev = v;
    encode(dt, double(v), init.data() + (p.offset + r * p.stride) * p.elem);
  }
}

bool launchArgs(const gpu::RtKernel &k, const Shape &s,
                const std::vector<CUdeviceptr> &slotBase,
                std::vector<kgen_arg> &out, std::string &err) {
  const Kernel &dsl = k.dsl;
  return gpu::buildArgs(
      k,
      [&](size_t t) {
        const Place &p = s.places[t];
        return gpu::TensorArg{slotBase[p.slot] + p.offset * p.elem,
                              hasRowStride(dsl.tensors[t]) ? p.stride : 0};
      },
      [&](const std::string &name) -> std::optional<int64_t> {
        for (size_t d = 0; d < dsl.dims.size(); ++d)
          if (dsl.dims[d] == name)
            return s.dims[d];
        return std::nullopt;
      },
      out, err);
}

} // namespace kgen::fuzz

//===- Args.cpp - Check launch arguments and pick a variant ---------------===//

#include "runtime/Args.h"
#include "runtime/LaunchPolicy.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <type_traits>

namespace kgen::rt {
namespace {

// The most rows any launch holds: 2^31-1 blocks of at most 1024 rows.
constexpr int64_t kMaxRows = int64_t(INT32_MAX) * 1024;

/// f32 `v` in the shortest form that reads back as the same float (1e-30).
std::string fmtReal(float v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string hexAddress(uint64_t v) {
  static const char *digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

template <typename Enum> int rawEnum(const Enum &e) {
  std::underlying_type_t<Enum> v;
  std::memcpy(&v, &e, sizeof(v));
  return static_cast<int>(v);
}

/// The length of the row values (the spec's domain) for the bound dims;
/// INT64_MAX when it overflows.
int64_t domainLength(const Spec &spec, const BoundArgs &b) {
  int64_t len = spec.domain.scale;
  if (spec.domain.dimParam >= 0 &&
      __builtin_mul_overflow(len, b.integer[spec.domain.dimParam], &len))
    len = INT64_MAX;
  return len;
}

class Binder {
public:
  Binder(const Spec &spec, std::string &err) : spec(spec), err(err) {}

  kgen_status bind(const kgen_arg *args, size_t nargs, int64_t rows,
                   BoundArgs &out) {
    size_t n = spec.params.size();
    if (nargs != n)
      return fail(KGEN_ERROR_INVALID_ARGUMENT, "expected " + std::to_string(n) +
                                                   " arguments, got " +
                                                   std::to_string(nargs));
    if (n && !args)
      return fail(KGEN_ERROR_INVALID_ARGUMENT, "args is NULL");
    if (rows < 0)
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  "rows is " + std::to_string(rows) + ", must be >= 0");
    // Refused first, so that rows times a variant's tiles cannot wrap below.
    if (rows > kMaxRows)
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  "rows " + std::to_string(rows) +
                      " is more than the grid limit of 2^31-1 blocks of at "
                      "most 1024 rows holds");
    // Every slot a param uses is written below: no fill (launches are hot).
    out.ptr.resize(n);
    out.stride.resize(n);
    out.integer.resize(n);
    out.real.resize(n);
    out.rows = rows;
    // Kinds, dtypes and values first: tensor row lengths need the dims.
    for (size_t i = 0; i < n; ++i)
      if (kgen_status st = bindValue(i, args[i], out))
        return st;
    for (size_t i = 0; i < n; ++i)
      if (spec.params[i].kind == KGEN_ARG_TENSOR)
        if (kgen_status st = bindTensor(i, args[i], out))
          return st;
    if (kgen_status st = selectVariant(out))
      return st;
    // Spreading few rows over every multiprocessor only adds blocks where
    // there are few: the grid limit is checked here, for many.
    int64_t grid = placeRows(spec, out, /*multiprocessors=*/0);
    if (grid > INT32_MAX)
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  "rows " + std::to_string(rows) + " needs " +
                      std::to_string(grid) +
                      " blocks, more than the grid limit of 2^31-1");
    return KGEN_OK;
  }

private:
  const Spec &spec;
  std::string &err;

  // The message's prefix is built on failure only: launches are hot.
  kgen_status fail(kgen_status st, const std::string &what) {
    err = "kgen: " + spec.name() + ": " + what;
    return st;
  }

  std::string argName(size_t i) const {
    return "argument '" + spec.params[i].name + "' (#" + std::to_string(i) +
           ")";
  }

  kgen_status bindValue(size_t i, const kgen_arg &a, BoundArgs &out) {
    const Param &p = spec.params[i];
    // C callers may store any int in the enums; read them as ints, since an
    // out-of-range enum value is undefined behaviour in C++.
    int kind = rawEnum(a.kind), dtype = rawEnum(a.dtype);
    if (kind != KGEN_ARG_TENSOR && kind != KGEN_ARG_SCALAR &&
        kind != KGEN_ARG_DIM)
      return fail(KGEN_ERROR_INVALID_ARGUMENT, argName(i) +
                                                   " has an invalid kind (" +
                                                   std::to_string(kind) + ")");
    if (kind != p.kind)
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  argName(i) + " is a " + argKindName(p.kind) + " but a " +
                      argKindName(static_cast<kgen_arg_kind>(kind)) +
                      " was passed");
    if (p.kind != KGEN_ARG_DIM && dtype != p.dtype) {
      std::string passed =
          isValidDtype(dtype)
              ? std::string(dtypeName(static_cast<kgen_dtype>(dtype)))
              : "invalid dtype (" + std::to_string(dtype) + ")";
      if (p.kind == KGEN_ARG_TENSOR)
        return fail(KGEN_ERROR_INVALID_ARGUMENT,
                    argName(i) + " is a tensor of " + dtypeName(p.dtype) +
                        " but a " + passed + " tensor was passed");
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  argName(i) + " is a " + dtypeName(p.dtype) +
                      " scalar but a " + passed + " scalar was passed");
    }
    switch (p.kind) {
    case KGEN_ARG_TENSOR:
      break;
    case KGEN_ARG_SCALAR:
      if (p.dtype == KGEN_F32) {
        out.real[i] = static_cast<float>(a.f);
        if (!(out.real[i] >= p.minScalar))
          return fail(
              KGEN_ERROR_INVALID_ARGUMENT,
              argName(i) + " must be >= " + fmtReal(float(p.minScalar)) +
                  " (the kernel relies on it), got " + fmtReal(out.real[i]));
      } else {
        if (p.dtype == KGEN_I32 && (a.i < INT32_MIN || a.i > INT32_MAX))
          return fail(KGEN_ERROR_INVALID_ARGUMENT,
                      argName(i) + " is an i32 scalar but " +
                          std::to_string(a.i) + " does not fit in 32 bits");
        out.integer[i] = a.i;
      }
      break;
    case KGEN_ARG_DIM:
      if (a.i <= 0)
        return fail(KGEN_ERROR_INVALID_ARGUMENT,
                    argName(i) + " is a dim and must be > 0, got " +
                        std::to_string(a.i));
      if (a.i > p.maxDim)
        return fail(KGEN_ERROR_INVALID_ARGUMENT,
                    argName(i) +
                        " is a dim and must be <= " + std::to_string(p.maxDim) +
                        ", got " + std::to_string(a.i));
      out.integer[i] = a.i;
      break;
    }
    return KGEN_OK;
  }

  /// `l` for the bound dims; false past int64.
  static bool eval(const RowLength &l, const BoundArgs &b, int64_t &out) {
    out = l.scale;
    return l.dimParam < 0 ||
           !__builtin_mul_overflow(out, b.integer[l.dimParam], &out);
  }

  kgen_status bindTensor(size_t i, const kgen_arg &a, BoundArgs &out) {
    const Param &p = spec.params[i];
    int64_t elem = dtypeSize(p.dtype);
    uint64_t addr = reinterpret_cast<uintptr_t>(a.ptr);
    // Per-row tensors may be NULL when there are no rows to touch.
    bool rowsAccess = p.access != Param::Access::Vector;
    if (!addr && !(rowsAccess && out.rows == 0))
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  argName(i) + " is a NULL pointer");
    if (addr % elem)
      return fail(KGEN_ERROR_MISALIGNED,
                  argName(i) + " pointer " + hexAddress(addr) +
                      " is not aligned to its element size (" +
                      std::to_string(elem) + " bytes for " +
                      dtypeName(p.dtype) + ")");
    int64_t rowLength;
    if (!eval(p.rowLength, out, rowLength))
      return fail(KGEN_ERROR_INVALID_ARGUMENT, argName(i) + " row length " +
                                                   p.rowLength.text +
                                                   " overflows int64");
    int64_t count = 1, length = rowLength, pitch = rowLength;
    if (p.padded) {
      // Heads padded inside a row: each pitch apart, a row count * pitch.
      int64_t bytes = 0;
      if (!eval(p.headCount, out, count) || !eval(p.headLength, out, length) ||
          !eval(p.headPitch, out, pitch) ||
          __builtin_mul_overflow(count, pitch, &rowLength) ||
          __builtin_mul_overflow(rowLength, elem, &bytes))
        return fail(KGEN_ERROR_INVALID_ARGUMENT,
                    argName(i) + " heads (" + p.headCount.text + " of " +
                        p.headPitch.text + " elements) overflow int64");
      if (pitch < length)
        return fail(KGEN_ERROR_INVALID_ARGUMENT,
                    argName(i) + " has heads " + std::to_string(pitch) +
                        " elements apart (" + p.headPitch.text + ") but " +
                        std::to_string(length) + " long: heads would overlap");
    }
    int64_t stride = a.row_stride > 0 ? a.row_stride : rowLength;
    if (p.padded && (p.access == Param::Access::Scalars || p.pitched)) {
      if (kgen_status st =
              checkHeadScalars(i, stride, count, length, pitch, out.rows))
        return st;
    } else if (stride < rowLength) {
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  argName(i) + " row_stride " + std::to_string(stride) +
                      " is smaller than its row length " +
                      std::to_string(rowLength) + " (" + p.span +
                      "): rows would overlap");
    }
    if (stride > INT64_MAX / elem)
      return fail(KGEN_ERROR_INVALID_ARGUMENT, argName(i) + " row_stride " +
                                                   std::to_string(stride) +
                                                   " overflows int64 bytes");
    // The last row's offset must fit the kernel's int64 address arithmetic,
    // or rows far apart would alias (the launch's rows bound the tensor's).
    if (p.access == Param::Access::Rows && out.rows > 1 &&
        out.rows - 1 > (INT64_MAX - rowLength * elem) / (stride * elem))
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  argName(i) + " row_stride " + std::to_string(stride) +
                      " times " + std::to_string(out.rows) +
                      " rows overflows int64 bytes");
    out.ptr[i] = addr;
    out.stride[i] = stride;
    return KGEN_OK;
  }

  /// Padded scalars: `rows` row programs are T = ceil(rows / count) tokens
  /// by `count` heads, (t, h) at t * stride + h * pitch; a pitched tensor's
  /// T = rows rows by `count` elements likewise. They stay apart with tokens
  /// a row apart (stride >= count * pitch) or inside each head's run (stride
  /// * T <= pitch, vLLM's column-major scales).
  kgen_status checkHeadScalars(size_t i, int64_t stride, int64_t count,
                               int64_t length, int64_t pitch, int64_t rows) {
    const Param &p = spec.params[i];
    int64_t tokens = p.pitched ? rows : rows / count + (rows % count != 0);
    int64_t run = 0, end = 0;
    bool rowsApart = stride >= count * pitch; // fits: bindTensor checked it
    bool inHeads = stride >= length &&
                   !__builtin_mul_overflow(stride, tokens, &run) &&
                   run <= pitch;
    std::string token = p.pitched ? " rows" : " tokens";
    std::string head = p.pitched ? " elements" : " heads";
    if (!rowsApart && !inHeads)
      return fail(
          KGEN_ERROR_INVALID_ARGUMENT,
          argName(i) + " row_stride " + std::to_string(stride) + " and pitch " +
              std::to_string(pitch) + " (" + p.headPitch.text + ") for " +
              std::to_string(tokens) + token + " of " + std::to_string(count) +
              head + ": rows would overlap (the layouts allowed:" + token +
              (p.pitched ? " apart" : " a row apart") +
              ", row_stride >= count * pitch = " +
              std::to_string(count * pitch) + " (" + p.span + "); or" + token +
              (p.pitched ? " inside each pitch" : " inside each head") +
              ", row_stride >= " + std::to_string(length) +
              " and row_stride * " + std::to_string(tokens) + token +
              " <= pitch)");
    // The kernel addresses these scalars, divides the rows and counts the
    // heads in 32 bits: they span fewer than 2^32 elements (16 GiB of f32),
    // which bounds the rows and the heads count too ((count - 1) * pitch +
    // length <= count * pitch, which fits).
    constexpr int64_t kMaxSpan = int64_t(1) << 32;
    if (!p.pitched && tokens > 0 &&
        (__builtin_mul_overflow(tokens - 1, stride, &end) ||
         __builtin_add_overflow(end, (count - 1) * pitch + length, &end) ||
         end >= kMaxSpan))
      return fail(KGEN_ERROR_INVALID_ARGUMENT,
                  argName(i) + " row_stride " + std::to_string(stride) +
                      " times " + std::to_string(tokens) + " tokens and " +
                      std::to_string(count) + " heads " +
                      std::to_string(pitch) +
                      " apart span 2^32 elements or more (the kernel "
                      "addresses per-head scalars in 32 bits)");
    return KGEN_OK;
  }

  int64_t domainLength(const BoundArgs &b) const {
    return rt::domainLength(spec, b);
  }

  /// Whether variant `v` fits; if not and `why` is given, says why. The
  /// message is built only then: a launch checks every variant before the
  /// one it takes.
  bool fits(const Variant &v, const BoundArgs &b,
            std::string *why = nullptr) const {
    auto reject = [&](auto &&text) {
      if (why)
        *why = text();
      return false;
    };
    // Not a structured binding: C++17 lambdas cannot capture one.
    for (const auto &align : v.tensorAlign) {
      int param = align.first;
      int64_t bytes = align.second;
      const Param &p = spec.params[param];
      if (b.ptr[param] % bytes)
        return reject([&] {
          return "'" + p.name + "' pointer " + hexAddress(b.ptr[param]) +
                 " is not " + std::to_string(bytes) + "-byte aligned";
        });
      // Only rows tensors are read in vectors along a row: a vector's
      // "stride" is its length, and per-head scalars are read one by one
      // (column-major scales have stride 1), so neither says anything here.
      int64_t strideBytes = b.stride[param] * dtypeSize(p.dtype);
      if (p.access == Param::Access::Rows && strideBytes % bytes)
        return reject([&] {
          return "'" + p.name + "' row stride of " +
                 std::to_string(strideBytes) + " bytes is not a multiple of " +
                 std::to_string(bytes);
        });
    }
    if (v.exactDomain > 0) {
      int64_t len = domainLength(b);
      if (len != v.exactDomain)
        return reject([&] {
          return "rows of " + std::to_string(len) + " elements, not " +
                 std::to_string(v.exactDomain);
        });
    }
    if (b.rows < v.minRows)
      return reject([&] {
        return std::to_string(b.rows) + " rows, fewer than " +
               std::to_string(v.minRows);
      });
    if (v.maxRows && b.rows > v.maxRows)
      return reject([&] {
        return std::to_string(b.rows) + " rows, more than " +
               std::to_string(v.maxRows);
      });
    if (v.maxDomain) {
      int64_t len = domainLength(b);
      if (len < v.minDomain || len > v.maxDomain)
        return reject([&] {
          return "rows of " + std::to_string(len) + " elements, not " +
                 std::to_string(v.minDomain) + " to " +
                 std::to_string(v.maxDomain);
        });
    }
    if (v.launchThreads || v.maxDomain) {
      int64_t len = domainLength(b);
      if (len % v.chunkElements)
        return reject([&] {
          return "rows of " + std::to_string(len) +
                 " elements are not a whole number of " +
                 std::to_string(v.chunkElements) + "-element chunks";
        });
    }
    if (v.heldChunks == 1 &&
        launchThreads(v, domainLength(b)) > spec.policy.maxOneChunkThreads)
      return reject([&] {
        return "rows of " + std::to_string(domainLength(b)) +
               " elements need more than " +
               std::to_string(spec.policy.maxOneChunkThreads) +
               " threads of 1 chunk";
      });
    if (v.heldChunks > 0) {
      int64_t len = domainLength(b);
      int64_t threads = launchThreads(v, len);
      if (threads > v.block)
        return reject([&] {
          return "rows of " + std::to_string(len) +
                 " elements need more than " + std::to_string(v.block) +
                 " threads of " + std::to_string(v.heldChunks) + " chunks";
        });
      // The kernel masks only each thread's last chunk.
      if ((v.heldChunks - 1) * threads * v.chunkElements > len)
        return reject([&] {
          return "rows of " + std::to_string(len) + " elements do not fill " +
                 std::to_string(v.heldChunks - 1) + " of the " +
                 std::to_string(v.heldChunks) + " chunks of " +
                 std::to_string(threads) + " threads";
        });
    }
    for (const auto &dimMultiple : v.dimMultiple) {
      int param = dimMultiple.first;
      int64_t multiple = dimMultiple.second;
      if (b.integer[param] % multiple)
        return reject([&] {
          return "dim '" + spec.params[param].name +
                 "' = " + std::to_string(b.integer[param]) +
                 " is not a multiple of " + std::to_string(multiple);
        });
    }
    return true;
  }

  /// Among the launch_threads variants from `first` on that fit, the one of
  /// one chunk a thread (rows of up to max_one_chunk_threads chunks share
  /// blocks; the others take one row a block, slow on many short rows),
  /// else the one whose threads leave the fewest chunk slots idle, then the
  /// fewest threads past the policy's heldThreadsFor (more rows per SM, as
  /// the specialized kernels' `_vec_rows`), then nearest 4 chunks a thread
  /// (what the specialized kernels hold), then the first listed
  /// (`_vec_hold4` before `_vec_hold4_wide`)
  /// (bench/results/launch-decisions.md).
  size_t bestHeld(size_t first, const BoundArgs &b) const {
    int64_t len = domainLength(b);
    int64_t most = spec.policy.heldThreadsFor(b.rows);
    auto key = [&](const Variant &v) {
      int64_t threads = launchThreads(v, len);
      return std::make_tuple(v.heldChunks != 1, launchIdleSlots(v, len),
                             std::max(threads, most),
                             std::abs(v.heldChunks - 4));
    };
    size_t best = first;
    for (size_t v = first + 1; v < spec.variants.size(); ++v) {
      const Variant &var = spec.variants[v];
      if (var.heldChunks && fits(var, b) && key(var) < key(spec.variants[best]))
        best = v;
    }
    return best;
  }

  kgen_status selectVariant(BoundArgs &out) {
    for (size_t v = 0; v < spec.variants.size(); ++v)
      if (fits(spec.variants[v], out)) {
        out.variant = spec.variants[v].heldChunks ? bestHeld(v, out) : v;
        return KGEN_OK;
      }
    std::string reasons;
    for (const Variant &v : spec.variants) {
      std::string why;
      fits(v, out, &why);
      reasons += (reasons.empty() ? "" : "; ") + v.entry + ": " + why;
    }
    return fail(KGEN_ERROR_MISALIGNED,
                "no variant accepts these arguments (" + reasons + ")");
  }
};

} // namespace

kgen_status bindArgs(const Spec &spec, const kgen_arg *args, size_t nargs,
                     int64_t rows, BoundArgs &out, std::string &err) {
  return Binder(spec, err).bind(args, nargs, rows, out);
}

int64_t placeRows(const Spec &spec, BoundArgs &bound, int multiprocessors) {
  const Variant &v = spec.variants[bound.variant];
  int64_t rows = bound.rows;
  int64_t length = domainLength(spec, bound);
  // One switch over the rule the spec's "launch" names (launchRule), so that
  // the name and the launch cannot part.
  int64_t perBlock = 1, threads = 0, y = 1;
  switch (launchRule(v)) {
  case LaunchRule::RowsPerBlock:
  case LaunchRule::LaunchRowsPerBlock:
  case LaunchRule::DomainRange:
    perBlock =
        launchRowsPerBlock(v, spec.policy, length, rows, multiprocessors);
    threads = v.block / v.rowsPerBlock * perBlock;
    break;
  case LaunchRule::LaunchThreads:
    threads = launchThreads(v, length);
    break;
  case LaunchRule::LaunchThreadsRows:
    std::tie(threads, perBlock) =
        launchedRowsBlock(v, spec.policy, length, rows, multiprocessors);
    y = perBlock;
    break;
  }
  int64_t grid = (rows / perBlock + (rows % perBlock != 0)) * v.tiles;
  bound.gridX = static_cast<uint32_t>(std::min<int64_t>(grid, UINT32_MAX));
  bound.blockX = static_cast<uint32_t>(threads);
  bound.blockY = static_cast<uint32_t>(y);
  return grid;
}

void packAbi(const Spec &spec, const Variant &variant, const BoundArgs &bound,
             std::vector<uint64_t> &storage, std::vector<void *> &params) {
  storage.assign(variant.abi.size(), 0);
  params.resize(variant.abi.size());
  for (size_t i = 0; i < variant.abi.size(); ++i) {
    const AbiSlot &slot = variant.abi[i];
    void *dst = &storage[i];
    params[i] = dst;
    switch (slot.kind) {
    case AbiSlot::Kind::Ptr:
      std::memcpy(dst, &bound.ptr[slot.param], sizeof(uint64_t));
      break;
    case AbiSlot::Kind::Stride:
      std::memcpy(dst, &bound.stride[slot.param], sizeof(int64_t));
      break;
    case AbiSlot::Kind::Dim:
      std::memcpy(dst, &bound.integer[slot.param], sizeof(int64_t));
      break;
    case AbiSlot::Kind::Rows:
      std::memcpy(dst, &bound.rows, sizeof(int64_t));
      break;
    case AbiSlot::Kind::Scalar: {
      // The driver reads exactly the PTX param's size from the slot's start.
      kgen_dtype dtype = spec.params[slot.param].dtype;
      if (dtype == KGEN_F32) {
        std::memcpy(dst, &bound.real[slot.param], sizeof(float));
      } else if (dtype == KGEN_I32) {
        int32_t v = static_cast<int32_t>(bound.integer[slot.param]);
        std::memcpy(dst, &v, sizeof(v));
      } else {
        std::memcpy(dst, &bound.integer[slot.param], sizeof(int64_t));
      }
      break;
    }
    }
  }
}

} // namespace kgen::rt

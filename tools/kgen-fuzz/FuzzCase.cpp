//===- FuzzCase.cpp - One reproducible kgen-fuzz case ---------------------===//
#include "FuzzCase.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

namespace kgen::fuzz {

const char *valuesName(Values v) {
  switch (v) {
  case Values::Normal:
    return "normal";
  case Values::Specials:
    return "specials";
  case Values::Scaled:
    return "scaled";
  case Values::Constant:
    return "constant";
  }
  return "?";
}

const char *positionsName(Positions p) {
  switch (p) {
  case Positions::Random:
    return "random";
  case Positions::Repeated:
    return "repeated";
  case Positions::Zero:
    return "zero";
  case Positions::Last:
    return "last";
  case Positions::Mixed:
    return "mixed";
  }
  return "?";
}

namespace {

constexpr Positions kAllPositions[] = {Positions::Random, Positions::Repeated,
                                       Positions::Zero, Positions::Last,
                                       Positions::Mixed};

/// Largest finite power-of-two exponent of a float dtype, minus a margin so
/// that a row's sum of squares in f32 does not overflow where the
/// interpreter's f32 rounding would not either.
int maxExponent(DType t) {
  switch (t) {
  case DType::F16:
    return 13;
  default:
    return 40;
  }
}

int64_t logUniform(std::mt19937_64 &rng, int64_t lo, int64_t hi) {
  std::uniform_real_distribution<double> u(std::log(double(lo)),
                                           std::log(double(hi) + 1));
  return std::clamp<int64_t>(int64_t(std::exp(u(rng))), lo, hi);
}

bool isPrime(int64_t n) {
  if (n < 2)
    return false;
  for (int64_t d = 2; d * d <= n; ++d)
    if (n % d == 0)
      return false;
  return true;
}

/// A dim of `role`: one, powers of two and odd counts of heads; groups of
/// one to 4096 row programs; tables of one row to 65536; heads dense or
/// padded by up to 64 elements; rows of one to 512 groups; elements dense
/// or up to 8 apart.
int64_t drawDim(std::mt19937_64 &rng, const DimDraw &d, int64_t length) {
  auto pick = [&](int64_t n) { return int64_t(rng() % uint64_t(n)); };
  int64_t r = pick(8);
  switch (d.role) {
  case DimRole::Heads:
    return r < 2 ? 1 : r < 5 ? int64_t(1) << pick(7) : 1 + pick(64);
  case DimRole::Group:
    return r < 1 ? 1 : r < 4 ? 1 + pick(16) : logUniform(rng, 1, 4096);
  case DimRole::Table:
    return r < 1 ? 1 : r < 2 ? 2 + pick(15) : logUniform(rng, 16, 65536);
  case DimRole::Pitch:
    return length + (r < 3 ? 0 : r < 6 ? 8 * (1 + pick(8)) : 1 + pick(64));
  case DimRole::ElementPitch:
    return r < 4 ? 1 : 1 + pick(8);
  case DimRole::Span:
    return r < 1 ? 1 : r < 4 ? 1 + pick(16) : logUniform(rng, 1, 512);
  case DimRole::Bounded: { // the bound, a multiple of 8 below it, or any
    auto it = d.maxByLength.find(length);
    int64_t max = it == d.maxByLength.end() ? 1 : it->second;
    return r < 2               ? max
           : r < 5 && max >= 8 ? 8 * (1 + pick(max / 8))
                               : logUniform(rng, 1, max);
  }
  }
  return 1;
}

/// Shrinks a map case to `maxBytes`: the largest table dim halves while the
/// rows-free part takes more than half, then the largest other dim while
/// one row does not fit; the rows last (all that ops of plain rows need).
void fitBytes(FuzzCase &c, const OpOffer &offer, int64_t maxBytes,
              const CaseBytes &bytes) {
  auto cost = [&](int64_t rows) {
    FuzzCase t = c;
    t.rows = rows;
    return bytes(t);
  };
  auto halveLargest = [&](bool table) {
    int64_t *most = nullptr;
    for (const DimDraw &d : offer.dims)
      if ((d.role == DimRole::Table) == table && d.role != DimRole::Pitch &&
          d.role != DimRole::ElementPitch && c.dims[d.name] > 1 &&
          (!most || c.dims[d.name] > *most))
        most = &c.dims[d.name];
    if (most)
      *most /= 2;
    return most != nullptr;
  };
  while (cost(0) > maxBytes / 2 && halveLargest(true)) {
  }
  while (cost(1) > maxBytes && halveLargest(false)) {
  }
  int64_t fixed = cost(0), perRow = cost(1) - fixed;
  if (perRow > 0 && fixed + c.rows * perRow > maxBytes)
    c.rows = std::max<int64_t>(1, (maxBytes - fixed) / perRow);
}

} // namespace

FuzzCase makeCase(const OpOffer &offer, uint64_t seed, int64_t maxBytes,
                  const CaseBytes &bytes) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  auto pick = [&](int64_t n) { return int64_t(rng() % uint64_t(n)); };
  FuzzCase c;
  c.op = offer.op;
  c.dtype = offer.dtypes[pick(offer.dtypes.size())];
  // Length: a specialized kernel's, tiny, around a vector width, a prime,
  // or log-uniform up to 65536.
  int64_t kind = pick(offer.dynamic ? 5 : 1);
  if (kind == 0 && !offer.lengths.empty()) {
    c.length = offer.lengths[pick(offer.lengths.size())];
    c.specialized = true;
  } else if (kind <= 1) {
    c.length = 1 + pick(64);
  } else if (kind == 2) {
    c.length = std::max<int64_t>(1, 8 * logUniform(rng, 1, 2048) + pick(3) - 1);
  } else if (kind == 3) {
    c.length = logUniform(rng, 2, 65536);
    while (!isPrime(c.length))
      ++c.length;
  } else {
    c.length = logUniform(rng, 1, 65536);
  }
  if (!offer.dynamic && !c.specialized) { // fixed lengths only (rope)
    c.length = offer.lengths[pick(offer.lengths.size())];
    c.specialized = true;
  }
  // Rows: 0, 1, a few, many, or up to millions within maxBytes; mostly
  // few, so that a run covers many shapes.
  int64_t r = pick(40);
  c.rows = r < 2    ? 0
           : r < 4  ? 1
           : r < 34 ? logUniform(rng, 2, 256)
           : r < 39 ? logUniform(rng, 257, 65536)
                    : logUniform(rng, 65537, 4 << 20);
  // Layout: contiguous, misaligned bases, padded rows, or both.
  int64_t l = pick(10);
  c.misalign = l >= 5 && l != 7 ? 1 + pick(7) : 0;
  c.pad = l >= 7 ? 1 + pick(64) : 0;
  int64_t v = pick(20);
  c.values = v < 10   ? Values::Normal
             : v < 14 ? Values::Specials
             : v < 17 ? Values::Scaled
                      : Values::Constant;
  if (c.values == Values::Scaled) {
    int e = maxExponent(c.dtype);
    c.exponent = int(pick(2 * e + 1)) - e;
  }
  c.valueSeed = rng();
  // Row maps: drawn after the rest, so that plain ops' cases stay as they
  // were. Rows count groups of row programs here (FuzzCase::rows).
  for (const DimDraw &d : offer.dims)
    c.dims[d.name] = drawDim(rng, d, c.specialized ? c.length : 0);
  if (offer.heads)
    c.fused = pick(2);
  if (offer.gather)
    c.positions = kAllPositions[pick(std::size(kAllPositions))];
  fitBytes(c, offer, maxBytes, bytes);
  return c;
}

std::string format(const FuzzCase &c) {
  std::ostringstream s;
  s << "op=" << c.op << " dtype=" << name(c.dtype) << " length=" << c.length
    << " rows=" << c.rows
    << " kernel=" << (c.specialized ? "specialized" : "dyn")
    << " misalign=" << c.misalign << " pad=" << c.pad
    << " values=" << valuesName(c.values);
  if (c.values == Values::Scaled)
    s << " exponent=" << c.exponent;
  s << " vseed=" << c.valueSeed;
  for (const auto &[name, v] : c.dims)
    s << " dim." << name << "=" << v;
  if (c.fused)
    s << " fused=1";
  if (c.positions != Positions::Random)
    s << " positions=" << positionsName(c.positions);
  return s.str();
}

std::optional<FuzzCase> parseCase(const std::string &text, std::string &err) {
  FuzzCase c;
  bool hasOp = false;
  std::istringstream in(text);
  std::string field;
  while (in >> field) {
    size_t eq = field.find('=');
    if (eq == std::string::npos) {
      err = "expected KEY=VALUE, got '" + field + "'";
      return std::nullopt;
    }
    std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    auto number = [&](int64_t lo, int64_t hi, int64_t &out) {
      char *end = nullptr;
      long long n = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end || n < lo || n > hi) {
        err = key + "=" + value + ": expected an integer in [" +
              std::to_string(lo) + ", " + std::to_string(hi) + "]";
        return false;
      }
      out = n;
      return true;
    };
    int64_t n = 0;
    if (key == "op") {
      c.op = value;
      hasOp = true;
    } else if (key == "dtype") {
      std::optional<DType> d = parseDType(value);
      if (!d) {
        err = "dtype=" + value + ": unknown dtype";
        return std::nullopt;
      }
      c.dtype = *d;
    } else if (key == "length") {
      if (!number(1, 1 << 20, c.length))
        return std::nullopt;
    } else if (key == "rows") {
      if (!number(0, int64_t(1) << 31, c.rows))
        return std::nullopt;
    } else if (key == "kernel") {
      if (value != "dyn" && value != "specialized") {
        err = "kernel=" + value + ": expected dyn or specialized";
        return std::nullopt;
      }
      c.specialized = value == "specialized";
    } else if (key == "misalign") {
      if (!number(0, 64, c.misalign))
        return std::nullopt;
    } else if (key == "pad") {
      if (!number(0, 4096, c.pad))
        return std::nullopt;
    } else if (key.rfind("dim.", 0) == 0 && key.size() > 4) {
      if (!number(1, 1 << 20, n))
        return std::nullopt;
      c.dims[key.substr(4)] = n;
    } else if (key == "fused") {
      if (!number(0, 1, n))
        return std::nullopt;
      c.fused = n;
    } else if (key == "positions") {
      bool found = false;
      for (Positions p : kAllPositions)
        if (value == positionsName(p))
          c.positions = p, found = true;
      if (!found) {
        err = "positions=" + value +
              ": expected random, repeated, zero, last or mixed";
        return std::nullopt;
      }
    } else if (key == "values") {
      bool found = false;
      for (Values v :
           {Values::Normal, Values::Specials, Values::Scaled, Values::Constant})
        if (value == valuesName(v))
          c.values = v, found = true;
      if (!found) {
        err = "values=" + value +
              ": expected normal, specials, scaled or constant";
        return std::nullopt;
      }
    } else if (key == "exponent") {
      if (!number(-126, 127, n))
        return std::nullopt;
      c.exponent = int(n);
    } else if (key == "vseed") {
      char *end = nullptr;
      c.valueSeed = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end) {
        err = "vseed=" + value + ": expected an unsigned integer";
        return std::nullopt;
      }
    } else {
      err = "unknown field '" + key + "'";
      return std::nullopt;
    }
  }
  if (!hasOp) {
    err = "a case needs op=NAME";
    return std::nullopt;
  }
  return c;
}

} // namespace kgen::fuzz

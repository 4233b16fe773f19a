//===- Len.cpp ------------------------------------------------------------===//
#include "dsl/Len.h"

namespace kgen {

static int64_t add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw LenOverflow("a length overflows int64: " + std::to_string(a) + " + " +
                      std::to_string(b));
  return r;
}

static int64_t mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw LenOverflow("a length overflows int64: " + std::to_string(a) + " * " +
                      std::to_string(b));
  return r;
}

Len Len::operator+(const Len &o) const {
  Len r = *this;
  r.constant = add(r.constant, o.constant);
  for (auto [d, c] : o.terms)
    if ((r.terms[d] = add(r.terms[d], c)) == 0)
      r.terms.erase(d);
  return r;
}

Len Len::operator-(const Len &o) const { return *this + o * -1; }

Len Len::operator*(int64_t k) const {
  Len r;
  if (k == 0)
    return r;
  r.constant = mul(constant, k);
  for (auto [d, c] : terms)
    r.terms[d] = mul(c, k);
  return r;
}

std::optional<Len> Len::exactDiv(int64_t k) const {
  if (k < 1 || constant % k)
    return std::nullopt;
  Len r(constant / k);
  for (auto [d, c] : terms) {
    if (c % k)
      return std::nullopt;
    r.terms[d] = c / k;
  }
  return r;
}

int64_t Len::eval(const std::vector<int64_t> &dims) const {
  int64_t v = constant;
  for (auto [d, c] : terms)
    v = add(v, mul(c, dims.at(d)));
  return v;
}

std::optional<int64_t>
Len::tryEval(const std::vector<std::optional<int64_t>> &dims) const {
  int64_t v = constant;
  for (auto [d, c] : terms) {
    if (d >= (int)dims.size() || !dims[d])
      return std::nullopt;
    v = add(v, mul(c, *dims[d]));
  }
  return v;
}

std::string Len::str(const std::vector<std::string> &dimNames) const {
  std::string s;
  for (auto [d, c] : terms) {
    std::string name = d < (int)dimNames.size() ? dimNames[d] : "?";
    if (!s.empty())
      s += c < 0 ? "-" : "+";
    else if (c < 0)
      s += "-";
    int64_t a = c < 0 ? -c : c;
    s += a == 1 ? name : std::to_string(a) + "*" + name;
  }
  if (s.empty())
    return std::to_string(constant);
  if (constant > 0)
    s += "+" + std::to_string(constant);
  else if (constant < 0)
    s += std::to_string(constant);
  return s;
}

bool Len::provablyLE(const Len &o, const std::vector<int64_t> &maxima) const {
  // o - this = c + sum(ci * di) is smallest at di = 1 where ci >= 0 and at
  // di = max where ci < 0 (no bound: not provable). In 128 bits: the terms
  // are int64 products and there are few of them.
  std::map<int, __int128> diff;
  for (auto [d, c] : o.terms)
    diff[d] += c;
  for (auto [d, c] : terms)
    diff[d] -= c;
  __int128 least = (__int128)o.constant - constant;
  for (auto [d, c] : diff) {
    if (c >= 0) {
      least += c;
      continue;
    }
    int64_t max = d < (int)maxima.size() ? maxima[d] : INT64_MAX;
    if (max == INT64_MAX || c < -((__int128)1 << 62) / max)
      return false;
    least += c * max;
  }
  return least >= 0;
}

} // namespace kgen

//===- Len.cpp ------------------------------------------------------------===//
#include "dsl/Len.h"

namespace kgen {

Len Len::operator+(const Len &o) const {
  Len r = *this;
  r.constant += o.constant;
  for (auto [d, c] : o.terms)
    if ((r.terms[d] += c) == 0)
      r.terms.erase(d);
  return r;
}

Len Len::operator-(const Len &o) const { return *this + o * -1; }

Len Len::operator*(int64_t k) const {
  Len r;
  if (k == 0)
    return r;
  r.constant = constant * k;
  for (auto [d, c] : terms)
    r.terms[d] = c * k;
  return r;
}

int64_t Len::eval(const std::vector<int64_t> &dims) const {
  int64_t v = constant;
  for (auto [d, c] : terms)
    v += c * dims.at(d);
  return v;
}

std::optional<int64_t>
Len::tryEval(const std::vector<std::optional<int64_t>> &dims) const {
  int64_t v = constant;
  for (auto [d, c] : terms) {
    if (d >= (int)dims.size() || !dims[d])
      return std::nullopt;
    v += c * *dims[d];
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

bool Len::provablyLE(const Len &o) const {
  // o - this = c + sum(ci * di) >= 0 for all di >= 1 iff every ci >= 0 and
  // the value at di = 1 is >= 0.
  Len diff = o - *this;
  int64_t atOne = diff.constant;
  for (auto [d, c] : diff.terms) {
    if (c < 0)
      return false;
    atOne += c;
  }
  return atOne >= 0;
}

} // namespace kgen

//===- Len.h - Affine lengths over symbolic dims ----------------*- C++ -*-===//
//
// A Len is c0 + sum(ci * dim_i) with integer coefficients: the length of a row
// ("hidden", "2*d") or an offset into one ("d"). Two Lens are equal when
// their coefficients are, which is how the DSL checks that rows line up.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_DSL_LEN_H
#define KGEN_DSL_LEN_H

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kgen {

/// Arithmetic on Lens is checked: a result past int64 throws this rather
/// than wrap into a length that passes the DSL's checks.
class LenOverflow : public std::overflow_error {
public:
  using std::overflow_error::overflow_error;
};

struct Len {
  int64_t constant = 0;
  std::map<int, int64_t> terms; ///< dim index -> coefficient, no zeros.

  Len() = default;
  Len(int64_t c) : constant(c) {} // NOLINT: a number is a length.
  static Len dim(int index) {
    Len l;
    l.terms[index] = 1;
    return l;
  }

  bool isConstant() const { return terms.empty(); }
  bool operator==(const Len &o) const {
    return constant == o.constant && terms == o.terms;
  }
  bool operator!=(const Len &o) const { return !(*this == o); }

  Len operator+(const Len &o) const;
  Len operator-(const Len &o) const;
  Len operator*(int64_t k) const;
  /// This length over k (> 0) when every coefficient is a multiple of k, so
  /// that it divides for every value of the dims; nullopt otherwise.
  std::optional<Len> exactDiv(int64_t k) const;

  /// The value for the given dim values (dims[i] is dim i).
  int64_t eval(const std::vector<int64_t> &dims) const;
  /// Evaluates when every dim used has a value; nullopt otherwise.
  std::optional<int64_t>
  tryEval(const std::vector<std::optional<int64_t>> &dims) const;
  /// "2*hidden+1", with the dims' names.
  std::string str(const std::vector<std::string> &dimNames) const;
  /// True when this <= o for every assignment of dims in [1, maxima[i]]
  /// (a dim past maxima's end, or at INT64_MAX, is unbounded). Never throws:
  /// lengths whose difference is past int64 are not provably ordered.
  bool provablyLE(const Len &o, const std::vector<int64_t> &maxima = {}) const;
};

inline Len operator*(int64_t k, const Len &l) { return l * k; }

} // namespace kgen

#endif // KGEN_DSL_LEN_H

// PyPTO CPU backend: the 8-bit float formats (FP8 E4M3FN / E5M2 / E8M0, HiFloat8) as element types.
//
// A tile or tensor of such a format holds one code per byte.  Arithmetic reads a code as its exact
// fp32 value (a 256-entry table, the interpreter's decode: ml_dtypes for the FP8 formats,
// pypto_pro/lowprec.py for HF8) and writes a value back by rounding once:
//   * st<T> / from_double<T> (setval, element writes): the interpreter's DataType.encode -- nearest even
//     with ml_dtypes' overflow (E4M3FN: NaN, E5M2: inf, E8M0: NaN), HF8 nearest ties away, saturating;
//   * low_round (pl.cast into the format): ops/casting.py cast_values -- nearest on the format's
//     value grid under the cast's mode, saturating (lowprec.round_to_format; HF8's nearest modes use
//     its own encoder, which saturates infinities too).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core.h"

namespace pto {

struct f8e4m3 { uint8_t bits; };
struct f8e5m2 { uint8_t bits; };
struct f8e8m0 { uint8_t bits; };
struct hif8 { uint8_t bits; };

template <class T> inline constexpr bool is_low_t =
    std::is_same<T, f8e4m3>::value || std::is_same<T, f8e5m2>::value || std::is_same<T, f8e8m0>::value ||
    std::is_same<T, hif8>::value;

// ------------------------------------------------------------------------------------------ decode
inline float lf_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline float lf_nan(bool neg) { return lf_bits(neg ? 0xFFC00000u : 0x7FC00000u); }

// IEEE-style sign/exponent/mantissa code with `eb` exponent and `mb` mantissa bits (bias 2^(eb-1) - 1).
inline float lf_ieee(uint32_t code, int eb, int mb) {
  const bool neg = (code >> (eb + mb)) & 1u;
  const int e = (int)((code >> mb) & ((1u << eb) - 1u)), m = (int)(code & ((1u << mb) - 1u));
  const int bias = (1 << (eb - 1)) - 1;
  double v = e == 0 ? std::ldexp((double)m, 1 - bias - mb) : std::ldexp((double)((1 << mb) + m), e - bias - mb);
  return (float)(neg ? -v : v);
}

inline float lf_decode_e4m3(uint32_t c) {
  if ((c & 0x7Fu) == 0x7Fu) return lf_nan(c & 0x80u);
  return lf_ieee(c, 4, 3);
}
inline float lf_decode_e5m2(uint32_t c) {
  if ((c & 0x7Cu) == 0x7Cu) return (c & 3u) ? lf_nan(c & 0x80u) : ((c & 0x80u) ? -INFINITY : INFINITY);
  return lf_ieee(c, 5, 2);
}
inline float lf_decode_e8m0(uint32_t c) { return c == 0xFFu ? lf_nan(false) : (float)std::ldexp(1.0, (int)c - 127); }

// HiFloat8: sign, a prefix-coded "dot" field giving the exponent width, sign-magnitude exponent, mantissa
// (the table in pypto_pro/lowprec.py).
inline double lf_hf8_magnitude(uint32_t c7) {
  const uint32_t top = c7 >> 5;
  auto pw = [](int mag, bool neg_e) { return std::ldexp(1.0, neg_e ? -mag : mag); };
  if (top == 3) {
    const uint32_t e = (c7 >> 1) & 0xFu, m = c7 & 1u;
    if (e == 7u && m == 1u) return INFINITY;
    return (1.0 + m / 2.0) * pw(8 + (int)(e & 7u), e >> 3);
  }
  if (top == 2) {
    const uint32_t e = (c7 >> 2) & 7u;
    return (1.0 + (c7 & 3u) / 4.0) * pw(4 + (int)(e & 3u), e >> 2);
  }
  if (top == 1) {
    const uint32_t e = (c7 >> 3) & 3u;
    return (1.0 + (c7 & 7u) / 8.0) * pw(2 + (int)(e & 1u), e >> 1);
  }
  if (c7 & 0x10u) return (1.0 + (c7 & 7u) / 8.0) * (c7 & 0x08u ? 0.5 : 2.0);
  if (c7 & 0x08u) return 1.0 + (c7 & 7u) / 8.0;
  const uint32_t m = c7 & 7u;
  return m == 0 ? 0.0 : std::ldexp(1.0, (int)m - 23);
}
inline float lf_decode_hf8(uint32_t c) {
  if (c == 0x80u) return lf_nan(false);
  const double v = lf_hf8_magnitude(c & 0x7Fu);
  return (float)((c & 0x80u) ? -v : v);
}

// Everything a format needs at run time: its 256 values and its rounding grid (finite values, ascending,
// one code per value: the lowest), built once per process.
struct LowFormat {
  float value[256];
  double grid[256];
  uint8_t grid_code[256];
  int ngrid = 0;
  int nan_code = 0, pos_inf = -1, neg_inf = -1;
  explicit LowFormat(float (*decode)(uint32_t)) {
    int order[256], n = 0;
    for (int c = 0; c < 256; ++c) {
      value[c] = decode((uint32_t)c);
      if (std::isfinite(value[c])) order[n++] = c;
    }
    nan_code = -1;
    for (int c = 0; c < 256 && nan_code < 0; ++c)
      if (value[c] != value[c]) nan_code = c;
    if (nan_code < 0) nan_code = 0;
    for (int c = 0; c < 256; ++c) {
      if (value[c] == INFINITY && pos_inf < 0) pos_inf = c;
      if (value[c] == -INFINITY && neg_inf < 0) neg_inf = c;
    }
    // insertion sort by (value, code): stable, codes already ascending
    for (int i = 1; i < n; ++i) {
      int c = order[i], j = i - 1;
      while (j >= 0 && value[order[j]] > value[c]) { order[j + 1] = order[j]; --j; }
      order[j + 1] = c;
    }
    for (int i = 0; i < n; ++i) {
      const double v = (double)value[order[i]];
      if (ngrid > 0 && grid[ngrid - 1] == v) continue;  // -0 after +0 (the lower code) is dropped
      grid[ngrid] = v;
      grid_code[ngrid++] = (uint8_t)order[i];
    }
  }
};

template <class T> const LowFormat& low_format();
template <> inline const LowFormat& low_format<f8e4m3>() { static const LowFormat f(lf_decode_e4m3); return f; }
template <> inline const LowFormat& low_format<f8e5m2>() { static const LowFormat f(lf_decode_e5m2); return f; }
template <> inline const LowFormat& low_format<f8e8m0>() { static const LowFormat f(lf_decode_e8m0); return f; }
template <> inline const LowFormat& low_format<hif8>() { static const LowFormat f(lf_decode_hf8); return f; }

// The value tables as plain arrays for the hot decode (matmul operand packing).
template <class T> struct LowTable { static const float* const v; };
template <class T> const float* const LowTable<T>::v = low_format<T>().value;

// ------------------------------------------------------------------------------------------ rounding
enum LowMode { LOW_RINT = 0, LOW_ROUND, LOW_FLOOR, LOW_CEIL, LOW_TRUNC };

// The code of `x` on format `f`'s grid under `mode`, as lowprec.round_to_format: finite values beyond
// the grid saturate, an infinity stays infinite where the format has one, NaN -> the first NaN code.
inline uint8_t low_round(const LowFormat& f, double x, int mode, bool keep_inf = true) {
  if (x != x) return (uint8_t)f.nan_code;
  if (keep_inf && x == INFINITY && f.pos_inf >= 0) return (uint8_t)f.pos_inf;
  if (keep_inf && x == -INFINITY && f.neg_inf >= 0) return (uint8_t)f.neg_inf;
  const double* g = f.grid;
  const int n = f.ngrid;
  const double xs = x < g[0] ? g[0] : (x > g[n - 1] ? g[n - 1] : x);
  int lo_i = 0, hi_i = n;  // first index with g >= xs
  while (lo_i < hi_i) {
    const int mid = (lo_i + hi_i) >> 1;
    if (g[mid] < xs) lo_i = mid + 1; else hi_i = mid;
  }
  int hi = lo_i < 1 ? 1 : (lo_i > n - 1 ? n - 1 : lo_i);
  int lo = hi - 1;
  const bool exact_hi = g[hi] == xs;
  const double below = xs - g[lo], above = g[hi] - xs;
  bool pick;
  switch (mode) {
    case LOW_FLOOR: pick = exact_hi; break;
    case LOW_CEIL: pick = true; break;
    case LOW_TRUNC: pick = exact_hi || xs < 0; break;
    case LOW_ROUND: pick = below > above || (below == above && xs > 0); break;
    default: pick = below > above || (below == above && f.grid_code[hi] % 2 == 0); break;
  }
  if (g[lo] == xs) pick = false;
  else pick = pick || exact_hi;
  return pick ? f.grid_code[hi] : f.grid_code[lo];
}

// Nearest-even with the exponent range unbounded above (ml_dtypes' astype from a float): the value
// decides between the grid's two neighbours, and beyond the largest finite value rounding up overflows.
template <class T> inline uint8_t low_encode(double x) {
  const LowFormat& f = low_format<T>();
  if constexpr (std::is_same<T, hif8>::value) {
    return low_round(f, (double)(float)x, LOW_ROUND, false);  // HF8: ties away, saturating (lowprec.hf8_encode)
  } else {
    if constexpr (std::is_same<T, f8e8m0>::value) {
      if (x != x || x <= 0) return 0xFFu;  // unsigned, no zero: NaN
      // a power of two: up from a mantissa of 1.5 on (ml_dtypes), below 2^-127 code 0, overflow -> NaN
      int e;
      const double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
      int code = e - 1 + 127;
      if (m * 2.0 >= 1.5) ++code;
      if (code < 0) return 0;
      return code > 254 ? 0xFFu : (uint8_t)code;
    } else {
      constexpr bool e4 = std::is_same<T, f8e4m3>::value;
      if (x != x) return (uint8_t)((std::signbit(x) ? 0x80u : 0u) | (e4 ? 0x7Fu : 0x7Eu));
      const bool neg = std::signbit(x);
      const double a = std::fabs(x);
      const int mb = e4 ? 3 : 2, emin = e4 ? -6 : -14;
      const double maxf = e4 ? 448.0 : 57344.0;
      int e;
      std::frexp(a, &e);  // a in [2^(e-1), 2^e)
      int ex = e - 1 < emin ? emin : e - 1;
      const double q = std::ldexp(1.0, ex - mb);
      const double r = std::nearbyint(a / q) * q;  // exact quantum division; nearbyint: ties to even
      if (r > maxf || std::isinf(a)) return e4 ? (neg ? 0xFFu : 0x7Fu) : (neg ? 0xFCu : 0x7Cu);
      // the code of r (exact on the grid; -0 keeps its sign)
      uint8_t code = 0;
      if (r != 0) {
        int er;
        std::frexp(r, &er);
        int be = er - 1 < emin ? 0 : er - 1 + (e4 ? 7 : 15);
        int m = be == 0 ? (int)std::ldexp(r, -(emin - mb)) : (int)(std::ldexp(r, -(er - 1 - mb)) - (1 << mb));
        code = (uint8_t)((be << mb) | m);
      }
      return (uint8_t)(code | (neg ? 0x80u : 0u));
    }
  }
}

// ------------------------------------------------------------------------------------------ element access
template <> struct CT<f8e4m3> { using type = float; };
template <> struct CT<f8e5m2> { using type = float; };
template <> struct CT<f8e8m0> { using type = float; };
template <> struct CT<hif8> { using type = float; };

template <> inline float ld<f8e4m3>(f8e4m3 x) { return LowTable<f8e4m3>::v[x.bits]; }
template <> inline float ld<f8e5m2>(f8e5m2 x) { return LowTable<f8e5m2>::v[x.bits]; }
template <> inline float ld<f8e8m0>(f8e8m0 x) { return LowTable<f8e8m0>::v[x.bits]; }
template <> inline float ld<hif8>(hif8 x) { return LowTable<hif8>::v[x.bits]; }

template <> inline f8e4m3 st<f8e4m3>(float v) { return f8e4m3{low_encode<f8e4m3>(v)}; }
template <> inline f8e5m2 st<f8e5m2>(float v) { return f8e5m2{low_encode<f8e5m2>(v)}; }
template <> inline f8e8m0 st<f8e8m0>(float v) { return f8e8m0{low_encode<f8e8m0>(v)}; }
template <> inline hif8 st<hif8>(float v) { return hif8{low_encode<hif8>(v)}; }

template <> inline f8e4m3 from_double<f8e4m3>(double v) { return f8e4m3{low_encode<f8e4m3>(v)}; }
template <> inline f8e5m2 from_double<f8e5m2>(double v) { return f8e5m2{low_encode<f8e5m2>(v)}; }
template <> inline f8e8m0 from_double<f8e8m0>(double v) { return f8e8m0{low_encode<f8e8m0>(v)}; }
template <> inline hif8 from_double<hif8>(double v) { return hif8{low_encode<hif8>(v)}; }
template <> inline f8e4m3 from_int<f8e4m3>(int64_t v) { return f8e4m3{low_encode<f8e4m3>((double)v)}; }
template <> inline f8e5m2 from_int<f8e5m2>(int64_t v) { return f8e5m2{low_encode<f8e5m2>((double)v)}; }
template <> inline f8e8m0 from_int<f8e8m0>(int64_t v) { return f8e8m0{low_encode<f8e8m0>((double)v)}; }
template <> inline hif8 from_int<hif8>(int64_t v) { return hif8{low_encode<hif8>((double)v)}; }

// ------------------------------------------------------------------------------------------ pl.cast
// A value of a cast into a low format (ops/casting.py cast_values): `x` is the source value (a low
// source already decoded to fp32).
template <class TD> inline TD low_cast(double x, int mode) {
  // RoundMode -> LowMode: CAST_NONE/RINT -> rint, ROUND, FLOOR, CEIL, TRUNC (CAST_ODD is refused earlier)
  static const int kMode[] = {LOW_RINT, LOW_RINT, LOW_ROUND, LOW_FLOOR, LOW_CEIL, LOW_TRUNC, LOW_RINT};
  const int m = kMode[mode < 0 || mode > 6 ? 0 : mode];
  if constexpr (std::is_same<TD, hif8>::value) {
    if (m == LOW_RINT || m == LOW_ROUND) return hif8{low_encode<hif8>(x)};  // via fp32, ties away, saturating
  }
  return TD{low_round(low_format<TD>(), x, m)};
}

}  // namespace pto

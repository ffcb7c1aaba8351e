// PyPTO CPU backend: dtype conversion with the hardware rounding modes (ops/casting.py).
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

#include "core.h"
#include "lowfloat.h"

namespace pto {

enum RoundMode { CAST_NONE = 0, CAST_RINT, CAST_ROUND, CAST_FLOOR, CAST_CEIL, CAST_TRUNC, CAST_ODD };

template <class T> inline constexpr bool is_float_t =
    std::is_same<T, float>::value || std::is_same<T, half>::value || std::is_same<T, bf16>::value ||
    std::is_same<T, double>::value;

template <class T> inline uint32_t bits_of(T v) {
  if constexpr (std::is_same<T, float>::value) { uint32_t u; std::memcpy(&u, &v, 4); return u; }
  else if constexpr (std::is_same<T, bf16>::value) return v.bits;
  else { uint16_t u; std::memcpy(&u, &v, 2); return u; }
}

// numpy nextafter for fp32; the interpreter's bit-pattern stepping for 16-bit floats.
template <class T> inline T step_toward(T y, bool up) {
  if constexpr (std::is_same<T, float>::value) {
    return std::nextafter(y, up ? INFINITY : -INFINITY);
  } else {
    float yf = ld<T>(y);
    int32_t b = (int32_t)bits_of(y);
    bool neg = (b & 0x8000) != 0;
    int32_t mag = b & 0x7FFF;
    // NaN stays NaN, an infinity stepping outward stays infinite (inward: the largest finite value)
    if (yf != yf || (std::isinf(yf) && up != neg)) return y;
    int32_t nb;
    if (mag == 0) nb = up ? 0x0001 : 0x8001;
    else nb = (b & 0x8000) | ((up != neg) ? mag + 1 : mag - 1);
    uint16_t u = (uint16_t)nb;
    T out;
    std::memcpy(&out, &u, 2);
    return out;
  }
}

// Round a double to a float format with `mode` (casting.py _float_round).
template <class T> inline T float_round(double x, int mode) {
  T y = from_double<T>(x);
  if (mode == CAST_RINT || mode == CAST_NONE) return y;
  double yd = (double)ld<T>(y);
  if (yd == x || !std::isfinite(x)) return y;
  T lower = yd <= x ? y : step_toward(y, false);
  T upper = yd >= x ? y : step_toward(y, true);
  switch (mode) {
    case CAST_FLOOR: return lower;
    case CAST_CEIL: return upper;
    case CAST_TRUNC: return x >= 0 ? lower : upper;
    case CAST_ROUND: {
      if (std::isinf(yd)) return y;  // ties-away overflows exactly where ties-even does
      double dl = x - (double)ld<T>(lower), du = (double)ld<T>(upper) - x;
      return dl < du ? lower : (du < dl ? upper : (x >= 0 ? upper : lower));
    }
    default: return (bits_of(lower) & 1u) ? lower : upper;  // CAST_ODD
  }
}

inline double round_int(double x, int mode) {
  switch (mode) {
    case CAST_ROUND: return (x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0)) * std::floor(std::fabs(x) + 0.5);
    case CAST_FLOOR: return std::floor(x);
    case CAST_CEIL: return std::ceil(x);
    case CAST_TRUNC: return std::trunc(x);
    default: return std::nearbyint(x);
  }
}

// Convert one stored value of TS to TD storage (casting.py cast_values, element-wise).
template <class TD, class TS> inline TD convert(TS v, int mode) {
  if constexpr (is_low_t<TS>) {  // 8-bit floats: read as their fp32 value (lowfloat.h)
    return convert<TD, float>(ld<TS>(v), mode);
  } else if constexpr (is_low_t<TD>) {
    if constexpr (std::is_same<TS, bool>::value) return low_cast<TD>(v ? 1.0 : 0.0, mode);
    else return low_cast<TD>((double)ld<TS>(v), mode);
  } else if constexpr (std::is_same<TD, bool>::value) {
    return (bool)ld<TS>(v);
  } else if constexpr (std::is_same<TS, bool>::value) {
    return st<TD>((ct<TD>)(v ? 1 : 0));
  } else if constexpr (is_float_t<TD>) {
    if constexpr (is_float_t<TS>) {
      if constexpr (sizeof(TS) < sizeof(TD)) return st<TD>((ct<TD>)ld<TS>(v));  // widening is exact
      else return float_round<TD>((double)ld<TS>(v), mode);  // narrowing, and fp16 <-> bf16
    } else {
      return float_round<TD>((double)v, mode);  // exact values come out unchanged
    }
  } else {
    if constexpr (is_float_t<TS>) {
      double x = round_int((double)ld<TS>(v), mode);
      if (x != x) return (TD)0;
      const double lo = (double)std::numeric_limits<TD>::min(), hi = (double)std::numeric_limits<TD>::max();
      x = x < lo ? lo : (x > hi ? hi : x);
      return (TD)x;
    } else {
      return (TD)v;
    }
  }
}

}  // namespace pto

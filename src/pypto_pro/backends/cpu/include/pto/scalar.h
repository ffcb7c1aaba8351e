// PyPTO CPU backend: scalar expression semantics of the interpreter (Python numbers: ints are
// 64-bit here, float results are rounded to fp32, // and % follow Python's floor rules).
#pragma once
#include <cmath>

#include "tile.h"

namespace pto {

inline float f32(double v) { return (float)v; }

inline float sdiv(Core& C, double a, double b) {
  if (b == 0) fail(C, "scalar division by zero");
  return (float)(a / b);
}
inline int64_t sfloordiv(Core& C, int64_t a, int64_t b) {
  if (b == 0) fail(C, "scalar division by zero");
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline float sfloordiv_f(Core& C, double a, double b) {
  if (b == 0) fail(C, "scalar division by zero");
  return (float)std::floor(a / b);
}
inline int64_t smod(Core& C, int64_t a, int64_t b) {
  if (b == 0) fail(C, "scalar modulo by zero");
  if (b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
inline float smod_f(Core& C, double a, double b) {
  if (b == 0) fail(C, "scalar modulo by zero");
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return (float)r;
}
template <class A, class B> inline auto smin(A a, B b) -> decltype(a + b) { return b < a ? b : a; }
template <class A, class B> inline auto smax(A a, B b) -> decltype(a + b) { return b > a ? b : a; }

inline float arg_f(int64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return (float)d;
}

}  // namespace pto

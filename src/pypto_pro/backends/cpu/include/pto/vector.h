// PyPTO CPU backend: vector ops (pipe V).  Each function reproduces ops/vector.py exactly:
// destination first, iteration over dst's valid window, fp16/bf16 computed in fp32 and rounded
// once per op, integers wrapping like C, row/column sums accumulated sequentially.
#pragma once
#include <cmath>
#include <type_traits>

#include "cast.h"
#include "tile.h"

namespace pto {

template <class T> inline constexpr bool is_fp = std::is_floating_point<ct<T>>::value;

// ---------------------------------------------------------------- element-wise binary
template <class T> inline ct<T> nan_max(ct<T> a, ct<T> b) {
  if constexpr (is_fp<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a > b ? a : b;
}
template <class T> inline ct<T> nan_min(ct<T> a, ct<T> b) {
  if constexpr (is_fp<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? a : b;
}

template <class T> inline ct<T> c_div(Core& C, ct<T> a, ct<T> b) {
  if constexpr (is_fp<T>) {
    (void)C;
    return a / b;
  } else {
    if (b == 0) fail(C, "integer division by zero in pl.div");
    if constexpr (std::is_signed<T>::value) {
      if (b == -1) return (ct<T>)(0 - (typename std::make_unsigned<T>::type)a);
    }
    return (ct<T>)(a / b);
  }
}

struct OpAdd { template <class T> static ct<T> f(Core&, ct<T> a, ct<T> b) { return (ct<T>)(a + b); } };
struct OpSub { template <class T> static ct<T> f(Core&, ct<T> a, ct<T> b) { return (ct<T>)(a - b); } };
struct OpMul { template <class T> static ct<T> f(Core&, ct<T> a, ct<T> b) { return (ct<T>)(a * b); } };
struct OpDiv { template <class T> static ct<T> f(Core& C, ct<T> a, ct<T> b) { return c_div<T>(C, a, b); } };
struct OpMax { template <class T> static ct<T> f(Core&, ct<T> a, ct<T> b) { return nan_max<T>(a, b); } };
struct OpMin { template <class T> static ct<T> f(Core&, ct<T> a, ct<T> b) { return nan_min<T>(a, b); } };
struct OpAnd { template <class T> static ct<T> f(Core&, ct<T> a, ct<T> b) { return (ct<T>)(a & b); } };
struct OpOr { template <class T> static ct<T> f(Core&, ct<T> a, ct<T> b) { return (ct<T>)(a | b); } };
struct OpXor { template <class T> static ct<T> f(Core&, ct<T> a, ct<T> b) { return (ct<T>)(a ^ b); } };
template <bool Left> struct OpShift {
  template <class T> static ct<T> f(Core& C, ct<T> a, ct<T> b) {
    if (b < 0 || b >= (ct<T>)(8 * sizeof(T))) fail(C, "shift amount outside [0, %d)", (int)(8 * sizeof(T)));
    using U = typename std::make_unsigned<T>::type;
    if constexpr (Left) return (ct<T>)(T)(U)((U)a << b);
    else return (ct<T>)(a >> b);
  }
};

template <class Op, class T> inline void binary(Core& C, const Tile<T>& d, const Tile<T>& a, const Tile<T>& b) {
  int vr, vc;
  window(C, d, vr, vc, a, b);
  ew(C, d, vr, vc, [&C](T x, T y) { return st<T>(Op::template f<T>(C, ld(x), ld(y))); }, a, b);
}
template <class Op, class T, class S> inline void binary(Core& C, const Tile<T>& d, const Tile<T>& a, S s) {
  int vr, vc;
  window(C, d, vr, vc, a);
  const ct<T> y = scal<T>(s);
  ew(C, d, vr, vc, [&C, y](T x) { return st<T>(Op::template f<T>(C, ld(x), y)); }, a);
}

#define PTO_BINARY(NAME, OP)                                                                              \
  template <class T, class R> inline void NAME(Core& C, const Tile<T>& d, const Tile<T>& a, const R& b) { \
    binary<OP>(C, d, a, b);                                                                               \
  }
PTO_BINARY(add, OpAdd)
PTO_BINARY(sub, OpSub)
PTO_BINARY(mul, OpMul)
PTO_BINARY(div, OpDiv)
PTO_BINARY(maximum, OpMax)
PTO_BINARY(minimum, OpMin)
PTO_BINARY(and_, OpAnd)
PTO_BINARY(or_, OpOr)
PTO_BINARY(xor_, OpXor)
PTO_BINARY(shl, OpShift<true>)
PTO_BINARY(shr, OpShift<false>)
#undef PTO_BINARY

// ---------------------------------------------------------------- element-wise unary
struct UNeg { template <class T> static ct<T> f(ct<T> x) { if constexpr (is_fp<T>) return -x; else return (ct<T>)(0 - x); } };
struct UAbs { template <class T> static ct<T> f(ct<T> x) { if constexpr (is_fp<T>) return std::fabs(x); else return x < 0 ? (ct<T>)(0 - x) : x; } };
struct UExp { template <class T> static ct<T> f(ct<T> x) { return std::exp(x); } };
struct ULog { template <class T> static ct<T> f(ct<T> x) { return std::log(x); } };
struct USqrt { template <class T> static ct<T> f(ct<T> x) { return std::sqrt(x); } };
struct URsqrt { template <class T> static ct<T> f(ct<T> x) { return 1.0f / std::sqrt(x); } };
struct URecip { template <class T> static ct<T> f(ct<T> x) { return 1.0f / x; } };
struct URelu { template <class T> static ct<T> f(ct<T> x) { return x > 0 ? x : (ct<T>)0; } };
struct UNot { template <class T> static ct<T> f(ct<T> x) { return (ct<T>)~x; } };

template <class Op, class T> inline void unary(Core& C, const Tile<T>& d, const Tile<T>& s) {
  int vr, vc;
  window(C, d, vr, vc, s);
  ew(C, d, vr, vc, [](T x) { return st<T>(Op::template f<T>(ld(x))); }, s);
}
#define PTO_UNARY(NAME, OP) \
  template <class T> inline void NAME(Core& C, const Tile<T>& d, const Tile<T>& s) { unary<OP>(C, d, s); }
PTO_UNARY(neg, UNeg)
PTO_UNARY(abs, UAbs)
PTO_UNARY(exp, UExp)
PTO_UNARY(log, ULog)
PTO_UNARY(sqrt, USqrt)
PTO_UNARY(rsqrt, URsqrt)
PTO_UNARY(recip, URecip)
PTO_UNARY(relu, URelu)
PTO_UNARY(not_, UNot)
#undef PTO_UNARY

// dst's valid window = scalar (Vec or Mat tiles).
template <class T, class S> inline void expands(Core& C, const Tile<T>& d, S s) {
  const T v = st<T>(scal<T>(s));
  ew(C, d, d.vr, d.vc, [v]() { return v; });
}

// ---------------------------------------------------------------- cast
template <class TD, class TS> inline void cast(Core& C, const Tile<TD>& d, const Tile<TS>& s, int mode) {
  int vr, vc;
  window(C, d, vr, vc, s);
  ew(C, d, vr, vc, [mode](TS x) { return convert<TD, TS>(x, mode); }, s);
}

// ---------------------------------------------------------------- fused
template <class T> inline void addc(Core& C, const Tile<T>& d, const Tile<T>& a, const Tile<T>& b, const Tile<T>& c) {
  int vr, vc;
  window(C, d, vr, vc, a, b, c);
  ew(C, d, vr, vc, [](T x, T y, T z) { return st<T>((ct<T>)((ct<T>)(ld(x) + ld(y)) + ld(z))); }, a, b, c);
}
template <class T> inline void mul_add_dst(Core& C, const Tile<T>& d, const Tile<T>& a, const Tile<T>& b) {
  int vr, vc;
  window(C, d, vr, vc, a, b);
  ew(C, d, vr, vc, [](T x, T y, T o) { return st<T>((ct<T>)((ct<T>)(ld(x) * ld(y)) + ld(o))); }, a, b, d);
}
template <class T> inline void fused_mul_add(Core& C, const Tile<T>& d, const Tile<T>& a, const Tile<T>& b) {
  int vr, vc;
  window(C, d, vr, vc, a, b);
  ew(C, d, vr, vc, [](T x, T y, T o) { return st<T>((ct<T>)((ct<T>)(ld(x) * ld(o)) + ld(y))); }, a, b, d);
}
template <class T> inline void fused_mul_add_relu(Core& C, const Tile<T>& d, const Tile<T>& a, const Tile<T>& b) {
  int vr, vc;
  window(C, d, vr, vc, a, b);
  ew(C, d, vr, vc, [](T x, T y, T o) {
       ct<T> v = (ct<T>)((ct<T>)(ld(o) * ld(x)) + ld(y));
       return st<T>(v > 0 ? v : (ct<T>)0);
     }, a, b, d);
}
template <class TD, class TS, class S> inline void axpy(Core& C, const Tile<TD>& d, const Tile<TS>& s, S alpha) {
  int vr, vc;
  window(C, d, vr, vc, s);
  const ct<TS> al = scal<TS>(alpha);
  ew(C, d, vr, vc, [al](TS x, TD o) { return st<TD>((ct<TD>)((ct<TD>)(al * ld(x)) + ld(o))); }, s, d);
}
// add_relu / sub_relu: lhs = lhs op rhs (stored, the documented scratch write), dst = relu(lhs).
template <class Op, class T> inline void op_relu(Core& C, const Tile<T>& d, const Tile<T>& a, const Tile<T>& b) {
  int vr, vc;
  window(C, d, vr, vc, a, b);
  ew(C, a, vr, vc, [&C](T x, T y) { return st<T>(Op::template f<T>(C, ld(x), ld(y))); }, a, b);
  ew(C, d, vr, vc, [](T x) { ct<T> v = ld(x); return st<T>(v > 0 ? v : (ct<T>)0); }, a);
}
template <class T> inline void add_relu(Core& C, const Tile<T>& d, const Tile<T>& a, const Tile<T>& b) { op_relu<OpAdd>(C, d, a, b); }
template <class T> inline void sub_relu(Core& C, const Tile<T>& d, const Tile<T>& a, const Tile<T>& b) { op_relu<OpSub>(C, d, a, b); }

// ---------------------------------------------------------------- reductions
enum RKind { RSum = 0, RMax, RMin, RArgMax, RArgMin };

template <int K, class T> struct Reducer {
  ct<T> acc;
  int64_t idx = 0;
  int64_t i = 0;
  inline void first(ct<T> x) { acc = x; }
  inline void add(ct<T> x) {
    ++i;
    if constexpr (K == RSum) acc = (ct<T>)(acc + x);
    else if constexpr (K == RMax) acc = nan_max<T>(acc, x);
    else if constexpr (K == RMin) acc = nan_min<T>(acc, x);
    else {
      if constexpr (is_fp<T>) {
        if (acc != acc) return;
        if (x != x) { acc = x; idx = i; return; }
      }
      if (K == RArgMax ? x > acc : x < acc) { acc = x; idx = i; }
    }
  }
};

template <int K, class TD, class T> inline TD reduce_out(const Reducer<K, T>& r) {
  if constexpr (K == RArgMax || K == RArgMin) return (TD)r.idx;
  else return st<TD>(r.acc);
}

// Row reduction (dim=0): dst[r, 0] over src's valid rows; column reduction (dim=1): dst[0, c].
template <int K, class TD, class T> inline void reduce(Core& C, const Tile<TD>& d, const Tile<T>& s, int dim) {
  const int vr = s.vr, vc = s.vc;
  if (vr <= 0 || vc <= 0) fail(C, "reduction over an empty valid window of %s", s.name);
  if (dim == 0) {
    if (d.rows < vr) fail(C, "reduction result %s [%d, %d] cannot hold %d rows", d.name, d.rows, d.cols, vr);
    for (int r = 0; r < vr; ++r) {
      Reducer<K, T> red;
      const T* row = s.base + s.roff(r);
      ColIt it = s.colit();
      red.first(ld(row[it.off]));
      for (int c = 1; c < vc; ++c) { it.next(); red.add(ld(row[it.off])); }
      d.at(r, 0) = reduce_out<K, TD>(red);
    }
  } else {
    if (d.cols < vc) fail(C, "reduction result %s [%d, %d] cannot hold %d columns", d.name, d.rows, d.cols, vc);
    for (int c = 0; c < vc; ++c) {
      Reducer<K, T> red;
      red.first(ld(s.at(0, c)));
      for (int r = 1; r < vr; ++r) red.add(ld(s.at(r, c)));
      d.at(0, c) = reduce_out<K, TD>(red);
    }
  }
}

// ---------------------------------------------------------------- expand_* (broadcast a row/column)
template <class T> inline Tile<T> row_of(const Tile<T>& t, int r) {
  Tile<T> x = t;
  x.r0 = t.r0 + r;
  x.rows = 1;
  return x;
}

template <class Op, class T> inline void expand(Core& C, const Tile<T>& d, const Tile<T>& s, const Tile<T>& v, int dim) {
  int vr, vc;
  window(C, d, vr, vc, s);
  if (dim == 0 ? v.rows < vr : v.cols < vc) fail(C, "broadcast operand %s is too small for a %dx%d window", v.name, vr, vc);
  if (vr <= 0 || vc <= 0) return;
  Snapshot<T> sv(v, dim == 0 ? vr : 1, dim == 0 ? 1 : vc, overlaps(d, v));
  const Tile<T>& vv = sv.view;
  for (int r = 0; r < vr; ++r) {
    if (dim == 0) {
      const ct<T> y = ld(vv.at(r, 0));
      ew(C, row_of(d, r), 1, vc, [&C, y](T x) { return st<T>(Op::template f<T>(C, ld(x), y)); }, row_of(s, r));
    } else {
      ew(C, row_of(d, r), 1, vc, [&C](T x, T y) { return st<T>(Op::template f<T>(C, ld(x), ld(y))); }, row_of(s, r), row_of(vv, 0));
    }
  }
}

}  // namespace pto

namespace pto {

// ---------------------------------------------------------------- compare / select (bit-packed masks)
struct CEq { template <class V> static bool f(V a, V b) { return a == b; } };
struct CNe { template <class V> static bool f(V a, V b) { return a != b; } };
struct CLt { template <class V> static bool f(V a, V b) { return a < b; } };
struct CLe { template <class V> static bool f(V a, V b) { return a <= b; } };
struct CGt { template <class V> static bool f(V a, V b) { return a > b; } };
struct CGe { template <class V> static bool f(V a, V b) { return a >= b; } };

template <class T> inline ct<T> rhs_at(const Tile<T>& t, int r, int c) { return ld<T>(t.at(r, c)); }
template <class T, class S> inline ct<T> rhs_at(const S& s, int, int) { return scal<T>(s); }
template <class T> inline void rhs_fits(Core& C, const Tile<T>& t, int rows, int cols) {
  if (t.rows < rows || t.cols < cols) fail(C, "operand %s (%dx%d) is smaller than the %dx%d window", t.name, t.rows, t.cols, rows, cols);
}
template <class T, class S> inline void rhs_fits(Core&, const S&, int, int) {}

// mask = lhs OP rhs over lhs's valid window, LSB-first, ceil(cols/8) bytes at the start of each mask row.
template <class Op, class T, class R> inline void compare(Core& C, const Tile<uint8_t>& m, const Tile<T>& a, const R& b) {
  const int rows = a.vr, cols = a.vc;
  if (m.rows < rows || m.cols * 8 < cols) fail(C, "mask tile %s is too small for a %dx%d predicate", m.name, rows, cols);
  rhs_fits<T>(C, b, rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < m.cols; ++j) {
      uint8_t byte = 0;
      for (int bit = 0; bit < 8; ++bit) {
        const int c = 8 * j + bit;
        if (c < cols && Op::f(ld<T>(a.at(r, c)), rhs_at<T>(b, r, c))) byte |= (uint8_t)(1u << bit);
      }
      m.at(r, j) = byte;
    }
  }
}

// dst = mask ? lhs : rhs over dst's valid window.
template <class T, class R> inline void select(Core& C, const Tile<T>& d, const Tile<uint8_t>& m, const Tile<T>& a, const R& b) {
  int rows, cols;
  window(C, d, rows, cols, a);
  if (m.rows < rows) fail(C, "mask tile %s has fewer than %d rows", m.name, rows);
  rhs_fits<T>(C, b, rows, cols);
  Snapshot<T> sa(a, rows, cols, overlaps(d, a) && !same_map(d, a));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const bool bit = (c / 8 < m.cols) && ((m.at(r, c / 8) >> (c % 8)) & 1u);
      d.at(r, c) = st<T>(bit ? ld<T>(sa.view.at(r, c)) : rhs_at<T>(b, r, c));
    }
}

}  // namespace pto

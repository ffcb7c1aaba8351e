// PyPTO CPU backend: vector ops (pipe V).  Each function reproduces ops/vector.py exactly:
// destination first, iteration over dst's valid window, fp16/bf16 computed in fp32 and rounded
// once per op, integers wrapping like C; row sums in 8 interleaved lanes, column sums top to bottom.
#pragma once
#include <cmath>
#include <cstring>
#include <type_traits>
// <immintrin.h> costs ~0.25 s of every compile: only kernels that use exp or row max/min get it
// (kernel.cpp defines PTO_SIMD_MATH); the scalar paths give the same bits.
#if defined(PTO_SIMD_MATH) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define PTO_AVX2_MATH 1
#endif

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

// fp16 rows: F16C converts 8 elements at a time (the compiler does not vectorize _Float16
// conversions), the op runs on fp32 chunks, results round to nearest even like st<half>.
template <class T, class S> inline bool rows_ok(const Tile<T>& d, const Tile<S>& s) {
  return s.nd() && (!overlaps(d, s) || same_map(d, s));
}
// F16C through GCC's builtins (no header needed).
typedef float pto_v8f __attribute__((vector_size(32), aligned(4)));
typedef short pto_v8h __attribute__((vector_size(16), aligned(2)));
inline void h2f(const half* s, float* d, int n) {
  int i = 0;
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8) {
    pto_v8h h;
    std::memcpy(&h, s + i, 16);
    const pto_v8f f = __builtin_ia32_vcvtph2ps256(h);
    std::memcpy(d + i, &f, 32);
  }
#endif
  for (; i < n; ++i) d[i] = (float)s[i];
}
inline void f2h(const float* s, half* d, int n) {
  int i = 0;
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8) {
    pto_v8f f;
    std::memcpy(&f, s + i, 32);
    const pto_v8h h = __builtin_ia32_vcvtps2ph256(f, 0);  // 0: round to nearest even
    std::memcpy(d + i, &h, 16);
  }
#endif
  for (; i < n; ++i) d[i] = (half)s[i];
}
constexpr int kChunk = 256;

// Tile op tile.  Not `inline`: pto/prebuilt_ops.h declares instantiations the ops library holds (an
// explicit instantiation declaration does not stop the compiler from instantiating an inline function).
template <class Op, class T> void binary_tiles(Core& C, const Tile<T>& d, const Tile<T>& a, const Tile<T>& b) {
  int vr, vc;
  window(C, d, vr, vc, a, b);
  if constexpr (std::is_same<T, half>::value) {
    if (vr > 0 && vc > 0 && d.nd() && rows_ok(d, a) && rows_ok(d, b)) {
      float x[kChunk], y[kChunk];
      for (int r = 0; r < vr; ++r)
        for (int c0 = 0; c0 < vc; c0 += kChunk) {
          const int n = vc - c0 < kChunk ? vc - c0 : kChunk;
          h2f(a.rowp(r) + c0, x, n);
          h2f(b.rowp(r) + c0, y, n);
          for (int i = 0; i < n; ++i) x[i] = Op::template f<T>(C, x[i], y[i]);
          f2h(x, d.rowp(r) + c0, n);
        }
      return;
    }
  }
  ew(C, d, vr, vc, [&C](T x, T y) { return st<T>(Op::template f<T>(C, ld(x), ld(y))); }, a, b);
}
template <class Op, class T> inline void binary(Core& C, const Tile<T>& d, const Tile<T>& a, const Tile<T>& b) {
  binary_tiles<Op>(C, d, a, b);
}
// Tile op scalar.  Not `inline`, as binary_tiles: pto/prebuilt_ops.h declares instantiations the ops library holds.
template <class Op, class T, class S> void binary(Core& C, const Tile<T>& d, const Tile<T>& a, S s) {
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
// exp in fp32: Cody-Waite reduction x = n*ln2 + r, a degree-6 polynomial (Cephes expf
// coefficients), scaling by 2^n in two exact steps.  Max error < 2 ulp (docs/performance.md); the
// AVX2 row kernel below performs exactly the same operations, so every layout and width gives the
// same bits.  This sequence defines exp: the interpreter evaluates it too (ops/fp32math.py exp32).
struct ExpC {
  static constexpr float hi = 88.72283935546875f, lo = -103.97208404541015625f, log2e = 1.44269502162933349609375f;
  static constexpr float c1 = 0.693359375f, c2 = -2.12194440e-4f;
  static constexpr float p0 = 1.9875691500e-4f, p1 = 1.3981999507e-3f, p2 = 8.3334519073e-3f, p3 = 4.1665795894e-2f,
                         p4 = 1.6666665459e-1f, p5 = 5.0000001201e-1f;
};
inline float exp_f32(float x) {
  if (x != x) return x + x;
  if (x > ExpC::hi) return INFINITY;
  if (x < ExpC::lo) return 0.f;
  const float fn = std::nearbyint(x * ExpC::log2e);
  float r = std::fma(fn, -ExpC::c1, x);
  r = std::fma(fn, -ExpC::c2, r);
  float p = std::fma(ExpC::p0, r, ExpC::p1);
  p = std::fma(p, r, ExpC::p2);
  p = std::fma(p, r, ExpC::p3);
  p = std::fma(p, r, ExpC::p4);
  p = std::fma(p, r, ExpC::p5);
  const float r2 = r * r;
  const float y = std::fma(p, r2, r) + 1.0f;
  const int32_t n = (int32_t)fn, n1 = n >> 1, n2 = n - n1;
  uint32_t b1 = (uint32_t)(n1 + 127) << 23, b2 = (uint32_t)(n2 + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &b1, 4);
  std::memcpy(&s2, &b2, 4);
  return (y * s1) * s2;
}
#if defined(PTO_AVX2_MATH)
// exp_f32 on 8 lanes without its branches: x is clamped to [-110, 89] (x as the second operand of
// max/min, so a NaN passes through and propagates to the result as x + x does), and the same steps
// then overflow to inf above ExpC::hi and round to 0 below ExpC::lo.  Checked bit for bit against
// exp_f32 over all 2^32 inputs.
inline __m256 exp8_f32(__m256 x) {
  const __m256 xc = _mm256_min_ps(_mm256_set1_ps(89.0f), _mm256_max_ps(_mm256_set1_ps(-110.0f), x));
  const __m256 fn = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(ExpC::log2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(fn, _mm256_set1_ps(-ExpC::c1), xc);
  r = _mm256_fmadd_ps(fn, _mm256_set1_ps(-ExpC::c2), r);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(ExpC::p0), r, _mm256_set1_ps(ExpC::p1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(ExpC::p2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(ExpC::p3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(ExpC::p4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(ExpC::p5));
  const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
#if defined(__AVX512F__) && defined(__AVX512VL__)
  // y * 2^fn rounded once, as the two exact steps below: the same bits (checked over all inputs)
  return _mm256_scalef_ps(y, fn);
#else
  const __m256i n = _mm256_cvtps_epi32(fn), n1 = _mm256_srai_epi32(n, 1), n2 = _mm256_sub_epi32(n, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
#endif
}
#endif
struct UExp {
  template <class T> static ct<T> f(ct<T> x) {
    if constexpr (std::is_same<ct<T>, float>::value) return exp_f32(x);
    else return std::exp(x);
  }
  // contiguous fp32 rows (d may equal s)
  static void row(float* d, const float* s, int n) {
    int c = 0;
#if defined(PTO_AVX2_MATH)
    for (; c + 8 <= n; c += 8) _mm256_storeu_ps(d + c, exp8_f32(_mm256_loadu_ps(s + c)));
#endif
    for (; c < n; ++c) d[c] = exp_f32(s[c]);
  }
};
// log in double, rounded once (ops/vector.py: the interpreter does the same, so the bits agree)
struct ULog { template <class T> static ct<T> f(ct<T> x) { return (ct<T>)std::log((double)x); } };
struct USqrt { template <class T> static ct<T> f(ct<T> x) { return std::sqrt(x); } };
struct URsqrt { template <class T> static ct<T> f(ct<T> x) { return 1.0f / std::sqrt(x); } };
struct URecip { template <class T> static ct<T> f(ct<T> x) { return 1.0f / x; } };
struct URelu { template <class T> static ct<T> f(ct<T> x) { return x > 0 ? x : (ct<T>)0; } };
struct UNot { template <class T> static ct<T> f(ct<T> x) { return (ct<T>)~x; } };

template <class Op, class = void> struct has_row : std::false_type {};
template <class Op> struct has_row<Op, decltype((void)&Op::row)> : std::true_type {};

// Not `inline`, as binary_tiles: pto/prebuilt_ops.h declares instantiations the ops library holds.
template <class Op, class T> void unary(Core& C, const Tile<T>& d, const Tile<T>& s) {
  int vr, vc;
  window(C, d, vr, vc, s);
  if constexpr (std::is_same<T, float>::value && has_row<Op>::value) {
    if (vr > 0 && vc > 0 && d.nd() && s.nd() && (!overlaps(d, s) || same_map(d, s))) {
      for (int r = 0; r < vr; ++r) Op::row(d.rowp(r), s.rowp(r), vc);
      return;
    }
  }
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
// Not `inline`, as binary_tiles: pto/prebuilt_ops.h declares instantiations the ops library holds.
template <class T, class S> void expands(Core& C, const Tile<T>& d, S s) {
  const T v = st<T>(scal<T>(s));
  ew(C, d, d.vr, d.vc, [v]() { return v; });
}

// ---------------------------------------------------------------- cast
// Not `inline`, as binary_tiles: pto/prebuilt_ops.h declares instantiations the ops library holds.
template <class TD, class TS> void cast(Core& C, const Tile<TD>& d, const Tile<TS>& s, int mode) {
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
  // the product is rounded to T before the add (the hardware's mul then add; ops/vector.py)
  ew(C, d, vr, vc, [](T x, T y, T o) { return st<T>((ct<T>)(ld(st<T>((ct<T>)(ld(x) * ld(y)))) + ld(o))); }, a, b, d);
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

// Row sums use a fixed, vector-friendly order (ops/vector.py reduce_values): element c goes to
// lane c % 8, each lane sums left to right, then ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)) with absent
// lanes (rows shorter than 8) skipped.
template <class V> inline V combine_lanes(V* lane, int nl) {
  while (nl > 1) {
    int k = 0;
    for (int i = 0; i < nl; i += 2) lane[k++] = i + 1 < nl ? (V)(lane[i] + lane[i + 1]) : lane[i];
    nl = k;
  }
  return lane[0];
}
template <class T> inline ct<T> row_sum(const T* row, ColIt it, int vc) {
  using V = ct<T>;
  V lane[8];
  if constexpr (std::is_same<T, float>::value) {
    if (it.step_in == 1 && it.run() >= vc && vc >= 8) {  // contiguous: 8 independent lanes (one AVX register)
      const float* p = row + it.off;
      for (int l = 0; l < 8; ++l) lane[l] = p[l];
      int c = 8;
      for (; c + 8 <= vc; c += 8)
        for (int l = 0; l < 8; ++l) lane[l] = lane[l] + p[c + l];
      for (int l = 0; c < vc; ++c, ++l) lane[l] = lane[l] + p[c];
      return combine_lanes(lane, 8);
    }
  }
  for (int c = 0; c < vc; ++c, it.next()) {
    const V x = ld(row[it.off]);
    lane[c & 7] = c < 8 ? x : (V)(lane[c & 7] + x);
  }
  return combine_lanes(lane, vc < 8 ? vc : 8);
}

// Row max/min of contiguous fp32: lane-wise, exact (max/min do not depend on the order) except
// for NaN and signed zeros, where the sequential loop decides (returns false).
template <int K> inline bool row_minmax_fast(const float* p, int vc, float& out) {
  if (vc < 8) return false;
#if defined(PTO_AVX2_MATH)
  if (vc >= 16) {
    // bad starts with the first 16 values' NaNs: maxps(m, x) returns x where m is NaN, so a NaN
    // among them would be gone from m0/m1 after the first step
    __m256 m0 = _mm256_loadu_ps(p), m1 = _mm256_loadu_ps(p + 8), bad = _mm256_cmp_ps(m0, m1, _CMP_UNORD_Q);
    int c = 16;
    for (; c + 16 <= vc; c += 16) {
      const __m256 x0 = _mm256_loadu_ps(p + c), x1 = _mm256_loadu_ps(p + c + 8);
      bad = _mm256_or_ps(bad, _mm256_cmp_ps(x0, x1, _CMP_UNORD_Q));
      m0 = K == RMax ? _mm256_max_ps(m0, x0) : _mm256_min_ps(m0, x0);
      m1 = K == RMax ? _mm256_max_ps(m1, x1) : _mm256_min_ps(m1, x1);
    }
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(m0, m1, _CMP_UNORD_Q));
    if (_mm256_movemask_ps(bad)) return false;
    float lane[16];
    _mm256_storeu_ps(lane, m0);
    _mm256_storeu_ps(lane + 8, m1);
    float m = lane[0];
    for (int l = 1; l < 16; ++l) m = (K == RMax) ? (lane[l] > m ? lane[l] : m) : (lane[l] < m ? lane[l] : m);
    for (; c < vc; ++c) {
      const float x = p[c];
      if (x != x) return false;
      m = (K == RMax) ? (x > m ? x : m) : (x < m ? x : m);
    }
    if (m == 0.f) return false;
    out = m;
    return true;
  }
#endif
  float lane[8];
  bool nan = false;
  for (int l = 0; l < 8; ++l) lane[l] = p[l];
  for (int c = 8; c + 8 <= vc; c += 8)
    for (int l = 0; l < 8; ++l) {
      const float x = p[c + l];
      nan |= x != x;
      lane[l] = (K == RMax) ? (x > lane[l] ? x : lane[l]) : (x < lane[l] ? x : lane[l]);
    }
  for (int c = vc & ~7; c < vc; ++c) {
    const float x = p[c];
    nan |= x != x;
    lane[c & 7] = (K == RMax) ? (x > lane[c & 7] ? x : lane[c & 7]) : (x < lane[c & 7] ? x : lane[c & 7]);
  }
  float m = lane[0];
  for (int l = 0; l < 8; ++l) {
    nan |= lane[l] != lane[l];
    m = (K == RMax) ? (lane[l] > m ? lane[l] : m) : (lane[l] < m ? lane[l] : m);
  }
  if (nan || m == 0.f) return false;
  out = m;
  return true;
}

// Row reduction (dim=0): dst[r, 0] over src's valid rows; column reduction (dim=1): dst[0, c].
// Not `inline`, as binary_tiles: pto/prebuilt_ops.h declares instantiations the ops library holds.
template <int K, class TD, class T> void reduce(Core& C, const Tile<TD>& d, const Tile<T>& src, int dim) {
  const int vr = src.vr, vc = src.vc;
  if (vr <= 0 || vc <= 0) fail(C, "reduction over an empty valid window of %s", src.name);
  const Snapshot<T> snap(src, vr, vc, overlaps(d, src));  // results written early must not feed later rows
  const Tile<T>& s = snap.view;
  if (dim == 0) {
    if (d.rows < vr) fail(C, "reduction result %s [%d, %d] cannot hold %d rows", d.name, d.rows, d.cols, vr);
    for (int r = 0; r < vr; ++r) {
      if constexpr (K == RSum) {
        d.at(r, 0) = st<TD>(row_sum(s.base + s.roff(r), s.colit(), vc));
        continue;
      }
      if constexpr ((K == RMax || K == RMin) && std::is_same<T, float>::value) {
        const ColIt it = s.colit();
        float m;
        if (it.step_in == 1 && it.run() >= vc && row_minmax_fast<K>(s.base + s.roff(r) + it.off, vc, m)) {
          d.at(r, 0) = st<TD>(m);
          continue;
        }
      }
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

// Not `inline`, as binary_tiles: pto/prebuilt_ops.h declares instantiations the ops library holds.
template <class Op, class T> void expand(Core& C, const Tile<T>& d, const Tile<T>& src, const Tile<T>& v, int dim) {
  int vr, vc;
  window(C, d, vr, vc, src);
  if (dim == 0 ? v.rows < vr : v.cols < vc) fail(C, "broadcast operand %s is too small for a %dx%d window", v.name, vr, vc);
  if (vr <= 0 || vc <= 0) return;
  Snapshot<T> sv(v, dim == 0 ? vr : 1, dim == 0 ? 1 : vc, overlaps(d, v));
  const Tile<T>& vv = sv.view;
  const Snapshot<T> ss(src, vr, vc, overlaps(d, src) && !same_map(d, src));  // rows written must not feed later rows
  const Tile<T>& s = ss.view;
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
// A tile rhs that overlaps the op's output elsewhere is read from a copy (see ew); a scalar as is.
template <class T> struct RhsSnap {
  Snapshot<T> snap;
  const Tile<T>& get() const { return snap.view; }
};
template <class S> struct RhsScalar {
  const S& value;
  const S& get() const { return value; }
};
template <class T, class TO> inline RhsSnap<T> snapshot_if_tile(const Tile<TO>& out, const Tile<T>& t, int rows, int cols) {
  return RhsSnap<T>{Snapshot<T>(t, rows, cols, overlaps(out, t) && !same_map(out, t))};
}
template <class T, class TO, class S> inline RhsScalar<S> snapshot_if_tile(const Tile<TO>&, const S& s, int, int) {
  return RhsScalar<S>{s};
}
template <class T, class S> inline ct<T> rhs_at(const S& s, int, int) { return scal<T>(s); }
template <class T> inline void rhs_fits(Core& C, const Tile<T>& t, int rows, int cols) {
  if (t.rows < rows || t.cols < cols) fail(C, "operand %s (%dx%d) is smaller than the %dx%d window", t.name, t.rows, t.cols, rows, cols);
}
template <class T, class S> inline void rhs_fits(Core&, const S&, int, int) {}

// Row-pointer fast paths of compare/select for ND operands (the common case): the same bits as the
// generic loops above, in loops over contiguous memory that the compiler vectorises (8 lanes per
// mask byte, no per-element address arithmetic).  A scalar rhs is one value; a tile rhs one row.
template <class T> struct RowRhs {
  const T* p;
  inline ct<T> operator()(int c) const { return ld<T>(p[c]); }
};
template <class T> struct ScalarRhs {
  ct<T> v;
  inline ct<T> operator()(int) const { return v; }
};
template <class T> inline bool rhs_is_nd(const Tile<T>& t) { return t.nd(); }
template <class S> inline bool rhs_is_nd(const S&) { return true; }
template <class T> inline RowRhs<T> rhs_row(const Tile<T>& t, int r) { return RowRhs<T>{t.rowp(r)}; }
template <class T, class S> inline ScalarRhs<T> rhs_row(const S& s, int) { return ScalarRhs<T>{scal<T>(s)}; }

template <class Op, class T, class B>
inline void compare_row_nd(uint8_t* mp, int mbytes, const T* ap, const B& b, int cols) {
  const int full = cols / 8;
  for (int j = 0; j < full; ++j) {
    const T* a8 = ap + 8 * j;
    unsigned byte = 0;
    for (int k = 0; k < 8; ++k) byte |= (unsigned)Op::f(ld<T>(a8[k]), b(8 * j + k)) << k;
    mp[j] = (uint8_t)byte;
  }
  int j = full;
  if (cols % 8) {
    unsigned byte = 0;
    for (int c = 8 * full; c < cols; ++c) byte |= (unsigned)Op::f(ld<T>(ap[c]), b(c)) << (c - 8 * full);
    mp[j++] = (uint8_t)byte;
  }
  for (; j < mbytes; ++j) mp[j] = 0;
}

template <class T, class B>
inline void select_row_nd(T* dp, const uint8_t* mp, const T* ap, const B& b, int cols) {
  const int full = cols / 8;
  for (int j = 0; j < full; ++j) {
    const unsigned byte = mp[j];
    for (int k = 0; k < 8; ++k) {
      const int c = 8 * j + k;
      const ct<T> x = ld<T>(ap[c]), y = b(c);
      dp[c] = st<T>(((byte >> k) & 1u) ? x : y);
    }
  }
  for (int c = 8 * full; c < cols; ++c) dp[c] = st<T>(((mp[c / 8] >> (c % 8)) & 1u) ? ld<T>(ap[c]) : b(c));
}

// mask = lhs OP rhs over lhs's valid window, LSB-first, ceil(cols/8) bytes at the start of each mask row.
template <class Op, class T, class R> inline void compare(Core& C, const Tile<uint8_t>& m, const Tile<T>& lhs, const R& rhs) {
  const int rows = lhs.vr, cols = lhs.vc;
  if (m.rows < rows || m.cols * 8 < cols) fail(C, "mask tile %s is too small for a %dx%d predicate", m.name, rows, cols);
  rhs_fits<T>(C, rhs, rows, cols);
  const Snapshot<T> sa(lhs, rows, cols, overlaps(m, lhs));
  const auto sb = snapshot_if_tile<T>(m, rhs, rows, cols);
  const Tile<T>& a = sa.view;
  const auto& b = sb.get();
  if (m.nd() && a.nd() && rhs_is_nd(b)) {
    for (int r = 0; r < rows; ++r) compare_row_nd<Op>(m.rowp(r), m.cols, a.rowp(r), rhs_row<T>(b, r), cols);
    return;
  }
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
template <class T, class R> inline void select(Core& C, const Tile<T>& d, const Tile<uint8_t>& mask, const Tile<T>& a, const R& rhs) {
  int rows, cols;
  window(C, d, rows, cols, a);
  if (mask.rows < rows) fail(C, "mask tile %s has fewer than %d rows", mask.name, rows);
  rhs_fits<T>(C, rhs, rows, cols);
  Snapshot<T> sa(a, rows, cols, overlaps(d, a) && !same_map(d, a));
  const Snapshot<uint8_t> sm(mask, rows, mask.cols, overlaps(d, mask));
  const auto sb = snapshot_if_tile<T>(d, rhs, rows, cols);
  const Tile<uint8_t>& m = sm.view;
  const auto& b = sb.get();
  if (d.nd() && sa.view.nd() && m.nd() && rhs_is_nd(b) && m.cols * 8 >= cols) {
    for (int r = 0; r < rows; ++r) select_row_nd(d.rowp(r), m.rowp(r), sa.view.rowp(r), rhs_row<T>(b, r), cols);
    return;
  }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const bool bit = (c / 8 < m.cols) && ((m.at(r, c / 8) >> (c % 8)) & 1u);
      d.at(r, c) = st<T>(bit ? ld<T>(sa.view.at(r, c)) : rhs_at<T>(b, r, c));
    }
}

}  // namespace pto

// PyPTO CPU backend: the Reg/VF API (pypto_pro/ops/vf.py) on a core's register file.
//
// A vector register is 256 bytes of the Reg space (a T[256 / sizeof(T)] array), a mask register 256
// 0/1 bytes, one per predicate bit; element i of a b-byte type uses bit i * b.  Every op computes
// into a local copy first, so a destination may be one of its operands.  The element functions are
// the memory-level ops' (vector.h, cast.h), so values agree bit for bit with the interpreter.
#pragma once
#include <cmath>
#include <cstring>

#include "cast.h"
#include "vector.h"

namespace pto {

constexpr int kVL = 256;

template <class T> constexpr int vf_lanes() { return kVL / (int)sizeof(T); }
inline bool vf_on(const uint8_t* m, int i, int esize) { return m == nullptr || m[i * esize] != 0; }

template <class TT> inline uint8_t* vf_ub(const Tile<TT>& t, int64_t off) {
  return (uint8_t*)(t.base + t.roff(0) + t.colit(0).off + off);
}

inline void vf_check_ub(Core& C, const uint8_t* p, int64_t nbytes, int64_t cap, int align, const char* what) {
  const int64_t addr = p - C.mem[Vec];
  if (addr < 0 || addr + nbytes > cap)
    fail(C, "%s: UB bytes [%lld, %lld) are outside UB (%lld bytes)", what, (long long)addr,
         (long long)(addr + nbytes), (long long)cap);
  if (addr % align) fail(C, "%s: UB address %lld is not %d-byte aligned", what, (long long)addr, align);
}

// masked result: zeroing (0) or merging (keep d)
template <class T> inline void vf_commit(T* d, const ct<T>* r, const uint8_t* m, bool merge) {
  T out[vf_lanes<T>()];
  for (int i = 0; i < vf_lanes<T>(); ++i) {
    if (vf_on(m, i, sizeof(T))) out[i] = st<T>(r[i]);
    else out[i] = merge ? d[i] : st<T>((ct<T>)0);
  }
  std::memcpy((void*)d, out, kVL);
}

// ---------------------------------------------------------------- masks
inline void vf_mask_set(uint8_t* d, const uint8_t* bits) { std::memcpy(d, bits, kVL); }
inline void vf_update_mask(uint8_t* d, int64_t count, int esize) {
  for (int i = 0; i < kVL / esize; ++i)
    for (int b = 0; b < esize; ++b) d[i * esize + b] = (uint8_t)(i < count);
}
inline void vf_mask_logic(uint8_t* d, const uint8_t* a, const uint8_t* b, const uint8_t* m, int fn) {
  uint8_t out[kVL];
  for (int i = 0; i < kVL; ++i) {
    const bool x = a[i] != 0, y = b != nullptr && b[i] != 0;
    bool r = fn == 0 ? (x && y) : fn == 1 ? (x || y) : fn == 2 ? (x != y) : !x;
    if (m != nullptr) r = r && m[i] != 0;
    out[i] = (uint8_t)r;
  }
  std::memcpy(d, out, kVL);
}

// ---------------------------------------------------------------- element-wise
struct OpExpSub { template <class T> static ct<T> f(Core&, ct<T> a, ct<T> b) { return UExp::f<T>((ct<T>)(a - b)); } };
struct OpAbsSub { template <class T> static ct<T> f(Core&, ct<T> a, ct<T> b) { return UAbs::f<T>((ct<T>)(a - b)); } };
struct ULog2 { template <class T> static ct<T> f(ct<T> x) { return (ct<T>)std::log2((double)x); } };
struct ULog10 { template <class T> static ct<T> f(ct<T> x) { return (ct<T>)std::log10((double)x); } };
struct UTrunc { template <class T> static ct<T> f(ct<T> x) { return std::trunc(x); } };
struct UCopy { template <class T> static ct<T> f(ct<T> x) { return x; } };

template <class T, class Op> inline void vf_binary(Core& C, T* d, const T* a, const T* b, const uint8_t* m, bool merge) {
  ct<T> r[vf_lanes<T>()];
  for (int i = 0; i < vf_lanes<T>(); ++i) r[i] = Op::template f<T>(C, ld(a[i]), ld(b[i]));
  vf_commit(d, r, m, merge);
}
template <class T, class Op, class S>
inline void vf_binary_s(Core& C, T* d, const T* a, S s, const uint8_t* m, bool merge) {
  const ct<T> y = scal<T>(s);
  ct<T> r[vf_lanes<T>()];
  for (int i = 0; i < vf_lanes<T>(); ++i) r[i] = Op::template f<T>(C, ld(a[i]), y);
  vf_commit(d, r, m, merge);
}
template <class T> inline void vf_fma(Core& C, T* d, const T* a, const T* b, const T* c, const uint8_t* m) {
  ct<T> r[vf_lanes<T>()];
  for (int i = 0; i < vf_lanes<T>(); ++i)
    r[i] = OpAdd::f<T>(C, ld(st<T>(OpMul::f<T>(C, ld(a[i]), ld(b[i])))), ld(c[i]));
  vf_commit(d, r, m, false);
}
template <class T, class U> inline void vf_unary(T* d, const T* a, const uint8_t* m, bool merge) {
  ct<T> r[vf_lanes<T>()];
  for (int i = 0; i < vf_lanes<T>(); ++i) r[i] = U::template f<T>(ld(a[i]));
  vf_commit(d, r, m, merge);
}
template <class T, class S> inline void vf_dup_s(T* d, S s, const uint8_t* m, bool merge) {
  ct<T> r[vf_lanes<T>()];
  const ct<T> v = scal<T>(s);
  for (int i = 0; i < vf_lanes<T>(); ++i) r[i] = v;
  vf_commit(d, r, m, merge);
}
template <class T> inline void vf_dup_lane(T* d, const T* a, bool highest, const uint8_t* m, bool merge) {
  ct<T> r[vf_lanes<T>()];
  const ct<T> v = ld(a[highest ? vf_lanes<T>() - 1 : 0]);
  for (int i = 0; i < vf_lanes<T>(); ++i) r[i] = v;
  vf_commit(d, r, m, merge);
}
template <class T, class S> inline void vf_arange(T* d, S start, bool descending) {
  ct<T> r[vf_lanes<T>()];
  const ct<T> s0 = scal<T>(start);
  constexpr int n = vf_lanes<T>();
  for (int i = 0; i < n; ++i) r[i] = (ct<T>)(s0 + (ct<T>)(descending ? n - 1 - i : i));
  vf_commit(d, r, nullptr, false);
}

// ---------------------------------------------------------------- reductions, compare, select
template <class T, class Op> inline void vf_reduce(Core& C, T* d, const T* a, const uint8_t* m, ct<T> ident) {
  ct<T> v[vf_lanes<T>()];
  for (int i = 0; i < vf_lanes<T>(); ++i) v[i] = vf_on(m, i, sizeof(T)) ? ld(a[i]) : ident;
  for (int n = vf_lanes<T>(); n > 1; n /= 2)
    for (int i = 0; i < n / 2; ++i) v[i] = Op::template f<T>(C, v[2 * i], v[2 * i + 1]);
  ct<T> r[vf_lanes<T>()] = {};
  r[0] = v[0];
  vf_commit(d, r, nullptr, false);
}
struct CmpEq { template <class X> static bool f(X a, X b) { return a == b; } };
struct CmpNe { template <class X> static bool f(X a, X b) { return a != b; } };
struct CmpLt { template <class X> static bool f(X a, X b) { return a < b; } };
struct CmpLe { template <class X> static bool f(X a, X b) { return a <= b; } };
struct CmpGt { template <class X> static bool f(X a, X b) { return a > b; } };
struct CmpGe { template <class X> static bool f(X a, X b) { return a >= b; } };
template <class T, class Cmp> inline void vf_cmp_fill(uint8_t* d, const bool* r) {
  uint8_t out[kVL];
  for (int i = 0; i < vf_lanes<T>(); ++i)
    for (int b = 0; b < (int)sizeof(T); ++b) out[i * sizeof(T) + b] = (uint8_t)r[i];
  std::memcpy(d, out, kVL);
}
template <class T, class Cmp> inline void vf_compare(uint8_t* d, const T* a, const T* b, const uint8_t* m) {
  bool r[vf_lanes<T>()];
  for (int i = 0; i < vf_lanes<T>(); ++i) r[i] = Cmp::f(ld(a[i]), ld(b[i])) && vf_on(m, i, sizeof(T));
  vf_cmp_fill<T, Cmp>(d, r);
}
template <class T, class Cmp, class S> inline void vf_compare_s(uint8_t* d, const T* a, S s, const uint8_t* m) {
  bool r[vf_lanes<T>()];
  const ct<T> y = scal<T>(s);
  for (int i = 0; i < vf_lanes<T>(); ++i) r[i] = Cmp::f(ld(a[i]), y) && vf_on(m, i, sizeof(T));
  vf_cmp_fill<T, Cmp>(d, r);
}
template <class T> inline void vf_select(T* d, const T* a, const T* b, const uint8_t* m) {
  T out[vf_lanes<T>()];
  for (int i = 0; i < vf_lanes<T>(); ++i) out[i] = vf_on(m, i, sizeof(T)) ? a[i] : b[i];
  std::memcpy((void*)d, out, kVL);
}

// ---------------------------------------------------------------- conversion, permutation
template <class TD, class TS> inline void vf_cast(TD* d, const TS* a, const uint8_t* m, int part, int mode) {
  constexpr int ns = vf_lanes<TS>(), nd = vf_lanes<TD>();
  TD out[nd];
  std::memset((void*)out, 0, kVL);
  if (ns == nd) {
    for (int i = 0; i < ns; ++i) out[i] = vf_on(m, i, sizeof(TS)) ? convert<TD, TS>(a[i], mode) : out[i];
  } else if (ns > nd) {
    for (int i = 0; i < nd; ++i) {
      const int j = i * (ns / nd) + part;
      if (vf_on(m, j, sizeof(TS))) out[i] = convert<TD, TS>(a[j], mode);
    }
  } else {
    for (int i = 0; i < ns; ++i)
      if (vf_on(m, i, sizeof(TS))) out[i * (nd / ns) + part] = convert<TD, TS>(a[i], mode);
  }
  std::memcpy((void*)d, out, kVL);
}
template <class T> inline void vf_permute(T* d0, T* d1, const T* a, const T* b, bool interleave) {
  constexpr int n = vf_lanes<T>();
  T z[2 * n], lo[n], hi[n];
  if (interleave) {
    for (int i = 0; i < n; ++i) { z[2 * i] = a[i]; z[2 * i + 1] = b[i]; }
    for (int i = 0; i < n; ++i) { lo[i] = z[i]; hi[i] = z[n + i]; }
  } else {
    std::memcpy((void*)z, a, kVL);
    std::memcpy((void*)(z + n), b, kVL);
    for (int i = 0; i < n; ++i) { lo[i] = z[2 * i]; hi[i] = z[2 * i + 1]; }
  }
  std::memcpy((void*)d0, lo, kVL);
  std::memcpy((void*)d1, hi, kVL);
}

// ---------------------------------------------------------------- UB <-> registers
// dist: 0 NORM, 1 BRC, 2 US, 3 DS, 4 UNPK
template <class T> inline void vf_load(Core& C, T* d, const uint8_t* p, int dist, int64_t cap) {
  constexpr int n = vf_lanes<T>();
  const T* s = (const T*)p;
  T out[n];
  const char* what = "vf.load_align";
  switch (dist) {
    case 0: vf_check_ub(C, p, kVL, cap, 32, what); std::memcpy((void*)out, p, kVL); break;
    case 1: vf_check_ub(C, p, sizeof(T), cap, sizeof(T), what); for (int i = 0; i < n; ++i) out[i] = s[0]; break;
    case 2: vf_check_ub(C, p, kVL / 2, cap, 1, what); for (int i = 0; i < n; ++i) out[i] = s[i / 2]; break;
    case 3: vf_check_ub(C, p, 2 * kVL, cap, 32, what); for (int i = 0; i < n; ++i) out[i] = s[2 * i]; break;
    default:
      vf_check_ub(C, p, kVL / 2, cap, 1, what);
      std::memset((void*)out, 0, kVL);
      for (int i = 0; i < n / 2; ++i) out[2 * i] = s[i];
  }
  std::memcpy((void*)d, out, kVL);
}
template <class T> inline void vf_load2(Core& C, T* d0, T* d1, const uint8_t* p, int64_t cap) {
  vf_check_ub(C, p, 2 * kVL, cap, 32, "vf.load_align");
  constexpr int n = vf_lanes<T>();
  T z[2 * n];
  std::memcpy((void*)z, p, 2 * kVL);
  for (int i = 0; i < n; ++i) { d0[i] = z[2 * i]; d1[i] = z[2 * i + 1]; }
}
// block_stride < 0: consecutive elements, element-wise mask; else DataBlock mode
template <class T, class TT>
inline void vf_store(Core& C, uint8_t* p, const T* s, const uint8_t* m, int64_t block_stride, int64_t cap) {
  const char* what = "vf.store_align";
  if (block_stride < 0) {
    vf_check_ub(C, p, kVL, cap, 32, what);
    for (int i = 0; i < vf_lanes<T>(); ++i)
      if (vf_on(m, i, sizeof(T))) std::memcpy(p + i * sizeof(T), s + i, sizeof(T));
    return;
  }
  vf_check_ub(C, p, sizeof(T), cap, 32, what);
  const int64_t step = block_stride * 32 / (int64_t)sizeof(TT) * (int64_t)sizeof(TT);
  for (int k = 0; k < kVL / 32; ++k) {
    bool any = m == nullptr;
    for (int b = 0; b < 32 && !any; ++b) any = m[k * 32 + b] != 0;
    if (!any) continue;
    uint8_t* q = p + k * step;
    vf_check_ub(C, q, 32, cap, 1, what);
    std::memcpy(q, (const uint8_t*)s + k * 32, 32);
  }
}

}  // namespace pto

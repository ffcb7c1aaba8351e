// PyPTO CPU backend: element-wise fusion (codegen's fusion.py emits the loops that use this).
//
// A fused group runs a run of consecutive element-wise tile ops in ONE pass over the common valid
// window: each element's values stay in registers from op to op.  The loop body is a generic lambda
// instantiated three times: for P4 (32 columns as four AVX2 registers), __m256 (8 columns) and float
// (the scalar tail).  A P4 applies every op to its four registers, so four independent dependency
// chains are in flight (exp alone is ~20 dependent instructions; one chain per 8 lanes would be
// bound by latency, not throughput).  P4 has four named members, not an array: g++ keeps such a
// struct in registers, while an array member made it copy whole packs through the stack (64-byte
// stores re-read as 32-byte loads: store-forwarding stalls, a third of a fused loop's time).  Every
// function below performs exactly the operations of the unfused op in vector.h (same rounding per
// op, no FMA contraction, same NaN/inf/-0.0 results, exp through exp8_f32 / exp_f32), and fp16/bf16
// values are computed in fp32 and rounded to the dtype after every op (round<T>), like st<T>(...)
// after each unfused op.  Values in registers are therefore always representable in the tile dtype,
// so loads and stores are exact conversions.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core.h"
#include "memory.h"
#include "vector.h"

#if defined(PTO_AVX2_MATH) && defined(__F16C__)
#define PTO_FUSE_V8 1
// AVX-512 hosts: a P4 (32 columns) is two 16-lane registers instead of four 8-lane ones.  Every op is
// the same IEEE operation per lane (exp16_f32 performs exp8_f32's steps), so the bits do not change;
// on cores with full-width 512-bit units (AMD Zen 5, Intel) a compute-bound group runs ~2x faster.
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
#define PTO_FUSE_V16 1
#endif
#endif

namespace pto {
namespace fz {

// ---------------------------------------------------------------- runtime guard
// The common valid window of a group's destinations, read in program order (dst()), and whether
// it is non-empty and fits every operand's physical shape (fits()).  Anything else runs the
// original per-op code, which reports errors exactly as before.
struct Window {
  int vr = -1, vc = -1;
  inline bool dst(const Core& C, int i) {
    const int r = C.valid[2 * i], c = C.valid[2 * i + 1];
    if (vr < 0) {
      vr = r;
      vc = c;
      return true;
    }
    return r == vr && c == vc;
  }
  inline bool fits(int rows, int cols) const { return vr > 0 && vc > 0 && vr <= rows && vc <= cols; }
};

// set_validshape without failing: false (and no change) where pto::set_valid would fail.
inline bool try_valid(Core& C, const TileDecl* decls, int64_t i, int64_t rows, int64_t cols) {
  const TileDecl& d = decls[i];
  if (!(1 <= rows && rows <= d.rows && 1 <= cols && cols <= d.cols)) return false;
  C.valid[2 * i] = (int32_t)rows;
  C.valid[2 * i + 1] = (int32_t)cols;
  return true;
}

// The GM window of a fused load or store: element (r, c) at p[r * st0 + c].  stream: a store to it
// may bypass the caches (see kStreamMinBytes).
template <class T> struct Run {
  T* p = nullptr;
  int64_t st0 = 0;
  bool stream = false;
};

// Stores into a GM tensor of at least this many bytes are streamed (non-temporal): the tensor is
// then too large to stay cached until it is read again, and a normal store would first read every
// line it writes.  Measured on a 2-core AMD EPYC VM (32 MiB L3), y = a + b with a, b, y of N bytes
// each: 16 MiB runs 1.6x faster streamed, while at 8 MiB (the three still fit in the L3) normal
// stores are 1.2-2x faster (docs/performance.md, "Streaming stores").
constexpr int64_t kStreamMinBytes = int64_t(16) << 20;

// gm_window without failing: false where pto::load/store would fail (then the per-op code reports it),
// and also where the columns are not contiguous or the rows overlap each other (st0 < cols).
template <class T>
inline bool gm_run(const Gm<T>& g, const int64_t* offs, int a0, int a1, const Window& w, Run<T>& out) {
  const int64_t rows = w.vr, cols = w.vc;
  if (a0 < 0 && rows > 1) return false;
  int64_t base = 0;
  for (int ax = 0; ax < g.nd; ++ax) {
    const int64_t o = offs[ax], ext = ax == a0 ? rows : (ax == a1 ? cols : 1);
    if (o < 0 || o + ext > g.shape[ax]) return false;
    base += o * g.stride[ax];
  }
  const int64_t st0 = a0 >= 0 ? g.stride[a0] : 0;
  if (g.stride[a1] != 1 || (rows > 1 && st0 < cols)) return false;
  out.p = g.p + base;
  out.st0 = st0;
  int64_t bytes = (int64_t)sizeof(T);
  for (int ax = 0; ax < g.nd; ++ax) bytes *= g.shape[ax];
  // the 8-lane stores of every row must be aligned: 32 bytes of fp32 or 16 of fp16/bf16
  const int64_t align = 8 * (int64_t)sizeof(T);
  out.stream = bytes >= kStreamMinBytes && (uintptr_t)out.p % align == 0 && (rows == 1 || (st0 * (int64_t)sizeof(T)) % align == 0);
  return true;
}

// ---------------------------------------------------------------- fetching the next row tile
// A loop of row tiles (softmax, norms: load, reduce, normalise, store) reads GM only in its load
// group; its compute groups (exp + row sum) touch no memory beyond L1 and its store group only
// writes.  So the load group notes the GM window its next iteration will most likely read
// (memory.h next_window: one stride ahead of the tile's previous load), and the following groups
// without loads fetch it into the caches, a line or two per 32-column step (Fetch below): the
// transfer then overlaps their arithmetic or stores instead of stalling the next load group.  A
// prefetch never faults and never changes a value.  The state is a local of the kernel's core_main
// (one per core, ``ahead_``), handed to the loops.
struct Ahead {
  const char* p = nullptr;  // the window's first byte; nullptr: nothing (left) to fetch
  int64_t st0 = 0, row = 0;  // bytes between rows, bytes per row
  int64_t rows = 0, r = 0, c = 0;  // rows; the next line to fetch: row r, byte c
};

// Called by a fused load of ``run`` into the tile at ``key``: note its next window in ``a``.
template <class T> inline void note_ahead(Ahead& a, const void* key, const Run<T>& run, const Window& w) {
  const char* nx = next_window(key, (const char*)run.p);
  if (nx == nullptr) return;  // no stride yet, or the same window again (gamma): keep any other note
  a.p = nx;
  a.st0 = run.st0 * (int64_t)sizeof(T);
  a.row = w.vc * (int64_t)sizeof(T);
  a.rows = w.vr;
  a.r = a.c = 0;
}

// Fetch the next ``lines`` lines of the noted window (into L2; a no-op once it is all requested).
inline void fetch_ahead(Ahead& a, int lines) {
  for (int k = 0; k < lines && a.p; ++k) {
    __builtin_prefetch(a.p + a.r * a.st0 + a.c, 0, 2);
    a.c += 64;
    if (a.c >= a.row) {
      a.c = 0;
      if (++a.r >= a.rows) a.p = nullptr;
    }
  }
}

// What a loop fetches as it runs: nothing (NoAhead: a group with loads of its own, which note the
// next window instead), or ``lines`` lines of the noted window per step (Fetch).  The code generator
// gives the group that stores the tile (the loop body's last) two lines per 32-column step and the
// groups before it one: a 32-column fp32 step reads two lines of the current tile, so a store group
// alone still requests the whole next window (rms_norm), while a fast arithmetic group before it
// (layer_norm's x - mean pass) no longer issues all of them in one burst: measured at 4096x1024 fp32,
// two lines per step there left layer_norm's next load pass 6% slower (prefetches dropped).
struct NoAhead {};
struct Fetch {
  Ahead* home;
  int lines;
};
inline Fetch fetching(Ahead& a, int lines) { return Fetch{&a, lines}; }

// The loops below call a group's element function f through Body: a copy of f (a lambda capturing
// by value) and of the fetch state in the loop function's own frame, which g++ keeps in registers
// once the calls are inlined.  Through references to the caller's frame, every tile store of the body
// (which may alias anything under -fno-strict-aliasing) made the next step reload each captured
// pointer and the fetch state, and the fetch state was stored back every step.  Each call fetches
// first, as the body used to; done() hands the fetch state back.
template <class A, class F> struct Body;
template <class F> struct Body<NoAhead, F> {
  F f;
  Body(NoAhead, const F& fn) : f(fn) {}
  template <class V> inline auto operator()(V lanes, int64_t r, int64_t c) { return f(lanes, r, c); }
  inline void done() {}
};
template <class F> struct Body<Fetch, F> {
  Ahead* home;
  Ahead a;
  int lines;
  F f;
  Body(Fetch fe, const F& fn) : home(fe.home), a(*fe.home), lines(fe.lines), f(fn) {}
  template <class V> inline auto operator()(V lanes, int64_t r, int64_t c) {
    fetch_ahead(a, lines);
    return f(lanes, r, c);
  }
  inline void done() { *home = a; }
};

// Whether a stored window may be fused with another loaded or stored window: they share no byte, or
// they map every (r, c) to the same address (each element is then read before it is written, and the
// last store of an element wins, as in the per-op order).
template <class T> inline bool apart(const Run<T>& a, const Run<T>& b, const Window& w) {
  if (a.p == b.p && a.st0 == b.st0) return true;
  const T* a_end = a.p + (w.vr - 1) * a.st0 + w.vc;
  const T* b_end = b.p + (w.vr - 1) * b.st0 + w.vc;
  return a_end <= b.p || b_end <= a.p;
}

// ---------------------------------------------------------------- lane types
#if defined(PTO_FUSE_V16)
struct P4 {
  __m512 lo, hi;  // columns 0-15, 16-31
};
// the 8-column quarters (row reductions combine 8-lane registers in column order)
inline __m256 q0(const P4& x) { return _mm512_castps512_ps256(x.lo); }
inline __m256 q1(const P4& x) { return _mm512_extractf32x8_ps(x.lo, 1); }
inline __m256 q2(const P4& x) { return _mm512_castps512_ps256(x.hi); }
inline __m256 q3(const P4& x) { return _mm512_extractf32x8_ps(x.hi, 1); }
#elif defined(PTO_FUSE_V8)
struct P4 {
  __m256 a, b, c, d;  // columns 0-7, 8-15, 16-23, 24-31
};
inline __m256 q0(const P4& x) { return x.a; }
inline __m256 q1(const P4& x) { return x.b; }
inline __m256 q2(const P4& x) { return x.c; }
inline __m256 q3(const P4& x) { return x.d; }
#endif

// load<V>(p): V's lanes from p[0..]; splat<V>(x): x in every lane.
template <class V> struct Lanes;
template <> struct Lanes<float> {
  template <class T> static float load(const T* p) { return ld(*p); }
  static float splat(float x) { return x; }
};
#if defined(PTO_FUSE_V8)
template <> struct Lanes<__m256> {
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static __m256 load(const half* p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p)); }
  static __m256 load(const bf16* p) {
    const __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
  }
  static __m256 splat(float x) { return _mm256_set1_ps(x); }
};
#if defined(PTO_FUSE_V16)
inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 load16(const half* p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p)); }
inline __m512 load16(const bf16* p) {
  const __m512i u = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
}
template <> struct Lanes<P4> {
  template <class T> static P4 load(const T* p) { return P4{load16(p), load16(p + 16)}; }
  static P4 splat(float x) {
    const __m512 v = _mm512_set1_ps(x);
    return P4{v, v};
  }
};
#else
template <> struct Lanes<P4> {
  template <class T> static P4 load(const T* p) {
    using L = Lanes<__m256>;
    return P4{L::load(p), L::load(p + 8), L::load(p + 16), L::load(p + 24)};
  }
  static P4 splat(float x) {
    const __m256 v = _mm256_set1_ps(x);
    return P4{v, v, v, v};
  }
};
#endif
#endif
template <class V, class T> inline V load(const T* p) { return Lanes<V>::load(p); }
template <class V> inline V splat(float x) { return Lanes<V>::splat(x); }

// ---------------------------------------------------------------- the loop
// f(lanes, r, c) for every element (r, c) of the vr x vc window: 32 columns at a time, then 8, then
// a scalar tail.  flat: every tile of the group is ND with exactly vc columns, so the window is one
// run of vr * vc elements (no per-row tail).
template <class A, class F> inline void each(int vr, int vc, bool flat, A ah, const F& fn) {
  Body<A, F> f(ah, fn);
  int64_t rows = vr, cols = vc;
  if (flat) {
    cols = (int64_t)vr * vc;
    rows = 1;
  }
  for (int64_t r = 0; r < rows; ++r) {
    int64_t c = 0;
#if defined(PTO_FUSE_V8)
    for (; c + 32 <= cols; c += 32) f(P4(), r, c);
    for (; c + 8 <= cols; c += 8) f(__m256(), r, c);
#endif
    for (; c < cols; ++c) f(0.f, r, c);
  }
  f.done();
}

// each() for a group that ends in a row sum: f returns the summed value of element (r, c), and
// out[r] (an [R,1] tile) gets the row's sum in pto::row_sum's order: element c in lane c % 8, each
// lane left to right, lanes combined ((0+1)+(2+3))+((4+5)+(6+7)) -- what an 8-wide accumulator gives
// when the registers are added in column order.
template <class T, class A, class F> inline void each_row_sum(int vr, int vc, T* out, A ah, const F& fn) {
  Body<A, F> f(ah, fn);
  int64_t r = 0;
#if defined(PTO_FUSE_V8)
  // Two rows in lockstep where a row holds whole 32-column packs: one row's sum is a chain of
  // dependent adds (four per 32 columns), so a second, independent chain doubles the adds in flight.
  // The packs start at column 0 (a row of a 64-byte aligned tile then never splits a load across
  // cache lines); lane l still adds columns l, l + 8, l + 16, ... in order, so the bits are those of
  // the one-row loop.  Both rows' sums are written after both rows ran: f of row r + 1 may read a row
  // operand that out[r] overwrites (the same tile slot), as the one-row loop never let it.
  if (vc >= 32) {
    for (; r + 2 <= vr; r += 2) {
      P4 x = f(P4(), r, 0), y = f(P4(), r + 1, 0);
      __m256 a0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(q0(x), q1(x)), q2(x)), q3(x));
      __m256 a1 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(q0(y), q1(y)), q2(y)), q3(y));
      int64_t c = 32;
      for (; c + 32 <= vc; c += 32) {
        x = f(P4(), r, c);
        y = f(P4(), r + 1, c);
        a0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, q0(x)), q1(x)), q2(x)), q3(x));
        a1 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a1, q0(y)), q1(y)), q2(y)), q3(y));
      }
      for (; c + 8 <= vc; c += 8) {
        a0 = _mm256_add_ps(a0, f(__m256(), r, c));
        a1 = _mm256_add_ps(a1, f(__m256(), r + 1, c));
      }
      float l0[8], l1[8];
      _mm256_storeu_ps(l0, a0);
      _mm256_storeu_ps(l1, a1);
      for (int64_t t = c; t < vc; ++t) l0[t & 7] += f(0.f, r, t);
      for (int64_t t = c; t < vc; ++t) l1[t & 7] += f(0.f, r + 1, t);
      const float s0 = combine_lanes(l0, 8), s1 = combine_lanes(l1, 8);
      out[r] = st<T>(s0);
      out[r + 1] = st<T>(s1);
    }
  }
#endif
  for (; r < vr; ++r) {
    float lane[8];
    int64_t c = 0;
#if defined(PTO_FUSE_V8)
    if (vc >= 8) {
      __m256 acc = f(__m256(), r, 0);
      for (c = 8; c + 32 <= vc; c += 32) {
        const P4 x = f(P4(), r, c);
        acc = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc, q0(x)), q1(x)), q2(x)), q3(x));
      }
      for (; c + 8 <= vc; c += 8) acc = _mm256_add_ps(acc, f(__m256(), r, c));
      _mm256_storeu_ps(lane, acc);
    }
#endif
    for (; c < vc; ++c) {
      const float x = f(0.f, r, c);
      lane[c & 7] = c < 8 ? x : lane[c & 7] + x;
    }
    out[r] = st<T>(combine_lanes(lane, vc < 8 ? vc : 8));
  }
  f.done();
}

// each() for a group that ends in a row max (K = RMax) or min (RMin): f returns the reduced value of
// element (r, c) after storing the group's live tiles, the reduced tile `src` (rows of `src_cols`)
// among them.  out[r] gets pto::reduce's result.  Lane-wise max/min give it exactly, the order not
// mattering, unless the row holds a NaN (the first one wins) or reduces to a zero (the last zero's
// sign wins): such a row is reduced again from src, sequentially, as the per-op code does.
template <int K, class T, class A, class F>
inline void each_row_minmax(int vr, int vc, T* out, const T* src, int64_t src_cols, A ah, const F& fn) {
  Body<A, F> f(ah, fn);
  auto pick = [](float m, float x) { return K == RMax ? (x > m ? x : m) : (x < m ? x : m); };
  for (int64_t r = 0; r < vr; ++r) {
    float m = 0.f;
    bool nan = false;
    int64_t c = 0;
#if defined(PTO_FUSE_V8)
    if (vc >= 8) {
      auto step = [](__m256 a, __m256 x) { return K == RMax ? _mm256_max_ps(a, x) : _mm256_min_ps(a, x); };
#if defined(PTO_FUSE_V16)
      __m256 acc, bad;
      if (vc >= 32) {
        // two independent 16-lane accumulators (the order of max/min does not matter), folded into
        // acc; the packs start at column 0, so a row of a 64-byte aligned tile never splits a load
        auto step16 = [](__m512 a, __m512 x) { return K == RMax ? _mm512_max_ps(a, x) : _mm512_min_ps(a, x); };
        P4 x = f(P4(), r, 0);
        __m512 lo = x.lo, hi = x.hi;
        __mmask16 bad16 = _mm512_cmp_ps_mask(lo, hi, _CMP_UNORD_Q);
        for (c = 32; c + 32 <= vc; c += 32) {
          x = f(P4(), r, c);
          bad16 |= _mm512_cmp_ps_mask(x.lo, x.hi, _CMP_UNORD_Q);
          lo = step16(lo, x.lo);
          hi = step16(hi, x.hi);
        }
        lo = step16(lo, hi);
        acc = step(_mm512_castps512_ps256(lo), _mm512_extractf32x8_ps(lo, 1));
        bad = bad16 ? _mm256_castsi256_ps(_mm256_set1_epi32(-1)) : _mm256_setzero_ps();
      } else {
        acc = f(__m256(), r, 0);
        bad = _mm256_cmp_ps(acc, acc, _CMP_UNORD_Q);
        c = 8;
      }
#else
      __m256 acc = f(__m256(), r, 0);
      __m256 bad = _mm256_cmp_ps(acc, acc, _CMP_UNORD_Q);
      c = 8;
      for (; c + 32 <= vc; c += 32) {
        const P4 x = f(P4(), r, c);
        const __m256 xa = q0(x), xb = q1(x), xc = q2(x), xd = q3(x);
        bad = _mm256_or_ps(bad, _mm256_or_ps(_mm256_cmp_ps(xa, xb, _CMP_UNORD_Q), _mm256_cmp_ps(xc, xd, _CMP_UNORD_Q)));
        acc = step(step(step(step(acc, xa), xb), xc), xd);
      }
#endif
      for (; c + 8 <= vc; c += 8) {
        const __m256 x = f(__m256(), r, c);
        bad = _mm256_or_ps(bad, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
        acc = step(acc, x);
      }
      nan = _mm256_movemask_ps(bad) != 0;
      float lane[8];
      _mm256_storeu_ps(lane, acc);
      m = lane[0];
      for (int l = 1; l < 8; ++l) m = pick(m, lane[l]);
    }
#endif
    for (; c < vc; ++c) {
      const float x = f(0.f, r, c);
      nan |= x != x;
      m = c == 0 ? x : pick(m, x);
    }
    if (!nan && m != 0.f) {
      out[r] = st<T>(m);
      continue;
    }
    const T* row = src + r * src_cols;
    Reducer<K, T> red;
    red.first(ld(row[0]));
    for (c = 1; c < vc; ++c) red.add(ld(row[c]));
    out[r] = reduce_out<K, T>(red);
  }
  f.done();
}

// ---------------------------------------------------------------- scalar lanes
template <class T> inline void store(T* p, float v) { *p = st<T>(v); }

// A store into a GM window: streamed where the window allows it (Run::stream), which only 8-lane
// stores do; the scalar tail stores normally.  end_stores() orders streamed stores before anything
// that follows the group (another core may read the tensor after the next barrier or event).
template <class T> inline void store_gm(const Run<T>&, T* p, float v) { store(p, v); }
template <class T> inline void end_stores(const Run<T>& run) {
#if defined(PTO_FUSE_V8)
  if (run.stream) _mm_sfence();
#else
  (void)run;
#endif
}

template <class T> inline float round(float x) { return ld(st<T>(x)); }
template <> inline float round<float>(float x) { return x; }

inline float add(float a, float b) { return a + b; }
inline float sub(float a, float b) { return a - b; }
inline float mul(float a, float b) { return a * b; }
inline float div(float a, float b) { return a / b; }
inline float max(float a, float b) { return nan_max<float>(a, b); }
inline float min(float a, float b) { return nan_min<float>(a, b); }
inline float neg(float x) { return -x; }
inline float abs(float x) { return std::fabs(x); }
inline float exp(float x) { return exp_f32(x); }
inline float sqrt(float x) { return std::sqrt(x); }
inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }
inline float recip(float x) { return 1.0f / x; }
inline float relu(float x) { return x > 0 ? x : 0.f; }

// ---------------------------------------------------------------- 8 lanes (AVX2)
#if defined(PTO_FUSE_V8)
inline void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
inline void stream(float* p, __m256 v) { _mm256_stream_ps(p, v); }
inline __m128i to_f16(__m256 v) { return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT); }  // exact: v holds fp16 values
inline __m128i to_bf16(__m256 v) {  // v holds bf16 values: keep the high halves
  const __m256i hi = _mm256_srli_epi32(_mm256_castps_si256(v), 16);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(hi, hi), 0x08));
}
inline void store(half* p, __m256 v) { _mm_storeu_si128((__m128i*)p, to_f16(v)); }
inline void stream(half* p, __m256 v) { _mm_stream_si128((__m128i*)p, to_f16(v)); }
inline void store(bf16* p, __m256 v) { _mm_storeu_si128((__m128i*)p, to_bf16(v)); }
inline void stream(bf16* p, __m256 v) { _mm_stream_si128((__m128i*)p, to_bf16(v)); }
template <class T> inline void store_gm(const Run<T>& run, T* p, __m256 v) {
  if (run.stream) stream(p, v);
  else store(p, v);
}

// f_to_bf16 lane-wise: round to nearest even, NaN -> sign | 0x7FC0 (then back to fp32).
inline __m256 round_bf16(__m256 x) {
  const __m256i u = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb));
  const __m256i rounded = _mm256_and_si256(r, _mm256_set1_epi32((int)0xFFFF0000u));
  const __m256i qnan = _mm256_or_si256(_mm256_and_si256(u, _mm256_set1_epi32((int)0x80000000u)),
                                       _mm256_set1_epi32(0x7FC00000));
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  return _mm256_blendv_ps(_mm256_castsi256_ps(rounded), _mm256_castsi256_ps(qnan), nan);
}
template <class T> inline __m256 round(__m256 x);
template <> inline __m256 round<float>(__m256 x) { return x; }
template <> inline __m256 round<half>(__m256 x) {
  return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
}
template <> inline __m256 round<bf16>(__m256 x) { return round_bf16(x); }

inline __m256 add(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
inline __m256 sub(__m256 a, __m256 b) { return _mm256_sub_ps(a, b); }
inline __m256 mul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
inline __m256 div(__m256 a, __m256 b) { return _mm256_div_ps(a, b); }
// maxps is (a > b ? a : b), which is nan_max except where a is NaN (nan_max returns a).
inline __m256 max(__m256 a, __m256 b) {
  return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}
inline __m256 min(__m256 a, __m256 b) {
  return _mm256_blendv_ps(_mm256_min_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}
inline __m256 neg(__m256 x) { return _mm256_xor_ps(x, _mm256_set1_ps(-0.0f)); }
inline __m256 abs(__m256 x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
inline __m256 exp(__m256 x) { return exp8_f32(x); }
inline __m256 sqrt(__m256 x) { return _mm256_sqrt_ps(x); }
inline __m256 rsqrt(__m256 x) { return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(x)); }
inline __m256 recip(__m256 x) { return _mm256_div_ps(_mm256_set1_ps(1.0f), x); }
// x > 0 ? x : +0 (NaN and -0.0 give +0)
inline __m256 relu(__m256 x) { return _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ), x); }

#if defined(PTO_FUSE_V16)
// ---------------------------------------------------------------- 16 lanes (AVX-512): the same ops
inline __m512 exp16_f32(__m512 x) {  // exp8_f32's steps on 16 lanes
  const __m512 xc = _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-110.0f), x));
  const __m512 fn = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(ExpC::log2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(fn, _mm512_set1_ps(-ExpC::c1), xc);
  r = _mm512_fmadd_ps(fn, _mm512_set1_ps(-ExpC::c2), r);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(ExpC::p0), r, _mm512_set1_ps(ExpC::p1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(ExpC::p2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(ExpC::p3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(ExpC::p4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(ExpC::p5));
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(y, fn);
}
inline __m256i to_f16(__m512 v) { return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT); }
inline __m256i to_bf16(__m512 v) { return _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(v), 16)); }
inline void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
inline void store(half* p, __m512 v) { _mm256_storeu_si256((__m256i*)p, to_f16(v)); }
inline void store(bf16* p, __m512 v) { _mm256_storeu_si256((__m256i*)p, to_bf16(v)); }
// streamed in 32-byte halves: gm_run only guarantees 32-byte alignment of fp32 rows
inline void stream(float* p, __m512 v) {
  _mm256_stream_ps(p, _mm512_castps512_ps256(v));
  _mm256_stream_ps(p + 8, _mm512_extractf32x8_ps(v, 1));
}
inline void stream(half* p, __m512 v) {
  const __m256i h = to_f16(v);
  _mm_stream_si128((__m128i*)p, _mm256_castsi256_si128(h));
  _mm_stream_si128((__m128i*)(p + 8), _mm256_extracti128_si256(h, 1));
}
inline void stream(bf16* p, __m512 v) {
  const __m256i h = to_bf16(v);
  _mm_stream_si128((__m128i*)p, _mm256_castsi256_si128(h));
  _mm_stream_si128((__m128i*)(p + 8), _mm256_extracti128_si256(h, 1));
}
template <class T> inline void store_gm(const Run<T>& run, T* p, __m512 v) {
  if (run.stream) stream(p, v);
  else store(p, v);
}
inline __m512 round_bf16(__m512 x) {  // round_bf16 on 16 lanes
  const __m512i u = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), lsb));
  const __m512i rounded = _mm512_and_si512(r, _mm512_set1_epi32((int)0xFFFF0000u));
  const __m512i qnan = _mm512_or_si512(_mm512_and_si512(u, _mm512_set1_epi32((int)0x80000000u)),
                                       _mm512_set1_epi32(0x7FC00000));
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(nan, rounded, qnan));
}
template <class T> inline __m512 round(__m512 x);
template <> inline __m512 round<float>(__m512 x) { return x; }
template <> inline __m512 round<half>(__m512 x) { return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)); }
template <> inline __m512 round<bf16>(__m512 x) { return round_bf16(x); }
inline __m512 add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
inline __m512 sub(__m512 a, __m512 b) { return _mm512_sub_ps(a, b); }
inline __m512 mul(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
inline __m512 div(__m512 a, __m512 b) { return _mm512_div_ps(a, b); }
inline __m512 max(__m512 a, __m512 b) {  // nan_max: a where a is NaN, else maxps
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), _mm512_max_ps(a, b), a);
}
inline __m512 min(__m512 a, __m512 b) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), _mm512_min_ps(a, b), a);
}
inline __m512 neg(__m512 x) { return _mm512_xor_ps(x, _mm512_set1_ps(-0.0f)); }
inline __m512 abs(__m512 x) { return _mm512_andnot_ps(_mm512_set1_ps(-0.0f), x); }
inline __m512 exp(__m512 x) { return exp16_f32(x); }
inline __m512 sqrt(__m512 x) { return _mm512_sqrt_ps(x); }
inline __m512 rsqrt(__m512 x) { return _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_sqrt_ps(x)); }
inline __m512 recip(__m512 x) { return _mm512_div_ps(_mm512_set1_ps(1.0f), x); }
inline __m512 relu(__m512 x) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ), x); }

// ---------------------------------------------------------------- P4: each op on both registers
template <class T> inline void store(T* p, const P4& v) {
  store(p, v.lo);
  store(p + 16, v.hi);
}
template <class T> inline void store_gm(const Run<T>& run, T* p, const P4& v) {
  store_gm(run, p, v.lo);
  store_gm(run, p + 16, v.hi);
}
template <class T> inline P4 round(const P4& x) { return P4{round<T>(x.lo), round<T>(x.hi)}; }
#define PTO_FZ_P4_1(NAME) \
  inline P4 NAME(const P4& x) { return P4{NAME(x.lo), NAME(x.hi)}; }
#define PTO_FZ_P4_2(NAME) \
  inline P4 NAME(const P4& x, const P4& y) { return P4{NAME(x.lo, y.lo), NAME(x.hi, y.hi)}; }
#else
// ---------------------------------------------------------------- P4: each op on every register
template <class T> inline void store(T* p, const P4& v) {
  store(p, v.a);
  store(p + 8, v.b);
  store(p + 16, v.c);
  store(p + 24, v.d);
}
template <class T> inline void store_gm(const Run<T>& run, T* p, const P4& v) {
  store_gm(run, p, v.a);
  store_gm(run, p + 8, v.b);
  store_gm(run, p + 16, v.c);
  store_gm(run, p + 24, v.d);
}
template <class T> inline P4 round(const P4& x) {
  return P4{round<T>(x.a), round<T>(x.b), round<T>(x.c), round<T>(x.d)};
}
#define PTO_FZ_P4_1(NAME) \
  inline P4 NAME(const P4& x) { return P4{NAME(x.a), NAME(x.b), NAME(x.c), NAME(x.d)}; }
#define PTO_FZ_P4_2(NAME)                                                              \
  inline P4 NAME(const P4& x, const P4& y) {                                            \
    return P4{NAME(x.a, y.a), NAME(x.b, y.b), NAME(x.c, y.c), NAME(x.d, y.d)};          \
  }
#endif
PTO_FZ_P4_2(add)
PTO_FZ_P4_2(sub)
PTO_FZ_P4_2(mul)
PTO_FZ_P4_2(div)
PTO_FZ_P4_2(max)
PTO_FZ_P4_2(min)
PTO_FZ_P4_1(neg)
PTO_FZ_P4_1(abs)
PTO_FZ_P4_1(exp)
PTO_FZ_P4_1(sqrt)
PTO_FZ_P4_1(rsqrt)
PTO_FZ_P4_1(recip)
PTO_FZ_P4_1(relu)
#undef PTO_FZ_P4_1
#undef PTO_FZ_P4_2
#endif

}  // namespace fz
}  // namespace pto

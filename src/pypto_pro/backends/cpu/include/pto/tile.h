// PyPTO CPU backend: tile views over a core's byte-addressed on-chip memories.
//
// A Tile<T> is a typed view at a declaration's byte address with the declaration's layout; a
// subview keeps the parent's layout and shape and adds an origin.  Element (r, c) of a view lives
// at row_part(r) + col_part(c) elements from the base for every layout (ND, DN and the fractal
// layouts are all separable), so loops walk rows and step through columns without division.
// The placement is exactly pypto_pro.ir.layout.element_offsets, so aliasing matches the interpreter.
#pragma once
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "core.h"

namespace pto {

[[noreturn]] inline void fail(Core& C, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
[[noreturn]] inline void fail(Core& C, const char* fmt, ...) {
  char buf[900];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  pto_rt_fail(&C, buf);
}

inline const char* core_label(const Core& C, char* buf, size_t n) {
  if (C.kind == 1)
    std::snprintf(buf, n, "block %d AIC", C.block);
  else
    std::snprintf(buf, n, "block %d AIV%d", C.block, C.sub);
  return buf;
}

// Steps through the column parts of a layout starting at parent column c0.
struct ColIt {
  int64_t off;
  int32_t ci, fc;
  int64_t step_in, step_blk;
  inline void next() {
    if (++ci == fc) {
      ci = 0;
      off += step_blk - (int64_t)(fc - 1) * step_in;
    } else {
      off += step_in;
    }
  }
  // Elements left in the current run (columns step_in apart; a whole row for ND/DN).
  inline int32_t run() const { return fc - ci; }
  // Skip len <= run() columns.
  inline void advance(int32_t len) {
    ci += len;
    if (ci == fc) {
      ci = 0;
      off += step_blk - (int64_t)(fc - len) * step_in;
    } else {
      off += (int64_t)len * step_in;
    }
  }
};

// The identity conversion of copies (lets copy_strided use memcpy).
struct Same {
  template <class T> inline T operator()(T v) const { return v; }
};

// The unsigned integer type of N bytes: plain copies move elements as bits.
template <size_t N> struct Bits;
template <> struct Bits<1> { using type = uint8_t; };
template <> struct Bits<2> { using type = uint16_t; };
template <> struct Bits<4> { using type = uint32_t; };
template <> struct Bits<8> { using type = uint64_t; };

// d[j * 16 + i] = s[i * 16 + j] for a 16 x 16 block of 16-bit values (a fractal of FP16/BF16 between
// NZ and ZN): four 8 x 8 transposes of unpack shuffles, instead of 256 dependent scalar moves.
typedef uint16_t pto_v8u16 __attribute__((vector_size(16), aligned(2)));
inline void transpose16x16_u16(uint16_t* __restrict d, const uint16_t* __restrict s) {
  typedef short M __attribute__((vector_size(16)));
  for (int bi = 0; bi < 16; bi += 8)
    for (int bj = 0; bj < 16; bj += 8) {
      pto_v8u16 a[8], t[8], u[8];
      for (int i = 0; i < 8; ++i) std::memcpy(&a[i], s + (bi + i) * 16 + bj, 16);
      for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shuffle(a[i], a[i + 1], (M){0, 8, 1, 9, 2, 10, 3, 11});
        t[i + 1] = __builtin_shuffle(a[i], a[i + 1], (M){4, 12, 5, 13, 6, 14, 7, 15});
      }
      for (int i = 0; i < 8; i += 4)
        for (int h = 0; h < 2; ++h) {
          u[i + 2 * h] = __builtin_shuffle(t[i + h], t[i + 2 + h], (M){0, 1, 8, 9, 2, 3, 10, 11});
          u[i + 2 * h + 1] = __builtin_shuffle(t[i + h], t[i + 2 + h], (M){4, 5, 12, 13, 6, 7, 14, 15});
        }
      for (int i = 0; i < 4; ++i) {  // column 2i and 2i+1 of the 8 x 8 block
        const pto_v8u16 lo = __builtin_shuffle(u[i], u[i + 4], (M){0, 1, 2, 3, 8, 9, 10, 11});
        const pto_v8u16 hi = __builtin_shuffle(u[i], u[i + 4], (M){4, 5, 6, 7, 12, 13, 14, 15});
        std::memcpy(d + (bj + 2 * i) * 16 + bi, &lo, 16);
        std::memcpy(d + (bj + 2 * i + 1) * 16 + bi, &hi, 16);
      }
    }
}

// d[j * ds + i] = s[i * ss + j] for an 8 x 8 block of 32-bit values (a block of an fp32 operand between
// NZ and ZN, and the fp32 rhs packing of matmul): the unpack / shuffle / lane-swap transpose, 24 shuffles
// instead of 64 dependent scalar moves.  Bits are moved, never converted.
inline void transpose8x8_b32(uint32_t* __restrict d, int64_t ds, const uint32_t* __restrict s, int64_t ss) {
  typedef uint32_t V __attribute__((vector_size(32), aligned(4)));
  typedef int32_t M __attribute__((vector_size(32)));
  V r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) std::memcpy(&r[i], s + i * ss, 32);
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shuffle(r[i], r[i + 1], (M){0, 8, 1, 9, 4, 12, 5, 13});
    t[i + 1] = __builtin_shuffle(r[i], r[i + 1], (M){2, 10, 3, 11, 6, 14, 7, 15});
  }
  for (int i = 0; i < 8; i += 4)
    for (int h = 0; h < 2; ++h) {
      u[i + 2 * h] = __builtin_shuffle(t[i + h], t[i + 2 + h], (M){0, 1, 8, 9, 4, 5, 12, 13});
      u[i + 2 * h + 1] = __builtin_shuffle(t[i + h], t[i + 2 + h], (M){2, 3, 10, 11, 6, 7, 14, 15});
    }
  for (int j = 0; j < 4; ++j) {  // columns j and j + 4
    const V lo = __builtin_shuffle(u[j], u[j + 4], (M){0, 1, 2, 3, 8, 9, 10, 11});
    const V hi = __builtin_shuffle(u[j], u[j + 4], (M){4, 5, 6, 7, 12, 13, 14, 15});
    std::memcpy(d + j * ds, &lo, 32);
    std::memcpy(d + (j + 4) * ds, &hi, 32);
  }
}

// dst[i * ds] = conv(src[i * ss]) for i < n (the inner loop of every layout-aware copy).
template <class TD, class TS, class F>
inline void copy_strided(TD* __restrict d, int64_t ds, const TS* __restrict s, int64_t ss, int n, F& conv) {
  if constexpr (std::is_same<F, Same>::value && std::is_same<TD, TS>::value) {
    if (ds == 1 && ss == 1) {
      if (n * sizeof(TD) == 32) std::memcpy((void*)d, (const void*)s, 32);  // one fractal row
      else std::memcpy((void*)d, (const void*)s, sizeof(TD) * (size_t)n);
      return;
    }
    // as bits: g++ moves _Float16 values through dependent xmm inserts, a few cycles each
    using U = typename Bits<sizeof(TD)>::type;
    U* __restrict du = (U*)(void*)d;
    const U* __restrict su = (const U*)(const void*)s;
    for (int i = 0; i < n; ++i) du[(int64_t)i * ds] = su[(int64_t)i * ss];
    return;
  }
  if (ds == 1 && ss == 1) {
    for (int i = 0; i < n; ++i) d[i] = conv(s[i]);
  } else {
    for (int i = 0; i < n; ++i) d[(int64_t)i * ds] = conv(s[(int64_t)i * ss]);
  }
}

// n consecutive columns of one row: drow/srow are row bases, di/si column iterators at the first
// column.  Walks both layouts run by run (a run is a contiguous or fixed-stride stretch), so no
// per-element index arithmetic is needed for any layout.
template <class TD, class TS, class F>
inline void copy_row(TD* drow, ColIt di, const TS* srow, ColIt si, int n, F& conv) {
  while (n > 0) {
    int32_t len = di.run() < si.run() ? di.run() : si.run();
    if (len > n) len = n;
    copy_strided(drow + di.off, di.step_in, srow + si.off, si.step_in, len, conv);
    di.advance(len);
    si.advance(len);
    n -= len;
  }
}

// An iterator over the columns of a plain strided row (GM tensors): one run of `stride`.
inline ColIt strided_cols(int64_t stride) {
  ColIt it;
  it.off = 0;
  it.ci = 0;
  it.fc = 0x7FFFFFFF;
  it.step_in = stride;
  it.step_blk = 0;
  return it;
}

template <class T> struct Tile {
  T* base;                  // element 0 of the parent declaration
  int32_t lay, prows, pcols;  // parent layout and physical shape
  int32_t r0, c0;           // origin of this view in the parent
  int32_t rows, cols;       // physical shape of this view
  int32_t vr, vc;           // valid window
  int32_t fr, fc;           // fractal block (rows, cols)
  const char* name;

  inline int64_t nblk_r() const { return (prows + fr - 1) / fr; }
  inline int64_t nblk_c() const { return (pcols + fc - 1) / fc; }
  // Row part of the offset of parent row R.
  inline int64_t rpart(int64_t R) const {
    switch (lay) {
      case ND: return R * pcols;
      case DN: return R;
      default: {
        int64_t B = (int64_t)fr * fc, rb = R / fr, ri = R % fr;
        // ZN row panels are fr rows x pcols (unpadded); NZ/ZZ/NN as blocks (ir/layout.py)
        int64_t o = lay == ZN ? rb * (int64_t)pcols * fr : lay == ZZ ? rb * nblk_c() * B : rb * B;
        return o + ((lay == NZ || lay == ZZ) ? ri * fc : ri);
      }
    }
  }
  inline int64_t cpart(int64_t Cc) const {
    switch (lay) {
      case ND: return Cc;
      case DN: return Cc * prows;
      default: {
        int64_t B = (int64_t)fr * fc, cb = Cc / fc, ci = Cc % fc;
        // NZ column panels are prows x fc (unpadded)
        int64_t o = (lay == ZN || lay == ZZ) ? cb * B : lay == NZ ? cb * (int64_t)prows * fc : cb * nblk_r() * B;
        return o + ((lay == NZ || lay == ZZ) ? ci : ci * fr);
      }
    }
  }
  inline int64_t roff(int r) const { return rpart(r0 + r); }
  inline ColIt colit(int c = 0) const {  // iterator at view column c
    ColIt it;
    it.off = cpart(c0 + c);
    if (lay == ND || lay == DN) {
      it.ci = 0;
      it.fc = 0x7FFFFFFF;
      it.step_in = lay == ND ? 1 : prows;
      it.step_blk = 0;
    } else {
      int64_t B = (int64_t)fr * fc;
      it.ci = (c0 + c) % fc;
      it.fc = fc;
      it.step_in = (lay == NZ || lay == ZZ) ? 1 : fr;
      it.step_blk = (lay == ZN || lay == ZZ) ? B : lay == NZ ? (int64_t)prows * fc : nblk_r() * B;
    }
    return it;
  }
  inline T& at(int r, int c) const { return base[roff(r) + cpart(c0 + c)]; }
  inline bool nd() const { return lay == ND; }
  inline T* rowp(int r) const { return base + (int64_t)(r0 + r) * pcols + c0; }  // ND only
  // Byte span of the parent declaration (for alias checks).
  inline const uint8_t* lo() const { return (const uint8_t*)base; }
  inline const uint8_t* hi() const {
    int64_t n = (lay == ND || lay == DN) ? (int64_t)prows * pcols
                : lay == NZ                  ? (int64_t)prows * nblk_c() * fc
                : lay == ZN                  ? nblk_r() * fr * (int64_t)pcols
                                             : nblk_r() * fr * nblk_c() * fc;
    return (const uint8_t*)(base + n);
  }
};

inline void fractal_dims(int32_t lay, int32_t esize, int32_t acc, int32_t& fr, int32_t& fc) {
  int32_t run = 32 / esize > 1 ? 32 / esize : 1;
  if (acc) {
    fr = 16;
    fc = 16;
  } else if (lay == NZ || lay == ZZ) {
    fr = 16;
    fc = run;
  } else {
    fr = run;
    fc = 16;
  }
}

// The tile declared as kTiles[i] on core C (with that core's valid window).
template <class T> inline Tile<T> tile(Core& C, const TileDecl& d, int i) {
  Tile<T> t;
  t.base = (T*)(C.mem[d.space] + d.addr);
  t.lay = d.lay;
  t.prows = d.rows;
  t.pcols = d.cols;
  t.r0 = t.c0 = 0;
  t.rows = d.rows;
  t.cols = d.cols;
  t.vr = C.valid[2 * i];
  t.vc = C.valid[2 * i + 1];
  fractal_dims(d.lay, d.esize, d.acc, t.fr, t.fc);
  t.name = d.name;
  return t;
}

// base[r0:r1, c0:c1]: same buffer and layout, valid window intersected with the parent's.
template <class T> inline Tile<T> sub(Core& C, Tile<T> b, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  if (!(0 <= r0 && r0 < r1 && r1 <= b.rows && 0 <= c0 && c0 < c1 && c1 <= b.cols))
    fail(C, "subview [%lld:%lld, %lld:%lld] is outside tile %s of shape [%d, %d]", (long long)r0, (long long)r1,
         (long long)c0, (long long)c1, b.name, b.rows, b.cols);
  Tile<T> t = b;
  t.r0 = b.r0 + (int32_t)r0;
  t.c0 = b.c0 + (int32_t)c0;
  t.rows = (int32_t)(r1 - r0);
  t.cols = (int32_t)(c1 - c0);
  int64_t vr = (r1 < b.vr ? r1 : b.vr) - r0, vc = (c1 < b.vc ? c1 : b.vc) - c0;
  t.vr = vr > 0 ? (int32_t)vr : 0;
  t.vc = vc > 0 ? (int32_t)vc : 0;
  return t;
}

// A named subview: its own valid window (vr, vc) is kept in variables (see ir.SubRef.valid).
template <class T>
inline Tile<T> sub(Core& C, Tile<T> b, int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t vr, int64_t vc) {
  Tile<T> t = sub(C, b, r0, r1, c0, c1);
  t.vr = (int32_t)vr;
  t.vc = (int32_t)vc;
  return t;
}

inline int64_t slot(int64_t index, int64_t depth) {
  int64_t s = index % depth;
  return s < 0 ? s + depth : s;
}

// ------------------------------------------------------------------------------------------
// Element-wise driver: f maps the sources' stored values at (r, c) to dst's stored value.
// Like the interpreter, every source is read before dst is written: a source that overlaps dst
// with a different element mapping is snapshotted first.
// ------------------------------------------------------------------------------------------
template <class T> struct Cur {
  T* row;
  ColIt it;
  inline T get() const { return row[it.off]; }
  inline void next() { it.next(); }
};

template <class TD, class TS> inline bool same_map(const Tile<TD>& d, const Tile<TS>& s) {
  return sizeof(TD) == sizeof(TS) && (const void*)d.base == (const void*)s.base && d.lay == s.lay &&
         d.prows == s.prows && d.pcols == s.pcols && d.r0 == s.r0 && d.c0 == s.c0;
}

template <class TD, class TS> inline bool overlaps(const Tile<TD>& d, const Tile<TS>& s) {
  return d.lo() < s.hi() && s.lo() < d.hi();
}

// Scratch copy of s's top-left rows x cols window as a plain ND tile (heap).
template <class T> struct Snapshot {
  Tile<T> view;
  T* mem = nullptr;
  Snapshot(const Tile<T>& s, int rows, int cols, bool needed) : view(s) {
    if (!needed) return;
    mem = (T*)std::malloc(sizeof(T) * (size_t)(rows > 0 ? rows : 1) * (size_t)(cols > 0 ? cols : 1));
    Same same;
    for (int r = 0; r < rows; ++r)
      copy_row(mem + (int64_t)r * cols, strided_cols(1), s.base + s.roff(r), s.colit(), cols, same);
    view.base = mem;
    view.lay = ND;
    view.prows = rows;
    view.pcols = cols;
    view.r0 = view.c0 = 0;
  }
  ~Snapshot() { std::free(mem); }
  Snapshot(const Snapshot&) = delete;
};

template <class TD, class F, class... TS>
inline void ew_row_nd(TD* dp, int n, F& f, const TS*... sp) {
  for (int c = 0; c < n; ++c) dp[c] = f(sp[c]...);
}

template <class TD, class F, class... TS>
inline void ew_row_any(TD* drow, ColIt cd, int n, F& f, Cur<TS>... cs) {
  for (int c = 0; c < n; ++c) {
    drow[cd.off] = f(cs.get()...);
    cd.next();
    (cs.next(), ...);
  }
}

template <class TD, class F, class... TS>
inline void ew_views(const Tile<TD>& d, int vr, int vc, F& f, const Tile<TS>&... s) {
  if (d.nd() && (s.nd() && ...)) {
    for (int r = 0; r < vr; ++r) ew_row_nd(d.rowp(r), vc, f, (const TS*)s.rowp(r)...);
    return;
  }
  for (int r = 0; r < vr; ++r)
    ew_row_any(d.base + d.roff(r), d.colit(), vc, f, Cur<TS>{s.base + s.roff(r), s.colit()}...);
}

template <class TD, class F, class... TS>
inline void ew(Core& C, const Tile<TD>& d, int vr, int vc, F f, const Tile<TS>&... s) {
  (void)C;
  if (vr <= 0 || vc <= 0) return;
  if (((overlaps(d, s) && !same_map(d, s)) || ...)) {
    // rare: a source overlaps dst shifted or retyped -> read it completely first
    ew_snap(d, vr, vc, f, s...);
    return;
  }
  ew_views(d, vr, vc, f, s...);
}

template <class TD, class F> inline void ew_snap(const Tile<TD>& d, int vr, int vc, F& f) { ew_views(d, vr, vc, f); }
template <class TD, class F, class TS>
inline void ew_snap(const Tile<TD>& d, int vr, int vc, F& f, const Tile<TS>& a) {
  Snapshot<TS> sa(a, vr, vc, true);
  ew_views(d, vr, vc, f, sa.view);
}
template <class TD, class F, class TA, class TB>
inline void ew_snap(const Tile<TD>& d, int vr, int vc, F& f, const Tile<TA>& a, const Tile<TB>& b) {
  Snapshot<TA> sa(a, vr, vc, overlaps(d, a) && !same_map(d, a));
  Snapshot<TB> sb(b, vr, vc, overlaps(d, b) && !same_map(d, b));
  ew_views(d, vr, vc, f, sa.view, sb.view);
}
template <class TD, class F, class TA, class TB, class TC>
inline void ew_snap(const Tile<TD>& d, int vr, int vc, F& f, const Tile<TA>& a, const Tile<TB>& b,
                    const Tile<TC>& c) {
  Snapshot<TA> sa(a, vr, vc, overlaps(d, a) && !same_map(d, a));
  Snapshot<TB> sb(b, vr, vc, overlaps(d, b) && !same_map(d, b));
  Snapshot<TC> sc(c, vr, vc, overlaps(d, c) && !same_map(d, c));
  ew_views(d, vr, vc, f, sa.view, sb.view, sc.view);
}

// dst's valid window, checked to fit every source's physical shape (ops/common.py window()).
template <class TD> inline void window(Core& C, const Tile<TD>& d, int& vr, int& vc) {
  (void)C;
  vr = d.vr;
  vc = d.vc;
}
template <class TD, class TS, class... R>
inline void window(Core& C, const Tile<TD>& d, int& vr, int& vc, const Tile<TS>& s, const R&... rest) {
  window(C, d, vr, vc, rest...);
  if (vr > s.rows || vc > s.cols)
    fail(C, "operand %s (%dx%d) is smaller than the destination's valid window %dx%d", s.name, s.rows, s.cols, vr,
         vc);
}

}  // namespace pto

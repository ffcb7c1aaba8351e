// PyPTO CPU backend: GM <-> tile movement, tile <-> tile moves, the fixpipe, matmul, scalar access.
// Every GM access is bounds-checked once per op (ops/movement.py gm_window) before any element moves.
#pragma once
#include <algorithm>
#include <initializer_list>
#include <new>

#include "cast.h"
#include "tile.h"
#include "vector.h"

namespace pto {

// A GM tensor argument: pointer, shape and strides (elements) straight from the caller's array.
template <class T> struct Gm {
  T* p;
  int32_t nd;
  const int64_t* shape;
  const int64_t* stride;
  const char* name;
};

template <class T> inline Gm<T> gm(const Core& C, int64_t off, int32_t nd, const char* name) {
  Gm<T> g;
  g.p = (T*)(intptr_t)C.args[off];
  g.nd = nd;
  g.shape = C.args + off + 1;
  g.stride = C.args + off + 1 + nd;
  g.name = name;
  return g;
}

// A GM tensor's bits seen as another element type of the same width (a load/store that reinterprets).
template <class U, class T> inline Gm<U> gm_as(const Gm<T>& g) {
  static_assert(sizeof(U) == sizeof(T), "a load/store reinterprets only dtypes of the same width");
  Gm<U> r;
  r.p = (U*)g.p;
  r.nd = g.nd;
  r.shape = g.shape;
  r.stride = g.stride;
  r.name = g.name;
  return r;
}

inline void shape_str(char* buf, size_t n, int nd, const int64_t* shape) {
  size_t k = (size_t)std::snprintf(buf, n, "[");
  for (int i = 0; i < nd && k < n; ++i) k += (size_t)std::snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)shape[i]);
  if (k < n) std::snprintf(buf + k, n - k, "]");
}

// A GM tensor view made in the kernel (pl.make_tensor): rank N, shape and element strides over the
// memory of a root argument, starting `off` bytes past its data.  at() fills and checks it at each use
// (the values may differ per core and per iteration): every element it can address lies inside the
// root's bytes, as on the interpreter.
template <class T, int N> struct GmView {
  int64_t shape[N], stride[N];
  Gm<T> g;
  const char* name;
  const char* what;  // "tensor view 'x' (pl.make_tensor at line L) of 'root'"
  bool clamp_rows = false;  // pl.set_stride: shape[0] shrinks to the rows inside the root's memory
  template <class U>
  const Gm<T>& at(Core& C, const Gm<U>& root, int64_t off, std::initializer_list<int64_t> dims,
                  std::initializer_list<int64_t> strides) {
    int64_t span = 0;  // the root's bytes
    bool empty = false;
    for (int i = 0; i < root.nd; ++i) empty = empty || root.shape[i] == 0, span += (root.shape[i] - 1) * root.stride[i];
    span = empty ? 0 : (span + 1) * (int64_t)sizeof(U);
    int i = 0;
    for (int64_t d : dims) {
      if (d < 1) fail(C, "%s has dim %d of size %lld; every dim must be >= 1", what, i, (long long)d);
      shape[i++] = d;
    }
    i = 0;
    for (int64_t s : strides) {
      if (s < 0) fail(C, "%s has stride %lld on axis %d; strides must be >= 0 elements", what, (long long)s, i);
      stride[i++] = s;
    }
    if (off % (int64_t)sizeof(T))
      fail(C, "%s starts %lld bytes into '%s', not a whole number of %d-byte elements", what, (long long)off,
           root.name, (int)sizeof(T));
    if (clamp_rows) {  // as interp/gmview.py fitting_rows
      int64_t rest = 1;
      for (int k = 1; k < N; ++k) rest += (shape[k] - 1) * stride[k];
      const int64_t room = (span - off) / (int64_t)sizeof(T) - rest;
      const int64_t rows = room < 0 ? 0 : stride[0] == 0 ? shape[0] : std::min(shape[0], room / stride[0] + 1);
      if (rows < 1) {
        char st[160];
        shape_str(st, sizeof st, N, stride);
        fail(C, "%s (strides %s) has no row inside the %lld bytes of '%s' from byte %lld", what, st, (long long)span,
             root.name, (long long)off);
      }
      shape[0] = rows;
    }
    int64_t need = 1;  // the view's elements from its first to its last
    for (int k = 0; k < N; ++k) need += (shape[k] - 1) * stride[k];
    need *= (int64_t)sizeof(T);
    if (off < 0 || off + need > span) {
      char sh[160], st[160];
      shape_str(sh, sizeof sh, N, shape);
      shape_str(st, sizeof st, N, stride);
      fail(C, "%s (shape %s, strides %s) spans bytes [%lld, %lld) of '%s', which holds %lld bytes", what, sh, st,
           (long long)off, (long long)(off + need), root.name, (long long)span);
    }
    g.p = (T*)((char*)root.p + off);
    g.nd = N;
    g.shape = shape;
    g.stride = stride;
    g.name = name;
    return g;
  }
};

struct GmWin {
  int64_t base, st0, st1;
};


// The rows x cols window at `offs` along axes (a0, a1) (a0 < 0: a 1-D tensor), bounds-checked.
template <class T>
inline GmWin gm_window(Core& C, const Gm<T>& g, const int64_t* offs, int a0, int a1, int64_t rows, int64_t cols,
                       const char* what) {
  char sh[160];
  if (a0 < 0 && rows > 1) fail(C, "%s: a 1-D tensor '%s' cannot fill %lld tile rows", what, g.name, (long long)rows);
  GmWin w{0, 0, 0};
  for (int ax = 0; ax < g.nd; ++ax) {
    int64_t o = offs[ax], size = g.shape[ax];
    if (o < 0) fail(C, "%s: offset %lld on axis %d of tensor '%s' is negative", what, (long long)o, ax, g.name);
    int64_t ext = ax == a0 ? rows : (ax == a1 ? cols : -1);
    if (ext < 0) {
      if (o >= size) {
        shape_str(sh, sizeof sh, g.nd, g.shape);
        fail(C, "%s: offset %lld on axis %d is outside tensor '%s' of shape %s", what, (long long)o, ax, g.name, sh);
      }
    } else if (o + ext > size && ax == a0 && ax > 0 && a0 < a1 && g.stride[ax - 1] == size * g.stride[ax] &&
               offs[ax - 1] + (o + ext - 1) / size < g.shape[ax - 1]) {
      // rows past the end of their axis continue on the next index of the contiguous axis outside it
      // (ops/movement.py gm_pieces): the strides already address them
    } else if (o + ext > size) {
      shape_str(sh, sizeof sh, g.nd, g.shape);
      fail(C, "%s: the tile window [%lld, %lld) on axis %d exceeds tensor '%s' of shape %s; for tails set the tile's "
           "valid shape (pl.set_validshape) before the access", what, (long long)o, (long long)(o + ext), ax, g.name, sh);
    }
    w.base += o * g.stride[ax];
  }
  w.st0 = a0 >= 0 ? g.stride[a0] : 0;
  w.st1 = g.stride[a1];
  return w;
}

// ---------------------------------------------------------------- load / store
// The GM window the next load into the same tile will most likely read: a tile's loads in a loop
// step by a constant stride (the K steps of a matmul operand, the row tiles of a vector pass), so
// the window one stride ahead (nullptr when there is no stride yet).  load() fetches it into the L2
// line by line as it copies the current window -- interleaved, the prefetches neither pile up in
// the miss buffers nor stall the copy, and they land while the tile's work (the matmul) runs.
// Keyed by the tile's address (a small per-thread table); a prefetch never faults and never changes
// a value.
inline const char* next_window(const void* tile, const char* p) {
  struct Last {
    const void* tile;
    const char* p;
  };
  static thread_local Last last[8];
  static thread_local unsigned victim = 0;
  Last* e = nullptr;
  for (Last& x : last)
    if (x.tile == tile) e = &x;
  const char* prev = e ? e->p : nullptr;
  if (!e) e = &last[victim++ % 8];
  e->tile = tile;
  e->p = p;
  return prev == nullptr || prev == p ? nullptr : p + (p - prev);
}

// load / store: not `inline` (pto/prebuilt_ops.h: instantiations the ops library holds)
template <class T>
void load(Core& C, const Tile<T>& d, const Gm<T>& g, const int64_t* offs, int a0, int a1, const char* what) {
  const int vr = d.vr, vc = d.vc;
  GmWin w = gm_window(C, g, offs, a0, a1, vr, vc, what);
  if (vr <= 0 || vc <= 0) return;
  const T* src = g.p + w.base;
  Same same;
  // rows far apart in GM (a window of a wider tensor): fetch a few rows ahead
  const int64_t row_bytes = (w.st1 == 1 && w.st0 != vc) ? (int64_t)sizeof(T) * vc : 0;
  // ~4 KiB in flight: short rows (a 64-column fp32 matmul operand) need more rows ahead to cover
  // the memory latency than long ones
  const int ahead = row_bytes <= 0 ? 4 : row_bytes >= 1024 ? 4 : (int)(4096 / row_bytes) > 32 ? 32 : (int)(4096 / row_bytes);
  // the next window's lines, one per line copied (windows of contiguous rows up to 256 KiB)
  const char* nx = w.st1 == 1 && (int64_t)vr * vc * (int64_t)sizeof(T) <= (int64_t(256) << 10)
                       ? next_window(d.base, (const char*)src) : nullptr;
  const int64_t nx_off = nx ? nx - (const char*)src : 0;
  // an NZ tile (the Mat operand of a matmul) filled from contiguous GM rows in whole fractal rows
  const ColIt it0 = d.colit();
  const bool nz32 = d.lay == NZ && w.st1 == 1 && (int64_t)sizeof(T) * d.fc == 32 && it0.ci == 0 && vc % d.fc == 0;
  if (nz32 && vc % (2 * d.fc) == 0) {
    // two panels (one 64-byte GM line) at a time down all rows: two sequential write streams, where
    // row by row would write 32 bytes into each of vc / fc panels a panel's size apart (the same L1
    // sets, evicting one another)
    const int64_t row_step = d.roff(1) - d.roff(0);
    for (int c = 0; c < vc; c += 2 * d.fc) {
      T* dp = d.base + d.roff(0) + it0.off + (int64_t)(c / d.fc) * it0.step_blk;
      for (int r = 0; r < vr; ++r, dp += row_step) {
        const T* s = src + r * w.st0 + c;
        if (nx) __builtin_prefetch((const char*)s + nx_off, 0, 2);
        std::memcpy((void*)dp, (const void*)s, 32);
        std::memcpy((void*)(dp + it0.step_blk), (const void*)(s + d.fc), 32);
      }
    }
    return;
  }
  for (int r = 0; r < vr; ++r) {
    const T* s = src + r * w.st0;
    if (r + ahead < vr)
      for (int64_t b = 0; b < row_bytes; b += 64) __builtin_prefetch((const char*)(s + ahead * w.st0) + b);
    if (nx)
      for (int64_t b = 0; b < (int64_t)sizeof(T) * vc; b += 64) __builtin_prefetch((const char*)s + nx_off + b, 0, 2);
    if (d.nd() && w.st1 == 1) {
      std::memcpy(d.rowp(r), s, sizeof(T) * (size_t)vc);
      continue;
    }
    if (nz32) {  // whole 32-byte fractal rows: one inlined copy each, panel to panel
      T* dp = d.base + d.roff(r) + it0.off;
      for (int c = 0; c < vc; c += d.fc, dp += it0.step_blk) std::memcpy((void*)dp, (const void*)(s + c), 32);
      continue;
    }
    copy_row(d.base + d.roff(r), d.colit(), s, strided_cols(w.st1), vc, same);
  }
}

// Tile-unit offsets of load_tile/store_tile: the two order axes scale by the tile's physical shape.
inline void tile_units(int64_t* offs, int a0, int a1, int64_t rows, int64_t cols) {
  if (a0 >= 0) offs[a0] *= rows;
  offs[a1] *= cols;
}

enum Relu { NoRelu = 0, NormalRelu = 1 };

// ---------------------------------------------------------------- the fixpipe (ops/fixpipe.py)
// A conversion out of Acc: ReLU, then the scale (one FP32 multiply), then one rounding into the output type.
struct Fix {
  int relu = NoRelu;
  int mode = 0;                         // 0 no scale, 1 one scale, 2 per channel (INT64 words in a Scaling tile)
  float scale = 0.f;                    // mode 1: the scale as the fixpipe holds it
  const Tile<int64_t>* words = nullptr;  // mode 2
};

// The scale an FP32 bit pattern carries, as the fixpipe holds it: sign, exponent, top 10 mantissa bits.
inline float fix_bits(uint64_t bits) {
  uint32_t b = (uint32_t)bits & 0xFFFFE000u;
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
inline float fix_value(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return fix_bits(b);
}
inline Fix fix_plain(int relu) { Fix f; f.relu = relu; return f; }
inline Fix fix_scalar(float scale, int relu) { Fix f; f.relu = relu; f.mode = 1; f.scale = scale; return f; }
inline Fix fix_channel(const Tile<int64_t>& words) { Fix f; f.mode = 2; f.words = &words; return f; }

// The scales of the first `cols` output columns of a per-channel conversion (ops/fixpipe.py scale_of).
inline void fix_columns(Core& C, const Fix& f, int cols, bool int8, float* out) {
  const Tile<int64_t>& t = *f.words;
  if (cols > t.vc)
    fail(C, "per-channel scale tile %s holds %d scales (valid columns) but the fixpipe converts %d columns", t.name,
         t.vc, cols);
  const int64_t* row = t.base + t.roff(0);
  ColIt it = t.colit();
  for (int c = 0; c < cols; ++c, it.next()) {
    const uint64_t w = (uint64_t)row[it.off];
    if (int8 && !(w & (1ull << 46)))
      fail(C, "per-channel scale word %d lacks the signed-INT8 flag (bit 46) an INT8 output needs; build the words "
           "with torch_npu.npu_trans_quant_param or set 1 << 46", c);
    if (int8 && (w & (0x1FFull << 37)))
      fail(C, "per-channel scale word %d has an offset (bits 37..45): asymmetric fixpipe requantization is not "
           "implemented", c);
    out[c] = fix_bits(w);
  }
}

// One accumulator value -> output storage.
template <class TO, class TA> inline TO fixpipe(TA v, int relu, bool scaled, float scale) {
  if constexpr (std::is_same<TA, int32_t>::value && std::is_same<TO, int32_t>::value) {
    return relu == NormalRelu && v < 0 ? 0 : v;  // INT32 -> INT32 (never scaled): exact
  } else {
    float x = (float)v;
    if (relu == NormalRelu && x < 0.f) x = 0.f;
    if (scaled) x = x * scale;
    if constexpr (is_float_t<TO> || is_low_t<TO>) {
      return st<TO>(x);
    } else {
      if (x != x) return (TO)0;
      x = std::nearbyint(x);
      const float lo = (float)std::numeric_limits<TO>::min(), hi = (float)std::numeric_limits<TO>::max();
      return (TO)(x < lo ? lo : (x > hi ? hi : x));
    }
  }
}

// Convert rows x cols of Acc tile `s` from (r0, c0); `row_out(r)` gives the writer of output row r, called
// with the row's values in column order.  Column scales from `f`.
template <class TO, class TA, class RowOut>
inline void fix_window(Core& C, const Tile<TA>& s, int r0, int c0, int rows, int cols, const Fix& f, RowOut row_out) {
  float chan[512];
  if (f.mode == 2) fix_columns(C, f, cols, std::is_same<TO, int8_t>::value, chan);
  for (int r = 0; r < rows; ++r) {
    const TA* row = s.base + s.roff(r0 + r);
    ColIt it = s.colit(c0);
    auto put = row_out(r);
    for (int c = 0; c < cols; ++c, it.next())
      put(fixpipe<TO, TA>(row[it.off], f.relu, f.mode != 0, f.mode == 2 ? chan[c] : f.scale));
  }
}

template <class TG, class T>
void store(Core& C, const Gm<TG>& g, const Tile<T>& s, const int64_t* offs, int a0, int a1, const char* what,
                  bool atomic_add, const Fix& fix = Fix()) {
  const int vr = s.vr, vc = s.vc;
  GmWin w = gm_window(C, g, offs, a0, a1, vr, vc, what);
  if (vr <= 0 || vc <= 0) return;
  TG* dst = g.p + w.base;
  if (atomic_add) pto_rt_atomic_lock(g.p);
  constexpr bool acc = std::is_same<T, float>::value || std::is_same<T, int32_t>::value;
  if constexpr (acc) {  // Acc: through the fixpipe
    if (!std::is_same<T, TG>::value || fix.mode != 0 || fix.relu != NoRelu) {
      fix_window<TG, T>(C, s, 0, 0, vr, vc, fix, [&](int r) {
        return [o = dst + r * w.st0, st1 = w.st1, atomic_add](TG v) mutable {
          *o = atomic_add ? st<TG>((ct<TG>)(ld<TG>(*o) + ld<TG>(v))) : v;
          o += st1;
        };
      });
      if (atomic_add) pto_rt_atomic_unlock(g.p);
      return;
    }
  }
  auto conv = [&](T v) -> TG {
    if constexpr (std::is_same<T, TG>::value) return v;
    else return st<TG>((ct<TG>)ld<T>(v));
  };
  for (int r = 0; r < vr; ++r) {
    TG* o = dst + r * w.st0;
    const T* row = s.base + s.roff(r);
    if (!atomic_add && std::is_same<T, TG>::value && s.nd() && w.st1 == 1) {
      std::memcpy((void*)o, (const void*)s.rowp(r), sizeof(T) * (size_t)vc);
      continue;
    }
    if (!atomic_add) {
      copy_row(o, strided_cols(w.st1), row, s.colit(), vc, conv);
      continue;
    }
    ColIt it = s.colit();
    for (int c = 0; c < vc; ++c, it.next()) {
      TG v = conv(row[it.off]);
      o[c * w.st1] = st<TG>((ct<TG>)(ld<TG>(o[c * w.st1]) + ld<TG>(v)));
    }
  }
  if (atomic_add) pto_rt_atomic_unlock(g.p);
}

// ---------------------------------------------------------------- tile -> tile
// NZ <-> ZN with the same fractal shape (the Mat -> Right relayout of 16-bit operands): a fractal of
// one is the transposed storage of the other's, so whole fractals are copied block by block.  Only
// for copies of whole fractals between disjoint tiles; false leaves the copy to the general path.
template <class TD, class TS>
inline bool copy_fractal_transposed(const Tile<TD>& d, int dr, int dc, const Tile<TS>& s, int sr, int sc, int rows,
                                    int cols) {
  if constexpr (!std::is_same<TD, TS>::value) return false;
  else {
    const bool pair = (d.lay == NZ && s.lay == ZN) || (d.lay == ZN && s.lay == NZ);
    const int fr = s.fr, fc = s.fc;
    if (!pair || d.fr != fr || d.fc != fc || rows % fr || cols % fc || overlaps(d, s)) return false;
    const int R0 = d.r0 + dr, C0 = d.c0 + dc, S0 = s.r0 + sr, T0 = s.c0 + sc;
    if (R0 % fr || C0 % fc || S0 % fr || T0 % fc) return false;
    // element (i, j) of a fractal: i * fc + j in NZ (row-major), j * fr + i in ZN (column-major)
    const int64_t di = d.lay == NZ ? fc : 1, dj = d.lay == NZ ? 1 : fr;
    const int64_t si = s.lay == NZ ? fc : 1, sj = s.lay == NZ ? 1 : fr;
    using U = typename Bits<sizeof(TD)>::type;  // moved as bits: g++ copies _Float16 through xmm inserts
    for (int bi = 0; bi < rows; bi += fr)
      for (int bj = 0; bj < cols; bj += fc) {
        U* db = (U*)(d.base + d.rpart(R0 + bi) + d.cpart(C0 + bj));
        const U* sb = (const U*)(s.base + s.rpart(S0 + bi) + s.cpart(T0 + bj));
        if constexpr (sizeof(U) == 2) {
          if (fr == 16 && fc == 16) {  // NZ <-> ZN of a 16 x 16 fractal: a plain transpose
            transpose16x16_u16(db, sb);
            continue;
          }
        }
        for (int i = 0; i < fr; ++i)
          for (int j = 0; j < fc; ++j) db[i * di + j * dj] = sb[i * si + j * sj];
      }
    return true;
  }
}

// NZ <-> ZN of 4-byte elements (the Mat -> Right relayout of fp32/int32 operands): NZ stores 8-column
// panels row-major (16 x 8 fractals), ZN 8-row panels column-major (8 x 16 fractals), so every 8 x 8
// block aligned to 8 rows and 8 columns is 64 contiguous elements in both: row-major in one,
// column-major in the other -- a plain 8 x 8 transpose per block.  Only for copies of whole blocks
// between disjoint tiles; false leaves the copy to the general path.
template <class TD, class TS>
inline bool copy_nz_zn_b32(const Tile<TD>& d, int dr, int dc, const Tile<TS>& s, int sr, int sc, int rows, int cols) {
  if constexpr (!std::is_same<TD, TS>::value || sizeof(TD) != 4) return false;
  else {
    const bool pair = (d.lay == NZ && s.lay == ZN) || (d.lay == ZN && s.lay == NZ);
    if (!pair || rows % 8 || cols % 8 || overlaps(d, s)) return false;
    if (s.fr * s.fc != 128 || d.fr * d.fc != 128 || (s.lay == NZ ? s.fc : s.fr) != 8 || (d.lay == NZ ? d.fc : d.fr) != 8)
      return false;
    const int R0 = d.r0 + dr, C0 = d.c0 + dc, S0 = s.r0 + sr, T0 = s.c0 + sc;
    if (R0 % 8 || C0 % 8 || S0 % 8 || T0 % 8) return false;
    for (int bi = 0; bi < rows; bi += 8)
      for (int bj = 0; bj < cols; bj += 8) {
        uint32_t* __restrict db = (uint32_t*)(void*)(d.base + d.rpart(R0 + bi) + d.cpart(C0 + bj));
        const uint32_t* __restrict sb = (const uint32_t*)(const void*)(s.base + s.rpart(S0 + bi) + s.cpart(T0 + bj));
        transpose8x8_b32(db, 8, sb, 8);
      }
    return true;
  }
}

// dst[dr + i, dc + j] = conv(src[sr + i, sc + j]) (or src[sr + j, sc + i] when transposed).
template <class TD, class TS, class F>
inline void copy_block(const Tile<TD>& d, int dr, int dc, const Tile<TS>& s, int sr, int sc, int rows, int cols,
                       bool transposed, F conv) {
  if (rows <= 0 || cols <= 0) return;
  if (!transposed && d.nd() && s.nd() && std::is_same<TD, TS>::value) {
    for (int r = 0; r < rows; ++r)
      std::memmove((void*)(d.rowp(dr + r) + dc), (const void*)(s.rowp(sr + r) + sc), sizeof(TD) * (size_t)cols);
    return;
  }
  if (!transposed && std::is_same<TD, TS>::value && copy_fractal_transposed(d, dr, dc, s, sr, sc, rows, cols)) return;
  if (!transposed && std::is_same<TD, TS>::value && copy_nz_zn_b32(d, dr, dc, s, sr, sc, rows, cols)) return;
  // fractal / transposed paths; the snapshot keeps overlapping copies exact
  Snapshot<TS> snap(sub_any(s, sr, sc, transposed ? cols : rows, transposed ? rows : cols),
                    transposed ? cols : rows, transposed ? rows : cols, overlaps(d, s));
  const Tile<TS>& v = snap.view;
  if (!transposed) {
    for (int r = 0; r < rows; ++r)
      copy_row(d.base + d.roff(dr + r), d.colit(dc), v.base + v.roff(r), v.colit(), cols, conv);
    return;
  }
  for (int r = 0; r < rows; ++r) {
    TD* row = d.base + d.roff(dr + r);
    ColIt it = d.colit();
    for (int k = 0; k < dc; ++k) it.next();
    for (int c = 0; c < cols; ++c, it.next()) row[it.off] = conv(transposed ? v.at(c, r) : v.at(r, c));
  }
}

template <class T> inline Tile<T> sub_any(const Tile<T>& t, int r, int c, int rows, int cols) {
  Tile<T> x = t;
  x.r0 = t.r0 + r;
  x.c0 = t.c0 + c;
  x.rows = rows;
  x.cols = cols;
  return x;
}

template <class TD, class TS> struct PlainConv {
  inline TD operator()(TS v) const { return st<TD>((ct<TD>)ld<TS>(v)); }
};
template <class TS> struct PlainConv<TS, TS> : Same {};
template <class TD, class TS> inline TD plain_conv(TS v) { return PlainConv<TD, TS>()(v); }

// Whole-declaration copy: same dtype, layout and physical shape, both views the full parent, the
// window the full shape and no fractal padding -> the bytes are identical, one memmove.
template <class TD, class TS> inline bool same_bytes(const Tile<TD>& d, const Tile<TS>& s, int rows, int cols) {
  if constexpr (!std::is_same<TD, TS>::value) return false;
  else
    return d.lay == s.lay && d.prows == s.prows && d.pcols == s.pcols && d.fr == s.fr && d.fc == s.fc &&
           d.r0 == 0 && d.c0 == 0 && s.r0 == 0 && s.c0 == 0 && rows == d.prows && cols == d.pcols &&
           (d.lay == ND || d.lay == DN || (d.prows % d.fr == 0 && d.pcols % d.fc == 0));
}

// pl.move between tiles of one core (Mat->Left/Right/Bias, Vec->Vec) or into a peer (Vec->Mat).
template <class TD, class TS>
// nz_frame: a square ZN source moved into a non-ZN tile of its shape; a source valid shape that is the
// transpose of the destination's names the destination's window (ops/movement.py nz_frame_valid).
inline void move_to(Core& C, const Tile<TD>& d, const Tile<TS>& s, bool has_offset, int64_t r0, int64_t c0,
                    bool nz_frame = false) {
  if (has_offset) {
    const int rows = d.vr, cols = d.vc;
    if (r0 < 0 || c0 < 0 || r0 + rows > s.rows || c0 + cols > s.cols)
      fail(C, "move window [%lld:%lld, %lld:%lld] leaves source %s of shape [%d, %d]", (long long)r0,
           (long long)(r0 + rows), (long long)c0, (long long)(c0 + cols), s.name, s.rows, s.cols);
    copy_block(d, 0, 0, s, (int)r0, (int)c0, rows, cols, false, PlainConv<TD, TS>());
    return;
  }
  const bool transposed = !(s.rows == d.rows && s.cols == d.cols);
  if (transposed) copy_block(d, 0, 0, s, 0, 0, s.vc, s.vr, true, PlainConv<TD, TS>());
  else if (nz_frame && s.vr == d.vc && s.vc == d.vr && s.vr != s.vc)
    copy_block(d, 0, 0, s, 0, 0, d.vr, d.vc, false, PlainConv<TD, TS>());
  else if (same_bytes(d, s, s.vr, s.vc))
    std::memmove((void*)d.base, (const void*)s.base, sizeof(TD) * (size_t)d.prows * (size_t)d.pcols);
  else copy_block(d, 0, 0, s, 0, 0, s.vr, s.vc, false, PlainConv<TD, TS>());
}

// pl.insert / inserting move: dst[r0 + i, c0 + j] = src[i, j] over src's valid window.  ZN dst <- NZ src
// (transposed): [r0, c0] is in the NZ frame of dst (its [cols, rows] view), so dst[c0 + j, r0 + i] = src[i, j].
template <class TD, class TS>
inline void insert_into(Core& C, const Tile<TD>& d, const Tile<TS>& s, int64_t r0, int64_t c0, bool transposed) {
  const int frame_rows = transposed ? d.cols : d.rows, frame_cols = transposed ? d.rows : d.cols;
  if (r0 < 0 || c0 < 0 || r0 + s.vr > frame_rows || c0 + s.vc > frame_cols)
    fail(C, "insert at [%lld, %lld] of a %dx%d block leaves %s of shape [%d, %d]%s", (long long)r0, (long long)c0,
         s.vr, s.vc, d.name, frame_rows, frame_cols, transposed ? " (the NZ view of a ZN tile)" : "");
  if (transposed) copy_block(d, (int)c0, (int)r0, s, 0, 0, s.vc, s.vr, true, PlainConv<TD, TS>());
  else copy_block(d, (int)r0, (int)c0, s, 0, 0, s.vr, s.vc, false, PlainConv<TD, TS>());
}

enum AccToVec { SingleModeVec0 = 0, SingleModeVec1, DualModeSplitM, DualModeSplitN };

// Acc -> Vec through the fixpipe into the block's AIV(s); `dst_on(core)` resolves dst on a vector core.
// Without an offset the window is the Acc's valid window; with one (has_offset) it is
// s[om : om + wr, ok : ok + wc], (wr, wc) the valid shape the AIC holds for dst (ops/movement.py _acc_window),
// which must lie in the Acc's declared shape.  The window is split between the AIVs by `mode`.
template <class TD, class TA, class DstOn>
inline void move_acc_to_vec(Core& C, DstOn dst_on, const Tile<TA>& s, int mode, const Fix& fix,
                            bool has_offset = false, int64_t om = 0, int64_t ok = 0, int wr = 0, int wc = 0,
                            const char* dst_name = "") {
  if (has_offset && (om < 0 || ok < 0 || om + wr > s.rows || ok + wc > s.cols))
    fail(C, "move window [%lld:%lld, %lld:%lld] (offset + the valid shape of %s on the AIC) leaves accumulator %s "
         "of shape [%d, %d]", (long long)om, (long long)(om + wr), (long long)ok, (long long)(ok + wc), dst_name,
         s.name, s.rows, s.cols);
  const int r0 = (int)om, c0 = (int)ok, rows = has_offset ? wr : s.vr, cols = has_offset ? wc : s.vc;
  struct Part { int sub, r0, c0, rows, cols; } parts[2];
  int np = 0;
  if (mode == SingleModeVec0) parts[np++] = {0, r0, c0, rows, cols};
  else if (mode == SingleModeVec1) parts[np++] = {1, r0, c0, rows, cols};
  else if (mode == DualModeSplitM) {
    int h = (rows + 1) / 2;
    if (rows == 1) parts[np++] = {0, r0, c0, rows, cols};
    else { parts[np++] = {0, r0, c0, h, cols}; parts[np++] = {1, r0 + h, c0, rows - h, cols}; }
  } else {
    int h = ((cols + 31) / 32) * 32 / 2;
    if (cols <= 16) parts[np++] = {0, r0, c0, rows, cols};
    else {
      parts[np++] = {0, r0, c0, rows, h < cols ? h : cols};
      parts[np++] = {1, r0, c0 + h, rows, cols - h > 0 ? cols - h : 0};
    }
  }
  if (!C.blk->vec(0)) fail(C, "Acc -> Vec needs the block's vector cores; this kernel has none (use sections for a mix kernel)");
  for (int i = 0; i < np; ++i) {
    Core* V = C.blk->vec(parts[i].sub);
    if (!V) fail(C, "acc_to_vec_mode targets AIV%d, which this block does not have", parts[i].sub);
    Tile<TD> d = dst_on(*V);
    if (parts[i].rows > d.rows || parts[i].cols > d.cols)
      fail(C, "Acc -> Vec: a [%d, %d] share does not fit tile %s [%d, %d]", parts[i].rows, parts[i].cols, d.name, d.rows, d.cols);
    fix_window<TD, TA>(C, s, parts[i].r0, parts[i].c0, parts[i].rows, parts[i].cols, fix, [&](int r) {
      return [row = d.base + d.roff(r), it = d.colit()](TD v) mutable {
        row[it.off] = v;
        it.next();
      };
    });
  }
}

// ---------------------------------------------------------------- matmul
// Float matmuls run in fp32 (pto_rt_sgemm in the runtime library): lhs is read as fp32 rows (fp32
// ND tiles in place, other layouts and dtypes converted into scratch rows), rhs is packed into
// 16-column fp32 panels; the accumulator tile (holding the base) is updated in place.
constexpr int kNR = 16;  // column panel width of pto_rt_sgemm

// Per-thread scratch for converted operands (grown on demand, never shrunk).
inline float* mm_scratch(size_t floats) {
  static thread_local float* buf = nullptr;
  static thread_local size_t cap = 0;
  if (floats > cap) {
    std::free(buf);
    cap = floats + 1024;
    buf = (float*)std::aligned_alloc(64, ((sizeof(float) * cap + 63) / 64) * 64);
    if (!buf) { cap = 0; throw std::bad_alloc(); }
  }
  return buf;
}

// d[i] = s[i] as fp32 for n contiguous elements (F16C for fp16, a shift for bf16).
template <class T> inline void to_f32(float* d, const T* s, int n) {
  if constexpr (std::is_same<T, float>::value) std::memcpy(d, s, sizeof(float) * (size_t)n);
  else if constexpr (std::is_same<T, half>::value) h2f(s, d, n);
  else for (int i = 0; i < n; ++i) d[i] = (float)ld<T>(s[i]);
}

// out[c] = lhs(r, c) as fp32, c < k: the tile's row walked run by run.
template <class T> inline void lhs_row_f32(const Tile<T>& a, int r, int k, float* out) {
  const T* row = a.base + a.roff(r);
  ColIt it = a.colit();
  for (int c = 0; c < k;) {
    int len = it.run() < k - c ? it.run() : k - c;
    if (it.step_in == 1 && std::is_same<T, float>::value && len == 8)
      std::memcpy((void*)(out + c), (const void*)(row + it.off), 32);  // an NZ fractal row, inlined
    else if (it.step_in == 1) to_f32(out + c, row + it.off, len);
    else for (int i = 0; i < len; ++i) out[c + i] = (float)ld<T>(row[it.off + (int64_t)i * it.step_in]);
    it.advance(len);
    c += len;
  }
}

// bp[p][q][j] = rhs(q, p*kNR + j) for column panels p (columns past n are zero).
template <class T> inline void pack_rhs(const Tile<T>& b, int k, int n, float* bp) {
  const int np = (n + kNR - 1) / kNR;
  // ZN with 16-column fractals (the Right tile's layout): fractal (rb, p) holds column j of panel p
  // as fr contiguous rows, so each fractal column becomes a strided column of the panel.
  if (b.lay == ZN && b.fc == kNR && b.pcols % kNR == 0 && b.r0 % b.fr == 0 && b.c0 % kNR == 0) {
    const int64_t B = (int64_t)b.fr * b.fc;
    float colv[64];
    for (int p = 0; p < np; ++p) {
      const int w = n - p * kNR < kNR ? n - p * kNR : kNR;
      float* panel = bp + (int64_t)p * k * kNR;
      for (int q0 = 0; q0 < k; q0 += b.fr) {
        const int h = k - q0 < b.fr ? k - q0 : b.fr;
        const T* blk = b.base + ((int64_t)((b.r0 + q0) / b.fr) * b.nblk_c() + (b.c0 / kNR + p)) * B;
        float* out = panel + (int64_t)q0 * kNR;
        if constexpr (sizeof(T) == 2) {
          if (b.fr == 16 && h == 16 && w == kNR) {  // a whole 16-bit fractal: transpose, then convert rows
            alignas(16) uint16_t rows[256];
            transpose16x16_u16(rows, (const uint16_t*)(const void*)blk);
            for (int i = 0; i < 16; ++i) to_f32(out + i * kNR, (const T*)(const void*)(rows + i * 16), 16);
            continue;
          }
        }
        if constexpr (std::is_same<T, float>::value) {
          if (w == kNR && h == 8 && b.fr == 8) {  // a whole fp32 fractal (8 x 16, column-major): two transposes
            transpose8x8_b32((uint32_t*)out, kNR, (const uint32_t*)blk, 8);
            transpose8x8_b32((uint32_t*)out + 8, kNR, (const uint32_t*)blk + 64, 8);
            continue;
          }
        }
        for (int j = 0; j < w; ++j) {
          to_f32(colv, blk + (int64_t)j * b.fr, h);
          for (int i = 0; i < h; ++i) out[i * kNR + j] = colv[i];
        }
        for (int j = w; j < kNR; ++j)
          for (int i = 0; i < h; ++i) out[i * kNR + j] = 0.f;
      }
    }
    return;
  }
  // ZN with narrower fractals (fp32: 16 x 8): a panel spans kNR / fc fractal columns, each column
  // fr contiguous rows -- read fractal by fractal instead of element runs of one.
  if (b.lay == ZN && b.fc < kNR && kNR % b.fc == 0 && b.pcols % kNR == 0 && b.r0 % b.fr == 0 && b.c0 % kNR == 0) {
    const int64_t B = (int64_t)b.fr * b.fc;
    const int sub = kNR / b.fc;
    for (int p = 0; p < np; ++p) {
      const int w = n - p * kNR < kNR ? n - p * kNR : kNR;
      float* panel = bp + (int64_t)p * k * kNR;
      for (int q0 = 0; q0 < k; q0 += b.fr) {
        const int h = k - q0 < b.fr ? k - q0 : b.fr;
        float* out = panel + (int64_t)q0 * kNR;
        for (int s = 0; s < sub; ++s) {
          const T* blk = b.base + ((int64_t)((b.r0 + q0) / b.fr) * b.nblk_c() + (b.c0 / b.fc + p * sub + s)) * B;
          for (int j = 0; j < b.fc; ++j) {
            const int col = s * b.fc + j;
            float* o = out + col;
            if (col < w) {
              const T* src = blk + (int64_t)j * b.fr;
              for (int i = 0; i < h; ++i) o[(int64_t)i * kNR] = (float)ld<T>(src[i]);
            } else {
              for (int i = 0; i < h; ++i) o[(int64_t)i * kNR] = 0.f;
            }
          }
        }
      }
    }
    return;
  }
  auto cv = [](T v) { return (float)ld<T>(v); };
  ColIt its[256];  // column iterator at the start of each panel (n <= 4095), the same for every row
  for (int p = 0; p < np; ++p) its[p] = b.colit(p * kNR);
  for (int q = 0; q < k; ++q) {
    const T* row = b.base + b.roff(q);
    for (int p = 0; p < np; ++p) {
      float* out = bp + ((int64_t)p * k + q) * kNR;
      const int w = n - p * kNR < kNR ? n - p * kNR : kNR;
      copy_row(out, strided_cols(1), row, its[p], w, cv);
      for (int j = w; j < kNR; ++j) out[j] = 0.f;
    }
  }
}

template <class TI, class TJ>
inline void matmul_f32(Core& C, const Tile<float>& d, const Tile<TI>& a, const Tile<TJ>& b, const Tile<float>* acc,
                       const Tile<float>* bias, int m, int k, int n) {
  Same same;
  // the base (accumulator or bias row) goes into dst first; the product, a chain from 0, is added to it
  bool add = false;
  if (acc) {
    if (!same_map(d, *acc)) copy_block(d, 0, 0, *acc, 0, 0, m, n, false, Same());
    add = true;
  } else if (bias) {
    for (int r = 0; r < m; ++r) copy_row(d.base + d.roff(r), d.colit(), bias->base + bias->roff(0), bias->colit(), n, same);
    add = true;
  }
  const int np = (n + kNR - 1) / kNR;
  // lhs rows: an fp32 ND tile is read where it is, anything else as converted rows
  const float* arows = nullptr;
  int64_t lda = k;
  if constexpr (std::is_same<TI, float>::value)
    if (a.nd()) {
      arows = a.rowp(0);
      lda = a.pcols;
    }
  const size_t na = arows ? 0 : (size_t)m * k, nb = (size_t)np * kNR * k;
  float* ap = mm_scratch(na + nb + 2 * ((size_t)m + (size_t)np) + 16);
  float* bp = ap + na;
  int64_t* rowoff = (int64_t*)(void*)(((uintptr_t)(bp + nb) + 7) & ~(uintptr_t)7);
  int64_t* coloff = rowoff + m;
  if (!arows) {
    for (int r = 0; r < m; ++r) lhs_row_f32(a, r, k, ap + (int64_t)r * k);
    arows = ap;
  }
  pack_rhs(b, k, n, bp);
  // in place when every 16-column panel of every dst row is contiguous (ND, or NZ with 16-wide fractals)
  bool inplace = true;
  for (int p = 0; p < np && inplace; ++p) {
    const ColIt it = d.colit(p * kNR);
    const int w = n - p * kNR < kNR ? n - p * kNR : kNR;
    inplace = it.step_in == 1 && it.run() >= w;
    coloff[p] = it.off;
  }
  if (inplace) {
    for (int r = 0; r < m; ++r) rowoff[r] = d.roff(r);
    pto_rt_sgemm(m, n, k, arows, lda, bp, d.base, rowoff, coloff, add);
    return;
  }
  // rare layouts: a row-major scratch C
  float* c = (float*)std::malloc(sizeof(float) * (size_t)m * (size_t)n);
  if (!c) fail(C, "out of memory in matmul");
  for (int r = 0; r < m; ++r) rowoff[r] = (int64_t)r * n;
  for (int p = 0; p < np; ++p) coloff[p] = (int64_t)p * kNR;
  if (add)
    for (int r = 0; r < m; ++r) copy_row(c + (int64_t)r * n, strided_cols(1), d.base + d.roff(r), d.colit(), n, same);
  pto_rt_sgemm(m, n, k, arows, lda, bp, c, rowoff, coloff, add);
  for (int r = 0; r < m; ++r) copy_row(d.base + d.roff(r), d.colit(), c + (int64_t)r * n, strided_cols(1), n, same);
  std::free(c);
}

// dst[M,N] = lhs @ rhs (+ bias row | + acc); M/K/N from the valid windows.  Float operands: each
// product element is one fp32 FMA chain over q = 0..K-1 from 0, then the bias/acc value is added with one
// rounding, the interpreter's definition too (ops/fp32math.py matmul32; docs/performance.md); int8: exact
// int32, wrapping.
// The operands' types may differ (FP8 E4M3 x E5M2).
template <class TA, class TI, class TJ = TI>
inline void matmul(Core& C, const Tile<TA>& d, const Tile<TI>& a, const Tile<TJ>& b, const Tile<TA>* acc,
                   const Tile<float>* bias) {
  const int m = a.vr, k = a.vc, k2 = b.vr, n = b.vc;
  if (k2 != k) fail(C, "matmul: lhs valid K=%d differs from rhs valid K=%d", k, k2);
  if (m < 1 || m > 4095) fail(C, "matmul: M=%d is outside [1, 4095]", m);
  if (k < 1 || k > 4095) fail(C, "matmul: K=%d is outside [1, 4095]", k);
  if (n < 1 || n > 4095) fail(C, "matmul: N=%d is outside [1, 4095]", n);
  if (m > d.rows || n > d.cols) fail(C, "matmul: the %dx%d product does not fit %s [%d, %d]", m, n, d.name, d.rows, d.cols);
  if constexpr (std::is_same<TA, int32_t>::value) {
    int32_t* x = (int32_t*)std::malloc(sizeof(int32_t) * ((size_t)m * k + (size_t)k * n + (size_t)m * n));
    int32_t *y = x + (int64_t)m * k, *p = y + (int64_t)k * n;
    for (int r = 0; r < m; ++r) for (int c = 0; c < k; ++c) x[(int64_t)r * k + c] = a.at(r, c);
    for (int r = 0; r < k; ++r) for (int c = 0; c < n; ++c) y[(int64_t)r * n + c] = b.at(r, c);
    for (int r = 0; r < m; ++r) {
      int32_t* pr = p + (int64_t)r * n;
      for (int c = 0; c < n; ++c) pr[c] = acc ? acc->at(r, c) : 0;
      for (int q = 0; q < k; ++q) {
        const uint32_t av = (uint32_t)x[(int64_t)r * k + q];
        const int32_t* yr = y + (int64_t)q * n;
        for (int c = 0; c < n; ++c) pr[c] = (int32_t)((uint32_t)pr[c] + av * (uint32_t)yr[c]);
      }
    }
    for (int r = 0; r < m; ++r) for (int c = 0; c < n; ++c) d.at(r, c) = p[(int64_t)r * n + c];
    std::free(x);
  } else {
    matmul_f32(C, d, a, b, acc, bias, m, k, n);
  }
}

// ---------------------------------------------------------------- scalar access, valid shapes
template <class T> inline void tile_pos(Core& C, const Tile<T>& t, int64_t lin, int& r, int& c) {
  if (lin < 0 || lin >= (int64_t)t.rows * t.cols)
    fail(C, "element index %lld is outside tile %s of shape [%d, %d]", (long long)lin, t.name, t.rows, t.cols);
  r = (int)(lin / t.cols);
  c = (int)(lin % t.cols);
}
template <class T> inline int64_t tile_lin2(Core& C, const Tile<T>& t, int64_t i, int64_t j) {
  if (i < 0 || i >= t.rows || j < 0 || j >= t.cols)
    fail(C, "element index [%lld, %lld] is outside tile %s of shape [%d, %d]", (long long)i, (long long)j, t.name,
         t.rows, t.cols);
  return i * t.cols + j;
}
template <class T> inline ct<T> getval(Core& C, const Tile<T>& t, int64_t lin) {
  int r, c;
  tile_pos(C, t, lin, r, c);
  return ld<T>(t.at(r, c));
}
template <class T, class V> inline void setval(Core& C, const Tile<T>& t, int64_t lin, V v) {
  int r, c;
  tile_pos(C, t, lin, r, c);
  if constexpr (std::is_floating_point<V>::value) t.at(r, c) = from_double<T>((double)v);
  else t.at(r, c) = from_int<T>((int64_t)v);
}
template <class T> inline int64_t gm_elem(Core& C, const Gm<T>& g, const int64_t* idx, int n) {
  char sh[160];
  int64_t off = 0, total = 1;
  for (int i = 0; i < g.nd; ++i) total *= g.shape[i];
  if (n == 1 && g.nd != 1) {  // linear index
    int64_t lin = idx[0];
    if (lin < 0 || lin >= total) {
      shape_str(sh, sizeof sh, g.nd, g.shape);
      fail(C, "element index %lld is outside tensor '%s' of shape %s", (long long)lin, g.name, sh);
    }
    for (int i = g.nd - 1; i >= 0; --i) { off += (lin % g.shape[i]) * g.stride[i]; lin /= g.shape[i]; }
    return off;
  }
  if (n != g.nd) fail(C, "%d indices for tensor '%s' of rank %d", n, g.name, g.nd);
  for (int i = 0; i < n; ++i) {
    if (idx[i] < 0 || idx[i] >= g.shape[i]) {
      shape_str(sh, sizeof sh, g.nd, g.shape);
      fail(C, "element index is outside tensor '%s' of shape %s", g.name, sh);
    }
    off += idx[i] * g.stride[i];
  }
  return off;
}
template <class T> inline ct<T> getval(Core& C, const Gm<T>& g, const int64_t* idx, int n) {
  return ld<T>(g.p[gm_elem(C, g, idx, n)]);
}
template <class T, class V> inline void setval(Core& C, const Gm<T>& g, const int64_t* idx, int n, V v) {
  T* p = g.p + gm_elem(C, g, idx, n);
  if constexpr (std::is_floating_point<V>::value) *p = from_double<T>((double)v);
  else *p = from_int<T>((int64_t)v);
}

// On the AIC a Vec tile names the window of an Acc -> Vec move (both AIVs' shares of a dual mode), so there
// it may be up to twice the tile on each axis (ops/scalar.py SetValidShape.run).
inline void set_valid(Core& C, const TileDecl* decls, int64_t i, int64_t rows, int64_t cols) {
  const TileDecl& d = decls[i];
  const int k = C.kind == 1 && d.space == Vec ? 2 : 1;
  if (!(0 <= rows && rows <= k * d.rows && 0 <= cols && cols <= k * d.cols))  // an empty window is allowed
    fail(C, "valid shape [%lld, %lld] is outside tile %s of shape [%d, %d]%s", (long long)rows, (long long)cols,
         d.name, d.rows, d.cols, k == 2 ? " (on the AIC a Vec tile's window may be up to twice its shape)" : "");
  C.valid[2 * i] = (int32_t)rows;
  C.valid[2 * i + 1] = (int32_t)cols;
}

}  // namespace pto

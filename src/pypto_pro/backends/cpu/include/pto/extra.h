// PyPTO CPU backend: the less common tile ops (emitted by backends/cpu/emit_extra.py).
//
// fillpad, transpose, fill_index, part ops, the fused *_cast ops (ops/vector.py) and the kernel log
// used by printf / pto_assert / dump_data (ops/scalar.py).  The log is a per-core byte buffer of
// records kept by the runtime; the launcher formats them with the interpreter's Python code after
// the call, so the output is identical (program order per core, cores in launch order).
#pragma once
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "cast.h"
#include "memory.h"
#include "tile.h"
#include "vector.h"

extern "C" {
// Append n bytes to the log of the executing core (runtime library).
void pto_rt_log(pto::Core* core, const void* data, int64_t n);
}

namespace pto {

// ---------------------------------------------------------------- fillpad
// Pad value of pl.TilePad (1 zero, 2 max, 3 min): dtype max/min, +-inf for floats (vector.py pad_value).
template <class T> inline T pad_value(int pad) {
  if (pad == 1) return st<T>((ct<T>)0);
  if constexpr (is_float_t<T>) return st<T>(pad == 2 ? INFINITY : -INFINITY);
  else return pad == 2 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
}

// dst = src inside src's valid window, the pad value elsewhere, over dst's whole physical shape.
// The caller makes a whole-tile dst fully valid afterwards (set_valid).
template <class T> inline void fillpad(Core& C, const Tile<T>& d, const Tile<T>& s, int pad) {
  const int vr = s.vr, vc = s.vc;
  if (vr > d.rows || vc > d.cols)
    fail(C, "the %dx%d valid window of %s does not fit %s [%d, %d]", vr, vc, s.name, d.name, d.rows, d.cols);
  const T pv = pad_value<T>(pad);
  Snapshot<T> ss(s, vr, vc, overlaps(d, s) && !same_map(d, s));
  const Tile<T>& sv = ss.view;
  for (int r = 0; r < d.rows; ++r)
    for (int c = 0; c < d.cols; ++c) d.at(r, c) = (r < vr && c < vc) ? sv.at(r, c) : pv;
}

// ---------------------------------------------------------------- transpose
// dst[c, r] = src[r, c] over src's valid window (dst's valid window is unchanged).
template <class T> inline void transpose(Core& C, const Tile<T>& d, const Tile<T>& s) {
  const int rows = s.vr, cols = s.vc;
  if (cols > d.rows || rows > d.cols)
    fail(C, "the transposed %dx%d window of %s does not fit %s [%d, %d]", cols, rows, s.name, d.name, d.rows, d.cols);
  if (rows <= 0 || cols <= 0) return;
  Snapshot<T> ss(s, rows, cols, overlaps(d, s));
  const Tile<T>& sv = ss.view;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) d.at(c, r) = sv.at(r, c);
}

// ---------------------------------------------------------------- gather / gathermask (ops/gather.py)
// gather: d[r, c] = src's physical element idx[r, c] + offset in row-major order; an index outside
// src fails (the hardware leaves it undefined).  Like every op here, all operands are read before dst
// is written: one that overlaps dst at another address is copied first.
template <class T, class I>
inline void gather(Core& C, const Tile<T>& d, const Tile<T>& src, const Tile<I>& index, int64_t offset) {
  int vr, vc;
  window(C, d, vr, vc, index);
  const Snapshot<T> ss(src, src.rows, src.cols, overlaps(d, src));
  const Snapshot<I> si(index, vr, vc, overlaps(d, index));
  const Tile<T>& s = ss.view;
  const Tile<I>& idx = si.view;
  const int64_t n = (int64_t)s.rows * s.cols;
  for (int r = 0; r < vr; ++r)
    for (int c = 0; c < vc; ++c) {
      const int64_t k = (int64_t)idx.at(r, c) + offset;
      if (k < 0 || k >= n)
        fail(C, "pl.gather: index %lld at (%d, %d) is outside src's %dx%d elements", (long long)k, r, c, s.rows,
             s.cols);
      d.at(r, c) = s.at((int)(k / s.cols), (int)(k % s.cols));
    }
}
// scatter: d's physical element idx[r, c] (row-major) = s[r, c] over s's valid window, in row-major
// order (a repeated index keeps the last write); other elements keep their values.
template <class T, class I> inline void scatter(Core& C, const Tile<T>& d, const Tile<T>& src, const Tile<I>& index) {
  int vr, vc;
  window(C, src, vr, vc, index);
  const Snapshot<T> ss(src, vr, vc, overlaps(d, src));
  const Snapshot<I> si(index, vr, vc, overlaps(d, index));
  const Tile<T>& s = ss.view;
  const Tile<I>& idx = si.view;
  const int64_t n = (int64_t)d.rows * d.cols;
  for (int r = 0; r < vr; ++r)
    for (int c = 0; c < vc; ++c) {
      const int64_t k = (int64_t)idx.at(r, c);
      if (k < 0 || k >= n)
        fail(C, "pl.scatter: index %lld at (%d, %d) is outside dst's %dx%d elements", (long long)k, r, c, d.rows,
             d.cols);
    }
  for (int r = 0; r < vr; ++r)
    for (int c = 0; c < vc; ++c) {
      const int64_t k = (int64_t)idx.at(r, c);
      d.at((int)(k / d.cols), (int)(k % d.cols)) = s.at(r, c);
    }
}
// gathermask: d[r, j] = s[r, j * group + first] over d's valid window.
template <class T> inline void gathermask(Core& C, const Tile<T>& d, const Tile<T>& src, int group, int first) {
  const int vr = d.vr, vc = d.vc;
  const int need = vc > 0 ? (vc - 1) * group + first + 1 : 0;
  if (vr > src.rows || need > src.cols)
    fail(C, "pl.gathermask(pattern_mode): dst's valid window %dx%d needs %dx%d of src, which is %dx%d", vr, vc, vr,
         need, src.rows, src.cols);
  const Snapshot<T> ss(src, vr, need, vr > 0 && need > 0 && overlaps(d, src));
  const Tile<T>& s = ss.view;
  for (int r = 0; r < vr; ++r)
    for (int j = 0; j < vc; ++j) d.at(r, j) = s.at(r, j * group + first);
}
// gatherb: block c (32 bytes) of d's row r = the 32 bytes of s (physical elements, row-major) at byte
// offset off[r, c]; a block reaching past s's last byte fails.  Reads everything before writing.
template <class T, class I> inline void gatherb(Core& C, const Tile<T>& d, const Tile<T>& s, const Tile<I>& off,
                                                const char* dtype) {
  constexpr int es = (int)sizeof(T), per = 32 / es;
  const int vr = d.vr, vc = d.vc;
  if (vr <= 0 || vc <= 0) return;
  if (vc % per)
    fail(C, "pl.gatherb: out's valid width %d is not a whole number of 32-byte blocks (%d %s elements each)", vc, per,
         dtype);
  const int nb = vc / per;
  if (vr > off.rows || nb > off.cols)
    fail(C, "pl.gatherb: offsets (%dx%d) is smaller than the %dx%d blocks of out's valid window", off.rows, off.cols,
         vr, nb);
  const int64_t total = (int64_t)s.rows * s.cols * es;
  for (int r = 0; r < vr; ++r)
    for (int c = 0; c < nb; ++c) {
      const int64_t o = (int64_t)off.at(r, c);
      if (o + 32 > total)
        fail(C, "pl.gatherb: the 32-byte block at byte offset %lld (offsets[%d, %d]) reaches past src's %lld bytes",
             (long long)o, r, c, (long long)total);
    }
  std::vector<unsigned char> out((size_t)vr * vc * es);
  for (int r = 0; r < vr; ++r)
    for (int c = 0; c < nb; ++c) {
      const int64_t o = (int64_t)off.at(r, c);
      unsigned char* q = out.data() + ((size_t)r * vc + (size_t)c * per) * es;
      for (int i = 0; i < 32; ++i) {
        const int64_t b = o + i, k = b / es;
        q[i] = ((const unsigned char*)&s.at((int)(k / s.cols), (int)(k % s.cols)))[b % es];
      }
    }
  for (int r = 0; r < vr; ++r)
    for (int c = 0; c < vc; ++c) std::memcpy((void*)&d.at(r, c), out.data() + ((size_t)r * vc + c) * es, es);
}
// histogram: d[r, b] = how many elements of s's valid row r have their selected byte <= b (ops/gather.py):
// is_msb selects the top byte; otherwise the low byte of the elements whose upper bytes match idx
// (uint16: idx[r, 0]; uint32: idx[0..2, 0] for bits 31-24, 23-16, 15-8).
template <class T> inline void histogram(Core& C, const Tile<uint32_t>& d, const Tile<T>& s, const Tile<uint8_t>& ix,
                                         bool msb) {
  constexpr bool wide = sizeof(T) == 4;
  const int rows = s.vr, cols = s.vc;
  if (rows <= 0) return;
  if (rows > d.rows || d.cols < 256)
    fail(C, "pl.histogram: dst (%dx%d) cannot hold %dx256 bins", d.rows, d.cols, rows);
  const int need = msb ? 0 : (wide ? 3 : rows);
  if (need > ix.rows) fail(C, "pl.histogram: idx has %d rows; %d are needed", ix.rows, need);
  uint32_t f[3] = {0, 0, 0};
  if (!msb && wide)
    for (int i = 0; i < 3; ++i) f[i] = ix.at(i, 0);
  std::vector<uint32_t> cum((size_t)rows * 256, 0);
  for (int r = 0; r < rows; ++r) {
    uint32_t* h = cum.data() + (size_t)r * 256;
    const uint32_t fr = (!msb && !wide) ? (uint32_t)ix.at(r, 0) : 0;
    for (int c = 0; c < cols; ++c) {
      const uint32_t v = (uint32_t)s.at(r, c);
      const uint32_t top = wide ? v >> 24 : v >> 8;
      if (msb) {
        ++h[top];
      } else if (wide ? (top == f[0] && ((v >> 16) & 0xFF) == f[1] && ((v >> 8) & 0xFF) == f[2]) : top == fr) {
        ++h[v & 0xFF];
      }
    }
    for (int b = 1; b < 256; ++b) h[b] += h[b - 1];
  }
  for (int r = 0; r < rows; ++r)
    for (int b = 0; b < 256; ++b) d.at(r, b) = cum[(size_t)r * 256 + b];
}

// ---------------------------------------------------------------- fill_index
// dst[r, c] = start + r * dst.cols + c over dst's valid window: int64 arithmetic for an integer start,
// float64 for a float start (numpy's promotion), then converted to the compute dtype and rounded.
template <class T> inline ct<T> index_value_i(int64_t v) {
  if constexpr (std::is_floating_point<ct<T>>::value) return (ct<T>)v;
  else return (ct<T>)(T)v;
}
template <class T> inline ct<T> index_value_f(double v) {
  if constexpr (std::is_floating_point<ct<T>>::value) return (ct<T>)v;
  else {
    if (!(v > -9.2e18 && v < 9.2e18)) return (ct<T>)std::numeric_limits<T>::min();
    return (ct<T>)(T)(int64_t)v;
  }
}
template <class T> inline void fill_index(Core& C, const Tile<T>& d, int64_t start) {
  (void)C;
  for (int r = 0; r < d.vr; ++r)
    for (int c = 0; c < d.vc; ++c) {
      const int64_t v = (int64_t)((uint64_t)start + (uint64_t)((int64_t)r * d.cols + c));
      d.at(r, c) = st<T>(index_value_i<T>(v));
    }
}
template <class T> inline void fill_index(Core& C, const Tile<T>& d, double start) {
  (void)C;
  for (int r = 0; r < d.vr; ++r)
    for (int c = 0; c < d.vc; ++c) d.at(r, c) = st<T>(index_value_f<T>(start + (double)((int64_t)r * d.cols + c)));
}
template <class T> inline void fill_index(Core& C, const Tile<T>& d, float start) { fill_index(C, d, (double)start); }
template <class T> inline void fill_index(Core& C, const Tile<T>& d, bool start) { fill_index(C, d, (int64_t)start); }

// ---------------------------------------------------------------- part ops
// Over dst's valid window: op where both sources are valid, a copy of the valid one elsewhere,
// dst's own value (re-rounded) where neither is.
template <class Op, class T> inline void part(Core& C, const Tile<T>& d, const Tile<T>& a, const Tile<T>& b) {
  int vr, vc;
  window(C, d, vr, vc, a, b);
  if (vr <= 0 || vc <= 0) return;
  Snapshot<T> sa(a, vr, vc, overlaps(d, a) && !same_map(d, a));
  Snapshot<T> sb(b, vr, vc, overlaps(d, b) && !same_map(d, b));
  const Tile<T>& x = sa.view;
  const Tile<T>& y = sb.view;
  for (int r = 0; r < vr; ++r)
    for (int c = 0; c < vc; ++c) {
      const bool in0 = r < a.vr && c < a.vc, in1 = r < b.vr && c < b.vc;
      T& o = d.at(r, c);
      if (in0 && in1) o = st<T>(Op::template f<T>(C, ld(x.at(r, c)), ld(y.at(r, c))));
      else if (in0) o = st<T>(ld(x.at(r, c)));
      else if (in1) o = st<T>(ld(y.at(r, c)));
      else o = st<T>(ld(o));
    }
}

// ---------------------------------------------------------------- add_relu_cast / sub_relu_cast / mul_cast
// lhs = round(lhs op rhs) (relu'd for the *_relu_cast ops), then dst = cast(lhs, mode).
template <class Op, bool Relu, class TD, class T>
inline void op_cast(Core& C, const Tile<TD>& d, const Tile<T>& a, const Tile<T>& b, int mode) {
  int vr, vc;
  window(C, d, vr, vc, a, b);
  ew(C, a, vr, vc, [&C](T x, T y) {
       T s = st<T>(Op::template f<T>(C, ld(x), ld(y)));
       if constexpr (Relu) {
         const ct<T> v = ld(s);
         s = st<T>(v > 0 ? v : (ct<T>)0);
       }
       return s;
     }, a, b);
  ew(C, d, vr, vc, [mode](T x) { return convert<TD, T>(x, mode); }, a);
}
template <class TD, class T> inline void add_relu_cast(Core& C, const Tile<TD>& d, const Tile<T>& a, const Tile<T>& b, int mode) {
  op_cast<OpAdd, true>(C, d, a, b, mode);
}
template <class TD, class T> inline void sub_relu_cast(Core& C, const Tile<TD>& d, const Tile<T>& a, const Tile<T>& b, int mode) {
  op_cast<OpSub, true>(C, d, a, b, mode);
}
template <class TD, class T> inline void mul_cast(Core& C, const Tile<TD>& d, const Tile<T>& a, const Tile<T>& b, int mode) {
  op_cast<OpMul, false>(C, d, a, b, mode);
}

// ---------------------------------------------------------------- kernel log (printf / pto_assert / dump_data)
// Record: int32 site, int32 kind, int64 payload bytes, payload.  Kinds: 0 printf, 1 failed assert,
// 2 failed assert to raise (PYPTO_STRICT_ASSERT), 3 dump.  Scalar values are 8 bytes each (int64, or
// the bits of a double for %f).
enum LogKind { LogPrintf = 0, LogAssert = 1, LogAssertRaise = 2, LogDump = 3 };

// Each value passes through a volatile: g++ 12's SLP vectorizer otherwise merges neighbouring
// `(double)pto::f32(...)` initialisers and drops their rounding to fp32 (seen with -O2).
struct LogVal {
  unsigned char b[8];
  LogVal(int64_t v) {
    volatile int64_t t = v;
    const int64_t u = t;
    std::memcpy(b, &u, 8);
  }
  LogVal(double v) {
    volatile double t = v;
    const double u = t;
    std::memcpy(b, &u, 8);
  }
};

inline void log_record(Core& C, int kind, const LogVal* vals, int n) {
  unsigned char head[16];
  const int32_t site = C.site, k = kind;
  const int64_t bytes = 8 * (int64_t)n;
  std::memcpy(head, &site, 4);
  std::memcpy(head + 4, &k, 4);
  std::memcpy(head + 8, &bytes, 8);
  pto_rt_log(&C, head, 16);
  if (n) pto_rt_log(&C, vals, bytes);
}

inline void printf_(Core& C, const LogVal* vals, int n) { log_record(C, LogPrintf, vals, n); }

inline bool strict_assert() {
  const char* e = std::getenv("PYPTO_STRICT_ASSERT");
  return e && *e && std::strcmp(e, "0") != 0;
}

// On failure: log the message (formatted by the launcher), or with PYPTO_STRICT_ASSERT abort the launch
// with it (the launcher puts the formatted text in place of the \x01 marker).
inline void pto_assert(Core& C, bool cond, const LogVal* vals, int n) {
  if (cond) return;
  if (strict_assert()) {
    log_record(C, LogAssertRaise, vals, n);
    pto_rt_fail(&C, "\x01");
  }
  log_record(C, LogAssert, vals, n);
}

// Dump payload: int64 nd, shape[nd], int64 noffs, offsets[noffs], shapes[noffs], int64 name bytes, name,
// int64 element bytes, elements (row-major, storage dtype).
struct DumpBuf {
  unsigned char* p = nullptr;
  int64_t n = 0, cap = 0;
  ~DumpBuf() { std::free(p); }
  void put(const void* src, int64_t k) {
    if (n + k > cap) {
      cap = (n + k) * 2 + 64;
      p = (unsigned char*)std::realloc(p, (size_t)cap);
      if (!p) throw std::bad_alloc();
    }
    std::memcpy(p + n, src, (size_t)k);
    n += k;
  }
  void i64(int64_t v) { put(&v, 8); }
};

inline void dump_finish(Core& C, DumpBuf& b) {
  unsigned char head[16];
  const int32_t site = C.site, k = LogDump;
  std::memcpy(head, &site, 4);
  std::memcpy(head + 4, &k, 4);
  std::memcpy(head + 8, &b.n, 8);
  pto_rt_log(&C, head, 16);
  pto_rt_log(&C, b.p, b.n);
}

inline void dump_window(DumpBuf& b, const int64_t* offs, const int64_t* shps, int n) {
  b.i64(n);
  for (int i = 0; i < n; ++i) b.i64(offs[i]);
  for (int i = 0; i < n; ++i) b.i64(shps[i]);
}

inline void dump_name(DumpBuf& b, const char* name) {
  const int64_t len = (int64_t)std::strlen(name);
  b.i64(len);
  b.put(name, len);
}

// A tile's valid window; `name` is the interpreter's view name.
template <class T>
inline void dump_data(Core& C, const Tile<T>& t, const char* name, const int64_t* offs, const int64_t* shps, int n) {
  DumpBuf b;
  b.i64(2);
  b.i64(t.vr);
  b.i64(t.vc);
  dump_window(b, offs, shps, n);
  dump_name(b, name);
  b.i64((int64_t)sizeof(T) * t.vr * t.vc);
  for (int r = 0; r < t.vr; ++r)
    for (int c = 0; c < t.vc; ++c) b.put(&t.at(r, c), sizeof(T));
  dump_finish(C, b);
}

// A whole GM tensor (row-major copy through its strides).
template <class T>
inline void dump_data(Core& C, const Gm<T>& g, const int64_t* offs, const int64_t* shps, int n) {
  DumpBuf b;
  b.i64(g.nd);
  int64_t total = 1;
  for (int i = 0; i < g.nd; ++i) {
    b.i64(g.shape[i]);
    total *= g.shape[i];
  }
  dump_window(b, offs, shps, n);
  dump_name(b, g.name);
  b.i64((int64_t)sizeof(T) * total);
  int64_t idx[16] = {0};
  for (int64_t e = 0; e < total; ++e) {
    int64_t off = 0;
    for (int i = 0; i < g.nd; ++i) off += idx[i] * g.stride[i];
    b.put(g.p + off, sizeof(T));
    for (int i = g.nd - 1; i >= 0; --i) {
      if (++idx[i] < g.shape[i]) break;
      idx[i] = 0;
    }
  }
  dump_finish(C, b);
}

}  // namespace pto

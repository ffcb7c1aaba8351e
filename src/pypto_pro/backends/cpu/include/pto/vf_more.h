// PyPTO CPU backend: the Reg/VF ops of pypto_pro/ops/vf_more.py and the extra forms of ops/vf.py
// (bitwise lanes, register shifts, DataBlock reductions, packed / unaligned stores).  Same conventions
// as vf.h: 256-byte registers, masks as 256 0/1 bytes, every op computes into a local copy first.
#pragma once
#include <cstring>
#include <type_traits>

#include "vf.h"

namespace pto {

template <int N> struct vf_uint;
template <> struct vf_uint<1> { using type = uint8_t; };
template <> struct vf_uint<2> { using type = uint16_t; };
template <> struct vf_uint<4> { using type = uint32_t; };
template <> struct vf_uint<8> { using type = uint64_t; };

// ---------------------------------------------------------------- element-wise extras
struct OpLRelu { template <class T> static ct<T> f(Core&, ct<T> a, ct<T> b) { return a >= 0 ? a : (ct<T>)(a * b); } };
// shift by per-lane amounts: amounts are unsigned; >= the width gives 0 (or -1 for a negative value >> )
template <bool Left> struct OpVShift {
  template <class T> static ct<T> f(Core&, ct<T> a, ct<T> b) {
    using U = typename vf_uint<sizeof(T)>::type;
    const uint64_t amt = (uint64_t)(int64_t)b;
    const bool big = amt >= 8 * sizeof(T);
    const T x = (T)a;
    if constexpr (Left) return big ? (ct<T>)0 : (ct<T>)(T)(U)((U)x << amt);
    else if constexpr (std::is_unsigned<T>::value) return big ? (ct<T>)0 : (ct<T>)(T)(x >> amt);
    else return big ? (ct<T>)(x < 0 ? -1 : 0) : (ct<T>)(T)(x >> amt);
  }
};

// fn: 0 and, 1 or, 2 xor, 3 not (b unused); on the lanes' bits
template <class T>
inline void vf_bitwise(T* d, const T* a, const T* b, bool b_scalar, T bs, const uint8_t* m, bool merge, int fn) {
  using U = typename vf_uint<sizeof(T)>::type;
  constexpr int n = vf_lanes<T>();
  U x[n], y[n], out[n], old[n];
  std::memcpy(x, a, kVL);
  std::memcpy(old, d, kVL);
  if (b_scalar) { U s; std::memcpy(&s, &bs, sizeof(T)); for (int i = 0; i < n; ++i) y[i] = s; }
  else if (b != nullptr) std::memcpy(y, b, kVL);
  else std::memset(y, 0, kVL);
  for (int i = 0; i < n; ++i) {
    U r = fn == 0 ? (U)(x[i] & y[i]) : fn == 1 ? (U)(x[i] | y[i]) : fn == 2 ? (U)(x[i] ^ y[i]) : (U)~x[i];
    out[i] = vf_on(m, i, sizeof(T)) ? r : (merge ? old[i] : (U)0);
  }
  std::memcpy((void*)d, out, kVL);
}

template <class T, class S>
inline void vf_fma_s(Core& C, T* d, const T* a, S s, const T* c, const uint8_t* m) {
  const ct<T> y = scal<T>(s);
  ct<T> r[vf_lanes<T>()];
  for (int i = 0; i < vf_lanes<T>(); ++i) r[i] = OpAdd::f<T>(C, ld(st<T>(OpMul::f<T>(C, ld(a[i]), y))), ld(c[i]));
  vf_commit(d, r, m, false);
}

// group > 0: each run of `group` lanes reduced into its first lane; -2: pair sums into the lower half
template <class T, class Op>
inline void vf_reduce_group(Core& C, T* d, const T* a, const uint8_t* m, ct<T> ident, int group) {
  constexpr int n = vf_lanes<T>();
  ct<T> v[n], r[n];
  for (int i = 0; i < n; ++i) { v[i] = vf_on(m, i, sizeof(T)) ? ld(a[i]) : ident; r[i] = (ct<T>)0; }
  if (group == -2) {
    for (int i = 0; i < n / 2; ++i) r[i] = OpAdd::f<T>(C, v[2 * i], v[2 * i + 1]);
  } else {
    for (int k = 0; k < n; k += group) {
      ct<T> w[n];
      for (int i = 0; i < group; ++i) w[i] = v[k + i];
      for (int len = group; len > 1; len /= 2)
        for (int i = 0; i < len / 2; ++i) w[i] = Op::template f<T>(C, w[2 * i], w[2 * i + 1]);
      r[k] = w[0];
    }
  }
  vf_commit(d, r, nullptr, false);
}

inline void vf_mask_sel(uint8_t* d, const uint8_t* a, const uint8_t* b, const uint8_t* m) {
  uint8_t out[kVL];
  for (int i = 0; i < kVL; ++i) out[i] = (uint8_t)((m[i] != 0 ? a[i] : b[i]) != 0);
  std::memcpy(d, out, kVL);
}

// ---------------------------------------------------------------- loads / stores
// unaligned register load (vf.load, vf.load_unalign): element alignment only
template <class T> inline void vf_load_u(Core& C, T* d, const uint8_t* p, int64_t cap) {
  vf_check_ub(C, p, kVL, cap, sizeof(T), "vf.load_align");
  std::memcpy((void*)d, p, kVL);
}
template <class T> inline void vf_load_blk(Core& C, T* d, const uint8_t* p, int64_t cap) {
  vf_check_ub(C, p, 32, cap, 32, "vf.load_align");
  uint8_t out[kVL];
  for (int k = 0; k < kVL / 32; ++k) std::memcpy(out + 32 * k, p, 32);
  std::memcpy((void*)d, out, kVL);
}
// dist: 1 PACK, 2 PACK4, 3 FIRST, 4 U (count lanes)
template <class T>
inline void vf_store_dist(Core& C, uint8_t* p, const T* s, const uint8_t* m, int dist, int64_t count, int64_t cap) {
  const char* what = "vf.store_align";
  constexpr int n = vf_lanes<T>();
  const uint8_t* raw = (const uint8_t*)s;
  if (dist == 1 || dist == 2) {
    const int w = (int)sizeof(T) / (dist == 1 ? 2 : 4);
    if (w < 1) fail(C, "%s: dist=%s needs wider elements", what, dist == 1 ? "PACK" : "PACK4");
    vf_check_ub(C, p, (int64_t)n * w, cap, 32, what);
    for (int i = 0; i < n; ++i)
      if (vf_on(m, i, sizeof(T))) std::memcpy(p + (int64_t)i * w, raw + i * sizeof(T), w);
    return;
  }
  if (dist == 3) {
    vf_check_ub(C, p, sizeof(T), cap, sizeof(T), what);
    std::memcpy(p, raw, sizeof(T));
    return;
  }
  if (count < 0 || count > n) fail(C, "%s: count %lld is outside [0, %d]", what, (long long)count, n);
  if (count == 0) return;
  vf_check_ub(C, p, count * (int64_t)sizeof(T), cap, sizeof(T), what);
  for (int i = 0; i < count; ++i)
    if (vf_on(m, i, sizeof(T))) std::memcpy(p + (int64_t)i * sizeof(T), raw + i * sizeof(T), sizeof(T));
}
template <class T>
inline void vf_store2(Core& C, uint8_t* p, const T* a, const T* b, const uint8_t* m, int64_t cap) {
  vf_check_ub(C, p, 2 * kVL, cap, 32, "vf.store_align");
  for (int i = 0; i < vf_lanes<T>(); ++i)
    if (vf_on(m, i, sizeof(T))) {
      std::memcpy(p + 2 * i * sizeof(T), a + i, sizeof(T));
      std::memcpy(p + (2 * i + 1) * sizeof(T), b + i, sizeof(T));
    }
}
// DataBlock load: block k from p + k * stride_bytes when the mask has a bit in block k, else 0
template <class T>
inline void vf_load_blocks(Core& C, T* d, const uint8_t* p, int64_t stride_bytes, const uint8_t* m, int64_t cap) {
  uint8_t out[kVL];
  std::memset(out, 0, kVL);
  for (int k = 0; k < kVL / 32; ++k) {
    bool any = m == nullptr;
    for (int b = 0; b < 32 && !any; ++b) any = m[k * 32 + b] != 0;
    if (!any) continue;
    const uint8_t* q = p + k * stride_bytes;
    vf_check_ub(C, q, 32, cap, 32, "vf.load_align");
    std::memcpy(out + 32 * k, q, 32);
  }
  std::memcpy((void*)d, out, kVL);
}
// mask <-> UB: bit i in byte i / 8 at bit i % 8; dist 0 NORM, 1 PACK / US, 2 DS
inline void vf_mask_store(Core& C, uint8_t* p, const uint8_t* mk, int dist, int64_t cap) {
  const int nbits = dist == 1 ? kVL / 2 : kVL;
  vf_check_ub(C, p, nbits / 8, cap, nbits / 8, "vf.store_align");
  uint8_t out[kVL / 8] = {};
  for (int i = 0; i < nbits; ++i) {
    const bool bit = (dist == 1 ? mk[2 * i] : mk[i]) != 0;
    out[i / 8] |= (uint8_t)(bit << (i % 8));
  }
  std::memcpy(p, out, nbits / 8);
}
inline void vf_mask_load(Core& C, uint8_t* d, const uint8_t* p, int dist, int64_t cap) {
  const int nbytes = dist == 0 ? kVL / 8 : dist == 1 ? kVL / 16 : kVL / 4;
  vf_check_ub(C, p, nbytes, cap, nbytes < 32 ? nbytes : 32, "vf.load_align");
  uint8_t out[kVL];
  for (int i = 0; i < kVL; ++i) {
    const int j = dist == 0 ? i : dist == 1 ? i / 2 : 2 * i;
    out[i] = (uint8_t)((p[j / 8] >> (j % 8)) & 1);
  }
  std::memcpy(d, out, kVL);
}

// ---------------------------------------------------------------- vf_more.py ops
template <class T> inline void vf_mull(T* lo, T* hi, const T* a, const T* b, const uint8_t* m) {
  constexpr int n = vf_lanes<T>();
  T l[n], h[n];
  for (int i = 0; i < n; ++i) {
    if (!vf_on(m, i, sizeof(T))) { l[i] = 0; h[i] = 0; continue; }
    if constexpr (std::is_unsigned<T>::value) {
      const uint64_t pr = (uint64_t)a[i] * (uint64_t)b[i];
      l[i] = (T)(pr & 0xFFFFFFFFu); h[i] = (T)(pr >> 32);
    } else {
      const int64_t pr = (int64_t)a[i] * (int64_t)b[i];
      l[i] = (T)(uint32_t)((uint64_t)pr & 0xFFFFFFFFu); h[i] = (T)(pr >> 32);
    }
  }
  std::memcpy((void*)lo, l, kVL);
  std::memcpy((void*)hi, h, kVL);
}
template <class T> inline int64_t vf_squeeze(T* d, const T* a, const uint8_t* m) {
  T out[vf_lanes<T>()];
  std::memset((void*)out, 0, kVL);
  int64_t k = 0;
  for (int i = 0; i < vf_lanes<T>(); ++i)
    if (vf_on(m, i, sizeof(T))) out[k++] = a[i];
  std::memcpy((void*)d, out, kVL);
  return k;
}
template <class T> inline void vf_unsqueeze(T* d, const uint8_t* m) {
  T out[vf_lanes<T>()];
  int64_t k = 0;
  for (int i = 0; i < vf_lanes<T>(); ++i) { out[i] = (T)k; k += vf_on(m, i, sizeof(T)) ? 1 : 0; }
  std::memcpy((void*)d, out, kVL);
}
template <class TD, class TS> inline void vf_pack(TD* d, const TS* a, bool upper) {
  constexpr int ns = vf_lanes<TS>();
  uint8_t out[kVL];
  std::memset(out, 0, kVL);
  const uint8_t* raw = (const uint8_t*)a;
  for (int i = 0; i < ns; ++i) std::memcpy(out + (upper ? ns + i : i) * sizeof(TD), raw + i * sizeof(TS), sizeof(TD));
  std::memcpy((void*)d, out, kVL);
}
template <class TD, class TS> inline void vf_unpack(TD* d, const TS* a, bool upper) {
  constexpr int nd = vf_lanes<TD>();
  TD out[nd];
  for (int i = 0; i < nd; ++i) out[i] = (TD)(int64_t)a[upper ? nd + i : i];
  std::memcpy((void*)d, out, kVL);
}
inline void vf_mask_pack(uint8_t* d, const uint8_t* a, bool upper, bool unpack) {
  uint8_t out[kVL];
  std::memset(out, 0, kVL);
  const int half = kVL / 2;
  for (int i = 0; i < kVL; ++i) {
    if (unpack) out[i] = a[(upper ? half : 0) + i / 2] != 0;
    else if (i < half) out[(upper ? half : 0) + i] = a[2 * i] != 0;
  }
  std::memcpy(d, out, kVL);
}
// Tile -> register gather (ops/vf_more.py _gather): element mode, index lanes of isize bytes each take
// esize bytes of UB at the low end of their lane; block mode, DataBlock j takes 32 bytes at byte index[j].
template <class T>
inline void vf_gather(Core& C, T* d, const uint8_t* p, const void* idx_raw, const uint8_t* m, int64_t cap, int esize,
                      int isize, bool block) {
  uint8_t out[kVL];
  std::memset(out, 0, kVL);
  const uint8_t* ib = (const uint8_t*)idx_raw;
  auto index = [&](int i) {
    uint64_t v = 0;
    std::memcpy(&v, ib + (int64_t)i * isize, isize);  // little-endian: the low isize bytes
    return (int64_t)v;
  };
  if (block) {
    for (int j = 0; j < kVL / 32; ++j) {
      if (!vf_on(m, j, 32)) continue;
      const int64_t off = index(j);
      if (off % esize) fail(C, "vf.gather: DataBlock offset %lld is not a multiple of %d bytes", (long long)off, esize);
      const uint8_t* q = p + off;
      vf_check_ub(C, q, 32, cap, 32, "vf.gather");
      std::memcpy(out + j * 32, q, 32);
    }
  } else {
    for (int i = 0; i < kVL / isize; ++i) {
      if (!vf_on(m, i, isize)) continue;
      const uint8_t* q = p + index(i) * esize;
      vf_check_ub(C, q, esize, cap, esize, "vf.gather");
      std::memcpy(out + i * isize, q, esize);
    }
  }
  std::memcpy((void*)d, out, kVL);
}
template <class T, class I> inline void vf_gather_reg(T* d, const T* a, const I* idx) {
  constexpr int n = vf_lanes<T>(), ni = vf_lanes<I>();
  T out[n];
  for (int i = 0; i < n; ++i) {
    const int64_t j = (int64_t)idx[i % ni] % n;
    out[i] = a[j < 0 ? j + n : j];
  }
  std::memcpy((void*)d, out, kVL);
}
template <class T, class I>
inline void vf_scatter(Core& C, uint8_t* p, const T* a, const I* idx, const uint8_t* m, int64_t cap) {
  for (int i = 0; i < vf_lanes<T>(); ++i) {
    if (!vf_on(m, i, sizeof(T))) continue;
    uint8_t* q = p + (int64_t)idx[i] * (int64_t)sizeof(T);
    vf_check_ub(C, q, sizeof(T), cap, sizeof(T), "vf.scatter");
    std::memcpy(q, a + i, sizeof(T));
  }
}
inline void vf_mask_from_reg(Core& C, uint8_t* d, const void* a, int w, int64_t block) {
  const int size = kVL / 8 / w;
  if (block < 0 || block >= kVL / size)
    fail(C, "vf.mask_gen_with_reg_tensor: offset %lld is outside [0, %d)", (long long)block, kVL / size);
  const uint8_t* raw = (const uint8_t*)a + block * size;
  uint8_t out[kVL];
  for (int i = 0; i < kVL / w; ++i)
    for (int b = 0; b < w; ++b) out[i * w + b] = (uint8_t)((raw[i / 8] >> (i % 8)) & 1);
  std::memcpy(d, out, kVL);
}
// vf.addc / vf.subc on 32-bit lanes (ops/vf_more.py _addc)
template <class T>
inline void vf_addc(uint8_t* carry, T* d, const T* a, const T* b, const uint8_t* cin, const uint8_t* m, bool sub) {
  constexpr int n = vf_lanes<T>();
  T r[n];
  uint8_t c[kVL];
  for (int i = 0; i < n; ++i) {
    const uint32_t y = sub ? ~(uint32_t)b[i] : (uint32_t)b[i];
    const uint64_t s = (uint64_t)(uint32_t)a[i] + (uint64_t)y + (vf_on(cin, i, 4) ? 1u : 0u);
    const bool on = vf_on(m, i, 4), out = ((s >> 32) != 0) != sub;
    r[i] = on ? (T)(uint32_t)s : (T)0;
    for (int k = 0; k < 4; ++k) c[i * 4 + k] = (on && out) ? 1 : 0;
  }
  std::memcpy(d, r, sizeof r);
  std::memcpy(carry, c, kVL);
}
// the vector mask register {high, low} as a mask of w-byte lanes (ops/vf_more.py _mask_from_spr)
inline void vf_mask_from_spr(uint8_t* d, uint64_t high, uint64_t low, bool count, int w) {
  for (int i = 0; i < kVL / w; ++i) {
    const bool on = count ? (uint64_t)i < low : (((i < 64 ? low : high) >> (i % 64)) & 1) != 0;
    for (int b = 0; b < w; ++b) d[i * w + b] = on ? 1 : 0;
  }
}
template <class T>
inline void vf_hist(T* d, const uint8_t* a, const T* acc, const uint8_t* m, bool high, bool cumulative) {
  // cumulative: counts[n] = #(x <= base + n), from 0 in both halves (ops/vf_more.py _hist)
  int64_t all[256] = {}, counts[128];
  const int base = high ? 128 : 0;
  for (int i = 0; i < kVL; ++i)
    if (m == nullptr || m[i] != 0) all[a[i]]++;
  if (cumulative)
    for (int i = 1; i < 256; ++i) all[i] += all[i - 1];
  for (int i = 0; i < 128; ++i) counts[i] = all[base + i];
  T out[vf_lanes<T>()];
  for (int i = 0; i < vf_lanes<T>(); ++i) out[i] = (T)((uint64_t)acc[i] + (uint64_t)(i < 128 ? counts[i] : 0));
  std::memcpy((void*)d, out, kVL);
}
// 16-bit lanes <-> 4-bit lanes (512 nibbles, the even lane in the low nibble)
template <class T16>
inline void vf_cast_to4(uint8_t* d, const T16* a, const uint8_t* m, int part, int mode, bool is_signed) {
  uint8_t out[kVL];
  std::memset(out, 0, kVL);
  for (int i = 0; i < vf_lanes<T16>(); ++i) {
    if (!vf_on(m, i, sizeof(T16))) continue;
    int64_t v = is_signed ? (int64_t)convert<int8_t, T16>(a[i], mode) : (int64_t)convert<uint8_t, T16>(a[i], mode);
    v = is_signed ? (v < -8 ? -8 : v > 7 ? 7 : v) : (v > 15 ? 15 : v);
    const int j = 4 * i + part;
    out[j / 2] |= (uint8_t)((v & 0xF) << (4 * (j % 2)));
  }
  std::memcpy(d, out, kVL);
}
template <class T16>
inline void vf_cast_from4(T16* d, const uint8_t* a, const uint8_t* m, int part, int mode, bool is_signed) {
  T16 out[vf_lanes<T16>()];
  std::memset((void*)out, 0, kVL);
  for (int i = 0; i < vf_lanes<T16>(); ++i) {
    if (!vf_on(m, i, sizeof(T16))) continue;
    const int j = 4 * i + part;
    int v = (a[j / 2] >> (4 * (j % 2))) & 0xF;
    if (is_signed && v >= 8) v -= 16;
    out[i] = is_signed ? convert<T16, int8_t>((int8_t)v, mode) : convert<T16, uint8_t>((uint8_t)v, mode);
  }
  std::memcpy((void*)d, out, kVL);
}

}  // namespace pto

// PyPTO CPU backend: sort32, mrgsort and mrgsort2 (ops/sorting.py; emitted by backends/cpu/emit_extra.py).
//
// A record is 8 bytes: the value (the tile dtype) first, then the UINT32 index (a 16-bit value is
// followed by a zero 16-bit word).  Everything sorts descending by sort_key, ties in their order
// (stable); merges let the largest head win, a tie going to the lower-numbered list.  Each op reads
// all its inputs before it writes, so overlapping tiles behave as in the interpreter.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include "tile.h"

namespace pto {

// The order of a stored value (ops/sorting.py order_key): floats by sign and magnitude bits, so
// -0 == +0, +NaN above +inf and -NaN below -inf; integers by value.
template <class T> inline int64_t sort_key(T v) {
  if constexpr (std::is_same<T, half>::value || std::is_same<T, bf16>::value) {
    uint16_t b;
    std::memcpy(&b, &v, 2);
    const int64_t mag = b & 0x7FFF;
    return (b & 0x8000) ? -mag : mag;
  } else if constexpr (std::is_same<T, float>::value) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    const int64_t mag = b & 0x7FFFFFFFu;
    return (b & 0x80000000u) ? -mag : mag;
  } else {
    return (int64_t)v;
  }
}

template <class T> constexpr int rec_elems() { return 8 / (int)sizeof(T); }

struct Rec {
  unsigned char b[8];
};

template <class T> inline Rec load_rec(const Tile<T>& t, int r, int c0) {
  Rec x;
  for (int i = 0; i < rec_elems<T>(); ++i) std::memcpy(x.b + i * sizeof(T), (const void*)&t.at(r, c0 + i), sizeof(T));
  return x;
}

template <class T> inline void store_rec(const Tile<T>& t, int r, int c0, const Rec& x) {
  for (int i = 0; i < rec_elems<T>(); ++i) std::memcpy((void*)&t.at(r, c0 + i), x.b + i * sizeof(T), sizeof(T));
}

template <class T> inline int64_t rec_key(const Rec& x) {
  T v;
  std::memcpy((void*)&v, x.b, sizeof(T));
  return sort_key<T>(v);
}

// Merge the record lists: the largest head wins, a tie goes to the lower-numbered list; with
// `exhausted` the merge stops once a list has no record left (at once if one is empty).
template <class T> inline void merge_recs(const std::vector<std::vector<Rec>>& lists, bool exhausted, std::vector<Rec>& out) {
  const size_t n = lists.size();
  std::vector<std::vector<int64_t>> keys(n);
  std::vector<size_t> head(n, 0);
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    for (const Rec& x : lists[i]) keys[i].push_back(rec_key<T>(x));
    total += lists[i].size();
    if (exhausted && lists[i].empty()) return;
  }
  out.reserve(out.size() + total);
  while (true) {
    int best = -1;
    for (size_t i = 0; i < n; ++i)
      if (head[i] < lists[i].size() && (best < 0 || keys[i][head[i]] > keys[best][head[best]])) best = (int)i;
    if (best < 0) return;
    out.push_back(lists[best][head[best]]);
    if (++head[best] == lists[best].size() && exhausted) return;
  }
}

// sort32: each 32-column group of src's valid rows sorted into records in dst; idx rows are shared
// when idx's valid window has one row.  tmp is only required (hardware scratch), never touched.
template <class T>
inline void sort32(Core& C, const Tile<T>& d, const Tile<T>& s, const Tile<uint32_t>& ix, bool has_tmp,
                   const char* dtype) {
  const int rows = s.vr, cols = s.vc;
  if (rows <= 0 || cols <= 0) return;
  if (cols % 32 && !has_tmp)
    fail(C, "pl.sort32: src's valid width %d is not a multiple of 32; the last group needs the tmp tile", cols);
  constexpr int R = rec_elems<T>();
  if (rows > d.rows || cols * R > d.cols)
    fail(C, "pl.sort32: dst (%dx%d) cannot hold %dx%d elements of records (%dx%d values, %d %s elements each)",
         d.rows, d.cols, rows, cols * R, rows, cols, R, dtype);
  const bool shared = ix.vr == 1;
  const int irows = shared ? 1 : rows;
  if (irows > ix.rows || cols > ix.cols)
    fail(C, "pl.sort32: idx (%dx%d) is smaller than the %dx%d indices needed", ix.rows, ix.cols, irows, cols);
  std::vector<T> vals((size_t)rows * cols);
  std::vector<uint32_t> idx((size_t)rows * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      std::memcpy((void*)&vals[(size_t)r * cols + c], (const void*)&s.at(r, c), sizeof(T));
      idx[(size_t)r * cols + c] = ix.at(shared ? 0 : r, c);
    }
  int ord[32];
  int64_t key[32];
  for (int r = 0; r < rows; ++r)
    for (int g0 = 0; g0 < cols; g0 += 32) {
      const int n = std::min(32, cols - g0);
      const size_t base = (size_t)r * cols + g0;
      for (int k = 0; k < n; ++k) {
        ord[k] = k;
        key[k] = sort_key<T>(vals[base + k]);
      }
      std::stable_sort(ord, ord + n, [&key](int a, int b) { return key[a] > key[b]; });
      for (int k = 0; k < n; ++k) {
        Rec x;
        std::memset(x.b, 0, 8);
        std::memcpy(x.b, (const void*)&vals[base + ord[k]], sizeof(T));
        const uint32_t i = idx[base + ord[k]];
        std::memcpy(x.b + 4, &i, 4);  // little-endian: low 16 bits first for 16-bit tiles
        store_rec(d, r, (g0 + k) * R, x);
      }
    }
}

// mrgsort: every group of 4 sorted blocks of block_len elements of src's row merged into dst.
template <class T> inline void mrgsort(Core& C, const Tile<T>& d, const Tile<T>& s, int block_len) {
  const int cols = s.vr > 0 ? s.vc : 0;
  if (cols % (4 * block_len))
    fail(C, "pl.mrgsort: src's valid width %d is not a multiple of 4 * block_len (%d): it merges groups of 4 blocks",
         cols, 4 * block_len);
  if (cols == 0) return;
  if (cols > d.cols) fail(C, "pl.mrgsort: dst (1x%d) is narrower than src's valid width %d", d.cols, cols);
  constexpr int R = rec_elems<T>();
  const int per = block_len / R, groups = cols / (4 * block_len);
  std::vector<Rec> all((size_t)(cols / R));
  for (int k = 0; k < cols / R; ++k) all[k] = load_rec(s, 0, k * R);
  std::vector<Rec> out;
  out.reserve(all.size());
  for (int g = 0; g < groups; ++g) {
    std::vector<std::vector<Rec>> lists(4);
    for (int b = 0; b < 4; ++b)
      lists[b].assign(all.begin() + ((size_t)g * 4 + b) * per, all.begin() + ((size_t)g * 4 + b + 1) * per);
    merge_recs<T>(lists, false, out);
  }
  for (size_t k = 0; k < out.size(); ++k) store_rec(d, 0, (int)k * R, out[k]);
}

// mrgsort2: the n (2..4) sources' records merged; the first dst.vc / R records go to dst.
template <class T>
inline void mrgsort2(Core& C, const Tile<T>& d, const Tile<T>* srcs, int n, bool exhausted, const char* dtype) {
  constexpr int R = rec_elems<T>();
  std::vector<std::vector<Rec>> lists((size_t)n);
  size_t total = 0;
  for (int i = 0; i < n; ++i) {
    const Tile<T>& s = srcs[i];
    const int cols = s.vr > 0 ? s.vc : 0;
    if (cols % R) {
      char role[32];
      if (i < 2) std::snprintf(role, sizeof role, "src%d", i);
      else std::snprintf(role, sizeof role, "extra_srcs[%d]", i - 2);
      fail(C, "pl.mrgsort2: %s's valid width %d is not a whole number of 8-byte records (%d %s elements each)", role,
           cols, R, dtype);
    }
    for (int k = 0; k < cols / R; ++k) lists[i].push_back(load_rec(s, 0, k * R));
    total += lists[i].size();
  }
  const int dcols = d.vr > 0 ? d.vc : 0;
  if (dcols % R)
    fail(C, "pl.mrgsort2: dst's valid width %d is not a whole number of 8-byte records (%d %s elements each)", dcols,
         R, dtype);
  const size_t want = (size_t)(dcols / R);
  if (!exhausted && want > total)
    fail(C, "pl.mrgsort2: dst's valid width asks for %zu records but the sources hold %zu", want, total);
  std::vector<Rec> merged;
  merge_recs<T>(lists, exhausted, merged);
  const size_t m = std::min(want, merged.size());
  for (size_t k = 0; k < m; ++k) store_rec(d, 0, (int)k * R, merged[k]);
}

}  // namespace pto

// PyPTO CPU backend: the compare form of pl.gather (pipe V), bit-identical to ops/gather.py.
// Per row r of src's valid window: the flat indices offset + r * src.cols + c of the elements that
// compare true with k = k_value_flat[r] (gt: src > k, else src == k) go to dst[r, 0:n] (n bounded by
// dst's valid width), and cdst_flat[r] = n * sizeof(dst element).  Floats compare in FP32, integers
// as unsigned bit patterns.  Every operand is read before dst, then cdst, is written.
#pragma once
#include <type_traits>
#include <vector>

#include "tile.h"

namespace pto {

template <class TS> inline bool cmp_hit(TS v, uint64_t k, bool gt) {
  if constexpr (is_float_t<TS>) {
    const float x = (float)ld<TS>(v), y = (float)k;
    return gt ? x > y : x == y;
  } else {
    const uint64_t x = (uint64_t)(typename std::make_unsigned<TS>::type)v;
    return gt ? x > k : x == k;
  }
}

template <class TD, class TS, class TK, class TC>
inline void gather_cmp(Core& C, const Tile<TD>& d, const Tile<TS>& s, const Tile<TK>& kv, const Tile<TC>& cnt,
                       bool gt, int64_t offset) {
  const int rows = s.vr, cols = s.vc, dcols = d.vc;
  if (rows > d.rows) fail(C, "pl.gather: dst %s has %d rows, fewer than src's %d valid rows", d.name, d.rows, rows);
  if (rows > kv.rows * kv.cols)
    fail(C, "pl.gather: k_value %s holds %d values, fewer than src's %d valid rows (one per row)", kv.name,
         kv.rows * kv.cols, rows);
  if (rows > cnt.rows * cnt.cols)
    fail(C, "pl.gather: cdst %s holds %d values, fewer than src's %d valid rows (one per row)", cnt.name,
         cnt.rows * cnt.cols, rows);
  if (rows <= 0) return;
  std::vector<uint64_t> ks((size_t)rows);
  for (int r = 0; r < rows; ++r) ks[(size_t)r] = (uint64_t)kv.at(r / kv.cols, r % kv.cols);
  const Snapshot<TS> ss(s, rows, cols, overlaps(d, s) || overlaps(cnt, s));
  std::vector<int64_t> found((size_t)rows * (size_t)(dcols > 0 ? dcols : 0));
  std::vector<int64_t> counts((size_t)rows);
  for (int r = 0; r < rows; ++r) {
    int64_t n = 0;
    for (int c = 0; c < cols && n < dcols; ++c)
      if (cmp_hit<TS>(ss.view.at(r, c), ks[(size_t)r], gt)) found[(size_t)r * dcols + n++] = offset + (int64_t)r * s.cols + c;
    counts[(size_t)r] = n;
  }
  for (int r = 0; r < rows; ++r)
    for (int64_t j = 0; j < counts[(size_t)r]; ++j) d.at(r, (int)j) = (TD)found[(size_t)r * dcols + j];
  for (int r = 0; r < rows; ++r) cnt.at(r / cnt.cols, r % cnt.cols) = (TC)(counts[(size_t)r] * (int64_t)sizeof(TD));
}

}  // namespace pto

// PyPTO CPU backend: pl.quant / pl.dequant (pipe V), bit-identical to ops/quant.py.
// Row r of the destination's valid window uses scale[r, 0] (and offset[r, 0]); every FP32
// operation is rounded once to FP32, round-to-int is half-to-even, NaN -> 0, saturating.
#pragma once
#include <cmath>
#include <vector>

#include "tile.h"

namespace pto {

// Column 0 of the first `rows` rows of a per-row parameter tile, read before anything is written.
inline std::vector<float> row_params(Core& C, const Tile<float>& p, int rows, const char* what) {
  if (p.rows < rows || p.cols < 1)
    fail(C, "%s %s (%dx%d) has fewer rows than the destination's valid window (%d rows); it holds one value per row",
         what, p.name, p.rows, p.cols, rows);
  std::vector<float> v((size_t)(rows > 0 ? rows : 0));
  for (int r = 0; r < rows; ++r) v[(size_t)r] = p.at(r, 0);
  return v;
}

inline double saturate_int(double q, double lo, double hi) {
  if (q != q) return 0.0;
  return q < lo ? lo : (q > hi ? hi : q);
}

// asym: offset is used (UINT8 result in [0, 255]); otherwise INT8 in [-128, 127].
template <class TD>
inline void quant(Core& C, const Tile<TD>& d, const Tile<float>& s, const Tile<float>& scale,
                  const Tile<float>* offset) {
  int vr, vc;
  window(C, d, vr, vc, s);
  if (vr <= 0 || vc <= 0) return;
  const std::vector<float> k = row_params(C, scale, vr, "scale");
  const std::vector<float> z = offset ? row_params(C, *offset, vr, "offset") : std::vector<float>();
  const Snapshot<float> ss(s, vr, vc, overlaps(d, s));
  const double lo = offset ? 0.0 : -128.0, hi = offset ? 255.0 : 127.0;
  for (int r = 0; r < vr; ++r) {
    for (int c = 0; c < vc; ++c) {
      const float p = ss.view.at(r, c) * k[(size_t)r];
      double q = std::nearbyint((double)p);
      if (offset) q = std::nearbyint((double)(float)((float)q + z[(size_t)r]));
      d.at(r, c) = (TD)saturate_int(q, lo, hi);
    }
  }
}

template <class TS>
inline void dequant(Core& C, const Tile<float>& d, const Tile<TS>& s, const Tile<float>& scale,
                    const Tile<float>& offset) {
  int vr, vc;
  window(C, d, vr, vc, s);
  if (vr <= 0 || vc <= 0) return;
  const std::vector<float> k = row_params(C, scale, vr, "scale");
  const std::vector<float> z = row_params(C, offset, vr, "offset");
  const Snapshot<TS> ss(s, vr, vc, overlaps(d, s));
  for (int r = 0; r < vr; ++r)
    for (int c = 0; c < vc; ++c) {
      const float x = (float)ss.view.at(r, c) - z[(size_t)r];
      d.at(r, c) = x * k[(size_t)r];
    }
}

}  // namespace pto

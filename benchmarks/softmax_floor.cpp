// Stand-alone floors for the 4096x1024 fp32 softmax of issue 16 (docs/performance.md, fifth session).
//
// Loops written by hand with the cpu backend's own exp (pto::fz::exp16_f32, the interpreter's bits)
// and its row-sum order, over one x (16 MiB, reused, as in bench_workloads.py) into one y:
//   copy  : x -> y with streamed stores (the memory floor of any one-pass kernel)
//   exp   : exp + row sum over an L1-resident tile, as many elements (the compute floor)
//   tile  : what the generated kernel does per 8-row tile: load + row max into a tile,
//           exp + row sum in place, scale + streamed store; next tile prefetched
//   pairs : two rows at a time through all three passes, the exp pass reading x again (L1) instead
//           of a tile copy, x prefetched one tile ahead
// Build and run (threads: 1 or 2; reps; SUB=1 visits tiles like one block of two AIV cores):
//   g++ -O3 -march=native -std=c++17 -ffp-contract=off -fno-tree-slp-vectorize -w \
//       -Isrc/pypto_pro/backends/cpu/include benchmarks/softmax_floor.cpp -o /tmp/softmax_floor -lpthread
//   /tmp/softmax_floor 1 300; /tmp/softmax_floor 2 300
#define PTO_SIMD_MATH 1
#include "pto/pto.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <time.h>
#include <vector>

namespace {
using namespace pto;
constexpr int R = 4096, C = 1024;
float* X;
float* Y;
thread_local float* buf;  // an 8-row tile (64-byte aligned)

double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
// pto::row_sum's order: 8 lanes, columns added in order, lanes combined pairwise at the end
__m256 add32(__m512 lo, __m512 hi, __m256 a) {
  a = _mm256_add_ps(a, _mm512_castps512_ps256(lo));
  a = _mm256_add_ps(a, _mm512_extractf32x8_ps(lo, 1));
  a = _mm256_add_ps(a, _mm512_castps512_ps256(hi));
  return _mm256_add_ps(a, _mm512_extractf32x8_ps(hi, 1));
}
float lanes(__m256 a) {
  float l[8];
  _mm256_storeu_ps(l, a);
  return combine_lanes(l, 8);
}
void stream(float* p, __m512 v) {
  _mm256_stream_ps(p, _mm512_castps512_ps256(v));
  _mm256_stream_ps(p + 8, _mm512_extractf32x8_ps(v, 1));
}
float row_max(const float* p, float* copy) {
  __m512 lo = _mm512_loadu_ps(p), hi = _mm512_loadu_ps(p + 16);
  for (int c = 0; c < C; c += 32) {
    const __m512 a = _mm512_loadu_ps(p + c), b = _mm512_loadu_ps(p + c + 16);
    if (copy) {
      _mm512_store_ps(copy + c, a);
      _mm512_store_ps(copy + c + 16, b);
    }
    lo = _mm512_max_ps(lo, a);
    hi = _mm512_max_ps(hi, b);
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(lo, hi));
}
// exp(src - m) of two rows into dst (row stride C), their sums (two independent chains)
void exp_pair(const float* s0, const float* s1, float m0, float m1, float* dst, float sum[2], const char* pf) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  const __m512 k0 = _mm512_set1_ps(m0), k1 = _mm512_set1_ps(m1);
  for (int c = 0; c < C; c += 32) {
    if (pf)
      for (int l = 0; l < 4; ++l) __builtin_prefetch(pf + c * 8 + 64 * l, 0, 2);
    const __m512 x0 = fz::exp16_f32(_mm512_sub_ps(_mm512_loadu_ps(s0 + c), k0));
    const __m512 x1 = fz::exp16_f32(_mm512_sub_ps(_mm512_loadu_ps(s0 + c + 16), k0));
    const __m512 y0 = fz::exp16_f32(_mm512_sub_ps(_mm512_loadu_ps(s1 + c), k1));
    const __m512 y1 = fz::exp16_f32(_mm512_sub_ps(_mm512_loadu_ps(s1 + c + 16), k1));
    _mm512_store_ps(dst + c, x0);
    _mm512_store_ps(dst + c + 16, x1);
    _mm512_store_ps(dst + C + c, y0);
    _mm512_store_ps(dst + C + c + 16, y1);
    a0 = add32(x0, x1, a0);
    a1 = add32(y0, y1, a1);
  }
  sum[0] = lanes(a0);
  sum[1] = lanes(a1);
}
void scale_store(const float* src, float k, float* y) {
  const __m512 s = _mm512_set1_ps(k);
  for (int c = 0; c < C; c += 32) {
    stream(y + c, _mm512_mul_ps(_mm512_load_ps(src + c), s));
    stream(y + c + 16, _mm512_mul_ps(_mm512_load_ps(src + c + 16), s));
  }
}

void v_copy(int t0, int t1, int step) {
  for (int t = t0; t < t1; t += step) {
    const float* g = X + (int64_t)t * 8 * C;
    float* y = Y + (int64_t)t * 8 * C;
    for (int i = 0; i < 8 * C; i += 16) stream(y + i, _mm512_loadu_ps(g + i));
  }
  _mm_sfence();
}
void v_exp(int t0, int t1, int step) {
  float s[2];
  for (int t = t0; t < t1; t += step)
    for (int r = 0; r < 8; r += 2) exp_pair(buf + r * C, buf + (r + 1) * C, 0.f, 0.f, buf + r * C, s, nullptr);
}
void v_tile(int t0, int t1, int step) {
  for (int t = t0; t < t1; t += step) {
    const float* g = X + (int64_t)t * 8 * C;
    float* y = Y + (int64_t)t * 8 * C;
    const char* next = t + step < t1 ? (const char*)(g + (int64_t)step * 8 * C) : nullptr;
    float m[8], s[8];
    for (int r = 0; r < 8; ++r) m[r] = row_max(g + r * C, buf + r * C);
    for (int r = 0; r < 8; r += 2)  // the next tile arrives during the exp pass
      exp_pair(buf + r * C, buf + (r + 1) * C, m[r], m[r + 1], buf + r * C, s + r, next ? next + r * C * 4 : nullptr);
    for (int r = 0; r < 8; ++r) scale_store(buf + r * C, 1.f / s[r], y + r * C);
    _mm_sfence();
  }
}
void v_pairs(int t0, int t1, int step) {
  for (int t = t0; t < t1; t += step) {
    const char* next = t + step < t1 ? (const char*)(X + (int64_t)(t + step) * 8 * C) : nullptr;
    for (int r = 0; r < 8; r += 2) {
      const float* g = X + ((int64_t)t * 8 + r) * C;
      float* y = Y + ((int64_t)t * 8 + r) * C;
      const float m0 = row_max(g, nullptr), m1 = row_max(g + C, nullptr);
      float s[2];
      exp_pair(g, g + C, m0, m1, buf, s, next ? next + r * C * 4 : nullptr);
      scale_store(buf, 1.f / s[0], y);
      scale_store(buf + C, 1.f / s[1], y + C);
    }
    _mm_sfence();
  }
}
}  // namespace

int main(int argc, char** argv) {
  const int nt = argc > 1 ? atoi(argv[1]) : 1, reps = argc > 2 ? atoi(argv[2]) : 200;
  const bool sub = getenv("SUB") != nullptr;
  X = (float*)aligned_alloc(64, (size_t)R * C * 4);
  Y = (float*)aligned_alloc(64, (size_t)R * C * 4);
  for (int64_t i = 0; i < (int64_t)R * C; ++i) X[i] = (float)((i * 2654435761u) % 1000) / 300.f - 1.5f;
  for (int64_t i = 0; i < (int64_t)R * C; ++i) Y[i] = 0.f;
  struct V {
    const char* name;
    void (*f)(int, int, int);
  } vs[] = {{"copy", v_copy}, {"exp", v_exp}, {"tile", v_tile}, {"pairs", v_pairs}};
  auto with_buf = [](void (*f)(int, int, int), int a, int b, int s) {
    buf = (float*)aligned_alloc(64, 8 * C * 4);
    for (int i = 0; i < 8 * C; ++i) buf[i] = -1.f;
    f(a, b, s);
    free(buf);
  };
  for (int round = 0; round < 2; ++round)
    for (const V& v : vs) {
      std::vector<double> ts;
      for (int k = 0; k < reps; ++k) {
        const double t = now();
        if (nt == 1 && sub) {
          with_buf(v.f, 0, R / 8, 2);
          with_buf(v.f, 1, R / 8, 2);
        } else if (nt == 1) {
          with_buf(v.f, 0, R / 8, 1);
        } else {
          std::thread th([&] { with_buf(v.f, 1, R / 8, 2); });
          with_buf(v.f, 0, R / 8, 2);
          th.join();
        }
        ts.push_back(now() - t);
      }
      std::sort(ts.begin(), ts.end());
      printf("%d thread(s) %-6s min %.3f  p25 %.3f  median %.3f ms\n", nt, v.name, ts[0] * 1e3, ts[reps / 4] * 1e3,
             ts[reps / 2] * 1e3);
    }
}

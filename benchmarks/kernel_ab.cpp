// A/B of generated kernels in one process: paired thread-CPU (or wall) times of alternating launches.
//
// On a machine shared with other jobs the memory-bound part of a softmax / norm kernel moves by 30%
// from one run to the next, so two kernels timed in separate runs cannot be compared.  This loads
// several builds of kernels with the same arguments (dlopen), runs them in rotating order, checks
// that their outputs are bit-identical to the first one's, and prints each one's median / p25 / p10 /
// min and the median of its per-round ratio to the first (docs/performance.md, sixth session).
// Arguments: x [ROWS, 1024] fp32 (ROWS from $ROWS, default 4096; a kernel's shape is compiled in),
// then gamma [1024] and beta [1024] for 3 / 4 tensor arguments, then y [ROWS, 1024].
//   g++ -O3 -march=native -std=c++17 -fPIC -ffp-contract=off -fwrapv -fno-strict-aliasing \
//       -fno-math-errno -fno-tree-slp-vectorize -w -Isrc/pypto_pro/backends/cpu/include \
//       -c src/pypto_pro/backends/cpu/runtime/pto_runtime.cpp -o /tmp/rt.o
//   g++ -O2 -std=c++17 -rdynamic benchmarks/kernel_ab.cpp /tmp/rt.o -o /tmp/kernel_ab -ldl -lpthread
//   each kernel (the kernel.cpp of a build directory, e.g. $PYPTO_BUILD_DIR/softmax_k__a5/kernel.cpp):
//   g++ -O3 -march=native -std=c++17 -fPIC -shared <the same value flags> -g0 -I<include> kernel.cpp -o a.so
//   PYPTO_NUM_THREADS=1 /tmp/kernel_ab NARGS REPS BLOCK_DIM ./a.so ./b.so   ($WALL=1: wall clock)
#include <dlfcn.h>
#include <time.h>
#include <vector>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
struct PtoError { int32_t kind, site; char message[1024]; };
typedef int (*CK)(const int64_t*, int64_t, PtoError*);
static double clk(clockid_t c) { timespec t; clock_gettime(c, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
extern "C" int pto_rt_launch(const void*, const int64_t*, int64_t, PtoError*);
int main(int argc, char** argv) {
  const int R = getenv("ROWS") ? atoi(getenv("ROWS")) : 4096, Cc = 1024;
  int nargs = atoi(argv[1]), reps = atoi(argv[2]), bd = atoi(argv[3]);
  bool wall = getenv("WALL") != nullptr;
  std::vector<CK> ks; std::vector<const char*> names;
  for (int i = 4; i < argc; ++i) {
    void* h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("%s\n", dlerror()); return 1; }
    ks.push_back((CK)dlsym(h, "call_kernel")); names.push_back(argv[i]);
  }
  (void)&pto_rt_launch;
  float* x = (float*)aligned_alloc(64, (size_t)R * Cc * 4);
  float* y = (float*)aligned_alloc(64, (size_t)R * Cc * 4);
  float* g = (float*)aligned_alloc(64, Cc * 4);
  float* b = (float*)aligned_alloc(64, Cc * 4);
  uint32_t s = 12345;
  auto rnd = [&] { s = s * 1664525u + 1013904223u; return ((s >> 8) / 16777216.f) * 6.f - 3.f; };
  for (int64_t i = 0; i < (int64_t)R * Cc; ++i) x[i] = rnd();
  for (int i = 0; i < Cc; ++i) g[i] = 0.5f + (rnd() + 3.f) / 6.f, b[i] = rnd();
  memset(y, 0, (size_t)R * Cc * 4);
  std::vector<int64_t> a;
  auto t2 = [&](float* p) { a.insert(a.end(), {(int64_t)(intptr_t)p, R, Cc, Cc, 1}); };
  auto t1 = [&](float* p) { a.insert(a.end(), {(int64_t)(intptr_t)p, Cc, 1}); };
  t2(x); if (nargs >= 3) t1(g); if (nargs >= 4) t1(b); t2(y);
  PtoError err;
  std::vector<std::vector<float>> outs;
  for (CK k : ks) { k(a.data(), bd, &err); if (err.kind) { printf("error %s\n", err.message); return 1; }
    outs.emplace_back(y, y + (size_t)R * Cc); }
  for (size_t i = 1; i < ks.size(); ++i)
    if (memcmp(outs[0].data(), outs[i].data(), (size_t)R * Cc * 4)) printf("!! %s differs from %s\n", names[i], names[0]);
  std::vector<std::vector<double>> t(ks.size());
  std::vector<double> ratio(ks.size() > 1 ? reps : 0);
  for (int r = 0; r < reps; ++r) {
    for (size_t i = 0; i < ks.size(); ++i) {
      size_t j = (i + r) % ks.size();  // rotate the order
      clockid_t c = wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
      double c0 = clk(c);
      ks[j](a.data(), bd, &err);
      t[j].push_back(clk(c) - c0);
    }
  }
  for (size_t i = 0; i < ks.size(); ++i) {
    std::vector<double> v = t[i];
    std::vector<double> q;
    for (int r = 0; r < reps; ++r) q.push_back(t[i][r] / t[0][r]);
    std::sort(v.begin(), v.end()); std::sort(q.begin(), q.end());
    printf("%-28s med %.3f p25 %.3f p10 %.3f min %.3f ms  paired ratio vs first: med %.3f [p25 %.3f p75 %.3f]\n", names[i],
           v[reps/2]*1e3, v[reps/4]*1e3, v[reps/10]*1e3, v[0]*1e3, q[reps/2], q[reps/4], q[3*reps/4]);
  }
}

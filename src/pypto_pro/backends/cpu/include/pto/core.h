// PyPTO CPU backend: element types, the per-core execution context and the runtime ABI.
//
// Generated kernels (kernel.cpp) include "pto/pto.h"; the runtime library (libpto_rt.so, built
// once per toolchain) implements the functions declared `extern "C"` here: thread pool, fibers,
// cross-core events, sync_all and error reporting.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace pto {

// ------------------------------------------------------------------------------------------
// 16-bit floats: stored natively, computed in fp32, rounded once per op (round to nearest even).
// ------------------------------------------------------------------------------------------
using half = _Float16;

struct bf16 {
  uint16_t bits;
};

inline float bf16_to_f(bf16 x) {
  uint32_t u = (uint32_t)x.bits << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline bf16 f_to_bf16(float f) {  // RNE; NaN -> sign | 0x7FC0 (as ml_dtypes)
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return bf16{(uint16_t)(((u >> 16) & 0x8000u) | 0x7FC0u)};
  u += 0x7FFFu + ((u >> 16) & 1u);
  return bf16{(uint16_t)(u >> 16)};
}

// Compute type: fp32 for 16-bit floats, the type itself otherwise (integers wrap like C).
template <class T> struct CT { using type = T; };
template <> struct CT<half> { using type = float; };
template <> struct CT<bf16> { using type = float; };
template <class T> using ct = typename CT<T>::type;

template <class T> inline ct<T> ld(T x) { return x; }
template <> inline float ld<half>(half x) { return (float)x; }
template <> inline float ld<bf16>(bf16 x) { return bf16_to_f(x); }

template <class T> inline T st(ct<T> v) { return (T)v; }
template <> inline half st<half>(float v) { return (half)v; }
template <> inline bf16 st<bf16>(float v) { return f_to_bf16(v); }

// A kernel scalar converted to a tile dtype the way numpy's astype does (then to compute type).
template <class T> inline T from_double(double v) { return (T)v; }
template <> inline half from_double<half>(double v) { return (half)v; }  // direct double -> half
template <> inline bf16 from_double<bf16>(double v) { return f_to_bf16((float)v); }
template <class T> inline T from_int(int64_t v) { return (T)v; }
template <> inline bf16 from_int<bf16>(int64_t v) { return f_to_bf16((float)(double)v); }
template <class T> inline ct<T> scal(double v) { return ld<T>(from_double<T>(v)); }
template <class T> inline ct<T> scal(float v) { return ld<T>(from_double<T>((double)v)); }
template <class T> inline ct<T> scal(int64_t v) { return ld<T>(from_int<T>(v)); }
template <class T> inline ct<T> scal(bool v) { return ld<T>(from_int<T>((int64_t)v)); }

// ------------------------------------------------------------------------------------------
// Memory spaces, layouts, declarations
// ------------------------------------------------------------------------------------------
enum Space : int32_t { Vec = 0, Mat, Left, Right, Acc, Bias, Scaling, ScaleLeft, ScaleRight, Reg, NSPACES };
enum Lay : int32_t { ND = 0, DN, NZ, ZN, ZZ, NN };

struct TileDecl {
  int32_t space, lay;
  int64_t addr;
  int32_t rows, cols, esize;
  int32_t acc;  // Acc tiles use 16x16 fractals for every dtype
  const char* name;
};

struct Core;

// What the runtime needs to know about a kernel (emitted as a constant in kernel.cpp).
struct KernelDesc {
  const char* name;
  int32_t kind;              // 0 vector, 1 cube, 2 mix
  int32_t vector_per_block;  // AIVs per block in a mix kernel
  int32_t mode;              // 0 run cores in order, 1 fibers within a block, 2 fibers over the grid
  int32_t ntiles;
  int32_t nshared;           // scalar variables other cores may read (cross-core slot indices)
  int64_t extent[NSPACES];   // bytes of each space the kernel's tiles cover (filled with 0xFF)
  int64_t capacity[NSPACES];
  const int32_t* init_valid;  // ntiles x 2
  int32_t nsites;            // op sites of the kernel (C.site indexes them; the launcher knows their lines)
  void (*core_main)(Core&);
};

struct Block;
struct Launch;

// One AI core of a launch: identity, on-chip memories, valid windows, shared scalars.
struct Core {
  int32_t kind;  // 0 vector, 1 cube
  int32_t block, sub;
  int64_t block_idx, block_num, subblock_idx, subblock_num;
  uint8_t* mem[NSPACES];
  int32_t* valid;  // ntiles x 2
  int64_t* sv;     // shared scalar variables
  int32_t site;    // op being executed (index into the Python-side site table)
  const int64_t* args;
  Block* blk;
  Launch* launch;
  int32_t local;  // index of this core in its block
  void* fiber;    // runtime-private

  template <class T> inline T* ptr(const TileDecl& d) const { return (T*)(mem[d.space] + d.addr); }
};

// The cores of one block (1 cube + n vector cores in a mix kernel; one core otherwise).
constexpr int SSBUF_BYTES = 256;  // the shared scalar buffer of a block (ops/ssbuf.py; include/pto/ssbuf.h)

struct Block {
  int32_t ncores;
  Core* cores[4];
  uint8_t ssbuf[SSBUF_BYTES];  // never-written bytes are 0xFF
  Core* cube() const {
    for (int i = 0; i < ncores; ++i)
      if (cores[i]->kind == 1) return cores[i];
    return nullptr;
  }
  Core* vec(int sub) const {
    for (int i = 0; i < ncores; ++i)
      if (cores[i]->kind == 0 && cores[i]->sub == sub) return cores[i];
    return nullptr;
  }
};

}  // namespace pto

// Result of a launch (filled by the runtime on failure).
struct PtoError {
  int32_t kind;  // 0 none, 1 runtime error, 2 deadlock
  int32_t site;
  char message[1024];
};

extern "C" {
// Runtime library (libpto_rt.so).
int pto_rt_launch(const pto::KernelDesc* desc, const int64_t* args, int64_t block_dim, PtoError* err);
[[noreturn]] void pto_rt_fail(pto::Core* core, const char* message);
void pto_rt_set_cross(pto::Core* core, int32_t mode, int64_t event);
void pto_rt_wait_cross(pto::Core* core, int32_t mode, int64_t event);
void pto_rt_sync_all(pto::Core* core, int32_t core_type, int64_t used_cores);
void pto_rt_atomic_lock(const void* addr);
void pto_rt_atomic_unlock(const void* addr);
void pto_rt_dgemm(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c);
// C = A @ B in fp32 with FMA, one chain over k from 0 per element (load_c: then added to C's value, one
// rounding): A is row-major (row i at a + i * lda),
// bp holds B as packed column panels (k x 16, zero padded); element (i, j) of C is
// c[rowoff[i] + coloff[j / 16] + j % 16].
void pto_rt_sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* bp, float* c,
                  const int64_t* rowoff, const int64_t* coloff, int load_c);
}

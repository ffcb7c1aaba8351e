// Per-op functions that the cpu runtime's ops library (runtime/pto_ops.cpp, built once per install by
// prebuilt.py) instantiates: a generated kernel.cpp includes this header after pto/pto.h when that
// library is in the per-user cache, and then calls these functions instead of compiling them.  At -O3
// the element-wise and copy loops of the per-op code (a fused group's fallback, unfused ops) are most of
// a small kernel's compile time.  The library is compiled from the same headers with the same
// value-affecting flags, so the results do not change (cpu == interp at every -O level); it is loaded
// with RTLD_GLOBAL before any kernel that uses it.
//
// Not part of pto/pto.h (so not of its precompiled header); include it after pto/pto.h.  pto_ops.cpp
// defines PTO_OPS_INSTANTIATE to turn the declarations below into the explicit instantiations.
#pragma once

#if defined(PTO_OPS_INSTANTIATE)  // the library (compiled with -fvisibility=hidden: it exports only these)
#define PTO_OPS_EXTERN
#define PTO_OPS_VIS __attribute__((visibility("default")))
#else
#define PTO_OPS_EXTERN extern
#define PTO_OPS_VIS
#endif

#define PTO_OPS_BINARY(OP, T) \
  PTO_OPS_EXTERN template PTO_OPS_VIS void pto::binary_tiles<pto::OP, T>(pto::Core&, const pto::Tile<T>&, const pto::Tile<T>&, \
                                                            const pto::Tile<T>&);
#define PTO_OPS_STORE(TG, T)                                                                                   \
  PTO_OPS_EXTERN template PTO_OPS_VIS void pto::store<TG, T>(pto::Core&, const pto::Gm<TG>&, const pto::Tile<T>&,       \
                                                 const int64_t*, int, int, const char*, bool, const pto::Fix&);
#define PTO_OPS_DTYPE(T)                                                                                        \
  PTO_OPS_BINARY(OpAdd, T)                                                                                      \
  PTO_OPS_BINARY(OpSub, T)                                                                                      \
  PTO_OPS_BINARY(OpMul, T)                                                                                      \
  PTO_OPS_BINARY(OpDiv, T)                                                                                      \
  PTO_OPS_BINARY(OpMax, T)                                                                                      \
  PTO_OPS_BINARY(OpMin, T)                                                                                      \
  PTO_OPS_EXTERN template PTO_OPS_VIS void pto::load<T>(pto::Core&, const pto::Tile<T>&, const pto::Gm<T>&, const int64_t*, \
                                            int, int, const char*);                                             \
  PTO_OPS_STORE(T, T)

PTO_OPS_DTYPE(pto::half)
PTO_OPS_DTYPE(pto::bf16)
PTO_OPS_DTYPE(float)
PTO_OPS_DTYPE(int32_t)
PTO_OPS_STORE(pto::half, float)  // an fp32 accumulator stored as fp16 / bf16 (through the fixpipe)
PTO_OPS_STORE(pto::bf16, float)

#undef PTO_OPS_DTYPE
#undef PTO_OPS_STORE
#undef PTO_OPS_BINARY
#undef PTO_OPS_EXTERN
#undef PTO_OPS_VIS

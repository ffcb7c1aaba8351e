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
  PTO_OPS_STORE(T, T)                                                                                           \
  PTO_OPS_EXTERN template PTO_OPS_VIS void pto::expands<T, double>(pto::Core&, const pto::Tile<T>&, double);

PTO_OPS_DTYPE(pto::half)
PTO_OPS_DTYPE(pto::bf16)
PTO_OPS_DTYPE(float)
PTO_OPS_DTYPE(int32_t)
PTO_OPS_STORE(pto::half, float)  // an fp32 accumulator stored as fp16 / bf16 (through the fixpipe)
PTO_OPS_STORE(pto::bf16, float)

// fp16 and fp32 (most vector ops take no BF16 operand): tile-scalar, unary, row-broadcast and reduction ops: the per-op code of the tensor
// level's fused groups (softmax, norms: their fallback when a group's window check fails) was about
// half of such a kernel's compile time at -O3.  A scalar operand is emitted as a double literal.
#define PTO_OPS_SCALAR(OP, T) \
  PTO_OPS_EXTERN template PTO_OPS_VIS void pto::binary<pto::OP, T, double>(pto::Core&, const pto::Tile<T>&, const pto::Tile<T>&, double);
#define PTO_OPS_UNARY(OP, T) \
  PTO_OPS_EXTERN template PTO_OPS_VIS void pto::unary<pto::OP, T>(pto::Core&, const pto::Tile<T>&, const pto::Tile<T>&);
#define PTO_OPS_EXPAND(OP, T)                                                                                    \
  PTO_OPS_EXTERN template PTO_OPS_VIS void pto::expand<pto::OP, T>(pto::Core&, const pto::Tile<T>&, const pto::Tile<T>&, \
                                                       const pto::Tile<T>&, int);
#define PTO_OPS_REDUCE(K, T) \
  PTO_OPS_EXTERN template PTO_OPS_VIS void pto::reduce<pto::K, T, T>(pto::Core&, const pto::Tile<T>&, const pto::Tile<T>&, int);
#define PTO_OPS_CAST(TD, TS) \
  PTO_OPS_EXTERN template PTO_OPS_VIS void pto::cast<TD, TS>(pto::Core&, const pto::Tile<TD>&, const pto::Tile<TS>&, int);
#define PTO_OPS_FLOAT(T)                                                                                        \
  PTO_OPS_SCALAR(OpAdd, T) PTO_OPS_SCALAR(OpSub, T) PTO_OPS_SCALAR(OpMul, T) PTO_OPS_SCALAR(OpDiv, T)           \
  PTO_OPS_SCALAR(OpMax, T) PTO_OPS_SCALAR(OpMin, T)                                                            \
  PTO_OPS_UNARY(UNeg, T) PTO_OPS_UNARY(UAbs, T) PTO_OPS_UNARY(UExp, T) PTO_OPS_UNARY(ULog, T)                   \
  PTO_OPS_UNARY(USqrt, T) PTO_OPS_UNARY(URsqrt, T) PTO_OPS_UNARY(URecip, T) PTO_OPS_UNARY(URelu, T)             \
  PTO_OPS_EXPAND(OpSub, T) PTO_OPS_EXPAND(OpMul, T) PTO_OPS_EXPAND(OpDiv, T) PTO_OPS_EXPAND(OpMax, T)           \
  PTO_OPS_EXPAND(OpMin, T)                                                                                     \
  PTO_OPS_REDUCE(RSum, T) PTO_OPS_REDUCE(RMax, T) PTO_OPS_REDUCE(RMin, T)

PTO_OPS_FLOAT(pto::half)
PTO_OPS_FLOAT(float)
PTO_OPS_CAST(float, pto::half)
PTO_OPS_CAST(pto::half, float)
PTO_OPS_CAST(float, pto::bf16)
PTO_OPS_CAST(pto::bf16, float)
PTO_OPS_CAST(float, int32_t)
PTO_OPS_CAST(int32_t, float)

#undef PTO_OPS_FLOAT
#undef PTO_OPS_CAST
#undef PTO_OPS_REDUCE
#undef PTO_OPS_EXPAND
#undef PTO_OPS_UNARY
#undef PTO_OPS_SCALAR
#undef PTO_OPS_DTYPE
#undef PTO_OPS_STORE
#undef PTO_OPS_BINARY
#undef PTO_OPS_EXTERN
#undef PTO_OPS_VIS

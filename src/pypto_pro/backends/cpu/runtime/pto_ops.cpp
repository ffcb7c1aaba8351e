// PyPTO CPU backend: the ops library -- explicit instantiations of the per-op functions listed in
// pto/prebuilt_ops.h, compiled once per install with the kernels' flags (prebuilt.py), so kernels that
// include that header call them instead of compiling them.  Its pto_rt_* references resolve against the
// runtime library, loaded (RTLD_GLOBAL) before it.
#define PTO_OPS_INSTANTIATE 1
// the AVX2 paths (exp, row max / min), as a kernel with such ops compiles them; the same bits as the scalar
// paths, so kernels without PTO_SIMD_MATH may call these too
#define PTO_SIMD_MATH 1
#include "pto/pto.h"
#include "pto/prebuilt_ops.h"

"""The cpu backend's 8-lane exp (``pto::exp8_f32``) gives exactly the bits of its scalar definition
(``pto::exp_f32``).

Fused loops and whole rows use the 8-lane version, row tails and scalar code the scalar one, so any
difference would make a result depend on the tile width.  The 8-lane version has no branches: it
clamps and lets the same steps overflow to inf / round to 0, which is only correct if every input
agrees.  The test compiles a small checker against the backend's headers and runs it over every
31st float bit pattern (all signs, exponents and NaN payload classes) plus the edge cases of the
clamps; an exhaustive run over all 2^32 inputs takes ~8 s and was done when the clamps were chosen.
"""
import ctypes

import numpy as np
import pytest

from kernels import compile_checker

CHECKER = r"""
#define PTO_SIMD_MATH 1
#include <cstdint>
#include <cstring>
#include "pto/vector.h"

// Lanes whose exp8_f32 bits differ from exp_f32's, over the bit patterns start, start + step, ...
// (wrapping at 2^32), and over the listed values.
extern "C" int64_t exp_mismatches(uint32_t step, const float* extra, int64_t n_extra) {
#if defined(PTO_AVX2_MATH)
  int64_t bad = 0;
  auto check = [&](const float* x) {
    float got[8];
    _mm256_storeu_ps(got, pto::exp8_f32(_mm256_loadu_ps(x)));
    for (int l = 0; l < 8; ++l) {
      const float want = pto::exp_f32(x[l]);
      bad += std::memcmp(&got[l], &want, 4) != 0;
    }
  };
  float x[8];
  uint64_t lane = 0;
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += step) {
    const uint32_t bits = (uint32_t)b;
    std::memcpy(&x[lane], &bits, 4);
    if (++lane == 8) { check(x); lane = 0; }
  }
  for (int64_t i = 0; i < n_extra; ++i) {
    for (int l = 0; l < 8; ++l) x[l] = extra[i];
    check(x);
  }
  return bad;
#else
  return -1;
#endif
}
"""


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    lib = compile_checker(tmp_path_factory.mktemp("exp_simd"), CHECKER)
    lib.exp_mismatches.restype = ctypes.c_int64
    lib.exp_mismatches.argtypes = [ctypes.c_uint32, ctypes.POINTER(ctypes.c_float), ctypes.c_int64]
    return lib


def test_exp8_matches_scalar_exp_bit_for_bit(checker):
    hi, lo = 88.72283935546875, -103.97208404541015625  # ExpC::hi / lo: the scalar code's branches
    edges = [hi, lo, 89.0, -110.0, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45]
    edges += list(np.nextafter(np.float32([hi, lo, 89.0, -110.0]), np.float32(np.inf)))
    edges += list(np.nextafter(np.float32([hi, lo, 89.0, -110.0]), np.float32(-np.inf)))
    edges += list(np.linspace(-104.5, -103.5, 2001, dtype=np.float32))  # where 2^n scaling reaches denormals
    edges += list(np.linspace(88.5, 89.5, 2001, dtype=np.float32))      # and where it overflows
    extra = np.asarray(edges, dtype=np.float32)
    bad = checker.exp_mismatches(31, extra.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), len(extra))
    if bad < 0:
        pytest.skip("no AVX2/FMA on this machine: only the scalar exp exists")
    assert bad == 0


INTERP_CHECKER = r"""
#define PTO_SIMD_MATH 1
#include <cmath>
#include "pto/vector.h"

// exp of n fp32 values through the cpu backend's row kernel (8/16 lanes, scalar tail) and its scalar exp
extern "C" void exp_row(const float* s, float* d, int n) { pto::UExp::row(d, s, n); }
extern "C" void exp_scalar(const float* s, float* d, int n) { for (int i = 0; i < n; ++i) d[i] = pto::exp_f32(s[i]); }
extern "C" void fma_f32(const float* a, const float* b, const float* c, float* d, int n) {
  for (int i = 0; i < n; ++i) d[i] = std::fma(a[i], b[i], c[i]);
}
"""


@pytest.fixture(scope="module")
def interp_checker(tmp_path_factory):
    return compile_checker(tmp_path_factory.mktemp("exp_interp"), INTERP_CHECKER)


def _call(fn, *arrays):
    ptr = ctypes.POINTER(ctypes.c_float)
    out = np.empty_like(arrays[0])
    fn(*[a.ctypes.data_as(ptr) for a in arrays], out.ctypes.data_as(ptr), ctypes.c_int(arrays[0].size))
    return out


def test_fma32_is_a_single_rounding(interp_checker):
    """ops/fp32math.fma32 (the interpreter's fp32 FMA) against the C library's fmaf: random bit
    patterns (specials, subnormals, overflow) and nearly cancelling sums (where double rounding bites)."""
    from pypto_pro.ops.fp32math import fma32
    rng = np.random.default_rng(7)
    n = 1 << 18
    a, b, c = (rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32) for _ in range(3))
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    z = (-(x.astype(np.float64) * y)).astype(np.float32) * (1 + np.float32(2.0 ** -20) * rng.integers(-4, 5, n))
    for p, q, r in ((a, b, c), (x, y, z.astype(np.float32))):
        want, got = _call(interp_checker.fma_f32, p, q, r), fma32(p, q, r)
        nan = np.isnan(want)
        assert np.array_equal(nan, np.isnan(got))
        assert np.array_equal(want[~nan].view(np.uint32), got[~nan].view(np.uint32))


def test_interpreter_exp_has_the_cpu_bits(interp_checker):
    """The interpreter's exp (ops/vector.py -> fp32math.exp32) gives the cpu backend's bits, NaN payloads
    included, over every 1021st bit pattern plus the edges of its branches.  (A run over every 41st
    pattern, 1.05e8 inputs, found no difference either.)"""
    from pypto_pro.ops.vector import unary_values
    hi, lo = 88.72283935546875, -103.97208404541015625
    edges = np.concatenate([np.float32([hi, lo, 89.0, -110.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45]),
                            np.linspace(-104.5, -103.5, 4001, dtype=np.float32),
                            np.linspace(88.5, 89.5, 4001, dtype=np.float32)])
    x = np.concatenate([np.arange(0, 1 << 32, 1021, dtype=np.uint64).astype(np.uint32).view(np.float32), edges])
    got = unary_values("exp", x)
    for fn in (interp_checker.exp_row, interp_checker.exp_scalar):
        assert np.array_equal(_call(fn, x).view(np.uint32), got.view(np.uint32))

"""Runtime scalars against compile-time collections: `in` lists / ranges, and list[runtime index]."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelRuntimeError, KernelSyntaxError

from .kernels import assert_bits_equal

BACKENDS = ["interp", "cpu", "sim"]
PICKED = (0, 3, 7, 8)
WEIGHTS = [5, -2, 9, 4]
SCALES = (0.5, 2.0, -1.25)
N = 24


@pl.jit
def membership(out: pl.Tensor[[8, N], pl.DT_INT32], n: pl.DT_INT32):
    with pl.section_vector():
        for i in pl.range(N):
            out[0, i] = 1 if i in PICKED else 0
            out[1, i] = 1 if i not in PICKED else 0
            out[2, i] = 1 if i in pl.range(3, n, 4) else 0
            out[3, i] = 1 if i in pl.range(n, 2, -3) else 0
            out[4, i] = 1 if i not in range(5) else 0
            out[5, i] = 1 if i in [] else 0
            out[6, i] = 1 if i in pl.range(2, n) else 0
            out[7, i] = 1 if n in (i, i + 1) else 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_runtime_membership_matches_python(backend):
    out = np.zeros((8, N), np.int32)
    n = 19
    membership.backend = backend
    membership(out, n)
    want = np.array([[int(f(i)) for i in range(N)] for f in (
        lambda i: i in PICKED, lambda i: i not in PICKED, lambda i: i in range(3, n, 4),
        lambda i: i in range(n, 2, -3), lambda i: i not in range(5), lambda i: False,
        lambda i: i in range(2, n), lambda i: n in (i, i + 1))], np.int32)
    assert_bits_equal(out, want)


@pl.jit
def lookup(out: pl.Tensor[[2, 8], pl.DT_FP32], shift: pl.DT_INT32):
    with pl.section_vector():
        for i in pl.range(8):
            out[0, i] = WEIGHTS[i % 4 - shift] * 1.0
            out[1, i] = SCALES[(i + shift) % 3]


@pytest.mark.parametrize("backend", BACKENDS)
def test_runtime_index_selects_like_python(backend):
    out = np.zeros((2, 8), np.float32)
    lookup.backend = backend
    lookup(out, 2)
    want = np.array([[WEIGHTS[i % 4 - 2] for i in range(8)], [SCALES[(i + 2) % 3] for i in range(8)]], np.float32)
    assert_bits_equal(out, want)


def test_runtime_index_outside_the_list_stops_the_kernel():
    out = np.zeros((2, 8), np.float32)
    lookup.backend = "interp"
    with pytest.raises(KernelRuntimeError):
        lookup(out, 9)


@pl.jit
def runtime_is(out: pl.Tensor[[1, 8], pl.DT_INT32], k: pl.DT_INT32):
    with pl.section_vector():
        out[0, 0] = 1 if k is None else 0


@pl.jit
def float_step(out: pl.Tensor[[1, 8], pl.DT_INT32], k: pl.DT_INT32):
    with pl.section_vector():
        out[0, 0] = 1 if k in pl.range(0, 8, k) else 0


@pytest.mark.parametrize("kernel, message", [
    (runtime_is, "is/is not comparisons need compile-time values"),
    (float_step, "compile-time, non-zero step"),
])
def test_rejected_forms_say_why(kernel, message):
    kernel.backend = "interp"
    with pytest.raises(KernelSyntaxError, match=message):
        kernel(np.zeros((1, 8), np.int32), 1)

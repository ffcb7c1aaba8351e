"""``pl.range`` binds its bounds like the official ``range(start, stop=None, step=1)``: one bound is the
stop (from 0), and start / stop / step may be keywords.  Our own kernels, every backend."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import KernelSyntaxError

from .on_every_backend import BACKENDS, EVERY_BACKEND, run_on

pytestmark = EVERY_BACKEND


def loops(out: pl.Tensor[[1, 8], pl.DT_INT64], n: pl.DT_INT64):
    a = 0
    for i in pl.range(n, step=3):             # 0, 3, 6 (n = 8): one bound is the stop
        a = a + i
    b = 0
    for i in pl.range(start=2, stop=n):       # 2 .. 7
        b = b + i
    c = 0
    for i in pl.range(1, n, step=2):          # 1, 3, 5, 7
        c = c + i
    d = 0
    for i in pl.range(n, 0, -2):              # 8, 6, 4, 2
        d = d + i
    pl.setval(out, 0, a)
    pl.setval(out, 1, b)
    pl.setval(out, 2, c)
    pl.setval(out, 3, d)


@pytest.mark.parametrize("backend", BACKENDS)
def test_range_bounds_by_position_and_keyword(backend):
    out, _ = run_on(loops, backend, np.zeros((1, 8), np.int64), 8)
    np.testing.assert_array_equal(out[0, :4], [9, sum(range(2, 8)), 16, 20])


def no_start(out: pl.Tensor[[1, 8], pl.DT_INT64]):
    for i in pl.range(stop=4):
        pl.setval(out, i, i)


def test_range_without_start_is_a_syntax_error():
    with pytest.raises(KernelSyntaxError, match=r"pl\.range takes \(stop\)") as e:
        run_on(no_start, "interp", np.zeros((1, 8), np.int64))
    assert "test_range_bounds.py:" in str(e.value)

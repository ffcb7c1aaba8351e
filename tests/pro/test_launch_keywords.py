"""Launch arguments given by parameter name (as in a Python call) and ``@pl.jit`` stacked twice."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelLaunchError


@pl.jit(backend="interp")
def add_scalar(x: pl.Tensor[[8, 32], pl.DT_FP32], out: pl.Tensor[[8, 32], pl.DT_FP32], s: pl.DT_FP32):
    t = pl.make_tile(pl.TileType([8, 32], pl.DT_FP32), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.add(t, t, s)
        pl.store(out, t, [0, 0])


def test_keyword_arguments_bind_like_a_python_call():
    x = np.arange(256, dtype=np.float32).reshape(8, 32)
    out = np.zeros_like(x)
    add_scalar(x, s=1.5, out=out)
    assert np.array_equal(out, x + 1.5)
    out2 = np.zeros_like(x)
    add_scalar[1](x, out2, s=-1.0)
    assert np.array_equal(out2, x - 1.0)


@pytest.mark.parametrize("args,kwargs,match", [
    ((), {"x": 0, "out": 0, "s": 1.0, "t": 1.0}, "unexpected keyword argument 't'"),
    ((np.zeros((8, 32), np.float32),), {"x": 0}, "multiple values for argument 'x'"),
])
def test_bad_keyword_arguments_are_launch_errors(args, kwargs, match):
    with pytest.raises(KernelLaunchError, match=match):
        add_scalar(*args, **kwargs)


def test_stacked_jit_is_one_kernel():
    @pl.jit()
    @pl.jit(backend="interp")
    def copy(x: pl.Tensor[[8, 32], pl.DT_INT32], out: pl.Tensor[[8, 32], pl.DT_INT32]):
        t = pl.make_tile(pl.TileType([8, 32], pl.DT_INT32), addr=0)
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            pl.store(out, t, [0, 0])

    x = np.arange(256, dtype=np.int32).reshape(8, 32)
    out = np.zeros_like(x)
    copy(x, out)
    assert np.array_equal(out, x)

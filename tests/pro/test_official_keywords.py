"""Operands passed by their official keyword names (the API reference pages / official signatures):
``pl.add(out=..., lhs=..., rhs=...)``, ``pl.load(dst_tile=..., src_tensor=..., offsets=...)``,
``vf.adds(src, scalar, mask=...)``...  Our own kernels, checked against numpy on every backend."""
import inspect

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import KernelSyntaxError
from pypto_pro.language import Vf as vf  # noqa: N813
from pypto_pro.ops.keywords import KEYWORDS

from .on_every_backend import BACKENDS, EVERY_BACKEND, run_on

pytestmark = EVERY_BACKEND

R, C = 8, 64
F32 = pl.TileType(shape=[R, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
COL = pl.TileType(shape=[R, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


def _sync(src, dst, event):
    pl.system.sync_src(set_pipe=src, wait_pipe=dst, event_id=event)
    pl.system.sync_dst(set_pipe=src, wait_pipe=dst, event_id=event)


def vector_ops_by_keyword(x: pl.Tensor[[R, C], pl.DT_FP32], y: pl.Tensor[[R, C], pl.DT_FP32],
                          v: pl.Tensor[[R, 1], pl.DT_FP32], out: pl.Tensor[[R, C], pl.DT_FP32]):
    with pl.section_vector():
        a = pl.make_tile(F32, addr=0)
        b = pl.make_tile(F32, addr=R * C * 4)
        t = pl.make_tile(F32, addr=2 * R * C * 4)
        col = pl.make_tile(COL, addr=3 * R * C * 4)
        pl.load(dst_tile=a, src_tensor=x, offsets=[0, 0])
        pl.load(b, src_tensor=y, offsets=[0, 0])
        pl.load(col, v, offsets=[0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        pl.add(out=t, lhs=a, rhs=b)                         # x + y
        pl.expand_mul(out=t, src=t, scalar=col, dim=0)      # (x + y) * v[r]
        pl.maximum(out=t, lhs=t, rhs=a)                     # max(.., x)
        pl.partadd(out=t, src0=t, src1=b)                   # + y (same valid shapes)
        pl.abs(out=t, src=t)
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
        pl.store(dst_tensor=out, src_tile=t, offsets=[0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_vector_ops_by_official_keywords(backend):
    rng = np.random.default_rng(7)
    x, y = (rng.integers(-8, 8, (R, C)).astype(np.float32) for _ in range(2))
    v = rng.integers(-3, 4, (R, 1)).astype(np.float32)
    *_, got = run_on(vector_ops_by_keyword, backend, x, y, v, np.zeros_like(x))
    np.testing.assert_array_equal(got, np.abs(np.maximum((x + y) * v, x) + y))


def scalar_helpers_by_keyword(x: pl.Tensor[[1, C], pl.DT_FP32], out: pl.Tensor[[1, C], pl.DT_FP32]):
    t1 = pl.TileType(shape=[1, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    with pl.section_vector():
        t = pl.make_tile(t1, addr=0)
        pl.load(t, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.S, 0)
        first = pl.getval(container=t, offset=0)
        second = pl.getval(t, offset=1)
        pl.setval(container=t, offset=2, value=pl.max(lhs=first, rhs=second))
        pl.setval(t, 3, pl.min(lhs=first, rhs=second))
        _sync(pl.PipeType.S, pl.PipeType.MTE3, 0)
        pl.store(out, t, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_element_access_and_scalar_min_max_by_keyword(backend):
    x = np.arange(C, dtype=np.float32)
    x[:2] = [5.0, -2.0]
    _, got = run_on(scalar_helpers_by_keyword, backend, x.reshape(1, C), np.zeros((1, C), np.float32))
    want = x.copy()
    want[2:4] = [5.0, -2.0]
    np.testing.assert_array_equal(got[0], want)


@pl.vector_function
def _vf_by_keyword(src, dst):
    every = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src=src, offset=0)
    shifted = vf.adds(x, scalar=-8.0, mask=every)                   # the official signature's mask name
    leaky = vf.prelu(src=shifted, slope=vf.full(scalar=0.25, preg=every), preg=every)
    big = vf.gt(x, vf.full(scalar_or_src=8.0, mask=every), every)
    vf.store_align(dst, vf.select(src_true=leaky, src_false=x, mask=big), every)


def vf_by_keyword(x: pl.Tensor[[1, C], pl.DT_FP32], out: pl.Tensor[[1, C], pl.DT_FP32]):
    t1 = pl.TileType(shape=[1, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    with pl.section_vector():
        a = pl.make_tile(t1, addr=0)
        o = pl.make_tile(t1, addr=C * 4)
        pl.load(a, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        _vf_by_keyword(a, o)
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
        pl.store(out, o, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_vf_operands_by_page_and_official_keywords(backend):
    x = np.arange(C, dtype=np.float32) * 0.5
    _, got = run_on(vf_by_keyword, backend, x.reshape(1, C), np.zeros((1, C), np.float32))
    s = x - 8
    want = np.where(x > 8, np.where(s >= 0, s, s * 0.25), x)
    np.testing.assert_array_equal(got[0], want)


def test_every_official_keyword_is_in_the_public_signature():
    for name, keywords in KEYWORDS.items():
        params = inspect.signature(getattr(pl, name)).parameters
        assert set(keywords.values()) <= set(params), name
        assert not set(keywords) & set(params), name     # our own names are not public any more


def mask_twice(x: pl.Tensor[[1, C], pl.DT_FP32], out: pl.Tensor[[1, C], pl.DT_FP32]):
    t1 = pl.TileType(shape=[1, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    with pl.section_vector():
        a = pl.make_tile(t1, addr=0)
        pl.load(a, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        _twice(a)
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
        pl.store(out, a, [0, 0])


@pl.vector_function
def _twice(t):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    vf.store_align(t, vf.abs(vf.load_align(t, 0), preg=m, mask=m), m)


def old_name(x: pl.Tensor[[1, C], pl.DT_FP32], out: pl.Tensor[[1, C], pl.DT_FP32]):
    t1 = pl.TileType(shape=[1, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    with pl.section_vector():
        a = pl.make_tile(t1, addr=0)
        pl.load(a, x, [0, 0])
        pl.abs(dst=a, src=a)
        pl.store(out, a, [0, 0])


@pytest.mark.parametrize("kernel, match", [(mask_twice, "'mask' and 'preg' name the same argument"),
                                           (old_name, r"pl\.abs: .*expected pl\.abs\(out, src\)")])
def test_keyword_misuse_is_a_syntax_error_at_the_call(kernel, match):
    x = np.zeros((1, C), np.float32)
    with pytest.raises(KernelSyntaxError, match=match) as e:
        run_on(kernel, "interp", x, x.copy())
    assert "test_official_keywords.py:" in str(e.value)


def bias_by_keyword(out: pl.Tensor[[16, 16], pl.DT_FP32]):
    with pl.section_cube():
        a = pl.make_tile(pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left), addr=0)
        b = pl.make_tile(pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right), addr=0)
        c = pl.make_tile(pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc), addr=0)
        bias = pl.make_tile(pl.TileType(shape=[1, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Bias), addr=0)
        pl.matmul(dst_tile=c, lhs_tile=a, rhs_tile=b, bias_tile=bias)


def test_matmul_bias_goes_by_position_only():
    """The official tests reject ``bias_tile=`` (only a positional bias); the other operands go by keyword."""
    with pytest.raises(KernelSyntaxError, match=r"pl\.matmul: .*bias_tile") as e:
        run_on(bias_by_keyword, "interp", np.zeros((16, 16), np.float32))
    assert "test_official_keywords.py:" in str(e.value)

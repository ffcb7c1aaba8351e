"""The 调用示例 kernels of the official tile-level op pages under
``docs/zh/pypto_pro/api/SIMD-API/operation/memory_vector_computation/`` (hicann/pypto): ``elementwise/``,
``fused_vector_computation/``, ``composite_computation/``, ``comparison/`` and ``fillpad.md``.

Each page kernel is copied as written (only the ``@pl.jit`` decorator is dropped: it is applied per backend)
and run on every backend with the page's inputs, reconstructed from the printed input rows (checked too).
The output must match the page's measured rows ("实测结果示例") and, in full, a numpy reference of the
op's documented semantics; on ``sim`` (strict mode) the launch must report no hazard.  Pages without
measured rows are checked against the reference only, with inputs of our choice.
"""
import functools
import re

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends import cpu

BACKENDS = ["interp", pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim"]

# tests/conftest.py: a private build dir; the backends are chosen here, so `make test` skips the module in
# its PYPTO_BACKEND=interp rerun (marker every_backend)
pytestmark = [pytest.mark.usefixtures("private_build_dir"), pytest.mark.every_backend]

M, N = 64, 128  # module constants of the fused_mul_add_relu / mul_add_dst / partadd pages
ALPHA = 2.0  # module constant of the axpy page


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Runs the test once per backend."""
    return request.param


@functools.lru_cache(maxsize=None)
def on(fn, backend: str):
    """Page kernel ``fn`` jitted for ``backend`` with the pages' decorator arguments (one compile per backend)."""
    return pl.jit(fn, auto_mutex=True, backend=backend)


def launch(fn, backend, *args):
    """Runs ``fn`` on ``backend`` with copies of ``args`` (a launch on sim raises on any hazard); returns them."""
    copies = [a.copy() for a in args]
    on(fn, backend)(*copies)
    return copies


def ramp(shape, start, step, dtype=np.float32):
    """``start + step * i`` over the row-major element index ``i``, rounded once to ``dtype`` (RNE)."""
    i = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return (start + step * i).astype(dtype)


def sentinel(shape, dtype=np.float32):
    """An output tensor whose every element must be overwritten."""
    return np.full(shape, -777, dtype)


_ROW = re.compile(r"\[([^\[\]]*)\]")


def assert_rows(arr, text, rows=(0, 1, 2, 3)):
    """``arr`` agrees with printed rows ``text`` ('[[v v ...], [v ...], ...]'): the k-th printed row is row
    ``rows[k]``, its values are the first columns.  The pages print floats rounded to 6 fractional digits
    (numpy 'maxprec', trailing zeros dropped; scientific: 6 digits after the mantissa's point), so a float
    must be within half a unit of the 6th digit; integers must be equal."""
    printed = [[t for t in body.split() if t != "..."] for body in _ROW.findall(text)]
    assert len(printed) == len(rows), (len(printed), rows)
    bad = []
    for r, toks in zip(rows, printed):
        for c, tok in enumerate(toks):
            got = arr[r, c]
            if np.issubdtype(arr.dtype, np.integer):
                ok = got == int(tok)
            else:
                half_unit = 0.5 * 10.0 ** (int(tok.partition("e")[2] or 0) - 6)
                ok = abs(float(got) - float(tok)) <= half_unit * (1 + 1e-9)
            if not ok:
                bad.append(f"[{r},{c}] page {tok} got {got!r}")
    assert not bad, "; ".join(bad[:12]) + (f" (+{len(bad) - 12})" if len(bad) > 12 else "")


def f16(x):
    """One rounding to fp16 of an fp32 result (our fp16 arithmetic: computed in fp32, rounded once)."""
    with np.errstate(over="ignore"):  # products beyond the fp16 range become inf, as on hardware
        return np.asarray(x, np.float32).astype(np.float16)


# Inputs printed by the pages (64x64 fp32 unless noted), reconstructed as ramps.
A_1_QUARTER = "[[1 1.25 1.5 1.75 2 2.25 2.5 2.75 ...], [17 17.25 17.5 17.75 18 18.25 18.5 18.75 ...], " \
              "[33 33.25 33.5 33.75 34 34.25 34.5 34.75 ...], [49 49.25 49.5 49.75 50 50.25 50.5 50.75 ...], ...]"
B_10_HALF = "[[10 10.5 11 11.5 12 12.5 13 13.5 ...], [42 42.5 43 43.5 44 44.5 45 45.5 ...], " \
            "[74 74.5 75 75.5 76 76.5 77 77.5 ...], [106 106.5 107 107.5 108 108.5 109 109.5 ...], ...]"
A_M4_EIGHTH = "[[-4 -3.875 -3.75 -3.625 -3.5 -3.375 -3.25 -3.125 ...], [4 4.125 4.25 4.375 4.5 4.625 4.75 4.875 ...], " \
              "[12 12.125 12.25 12.375 12.5 12.625 12.75 12.875 ...], " \
              "[20 20.125 20.25 20.375 20.5 20.625 20.75 20.875 ...], ...]"
A_M8_QUARTER_128 = "[[-8 -7.75 -7.5 -7.25 -7 -6.75 -6.5 -6.25 ...], [24 24.25 24.5 24.75 25 25.25 25.5 25.75 ...], " \
                   "[56 56.25 56.5 56.75 57 57.25 57.5 57.75 ...], [88 88.25 88.5 88.75 89 89.25 89.5 89.75 ...], ...]"
A_M2_QUARTER_F16 = "[[-2 -1.75 -1.5 -1.25 -1 -0.75 -0.5 -0.25 ...], [14 14.25 14.5 14.75 15 15.25 15.5 15.75 ...], " \
                   "[30 30.25 30.5 30.75 31 31.25 31.5 31.75 ...], [46 46.25 46.5 46.75 47 47.25 47.5 47.75 ...], ...]"
B_3_MEIGHTH_F16 = "[[3 2.875 2.75 2.625 2.5 2.375 2.25 2.125 ...], [-5 -5.125 -5.25 -5.375 -5.5 -5.625 -5.75 -5.875 ...], " \
                  "[-13 -13.125 -13.25 -13.375 -13.5 -13.625 -13.75 -13.875 ...], " \
                  "[-21 -21.125 -21.25 -21.375 -21.5 -21.625 -21.75 -21.875 ...], ...]"


def binary_inputs():
    """a = 1 + i/4, b = 10 + i/2 (64x64 fp32): the add/sub/mul/div/maximum/minimum pages."""
    a, b = ramp((64, 64), 1, 0.25), ramp((64, 64), 10, 0.5)
    assert_rows(a, A_1_QUARTER)
    assert_rows(b, B_10_HALF)
    return a, b


# ================================================================================ elementwise/
# elementwise/abs.md
def abs_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32],
               out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_out = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.abs(cur_out, cur_a)
        pl.store(out, cur_out, [0, 0])


# elementwise/abs.md (no measured rows)
def test_abs_page(backend):
    a = ramp((64, 64), -8, 0.25)
    _, out = launch(abs_kernel, backend, a, sentinel((64, 64)))
    np.testing.assert_array_equal(out, np.abs(a))


# elementwise/add.md
def add_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32], b: pl.Tensor[[64, 64], pl.DT_FP32],
               out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.add(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


# elementwise/add.md
def test_add_page(backend):
    a, b = binary_inputs()
    out = launch(add_kernel, backend, a, b, sentinel((64, 64)))[2]
    assert_rows(out, "[[11 11.75 12.5 13.25 14 14.75 15.5 16.25 ...], [59 59.75 60.5 61.25 62 62.75 63.5 64.25 ...], "
                     "[107 107.75 108.5 109.25 110 110.75 111.5 112.25 ...], "
                     "[155 155.75 156.5 157.25 158 158.75 159.5 160.25 ...], ...]")
    np.testing.assert_array_equal(out, a + b)


# elementwise/and_.md
def and_scalar_kernel(a: pl.Tensor[[64, 64], pl.DT_INT32],
                      out: pl.Tensor[[64, 64], pl.DT_INT32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_out = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.and_(cur_out, cur_a, 7)
        pl.store(out, cur_out, [0, 0])


# elementwise/and_.md (no measured rows)
def test_and_scalar_page(backend):
    a = (np.arange(64 * 64, dtype=np.int32) * 37 - 70000).reshape(64, 64)
    out = launch(and_scalar_kernel, backend, a, sentinel((64, 64), np.int32))[1]
    np.testing.assert_array_equal(out, a & 7)


# elementwise/div.md
def div_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32], b: pl.Tensor[[64, 64], pl.DT_FP32],
               out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.div(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


# elementwise/div.md
def test_div_page(backend):
    a, b = binary_inputs()
    out = launch(div_kernel, backend, a, b, sentinel((64, 64)))[2]
    assert_rows(out, "[[0.1 0.119048 0.136364 0.152174 0.166667 0.18 0.192308 0.203704 ...], "
                     "[0.404762 0.405882 0.406977 0.408046 0.409091 0.410112 0.411111 0.412088 ...], "
                     "[0.445946 0.446309 0.446667 0.44702 0.447368 0.447712 0.448052 0.448387 ...], "
                     "[0.462264 0.462441 0.462617 0.462791 0.462963 0.463134 0.463303 0.46347 ...], ...]")
    np.testing.assert_array_equal(out, a / b)


# elementwise/log.md
def log_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32],
               out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_out = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.log(cur_out, cur_a)
        pl.store(out, cur_out, [0, 0])


# elementwise/log.md (no measured rows)
def test_log_page(backend):
    a = ramp((64, 64), 0.125, 0.125)
    out = launch(log_kernel, backend, a, sentinel((64, 64)))[1]
    np.testing.assert_allclose(out, np.log(a.astype(np.float64)), rtol=2e-7, atol=2e-7)


# elementwise/maximum.md (tile-tile)
def maximum_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32], b: pl.Tensor[[64, 64], pl.DT_FP32],
                   out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.maximum(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


# elementwise/maximum.md (tile-tile)
def test_maximum_page(backend):
    a, b = binary_inputs()
    out = launch(maximum_kernel, backend, a, b, sentinel((64, 64)))[2]
    assert_rows(out, B_10_HALF)
    np.testing.assert_array_equal(out, np.maximum(a, b))


# elementwise/maximum.md (dim=0)
def row_max_kernel(a: pl.Tensor[[64, 128], pl.DT_FP32],
                   out: pl.Tensor[[64, 1], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tt_out = pl.TileType(shape=[64, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                         layout=pl.DN)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_tmp = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt_out, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_tmp = tile_tmp.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.maximum(cur_out, cur_a, cur_tmp, dim=0)
        pl.store(out, cur_out, [0, 0])


# elementwise/maximum.md (dim=1)
def col_max_kernel(a: pl.Tensor[[64, 128], pl.DT_FP32],
                   out: pl.Tensor[[1, 128], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tt_out = pl.TileType(shape=[1, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_tmp = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt_out, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_tmp = tile_tmp.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.maximum(cur_out, cur_a, cur_tmp, dim=1)
        pl.store(out, cur_out, [0, 0])


def reduce_input():
    """a = -8 + i/4 (64x128 fp32): the reduction examples of the maximum/minimum pages."""
    a = ramp((64, 128), -8, 0.25)
    assert_rows(a, A_M8_QUARTER_128)
    return a


# elementwise/maximum.md (dim=0, dim=1)
def test_maximum_reduction_pages(backend):
    a = reduce_input()
    row = launch(row_max_kernel, backend, a, sentinel((64, 1)))[1]
    assert_rows(row, "[[23.75], [55.75], [87.75], [119.75], ...]")
    np.testing.assert_array_equal(row, a.max(axis=1, keepdims=True))
    col = launch(col_max_kernel, backend, a, sentinel((1, 128)))[1]
    assert_rows(col, "[[2.008000e+03 2.008250e+03 2.008500e+03 2.008750e+03 2.009000e+03 2.009250e+03 "
                     "2.009500e+03 2.009750e+03 ...]]", rows=(0,))
    np.testing.assert_array_equal(col, a.max(axis=0, keepdims=True))


# elementwise/minimum.md (tile-tile)
def minimum_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32], b: pl.Tensor[[64, 64], pl.DT_FP32],
                   out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.minimum(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


# elementwise/minimum.md (tile-tile)
def test_minimum_page(backend):
    a, b = binary_inputs()
    out = launch(minimum_kernel, backend, a, b, sentinel((64, 64)))[2]
    assert_rows(out, A_1_QUARTER)
    np.testing.assert_array_equal(out, np.minimum(a, b))


# elementwise/minimum.md (dim=0)
def row_min_kernel(a: pl.Tensor[[64, 128], pl.DT_FP32],
                   out: pl.Tensor[[64, 1], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tt_out = pl.TileType(shape=[64, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                         layout=pl.DN)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_tmp = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt_out, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_tmp = tile_tmp.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.minimum(cur_out, cur_a, cur_tmp, dim=0)
        pl.store(out, cur_out, [0, 0])


# elementwise/minimum.md (dim=1)
def col_min_kernel(a: pl.Tensor[[64, 128], pl.DT_FP32],
                   out: pl.Tensor[[1, 128], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tt_out = pl.TileType(shape=[1, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_tmp = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt_out, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_tmp = tile_tmp.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.minimum(cur_out, cur_a, cur_tmp, dim=1)
        pl.store(out, cur_out, [0, 0])


# elementwise/minimum.md (dim=0, dim=1)
def test_minimum_reduction_pages(backend):
    a = reduce_input()
    row = launch(row_min_kernel, backend, a, sentinel((64, 1)))[1]
    assert_rows(row, "[[-8], [24], [56], [88], ...]")
    np.testing.assert_array_equal(row, a.min(axis=1, keepdims=True))
    col = launch(col_min_kernel, backend, a, sentinel((1, 128)))[1]
    assert_rows(col, "[[-8 -7.75 -7.5 -7.25 -7 -6.75 -6.5 -6.25 ...]]", rows=(0,))
    np.testing.assert_array_equal(col, a.min(axis=0, keepdims=True))


# elementwise/mul.md
def mul_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32], b: pl.Tensor[[64, 64], pl.DT_FP32],
               out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.mul(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


# elementwise/mul.md
def test_mul_page(backend):
    a, b = binary_inputs()
    out = launch(mul_kernel, backend, a, b, sentinel((64, 64)))[2]
    assert_rows(out, "[[10 13.125 16.5 20.125 24 28.125 32.5 37.125 ...], "
                     "[714 733.125 752.5 772.125 792 812.125 832.5 853.125 ...], "
                     "[2.442000e+03 2.477125e+03 2.512500e+03 2.548125e+03 2.584000e+03 2.620125e+03 2.656500e+03 "
                     "2.693125e+03 ...], "
                     "[5.194000e+03 5.245125e+03 5.296500e+03 5.348125e+03 5.400000e+03 5.452125e+03 5.504500e+03 "
                     "5.557125e+03 ...], ...]")
    np.testing.assert_array_equal(out, a * b)


# elementwise/neg.md
def neg_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32],
               out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_out = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.neg(cur_out, cur_a)
        pl.store(out, cur_out, [0, 0])


# elementwise/neg.md
def test_neg_page(backend):
    a = ramp((64, 64), -4, 0.125)
    assert_rows(a, A_M4_EIGHTH)
    out = launch(neg_kernel, backend, a, sentinel((64, 64)))[1]
    assert_rows(out, "[[4 3.875 3.75 3.625 3.5 3.375 3.25 3.125 ...], "
                     "[-4 -4.125 -4.25 -4.375 -4.5 -4.625 -4.75 -4.875 ...], "
                     "[-12 -12.125 -12.25 -12.375 -12.5 -12.625 -12.75 -12.875 ...], "
                     "[-20 -20.125 -20.25 -20.375 -20.5 -20.625 -20.75 -20.875 ...], ...]")
    np.testing.assert_array_equal(out, -a)


# elementwise/relu.md
def relu_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32],
                out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_out = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.relu(cur_out, cur_a)
        pl.store(out, cur_out, [0, 0])


# elementwise/relu.md
def test_relu_page(backend):
    a = ramp((64, 64), -4, 0.125)
    assert_rows(a, A_M4_EIGHTH)
    out = launch(relu_kernel, backend, a, sentinel((64, 64)))[1]
    assert_rows(out, "[[0 0 0 0 0 0 0 0 ...], [4 4.125 4.25 4.375 4.5 4.625 4.75 4.875 ...], "
                     "[12 12.125 12.25 12.375 12.5 12.625 12.75 12.875 ...], "
                     "[20 20.125 20.25 20.375 20.5 20.625 20.75 20.875 ...], ...]")
    np.testing.assert_array_equal(out, np.maximum(a, 0))


# elementwise/shl.md
def shl_kernel(a: pl.Tensor[[64, 64], pl.DT_INT32],
               b: pl.Tensor[[64, 64], pl.DT_INT32],
               out: pl.Tensor[[64, 64], pl.DT_INT32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.shl(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


# elementwise/shr.md
def shr_kernel(a: pl.Tensor[[64, 64], pl.DT_INT32],
               b: pl.Tensor[[64, 64], pl.DT_INT32],
               out: pl.Tensor[[64, 64], pl.DT_INT32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.shr(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


def shift_inputs():
    """Values of both signs (some large) and every shift amount 0..31."""
    i = np.arange(64 * 64, dtype=np.int64).reshape(64, 64)
    a = ((i * 2654435761) % (1 << 32) - (1 << 31)).astype(np.int32)
    return a, (i % 32).astype(np.int32)


# elementwise/shl.md (no measured rows)
def test_shl_page(backend):
    a, b = shift_inputs()
    out = launch(shl_kernel, backend, a, b, sentinel((64, 64), np.int32))[2]
    np.testing.assert_array_equal(out, ((a.astype(np.int64) << b) & 0xFFFFFFFF).astype(np.uint32).view(np.int32))


# elementwise/shr.md (no measured rows; signed: arithmetic shift)
def test_shr_page(backend):
    a, b = shift_inputs()
    out = launch(shr_kernel, backend, a, b, sentinel((64, 64), np.int32))[2]
    np.testing.assert_array_equal(out, a >> b)


# elementwise/sqrt.md
def sqrt_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32],
                out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_out = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.sqrt(cur_out, cur_a)
        pl.store(out, cur_out, [0, 0])


# elementwise/sqrt.md (no measured rows)
def test_sqrt_page(backend):
    a = ramp((64, 64), 0, 0.25)
    out = launch(sqrt_kernel, backend, a, sentinel((64, 64)))[1]
    np.testing.assert_array_equal(out, np.sqrt(a))


# elementwise/sub.md
def sub_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32], b: pl.Tensor[[64, 64], pl.DT_FP32],
               out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.sub(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


# elementwise/sub.md
def test_sub_page(backend):
    a, b = binary_inputs()
    out = launch(sub_kernel, backend, a, b, sentinel((64, 64)))[2]
    assert_rows(out, "[[-9 -9.25 -9.5 -9.75 -10 -10.25 -10.5 -10.75 ...], "
                     "[-25 -25.25 -25.5 -25.75 -26 -26.25 -26.5 -26.75 ...], "
                     "[-41 -41.25 -41.5 -41.75 -42 -42.25 -42.5 -42.75 ...], "
                     "[-57 -57.25 -57.5 -57.75 -58 -58.25 -58.5 -58.75 ...], ...]")
    np.testing.assert_array_equal(out, a - b)


# elementwise/xor.md
def xor_kernel(
    a: pl.Tensor[[64, 64], pl.DT_INT32],
    b: pl.Tensor[[64, 64], pl.DT_INT32],
    out: pl.Tensor[[64, 64], pl.DT_INT32],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_tmp = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    tile_out = pl.make_tile_group(type=tt, addrs=0xC000, mutex_ids=[3])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_tmp = tile_tmp.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.xor(cur_out, cur_a, cur_b, cur_tmp)
        pl.store(out, cur_out, [0, 0])


# elementwise/xor.md (b's columns beyond the 8 printed ones are our guess: 1 + column)
def test_xor_page(backend):
    a = np.arange(2, 2 + 64 * 64, dtype=np.int32).reshape(64, 64)
    b = np.tile(np.arange(1, 65, dtype=np.int32), (64, 1))
    assert_rows(a, "[[2 3 4 5 6 7 8 9 ...], [66 67 68 69 70 71 72 73 ...], [130 131 132 133 134 135 136 137 ...], "
                   "[194 195 196 197 198 199 200 201 ...], ...]")
    assert_rows(b, "[[1 2 3 4 5 6 7 8 ...], [1 2 3 4 5 6 7 8 ...], [1 2 3 4 5 6 7 8 ...], [1 2 3 4 5 6 7 8 ...], ...]")
    out = launch(xor_kernel, backend, a, b, sentinel((64, 64), np.int32))[2]
    assert_rows(out, "[[3 1 7 1 3 1 15 1 ...], [67 65 71 65 67 65 79 65 ...], [131 129 135 129 131 129 143 129 ...], "
                     "[195 193 199 193 195 193 207 193 ...], ...]")
    np.testing.assert_array_equal(out, a ^ b)


# ================================================================================ fused_vector_computation/
# fused_vector_computation/add_relu.md
def add_relu_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32], b: pl.Tensor[[64, 64], pl.DT_FP32],
                    out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.add_relu(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


# fused_vector_computation/add_relu.md
def test_add_relu_page(backend):
    a, b = ramp((64, 64), -6, 0.25), ramp((64, 64), 1, 0.5)
    assert_rows(a, "[[-6 -5.75 -5.5 -5.25 -5 -4.75 -4.5 -4.25 ...], [10 10.25 10.5 10.75 11 11.25 11.5 11.75 ...], "
                   "[26 26.25 26.5 26.75 27 27.25 27.5 27.75 ...], [42 42.25 42.5 42.75 43 43.25 43.5 43.75 ...], ...]")
    assert_rows(b, "[[1 1.5 2 2.5 3 3.5 4 4.5 ...], [33 33.5 34 34.5 35 35.5 36 36.5 ...], "
                   "[65 65.5 66 66.5 67 67.5 68 68.5 ...], [97 97.5 98 98.5 99 99.5 100 100.5 ...], ...]")
    out = launch(add_relu_kernel, backend, a, b, sentinel((64, 64)))[2]
    assert_rows(out, "[[0 0 0 0 0 0 0 0.25 ...], [43 43.75 44.5 45.25 46 46.75 47.5 48.25 ...], "
                     "[91 91.75 92.5 93.25 94 94.75 95.5 96.25 ...], "
                     "[139 139.75 140.5 141.25 142 142.75 143.5 144.25 ...], ...]")
    np.testing.assert_array_equal(out, np.maximum(a + b, 0))


# fused_vector_computation/add_relu_cast.md
def add_relu_cast_kernel(a: pl.Tensor[[64, 64], pl.DT_FP16], b: pl.Tensor[[64, 64], pl.DT_FP16],
                         out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt_in = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tt_out = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt_in, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt_in, addrs=0x2000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt_out, addrs=0x4000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.add_relu_cast(cur_out, cur_a, cur_b, target_type=pl.DT_FP32, mode=pl.RoundMode.CAST_ROUND)
        pl.store(out, cur_out, [0, 0])


def fp16_cast_inputs():
    """a = -2 + i/4, b = 3 - i/8 (64x64 fp16): the add_relu_cast / sub_relu_cast / mul_cast pages."""
    a, b = ramp((64, 64), -2, 0.25, np.float16), ramp((64, 64), 3, -0.125, np.float16)
    assert_rows(a, A_M2_QUARTER_F16)
    assert_rows(b, B_3_MEIGHTH_F16)
    return a, b


# fused_vector_computation/add_relu_cast.md (TADD, TRELU in fp16, then TCVT to fp32)
def test_add_relu_cast_page(backend):
    a, b = fp16_cast_inputs()
    out = launch(add_relu_cast_kernel, backend, a, b, sentinel((64, 64)))[2]
    assert_rows(out, "[[1 1.125 1.25 1.375 1.5 1.625 1.75 1.875 ...], [9 9.125 9.25 9.375 9.5 9.625 9.75 9.875 ...], "
                     "[17 17.125 17.25 17.375 17.5 17.625 17.75 17.875 ...], "
                     "[25 25.125 25.25 25.375 25.5 25.625 25.75 25.875 ...], ...]")
    want = np.maximum(f16(a.astype(np.float32) + b.astype(np.float32)), 0).astype(np.float32)
    np.testing.assert_array_equal(out, want)


# fused_vector_computation/addc.md
def addc_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32],
                b: pl.Tensor[[64, 64], pl.DT_FP32],
                c: pl.Tensor[[64, 64], pl.DT_FP32],
                out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_c = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    tile_out = pl.make_tile_group(type=tt, addrs=0xC000, mutex_ids=[3])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_c = tile_c.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.load(cur_c, c, [0, 0])
        pl.addc(cur_out, cur_a, cur_b, cur_c)
        pl.store(out, cur_out, [0, 0])


# fused_vector_computation/addc.md (no measured rows; exact inputs, so the summation order is irrelevant)
def test_addc_page(backend):
    a, b, c = ramp((64, 64), 1, 0.25), ramp((64, 64), 10, -0.5), ramp((64, 64), -3, 0.125)
    out = launch(addc_kernel, backend, a, b, c, sentinel((64, 64)))[3]
    np.testing.assert_array_equal(out, a + b + c)


# fused_vector_computation/fused_mul_add_relu.md
def fused_mul_add_relu_kernel(
    x: pl.Tensor[[M, N], pl.DT_FP16],
    y: pl.Tensor[[M, N], pl.DT_FP16],
    z: pl.Tensor[[M, N], pl.DT_FP16],
):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[1])
    tile_c = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_c = tile_c.current()
        pl.load(cur_a, x, [0, 0])
        pl.load(cur_b, y, [0, 0])
        pl.load(cur_c, z, [0, 0])
        pl.fused_mul_add_relu(cur_c, cur_a, cur_b)
        pl.store(z, cur_c, [0, 0])


# fused_vector_computation/fused_mul_add_relu.md (out = relu(out * a + b), rounded once)
def test_fused_mul_add_relu_page(backend):
    x, y, z = (ramp((M, N), -2, 0.25, np.float16), ramp((M, N), 1, 0.125, np.float16),
               ramp((M, N), 3, -0.0625, np.float16))
    assert_rows(x, "[[-2 -1.75 -1.5 -1.25 -1 -0.75 -0.5 -0.25 ...], [30 30.25 30.5 30.75 31 31.25 31.5 31.75 ...], "
                   "[62 62.25 62.5 62.75 63 63.25 63.5 63.75 ...], [94 94.25 94.5 94.75 95 95.25 95.5 95.75 ...], ...]")
    assert_rows(y, "[[1 1.125 1.25 1.375 1.5 1.625 1.75 1.875 ...], "
                   "[17 17.125 17.25 17.375 17.5 17.625 17.75 17.875 ...], "
                   "[33 33.125 33.25 33.375 33.5 33.625 33.75 33.875 ...], "
                   "[49 49.125 49.25 49.375 49.5 49.625 49.75 49.875 ...], ...]")
    assert_rows(z, "[[3 2.9375 2.875 2.8125 2.75 2.6875 2.625 2.5625 ...], "
                   "[-5 -5.0625 -5.125 -5.1875 -5.25 -5.3125 -5.375 -5.4375 ...], "
                   "[-13 -13.0625 -13.125 -13.1875 -13.25 -13.3125 -13.375 -13.4375 ...], "
                   "[-21 -21.0625 -21.125 -21.1875 -21.25 -21.3125 -21.375 -21.4375 ...], ...]")
    out = launch(fused_mul_add_relu_kernel, backend, x, y, z)[2]
    assert_rows(out, "[[0 0 0 0 0 0 0.4375 1.234375 ...], [0 0 0 0 0 0 0 0 ...], [0 0 0 0 0 0 0 0 ...], "
                     "[0 0 0 0 0 0 0 0 ...], ...]")
    x32, y32, z32 = (v.astype(np.float32) for v in (x, y, z))
    np.testing.assert_array_equal(out, f16(np.maximum(z32 * x32 + y32, 0)))


# fused_vector_computation/mul_add_dst.md
def mul_add_dst_kernel(
    x: pl.Tensor[[M, N], pl.DT_FP16],
    y: pl.Tensor[[M, N], pl.DT_FP16],
    z: pl.Tensor[[M, N], pl.DT_FP16],
):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[1])
    tile_c = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_c = tile_c.current()
        pl.load(cur_a, x, [0, 0])
        pl.load(cur_b, y, [0, 0])
        pl.load(cur_c, z, [0, 0])
        pl.mul_add_dst(cur_c, cur_a, cur_b)
        pl.store(z, cur_c, [0, 0])


def mul_add_dst_run(backend):
    x, y, z = (ramp((M, N), 1, 0.25, np.float16), ramp((M, N), 3, -0.125, np.float16),
               ramp((M, N), -2, 0.0625, np.float16))
    assert_rows(x, "[[1 1.25 1.5 1.75 2 2.25 2.5 2.75 ...], [33 33.25 33.5 33.75 34 34.25 34.5 34.75 ...], "
                   "[65 65.25 65.5 65.75 66 66.25 66.5 66.75 ...], [97 97.25 97.5 97.75 98 98.25 98.5 98.75 ...], ...]")
    assert_rows(y, "[[3 2.875 2.75 2.625 2.5 2.375 2.25 2.125 ...], "
                   "[-13 -13.125 -13.25 -13.375 -13.5 -13.625 -13.75 -13.875 ...], "
                   "[-29 -29.125 -29.25 -29.375 -29.5 -29.625 -29.75 -29.875 ...], "
                   "[-45 -45.125 -45.25 -45.375 -45.5 -45.625 -45.75 -45.875 ...], ...]")
    assert_rows(z, "[[-2 -1.9375 -1.875 -1.8125 -1.75 -1.6875 -1.625 -1.5625 ...], "
                   "[6 6.0625 6.125 6.1875 6.25 6.3125 6.375 6.4375 ...], "
                   "[14 14.0625 14.125 14.1875 14.25 14.3125 14.375 14.4375 ...], "
                   "[22 22.0625 22.125 22.1875 22.25 22.3125 22.375 22.4375 ...], ...]")
    out = launch(mul_add_dst_kernel, backend, x, y, z)[2]
    return (v.astype(np.float32) for v in (x, y, z)), out


# fused_vector_computation/mul_add_dst.md: the page emits TMUL then TADD, so the fp16 product is rounded
# before the add, and its measured rows show it (row 1 col 1: -430.5, not the single-rounding -430.25)
def test_mul_add_dst_page_rows(backend):
    (x, y, z), out = mul_add_dst_run(backend)
    assert_rows(out, "[[1 1.65625 2.25 2.78125 3.25 3.65625 4 4.28125 ...], "
                     "[-423 -430.5 -438 -445.25 -452.75 -460.5 -468 -475.75 ...], "
                     "[-1.871000e+03 -1.886000e+03 -1.902000e+03 -1.917000e+03 -1.933000e+03 -1.949000e+03 "
                     "-1.964000e+03 -1.980000e+03 ...], "
                     "[-4.344000e+03 -4.364000e+03 -4.388000e+03 -4.412000e+03 -4.436000e+03 -4.460000e+03 "
                     "-4.484000e+03 -4.508000e+03 ...], ...]")
    np.testing.assert_array_equal(out, f16(f16(x * y).astype(np.float32) + z))


# fused_vector_computation/mul_cast.md
def mul_cast_kernel(a: pl.Tensor[[64, 64], pl.DT_FP16], b: pl.Tensor[[64, 64], pl.DT_FP16],
                    out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt_in = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tt_out = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt_in, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt_in, addrs=0x2000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt_out, addrs=0x4000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.mul_cast(cur_out, cur_a, cur_b, target_type=pl.DT_FP32, mode=pl.RoundMode.CAST_ROUND)
        pl.store(out, cur_out, [0, 0])


# fused_vector_computation/mul_cast.md (TMUL in fp16, then TCVT: row 1 col 1 is -73, not -73.03125)
def test_mul_cast_page(backend):
    a, b = fp16_cast_inputs()
    with np.errstate(over="ignore"):
        out = launch(mul_cast_kernel, backend, a, b, sentinel((64, 64)))[2]
        want = f16(a.astype(np.float32) * b.astype(np.float32)).astype(np.float32)
    assert_rows(out, "[[-6 -5.03125 -4.125 -3.28125 -2.5 -1.78125 -1.125 -0.53125 ...], "
                     "[-70 -73 -76.125 -79.25 -82.5 -85.75 -89.125 -92.5 ...], "
                     "[-390 -397 -404 -411.25 -418.5 -425.75 -433 -440.5 ...], "
                     "[-966 -977 -988 -999.5 -1.010500e+03 -1.022000e+03 -1.033000e+03 -1.045000e+03 ...], ...]")
    np.testing.assert_array_equal(out, want)


# fused_vector_computation/partadd.md
def partadd_kernel(
    x: pl.Tensor[[M, N], pl.DT_FP16],
    y: pl.Tensor[[M, N], pl.DT_FP16],
    z: pl.Tensor[[M, N], pl.DT_FP16],
):
    tile_type = pl.TileType(
        shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec,
        valid_shape=[-1, -1])
    tile_a = pl.make_tile_group(type=tile_type, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tile_type, addrs=0x8000, mutex_ids=[1])
    tile_c = pl.make_tile_group(type=tile_type, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_c = tile_c.current()
        pl.set_validshape(cur_a, [64, 128])
        pl.load(cur_a, x, [0, 0])
        pl.set_validshape(cur_b, [32, 128])
        pl.load(cur_b, y, [0, 0])
        pl.set_validshape(cur_c, [64, 128])
        pl.partadd(cur_c, cur_a, cur_b)
        pl.store(z, cur_c, [0, 0])


PARTADD_ROWS = (0, 1, 30, 31, 32, 33)


# fused_vector_computation/partadd.md (rows 0, 1, 30-33 printed, 16 columns)
def test_partadd_page(backend):
    x, y = ramp((M, N), 1, 0.25, np.float16), ramp((M, N), 10, 0.5, np.float16)
    assert_rows(x, "[[1 1.25 1.5 1.75 2 2.25 2.5 2.75 3 3.25 3.5 3.75 4 4.25 4.5 4.75 ...], "
                   "[33 33.25 33.5 33.75 34 34.25 34.5 34.75 35 35.25 35.5 35.75 36 36.25 36.5 36.75 ...], "
                   "[961 961 961.5 962 962 962 962.5 963 963 963 963.5 964 964 964 964.5 965 ...], "
                   "[993 993 993.5 994 994 994 994.5 995 995 995 995.5 996 996 996 996.5 997 ...], "
                   "[1.025000e+03 1.025000e+03 1.026000e+03 1.026000e+03 1.026000e+03 1.026000e+03 1.026000e+03 "
                   "1.027000e+03 1.027000e+03 1.027000e+03 1.028000e+03 1.028000e+03 1.028000e+03 1.028000e+03 "
                   "1.028000e+03 1.029000e+03 ...], "
                   "[1.057000e+03 1.057000e+03 1.058000e+03 1.058000e+03 1.058000e+03 1.058000e+03 1.058000e+03 "
                   "1.059000e+03 1.059000e+03 1.059000e+03 1.060000e+03 1.060000e+03 1.060000e+03 1.060000e+03 "
                   "1.060000e+03 1.061000e+03 ...]]", rows=PARTADD_ROWS)
    assert_rows(y, "[[10 10.5 11 11.5 12 12.5 13 13.5 14 14.5 15 15.5 16 16.5 17 17.5 ...], "
                   "[74 74.5 75 75.5 76 76.5 77 77.5 78 78.5 79 79.5 80 80.5 81 81.5 ...], "
                   "[1.930000e+03 1.930000e+03 1.931000e+03 1.932000e+03 1.932000e+03 1.932000e+03 1.933000e+03 "
                   "1.934000e+03 1.934000e+03 1.934000e+03 1.935000e+03 1.936000e+03 1.936000e+03 1.936000e+03 "
                   "1.937000e+03 1.938000e+03 ...], "
                   "[1.994000e+03 1.994000e+03 1.995000e+03 1.996000e+03 1.996000e+03 1.996000e+03 1.997000e+03 "
                   "1.998000e+03 1.998000e+03 1.998000e+03 1.999000e+03 2.000000e+03 2.000000e+03 2.000000e+03 "
                   "2.001000e+03 2.002000e+03 ...], "
                   "[2.058000e+03 2.058000e+03 2.060000e+03 2.060000e+03 2.060000e+03 2.060000e+03 2.060000e+03 "
                   "2.062000e+03 2.062000e+03 2.062000e+03 2.064000e+03 2.064000e+03 2.064000e+03 2.064000e+03 "
                   "2.064000e+03 2.066000e+03 ...], "
                   "[2.122000e+03 2.122000e+03 2.124000e+03 2.124000e+03 2.124000e+03 2.124000e+03 2.124000e+03 "
                   "2.126000e+03 2.126000e+03 2.126000e+03 2.128000e+03 2.128000e+03 2.128000e+03 2.128000e+03 "
                   "2.128000e+03 2.130000e+03 ...]]", rows=PARTADD_ROWS)
    z = launch(partadd_kernel, backend, x, y, sentinel((M, N), np.float16))[2]
    assert_rows(z, "[[11 11.75 12.5 13.25 14 14.75 15.5 16.25 17 17.75 18.5 19.25 20 20.75 21.5 22.25 ...], "
                   "[107 107.75 108.5 109.25 110 110.75 111.5 112.25 113 113.75 114.5 115.25 116 116.75 117.5 "
                   "118.25 ...], "
                   "[2.892000e+03 2.892000e+03 2.892000e+03 2.894000e+03 2.894000e+03 2.894000e+03 2.896000e+03 "
                   "2.896000e+03 2.896000e+03 2.896000e+03 2.898000e+03 2.900000e+03 2.900000e+03 2.900000e+03 "
                   "2.902000e+03 2.904000e+03 ...], "
                   "[2.988000e+03 2.988000e+03 2.988000e+03 2.990000e+03 2.990000e+03 2.990000e+03 2.992000e+03 "
                   "2.992000e+03 2.992000e+03 2.992000e+03 2.994000e+03 2.996000e+03 2.996000e+03 2.996000e+03 "
                   "2.998000e+03 3.000000e+03 ...], "
                   "[1.025000e+03 1.025000e+03 1.026000e+03 1.026000e+03 1.026000e+03 1.026000e+03 1.026000e+03 "
                   "1.027000e+03 1.027000e+03 1.027000e+03 1.028000e+03 1.028000e+03 1.028000e+03 1.028000e+03 "
                   "1.028000e+03 1.029000e+03 ...], "
                   "[1.057000e+03 1.057000e+03 1.058000e+03 1.058000e+03 1.058000e+03 1.058000e+03 1.058000e+03 "
                   "1.059000e+03 1.059000e+03 1.059000e+03 1.060000e+03 1.060000e+03 1.060000e+03 1.060000e+03 "
                   "1.060000e+03 1.061000e+03 ...]]", rows=PARTADD_ROWS)
    want = x.copy()
    want[:32] = f16(x[:32].astype(np.float32) + y[:32].astype(np.float32))
    np.testing.assert_array_equal(z, want)


# fused_vector_computation/partmax.md
def partmax_kernel(x: pl.Tensor[[64, 128], pl.DT_FP16],
                   y: pl.Tensor[[64, 128], pl.DT_FP16],
                   out: pl.Tensor[[64, 128], pl.DT_FP16]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16,
                     target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
    gx = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    gy = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[1])
    gout = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        tx, ty, tout = gx.current(), gy.current(), gout.current()
        pl.set_validshape(tx, [64, 128])
        pl.load(tx, x, [0, 0])
        pl.set_validshape(ty, [32, 128])
        pl.load(ty, y, [0, 0])
        pl.set_validshape(tout, [64, 128])
        pl.partmax(tout, tx, ty)
        pl.store(out, tout, [0, 0])


# fused_vector_computation/partmin.md
def partmin_kernel(x: pl.Tensor[[64, 128], pl.DT_FP16],
                   y: pl.Tensor[[64, 128], pl.DT_FP16],
                   out: pl.Tensor[[64, 128], pl.DT_FP16]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16,
                     target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
    gx = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    gy = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[1])
    gout = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        tx, ty, tout = gx.current(), gy.current(), gout.current()
        pl.set_validshape(tx, [64, 128])
        pl.load(tx, x, [0, 0])
        pl.set_validshape(ty, [32, 128])
        pl.load(ty, y, [0, 0])
        pl.set_validshape(tout, [64, 128])
        pl.partmin(tout, tx, ty)
        pl.store(out, tout, [0, 0])


# fused_vector_computation/partmul.md
def partmul_kernel(x: pl.Tensor[[64, 128], pl.DT_FP16],
                   y: pl.Tensor[[64, 128], pl.DT_FP16],
                   out: pl.Tensor[[64, 128], pl.DT_FP16]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16,
                     target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
    gx = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    gy = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[1])
    gout = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        tx, ty, tout = gx.current(), gy.current(), gout.current()
        pl.set_validshape(tx, [64, 128])
        pl.load(tx, x, [0, 0])
        pl.set_validshape(ty, [32, 128])
        pl.load(ty, y, [0, 0])
        pl.set_validshape(tout, [64, 128])
        pl.partmul(tout, tx, ty)
        pl.store(out, tout, [0, 0])


PART_PAGES = {"partmax": (partmax_kernel, np.maximum), "partmin": (partmin_kernel, np.minimum),
              "partmul": (partmul_kernel, np.multiply)}


# fused_vector_computation/partmax.md, partmin.md, partmul.md (no measured rows): the first 32 rows get
# op(x, y), the last 32 a copy of x
@pytest.mark.parametrize("page", sorted(PART_PAGES))
def test_part_pages(page, backend):
    kernel, op = PART_PAGES[page]
    i = np.arange(64 * 128).reshape(64, 128)
    x = (((i * 7) % 61 - 30) * 0.25).astype(np.float16)  # both signs, so max and min pick from both
    y = (((i * 5) % 53 - 26) * 0.375).astype(np.float16)
    out = launch(kernel, backend, x, y, sentinel((64, 128), np.float16))[2]
    want = x.copy()
    want[:32] = f16(op(x[:32].astype(np.float32), y[:32].astype(np.float32)))
    np.testing.assert_array_equal(out, want)


# fused_vector_computation/sub_relu.md
def sub_relu_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32], b: pl.Tensor[[64, 64], pl.DT_FP32],
                    out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.sub_relu(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


# fused_vector_computation/sub_relu.md
def test_sub_relu_page(backend):
    a, b = ramp((64, 64), 2, 0.5), ramp((64, 64), 3, 0.25)
    assert_rows(a, "[[2 2.5 3 3.5 4 4.5 5 5.5 ...], [34 34.5 35 35.5 36 36.5 37 37.5 ...], "
                   "[66 66.5 67 67.5 68 68.5 69 69.5 ...], [98 98.5 99 99.5 100 100.5 101 101.5 ...], ...]")
    assert_rows(b, "[[3 3.25 3.5 3.75 4 4.25 4.5 4.75 ...], [19 19.25 19.5 19.75 20 20.25 20.5 20.75 ...], "
                   "[35 35.25 35.5 35.75 36 36.25 36.5 36.75 ...], [51 51.25 51.5 51.75 52 52.25 52.5 52.75 ...], ...]")
    out = launch(sub_relu_kernel, backend, a, b, sentinel((64, 64)))[2]
    assert_rows(out, "[[0 0 0 0 0 0.25 0.5 0.75 ...], [15 15.25 15.5 15.75 16 16.25 16.5 16.75 ...], "
                     "[31 31.25 31.5 31.75 32 32.25 32.5 32.75 ...], [47 47.25 47.5 47.75 48 48.25 48.5 48.75 ...], ...]")
    np.testing.assert_array_equal(out, np.maximum(a - b, 0))


# fused_vector_computation/sub_relu_cast.md
def sub_relu_cast_kernel(a: pl.Tensor[[64, 64], pl.DT_FP16], b: pl.Tensor[[64, 64], pl.DT_FP16],
                         out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt_in = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tt_out = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt_in, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt_in, addrs=0x2000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt_out, addrs=0x4000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.sub_relu_cast(cur_out, cur_a, cur_b, target_type=pl.DT_FP32, mode=pl.RoundMode.CAST_ROUND)
        pl.store(out, cur_out, [0, 0])


# fused_vector_computation/sub_relu_cast.md
def test_sub_relu_cast_page(backend):
    a, b = fp16_cast_inputs()
    out = launch(sub_relu_cast_kernel, backend, a, b, sentinel((64, 64)))[2]
    assert_rows(out, "[[0 0 0 0 0 0 0 0 ...], [19 19.375 19.75 20.125 20.5 20.875 21.25 21.625 ...], "
                     "[43 43.375 43.75 44.125 44.5 44.875 45.25 45.625 ...], "
                     "[67 67.375 67.75 68.125 68.5 68.875 69.25 69.625 ...], ...]")
    want = np.maximum(f16(a.astype(np.float32) - b.astype(np.float32)), 0).astype(np.float32)
    np.testing.assert_array_equal(out, want)


# ================================================================================ composite_computation/
# composite_computation/axpy.md
def axpy_kernel(
    x: pl.Tensor[[64, 64], pl.DT_FP32],
    y: pl.Tensor[[64, 64], pl.DT_FP32],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_x_group = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_y_group = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        tile_x = tile_x_group.current()
        tile_y = tile_y_group.current()
        pl.load(tile_x, x, [0, 0])
        pl.load(tile_y, y, [0, 0])
        pl.axpy(tile_y, tile_x, ALPHA)
        pl.store(y, tile_y, [0, 0])


# composite_computation/axpy.md
def test_axpy_page(backend):
    x, y = ramp((64, 64), 1, 0.25), ramp((64, 64), 4, -0.125)
    assert_rows(x, A_1_QUARTER)
    assert_rows(y, "[[4 3.875 3.75 3.625 3.5 3.375 3.25 3.125 ...], "
                   "[-4 -4.125 -4.25 -4.375 -4.5 -4.625 -4.75 -4.875 ...], "
                   "[-12 -12.125 -12.25 -12.375 -12.5 -12.625 -12.75 -12.875 ...], "
                   "[-20 -20.125 -20.25 -20.375 -20.5 -20.625 -20.75 -20.875 ...], ...]")
    out = launch(axpy_kernel, backend, x, y)[1]
    assert_rows(out, "[[6 6.375 6.75 7.125 7.5 7.875 8.25 8.625 ...], "
                     "[30 30.375 30.75 31.125 31.5 31.875 32.25 32.625 ...], "
                     "[54 54.375 54.75 55.125 55.5 55.875 56.25 56.625 ...], "
                     "[78 78.375 78.75 79.125 79.5 79.875 80.25 80.625 ...], ...]")
    np.testing.assert_array_equal(out, np.float32(ALPHA) * x + y)


# composite_computation/fused_mul_add.md
def fused_mul_add_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP32], b: pl.Tensor[[64, 64], pl.DT_FP32],
    c: pl.Tensor[[64, 64], pl.DT_FP32],
):
    # fused_mul_add 为 in-place 融合乘加：c = c * a + b
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_c = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_c = tile_c.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.load(cur_c, c, [0, 0])
        pl.fused_mul_add(cur_c, cur_a, cur_b)
        pl.store(c, cur_c, [0, 0])


# composite_computation/fused_mul_add.md (out = lhs * out + rhs)
def test_fused_mul_add_page(backend):
    a, b, c = ramp((64, 64), 1, 0.25), ramp((64, 64), -3, 0.5), ramp((64, 64), 2, -0.125)
    assert_rows(a, A_1_QUARTER)
    assert_rows(b, "[[-3 -2.5 -2 -1.5 -1 -0.5 0 0.5 ...], [29 29.5 30 30.5 31 31.5 32 32.5 ...], "
                   "[61 61.5 62 62.5 63 63.5 64 64.5 ...], [93 93.5 94 94.5 95 95.5 96 96.5 ...], ...]")
    assert_rows(c, "[[2 1.875 1.75 1.625 1.5 1.375 1.25 1.125 ...], "
                   "[-6 -6.125 -6.25 -6.375 -6.5 -6.625 -6.75 -6.875 ...], "
                   "[-14 -14.125 -14.25 -14.375 -14.5 -14.625 -14.75 -14.875 ...], "
                   "[-22 -22.125 -22.25 -22.375 -22.5 -22.625 -22.75 -22.875 ...], ...]")
    out = launch(fused_mul_add_kernel, backend, a, b, c)[2]
    assert_rows(out, "[[-1 -0.15625 0.625 1.34375 2 2.59375 3.125 3.59375 ...], "
                     "[-73 -76.15625 -79.375 -82.65625 -86 -89.40625 -92.875 -96.40625 ...], "
                     "[-401 -408.15625 -415.375 -422.65625 -430 -437.40625 -444.875 -452.40625 ...], "
                     "[-985 -996.15625 -1.007375e+03 -1.018656e+03 -1.030000e+03 -1.041406e+03 -1.052875e+03 "
                     "-1.064406e+03 ...], ...]")
    want = (a.astype(np.float64) * c + b).astype(np.float32)  # the exact products fit fp32: one rounding
    np.testing.assert_array_equal(out, want)


# ================================================================================ comparison/
# comparison/comparison.md (tile-tile)
def gt_select_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP32],
    b: pl.Tensor[[64, 64], pl.DT_FP32],
    out: pl.Tensor[[64, 64], pl.DT_FP32],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a_group = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b_group = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out_group = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    tmp_vec_group = pl.make_tile_group(type=tt, addrs=0xC000, mutex_ids=[3])
    mask_vec_group = pl.make_tile_group(
        type=pl.TileType(shape=[64, 64], dtype=pl.DT_UINT8, target_memory=pl.MemorySpace.Vec),
        addrs=0x10000, mutex_ids=[4])
    with pl.section_vector():
        tile_a = tile_a_group.current()
        tile_b = tile_b_group.current()
        tile_out = tile_out_group.current()
        tmp_vec = tmp_vec_group.current()
        mask_vec = mask_vec_group.current()
        pl.load(tile_a, a, [0, 0])
        pl.load(tile_b, b, [0, 0])
        pl.gt(mask_vec, tile_a, tile_b)
        pl.system.bar_v()
        pl.select(tile_out, mask_vec, tile_a, tile_b, tmp_vec)
        pl.store(out, tile_out, [0, 0])


# comparison/comparison.md (tile-tile: select(a > b, a, b))
def test_gt_select_page(backend):
    a, b = ramp((64, 64), 1, 0.25), ramp((64, 64), 8, -0.125)
    assert_rows(a, A_1_QUARTER)
    assert_rows(b, "[[8 7.875 7.75 7.625 7.5 7.375 7.25 7.125 ...], [0 -0.125 -0.25 -0.375 -0.5 -0.625 -0.75 -0.875 ...], "
                   "[-8 -8.125 -8.25 -8.375 -8.5 -8.625 -8.75 -8.875 ...], "
                   "[-16 -16.125 -16.25 -16.375 -16.5 -16.625 -16.75 -16.875 ...], ...]")
    out = launch(gt_select_kernel, backend, a, b, sentinel((64, 64)))[2]
    assert_rows(out, "[[8 7.875 7.75 7.625 7.5 7.375 7.25 7.125 ...], "
                     "[17 17.25 17.5 17.75 18 18.25 18.5 18.75 ...], "
                     "[33 33.25 33.5 33.75 34 34.25 34.5 34.75 ...], "
                     "[49 49.25 49.5 49.75 50 50.25 50.5 50.75 ...], ...]")
    np.testing.assert_array_equal(out, np.where(a > b, a, b))


# comparison/comparison.md (tile-scalar)
def scalar_gt_select_kernel(
    a: pl.Tensor[[64, 128], pl.DT_FP32],
    b: pl.Tensor[[64, 128], pl.DT_FP32],
    mask_in: pl.Tensor[[64, 128], pl.DT_FP16],
    out: pl.Tensor[[64, 128], pl.DT_FP32],
):
    tt32 = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a_group = pl.make_tile_group(type=tt32, addrs=0x0000, mutex_ids=[0])
    tile_b_group = pl.make_tile_group(type=tt32, addrs=0x8000, mutex_ids=[1])
    tile_out_group = pl.make_tile_group(type=tt32, addrs=0x10000, mutex_ids=[2])
    tmp_vec_group = pl.make_tile_group(type=tt32, addrs=0x18000, mutex_ids=[3])
    mask_fp16_group = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x20000, mutex_ids=[4])
    mask_vec_group = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_UINT8, target_memory=pl.MemorySpace.Vec),
        addrs=0x24000, mutex_ids=[5])
    with pl.section_vector():
        tile_a = tile_a_group.current()
        tile_b = tile_b_group.current()
        tile_out = tile_out_group.current()
        tmp_vec = tmp_vec_group.current()
        mask_fp16 = mask_fp16_group.current()
        mask_vec = mask_vec_group.current()
        pl.load(tile_a, a, [0, 0])
        pl.load(tile_b, b, [0, 0])
        pl.load(mask_fp16, mask_in, [0, 0])
        # mask_fp16 > 0 -> bit-packed 谓词 mask_vec（cmp_mode=4 为 gt）
        pl.gt(mask_vec, mask_fp16, 0.0)
        pl.system.bar_v()
        # 谓词为真取 lhs(=a)，否则取 rhs(=b)
        pl.select(tile_out, mask_vec, tile_a, tile_b, tmp_vec)
        pl.store(out, tile_out, [0, 0])


# comparison/comparison.md (tile-scalar: select(mask > 0, a, b))
def test_scalar_gt_select_page(backend):
    a, b = ramp((64, 128), 1, 0.25), ramp((64, 128), 8, -0.125)
    mask = np.where(np.arange(64 * 128).reshape(64, 128) % 2 == 0, 1, -1).astype(np.float16)
    assert_rows(a, "[[1 1.25 1.5 1.75 2 2.25 2.5 2.75 ...], [33 33.25 33.5 33.75 34 34.25 34.5 34.75 ...], "
                   "[65 65.25 65.5 65.75 66 66.25 66.5 66.75 ...], [97 97.25 97.5 97.75 98 98.25 98.5 98.75 ...], ...]")
    assert_rows(b, "[[8 7.875 7.75 7.625 7.5 7.375 7.25 7.125 ...], "
                   "[-8 -8.125 -8.25 -8.375 -8.5 -8.625 -8.75 -8.875 ...], "
                   "[-24 -24.125 -24.25 -24.375 -24.5 -24.625 -24.75 -24.875 ...], "
                   "[-40 -40.125 -40.25 -40.375 -40.5 -40.625 -40.75 -40.875 ...], ...]")
    assert_rows(mask, "[[1 -1 1 -1 1 -1 1 -1 ...], [1 -1 1 -1 1 -1 1 -1 ...], [1 -1 1 -1 1 -1 1 -1 ...], "
                      "[1 -1 1 -1 1 -1 1 -1 ...], ...]")
    out = launch(scalar_gt_select_kernel, backend, a, b, mask, sentinel((64, 128)))[3]
    assert_rows(out, "[[1 7.875 1.5 7.625 2 7.375 2.5 7.125 ...], "
                     "[33 -8.125 33.5 -8.375 34 -8.625 34.5 -8.875 ...], "
                     "[65 -24.125 65.5 -24.375 66 -24.625 66.5 -24.875 ...], "
                     "[97 -40.125 97.5 -40.375 98 -40.625 98.5 -40.875 ...], ...]")
    np.testing.assert_array_equal(out, np.where(mask > 0, a, b))


# ================================================================================ fillpad.md
# fillpad.md (NORMAL)
def fillpad_kernel(
    x: pl.Tensor[[8, 8], pl.DT_INT32],
    z: pl.Tensor[[8, 8], pl.DT_INT32],
):
    src_type = pl.TileType(shape=[8, 8], dtype=pl.DT_INT32,
                           target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
    dst_type = pl.TileType(shape=[8, 8], dtype=pl.DT_INT32,
                           target_memory=pl.MemorySpace.Vec, pad=pl.TilePad.zero)
    src = pl.make_tile_group(type=src_type, addrs=0x0000, mutex_ids=[0])
    dst = pl.make_tile_group(type=dst_type, addrs=0x0100, mutex_ids=[1])
    with pl.section_vector():
        cur_src = src.current()
        cur_dst = dst.current()
        pl.load(cur_src, x, [0, 0])
        pl.set_validshape(cur_src, [5, 7])
        pl.fillpad(cur_dst, cur_src)
        pl.store(z, cur_dst, [0, 0])


# fillpad.md (EXPAND)
def fillpad_expand_kernel(
    x: pl.Tensor[[8, 8], pl.DT_INT32],
    z: pl.Tensor[[8, 16], pl.DT_INT32],
):
    src_type = pl.TileType(shape=[8, 8], dtype=pl.DT_INT32,
                           target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
    dst_type = pl.TileType(shape=[8, 16], dtype=pl.DT_INT32,
                           target_memory=pl.MemorySpace.Vec, pad=pl.TilePad.zero)
    src = pl.make_tile_group(type=src_type, addrs=0x0000, mutex_ids=[0])
    dst = pl.make_tile_group(type=dst_type, addrs=0x0100, mutex_ids=[1])
    with pl.section_vector():
        cur_src = src.current()
        cur_dst = dst.current()
        pl.load(cur_src, x, [0, 0])
        pl.set_validshape(cur_src, [5, 7])
        pl.fillpad(cur_dst, cur_src, mode=pl.FillPadMode.EXPAND)
        pl.store(z, cur_dst, [0, 0])


# fillpad.md (INPLACE)
def fillpad_inplace_kernel(
    x: pl.Tensor[[8, 8], pl.DT_INT32],
    z: pl.Tensor[[8, 8], pl.DT_INT32],
):
    src_type = pl.TileType(shape=[8, 8], dtype=pl.DT_INT32,
                           target_memory=pl.MemorySpace.Vec,
                           pad=pl.TilePad.zero, valid_shape=[-1, -1])
    dst_type = pl.TileType(shape=[8, 8], dtype=pl.DT_INT32,
                           target_memory=pl.MemorySpace.Vec, pad=pl.TilePad.zero)
    src = pl.make_tile_group(type=src_type, addrs=0x0000, mutex_ids=[0])
    dst = pl.make_tile_group(type=dst_type, addrs=0x0000, mutex_ids=[1])
    with pl.section_vector():
        cur_src = src.current()
        cur_dst = dst.current()
        pl.load(cur_src, x, [0, 0])
        pl.set_validshape(cur_src, [5, 7])
        pl.fillpad(cur_dst, cur_src, mode=pl.FillPadMode.INPLACE)
        pl.store(z, cur_dst, [0, 0])


FILLPAD_PAGES = {"normal": (fillpad_kernel, (8, 8)), "expand": (fillpad_expand_kernel, (8, 16)),
                 "inplace": (fillpad_inplace_kernel, (8, 8))}


# fillpad.md (no measured rows): z[0:5, 0:7] = x[0:5, 0:7], zero elsewhere (the whole destination is stored)
@pytest.mark.parametrize("mode", sorted(FILLPAD_PAGES))
def test_fillpad_pages(mode, backend):
    kernel, shape = FILLPAD_PAGES[mode]
    x = np.arange(1, 65, dtype=np.int32).reshape(8, 8)
    z = launch(kernel, backend, x, sentinel(shape, np.int32))[1]
    want = np.zeros(shape, np.int32)
    want[:5, :7] = x[:5, :7]
    np.testing.assert_array_equal(z, want)

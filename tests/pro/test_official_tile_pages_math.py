"""The complete example kernels of the official tile-level op pages (hicann/pypto,
docs/zh/pypto_pro/api/SIMD-API/operation/memory_vector_computation/: math_functions, selection,
type_conversion, transpose_and_element_access) on every backend.

Each kernel body is the page's kernel (decorator removed, compiled per backend with the page's
``auto_mutex=True``).  Each test rebuilds the page's inputs, checks them and the outputs against the
rows the page prints (within half a unit of the printed digits; exp and div get 1-2 fp32 ulp more,
because the device's results are not correctly rounded either), checks the whole output against a
numpy reference of the op's documented semantics, and -- on ``sim`` in strict mode -- that the launch
reports no race, deadlock or uninitialised read.

Not here: sorting/* and scatter_gather/gatherb, histogram (tests/pro/test_official_tile_pages_sorting.py),
the vector_mask/* pages (tests/pro/test_vector_mask.py), set_stride (tests/pro/test_gm_views.py) and the
FP16 column-sum precision note of sum.md, which shows no kernel.
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


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Runs the test once per backend."""
    return request.param


@functools.lru_cache(maxsize=None)
def on(fn, backend: str):
    """Kernel body ``fn`` jitted for ``backend`` as the pages do (``auto_mutex=True``; the simulator in
    strict mode: any race, deadlock or uninitialised read raises); one compile per backend."""
    return pl.jit(fn, auto_mutex=True, backend=backend, sim_options={"strict": True} if backend == "sim" else None)


def run(fn, backend, *args):
    """Launch ``fn`` (block_dim 1) on copies of ``args``; returns the copies (outputs are written in place)."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel = on(fn, backend)
    kernel(*copies)
    if backend == "sim":
        assert kernel.last_report is not None and not kernel.last_report.hazards
    return copies


# ------------------------------------------------------------------------------ printed rows of a page
_TOKEN = re.compile(r"(-?\d+)(?:\.(\d+))?(?:e([+-]\d+))?")


def _rows(printed: str):
    """'[[a b ...], [c d ...], ...]' -> the printed rows as lists of number tokens ('...' dropped)."""
    return [[t for t in row.split() if t != "..."] for row in re.findall(r"\[([^\[\]]*)\]", printed)]


def _half_unit(token: str) -> float:
    """Half a unit of the last printed digit.  Fixed notation is printed with (up to) 6 decimals,
    trailing zeros stripped; scientific notation as '%.6e'."""
    m = _TOKEN.fullmatch(token)
    assert m, token
    _, frac, exp = m.groups()
    if exp is None:
        return 0.5 * 10.0 ** -max(6, len(frac or ""))
    return 0.5 * 10.0 ** (-len(frac or "") + int(exp))


def assert_printed(actual, printed: str, exact: bool = False, ulps: int = 0):
    """The page prints the first rows (and leading columns) of ``actual``: compare them, within half a
    unit of the printed digits plus ``ulps`` units in the last place of ``actual``'s dtype."""
    actual = np.asarray(actual)
    rows = _rows(printed)
    assert rows
    for r, row in enumerate(rows):
        for c, tok in enumerate(row):
            got = float(actual[r, c])
            if exact:
                assert got == float(tok), (r, c, got, tok)
            else:
                slack = ulps * float(np.spacing(np.abs(actual[r, c])))
                assert abs(got - float(tok)) <= _half_unit(tok) + slack, (r, c, got, tok)


def ramp(shape, start, step, dtype):
    """The pages' inputs: ``start + step * k`` over the flat index k, rounded once to ``dtype``."""
    return (start + step * np.arange(int(np.prod(shape)), dtype=np.float64)).reshape(shape).astype(dtype)


# ============================================================================================ math_functions
M, N = 64, 128


# math_functions/argmax.md (dim = 0)
def row_argmax_kernel(
    x: pl.Tensor[[M, N], pl.DT_FP16],
    z: pl.Tensor[[M, 1], pl.DT_INT32],
):
    tile_a = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x0000, mutex_ids=[0])
    tile_tmp = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(
        type=pl.TileType(shape=[64, 1], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec),
        addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_tmp = tile_tmp.current()
        cur_out = tile_out.current()
        pl.load(cur_a, x, [0, 0])
        pl.argmax(cur_out, cur_a, cur_tmp)
        pl.store(z, cur_out, [0, 0])


# math_functions/argmax.md (dim = 1)
def col_argmax_kernel(
    x: pl.Tensor[[M, N], pl.DT_FP16],
    z: pl.Tensor[[1, N], pl.DT_INT32],
):
    tile_a = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x0000, mutex_ids=[0])
    tile_tmp = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(
        type=pl.TileType(shape=[1, 128], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec),
        addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_tmp = tile_tmp.current()
        cur_out = tile_out.current()
        pl.load(cur_a, x, [0, 0])
        pl.argmax(cur_out, cur_a, cur_tmp, dim=1)
        pl.store(z, cur_out, [0, 0])


# math_functions/argmin.md (dim = 0)
def row_argmin_kernel(
    x: pl.Tensor[[M, N], pl.DT_FP16],
    z: pl.Tensor[[M, 1], pl.DT_INT32],
):
    tile_a = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x0000, mutex_ids=[0])
    tile_tmp = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(
        type=pl.TileType(shape=[64, 1], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec),
        addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_tmp = tile_tmp.current()
        cur_out = tile_out.current()
        pl.load(cur_a, x, [0, 0])
        pl.argmin(cur_out, cur_a, cur_tmp)
        pl.store(z, cur_out, [0, 0])


# math_functions/argmin.md (dim = 1)
def col_argmin_kernel(
    x: pl.Tensor[[M, N], pl.DT_FP16],
    z: pl.Tensor[[1, N], pl.DT_INT32],
):
    tile_a = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x0000, mutex_ids=[0])
    tile_tmp = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(
        type=pl.TileType(shape=[1, 128], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec),
        addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_tmp = tile_tmp.current()
        cur_out = tile_out.current()
        pl.load(cur_a, x, [0, 0])
        pl.argmin(cur_out, cur_a, cur_tmp, dim=1)
        pl.store(z, cur_out, [0, 0])


ARG_INPUT = ("[[-8 -7.75 -7.5 -7.25 -7 -6.75 -6.5 -6.25 ...], [24 24.25 24.5 24.75 25 25.25 25.5 25.75 ...], "
             "[56 56.25 56.5 56.75 57 57.25 57.5 57.75 ...], [88 88.25 88.5 88.75 89 89.25 89.5 89.75 ...], ...]")
ARG_CASES = {  # kernel, output shape, numpy reference (first index of the extreme), printed output
    "argmax_dim0": (row_argmax_kernel, (M, 1), lambda x: np.argmax(x, axis=1)[:, None],
                    "[[127], [127], [127], [127], ...]"),
    "argmax_dim1": (col_argmax_kernel, (1, N), lambda x: np.argmax(x, axis=0)[None, :],
                    "[[63 63 63 63 63 63 63 63 ...]]"),
    "argmin_dim0": (row_argmin_kernel, (M, 1), lambda x: np.argmin(x, axis=1)[:, None],
                    "[[0], [0], [0], [0], ...]"),
    "argmin_dim1": (col_argmin_kernel, (1, N), lambda x: np.argmin(x, axis=0)[None, :],
                    "[[0 0 0 0 0 0 0 0 ...]]"),
}


@pytest.mark.parametrize("case", sorted(ARG_CASES))
def test_argmax_argmin_pages(backend, case):
    fn, out_shape, ref, printed = ARG_CASES[case]
    x = ramp((M, N), -8, 0.25, np.float16)
    assert_printed(x, ARG_INPUT)
    z = run(fn, backend, x, np.full(out_shape, -1, np.int32))[1]
    assert_printed(z, printed, exact=True)
    # fp16 rounding makes ties in the upper rows (values >= 512): the first index of the extreme wins
    np.testing.assert_array_equal(z, ref(x.astype(np.float32)))


# math_functions/exp.md
def exp_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32],
               out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_out = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.exp(cur_out, cur_a)
        pl.store(out, cur_out, [0, 0])


EXP_OUT = ("[[0.018316 0.020754 0.023518 0.026649 0.030197 0.034218 0.038774 0.043937 ...], [54.598148 "
           "61.867809 70.105408 79.439842 90.017128 102.002769 115.584282 130.974152 ...], [1.627548e+05 "
           "1.844253e+05 2.089813e+05 2.368068e+05 2.683373e+05 3.040660e+05 3.445519e+05 3.904284e+05 "
           "...], [4.851652e+08 5.497642e+08 6.229645e+08 7.059112e+08 7.999022e+08 9.064079e+08 "
           "1.027095e+09 1.163851e+09 ...], ...]")


def test_exp_page(backend):
    a = ramp((64, 64), -4, 0.125, np.float32)
    assert_printed(a, "[[-4 -3.875 -3.75 -3.625 -3.5 -3.375 -3.25 -3.125 ...], [4 4.125 4.25 4.375 4.5 4.625 4.75 "
                      "4.875 ...], [12 12.125 12.25 12.375 12.5 12.625 12.75 12.875 ...], [20 20.125 20.25 20.375 "
                      "20.5 20.625 20.75 20.875 ...], ...]")
    out = run(exp_kernel, backend, a, np.zeros((64, 64), np.float32))[1]
    # exp is not correctly rounded on the device (page: 70.105408, correctly rounded: 70.105415) nor here
    # (docs/language.md: numpy on interp/sim, a 1-ulp polynomial on cpu): allow 2 ulp besides the digits
    assert_printed(out, EXP_OUT, ulps=2)
    with np.errstate(over="ignore"):  # +inf from a > 88.72 (row 11 on), as in fp32
        want = np.exp(a.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(out, want, rtol=2.5e-7, atol=0)  # 2 ulp


# math_functions/expand_div.md (dim = 0)
def row_expand_div_kernel(a: pl.Tensor[[64, 128], pl.DT_FP32], v: pl.Tensor[[64, 1], pl.DT_FP32],
                          out: pl.Tensor[[64, 128], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tt_v = pl.TileType(shape=[64, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                       layout=pl.DN)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_v = pl.make_tile_group(type=tt_v, addrs=0x8000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_v = tile_v.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_v, v, [0, 0])
        pl.expand_div(cur_out, cur_a, cur_v)
        pl.store(out, cur_out, [0, 0])


# math_functions/expand_div.md (dim = 1)
def col_expand_div_kernel(a: pl.Tensor[[64, 128], pl.DT_FP32], v: pl.Tensor[[1, 128], pl.DT_FP32],
                          out: pl.Tensor[[64, 128], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tt_v = pl.TileType(shape=[1, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_v = pl.make_tile_group(type=tt_v, addrs=0x8000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_v = tile_v.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_v, v, [0, 0])
        pl.expand_div(cur_out, cur_a, cur_v, dim=1)
        pl.store(out, cur_out, [0, 0])


# math_functions/expand_max.md (dim = 0)
def row_expand_max_kernel(
    x: pl.Tensor[[M, N], pl.DT_FP16],
    y: pl.Tensor[[M, 1], pl.DT_FP16],
    z: pl.Tensor[[M, N], pl.DT_FP16],
):
    tile_a = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x0000, mutex_ids=[0])
    tile_row = pl.make_tile_group(
        type=pl.TileType(shape=[64, 1], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_row = tile_row.current()
        cur_out = tile_out.current()
        pl.load(cur_a, x, [0, 0])
        pl.load(cur_row, y, [0, 0])
        pl.expand_max(cur_out, cur_a, cur_row)
        pl.store(z, cur_out, [0, 0])


# math_functions/expand_max.md (dim = 1)
def col_expand_max_kernel(
    x: pl.Tensor[[M, N], pl.DT_FP16],
    y: pl.Tensor[[1, N], pl.DT_FP16],
    z: pl.Tensor[[M, N], pl.DT_FP16],
):
    tile_a = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x0000, mutex_ids=[0])
    tile_col = pl.make_tile_group(
        type=pl.TileType(shape=[1, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_col = tile_col.current()
        cur_out = tile_out.current()
        pl.load(cur_a, x, [0, 0])
        pl.load(cur_col, y, [0, 0])
        pl.expand_max(cur_out, cur_a, cur_col, dim=1)
        pl.store(z, cur_out, [0, 0])


# math_functions/expand_min.md (dim = 0)
def row_expand_min_kernel(
    x: pl.Tensor[[M, N], pl.DT_FP16],
    y: pl.Tensor[[M, 1], pl.DT_FP16],
    z: pl.Tensor[[M, N], pl.DT_FP16],
):
    tile_a = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x0000, mutex_ids=[0])
    tile_row = pl.make_tile_group(
        type=pl.TileType(shape=[64, 1], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_row = tile_row.current()
        cur_out = tile_out.current()
        pl.load(cur_a, x, [0, 0])
        pl.load(cur_row, y, [0, 0])
        pl.expand_min(cur_out, cur_a, cur_row)
        pl.store(z, cur_out, [0, 0])


# math_functions/expand_min.md (dim = 1)
def col_expand_min_kernel(
    x: pl.Tensor[[M, N], pl.DT_FP16],
    y: pl.Tensor[[1, N], pl.DT_FP16],
    z: pl.Tensor[[M, N], pl.DT_FP16],
):
    tile_a = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x0000, mutex_ids=[0])
    tile_col = pl.make_tile_group(
        type=pl.TileType(shape=[1, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_col = tile_col.current()
        cur_out = tile_out.current()
        pl.load(cur_a, x, [0, 0])
        pl.load(cur_col, y, [0, 0])
        pl.expand_min(cur_out, cur_a, cur_col, dim=1)
        pl.store(z, cur_out, [0, 0])


# math_functions/expand_mul.md (dim = 0)
def row_expand_mul_kernel(a: pl.Tensor[[64, 128], pl.DT_FP32], v: pl.Tensor[[64, 1], pl.DT_FP32],
                          out: pl.Tensor[[64, 128], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tt_v = pl.TileType(shape=[64, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                       layout=pl.DN)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_v = pl.make_tile_group(type=tt_v, addrs=0x8000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_v = tile_v.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_v, v, [0, 0])
        pl.expand_mul(cur_out, cur_a, cur_v)
        pl.store(out, cur_out, [0, 0])


# math_functions/expand_mul.md (dim = 1)
def col_expand_mul_kernel(a: pl.Tensor[[64, 128], pl.DT_FP32], v: pl.Tensor[[1, 128], pl.DT_FP32],
                          out: pl.Tensor[[64, 128], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tt_v = pl.TileType(shape=[1, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_v = pl.make_tile_group(type=tt_v, addrs=0x8000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_v = tile_v.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_v, v, [0, 0])
        pl.expand_mul(cur_out, cur_a, cur_v, dim=1)
        pl.store(out, cur_out, [0, 0])


# math_functions/expand_sub.md (dim = 0)
def row_expand_sub_kernel(a: pl.Tensor[[64, 128], pl.DT_FP32], v: pl.Tensor[[64, 1], pl.DT_FP32],
                          out: pl.Tensor[[64, 128], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tt_v = pl.TileType(shape=[64, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                       layout=pl.DN)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_v = pl.make_tile_group(type=tt_v, addrs=0x8000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_v = tile_v.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_v, v, [0, 0])
        pl.expand_sub(cur_out, cur_a, cur_v)
        pl.store(out, cur_out, [0, 0])


# math_functions/expand_sub.md (dim = 1)
def col_expand_sub_kernel(a: pl.Tensor[[64, 128], pl.DT_FP32], v: pl.Tensor[[1, 128], pl.DT_FP32],
                          out: pl.Tensor[[64, 128], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tt_v = pl.TileType(shape=[1, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_v = pl.make_tile_group(type=tt_v, addrs=0x8000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_v = tile_v.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_v, v, [0, 0])
        pl.expand_sub(cur_out, cur_a, cur_v, dim=1)
        pl.store(out, cur_out, [0, 0])


EXPAND_INPUT = ("[[-3 -2.875 -2.75 -2.625 -2.5 -2.375 -2.25 -2.125 ...], [13 13.125 13.25 13.375 13.5 13.625 13.75 "
                "13.875 ...], [29 29.125 29.25 29.375 29.5 29.625 29.75 29.875 ...], [45 45.125 45.25 45.375 45.5 "
                "45.625 45.75 45.875 ...], ...]")
EXPAND_V = {0: "[[1.25], [1.5], [1.75], [2], ...]", 1: "[[1.25 1.5 1.75 2 2.25 2.5 2.75 3 ...]]"}
EXPAND_CASES = {  # (op, dim): kernel, dtype, numpy op, printed output
    ("div", 0): (row_expand_div_kernel, np.float32, np.divide,
                 "[[-2.4 -2.3 -2.2 -2.1 -2 -1.9 -1.8 -1.7 ...], [8.666667 8.75 8.833333 8.916667 9 9.083333 9.166667 "
                 "9.25 ...], [16.571428 16.642857 16.714285 16.785715 16.857143 16.928572 17 17.071428 ...], [22.5 "
                 "22.5625 22.625 22.6875 22.75 22.8125 22.875 22.9375 ...], ...]"),
    ("div", 1): (col_expand_div_kernel, np.float32, np.divide,
                 "[[-2.4 -1.916667 -1.571429 -1.3125 -1.111111 -0.95 -0.818182 -0.708333 ...], [10.4 8.75 7.571428 "
                 "6.6875 6 5.45 5 4.625 ...], [23.200001 19.416666 16.714285 14.6875 13.111111 11.85 10.818182 "
                 "9.958333 ...], [36 30.083332 25.857143 22.6875 20.222221 18.25 16.636364 15.291666 ...], ...]"),
    ("max", 0): (row_expand_max_kernel, np.float16, np.maximum,
                 "[[1.25 1.25 1.25 1.25 1.25 1.25 1.25 1.25 ...], [13 13.125 13.25 13.375 13.5 13.625 13.75 13.875 "
                 "...], [29 29.125 29.25 29.375 29.5 29.625 29.75 29.875 ...], [45 45.125 45.25 45.375 45.5 45.625 "
                 "45.75 45.875 ...], ...]"),
    ("max", 1): (col_expand_max_kernel, np.float16, np.maximum,
                 "[[1.25 1.5 1.75 2 2.25 2.5 2.75 3 ...], [13 13.125 13.25 13.375 13.5 13.625 13.75 13.875 ...], [29 "
                 "29.125 29.25 29.375 29.5 29.625 29.75 29.875 ...], [45 45.125 45.25 45.375 45.5 45.625 45.75 45.875 "
                 "...], ...]"),
    ("min", 0): (row_expand_min_kernel, np.float16, np.minimum,
                 "[[-3 -2.875 -2.75 -2.625 -2.5 -2.375 -2.25 -2.125 ...], [1.5 1.5 1.5 1.5 1.5 1.5 1.5 1.5 ...], "
                 "[1.75 1.75 1.75 1.75 1.75 1.75 1.75 1.75 ...], [2 2 2 2 2 2 2 2 ...], ...]"),
    ("min", 1): (col_expand_min_kernel, np.float16, np.minimum,
                 "[[-3 -2.875 -2.75 -2.625 -2.5 -2.375 -2.25 -2.125 ...], [1.25 1.5 1.75 2 2.25 2.5 2.75 3 ...], "
                 "[1.25 1.5 1.75 2 2.25 2.5 2.75 3 ...], [1.25 1.5 1.75 2 2.25 2.5 2.75 3 ...], ...]"),
    ("mul", 0): (row_expand_mul_kernel, np.float32, np.multiply,
                 "[[-3.75 -3.59375 -3.4375 -3.28125 -3.125 -2.96875 -2.8125 -2.65625 ...], [19.5 19.6875 19.875 "
                 "20.0625 20.25 20.4375 20.625 20.8125 ...], [50.75 50.96875 51.1875 51.40625 51.625 51.84375 "
                 "52.0625 52.28125 ...], [90 90.25 90.5 90.75 91 91.25 91.5 91.75 ...], ...]"),
    ("mul", 1): (col_expand_mul_kernel, np.float32, np.multiply,
                 "[[-3.75 -4.3125 -4.8125 -5.25 -5.625 -5.9375 -6.1875 -6.375 ...], [16.25 19.6875 23.1875 26.75 "
                 "30.375 34.0625 37.8125 41.625 ...], [36.25 43.6875 51.1875 58.75 66.375 74.0625 81.8125 89.625 "
                 "...], [56.25 67.6875 79.1875 90.75 102.375 114.0625 125.8125 137.625 ...], ...]"),
    ("sub", 0): (row_expand_sub_kernel, np.float32, np.subtract,
                 "[[-4.25 -4.125 -4 -3.875 -3.75 -3.625 -3.5 -3.375 ...], [11.5 11.625 11.75 11.875 12 12.125 12.25 "
                 "12.375 ...], [27.25 27.375 27.5 27.625 27.75 27.875 28 28.125 ...], [43 43.125 43.25 43.375 43.5 "
                 "43.625 43.75 43.875 ...], ...]"),
    ("sub", 1): (col_expand_sub_kernel, np.float32, np.subtract,
                 "[[-4.25 -4.375 -4.5 -4.625 -4.75 -4.875 -5 -5.125 ...], [11.75 11.625 11.5 11.375 11.25 11.125 11 "
                 "10.875 ...], [27.75 27.625 27.5 27.375 27.25 27.125 27 26.875 ...], [43.75 43.625 43.5 43.375 43.25 "
                 "43.125 43 42.875 ...], ...]"),
}


@pytest.mark.parametrize("op,dim", sorted(EXPAND_CASES), ids=lambda v: str(v))
def test_expand_pages(backend, op, dim):
    fn, dtype, np_op, printed = EXPAND_CASES[op, dim]
    a = ramp((64, 128), -3, 0.125, dtype)
    v = ramp((64, 1) if dim == 0 else (1, 128), 1.25, 0.25, dtype)
    assert_printed(a, EXPAND_INPUT)
    assert_printed(v, EXPAND_V[dim])
    out = run(fn, backend, a, v, np.zeros((64, 128), dtype))[2]
    # the device's fp32 division is not correctly rounded (expand_div dim=1: 45.125 / 1.5 printed as
    # 30.083332, correctly rounded 30.083334): 1 ulp besides the printed digits
    assert_printed(out, printed, ulps=1 if op == "div" else 0)
    # one IEEE operation in fp32 (fp16 operands are exact in fp32), rounded once to the tile dtype
    want = np_op(a.astype(np.float32), v.astype(np.float32)).astype(dtype)
    np.testing.assert_array_equal(out, want)


# math_functions/expands.md
K_VALUE = 2.0


def expands_kernel(dummy: pl.Tensor[[64, 64], pl.DT_FP32],
                   out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_out = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    with pl.section_vector():
        cur_out = tile_out.current()
        pl.expands(cur_out, K_VALUE)
        pl.store(out, cur_out, [0, 0])


def test_expands_page(backend):
    out = run(expands_kernel, backend, np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32))[1]
    assert_printed(out, "[[2 2 2 2 2 2 2 2 ...], [2 2 2 2 2 2 2 2 ...], [2 2 2 2 2 2 2 2 ...], [2 2 2 2 2 2 2 2 ...], "
                        "...]")
    np.testing.assert_array_equal(out, np.full((64, 64), 2.0, np.float32))


# math_functions/recip.md
def recip_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32],
                 out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_out = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.recip(cur_out, cur_a)
        pl.store(out, cur_out, [0, 0])


# math_functions/rsqrt.md
def rsqrt_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32],
                 out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_out = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.rsqrt(cur_out, cur_a)
        pl.store(out, cur_out, [0, 0])


UNARY_INPUT = ("[[1 1.125 1.25 1.375 1.5 1.625 1.75 1.875 ...], [9 9.125 9.25 9.375 9.5 9.625 9.75 9.875 ...], [17 "
               "17.125 17.25 17.375 17.5 17.625 17.75 17.875 ...], [25 25.125 25.25 25.375 25.5 25.625 25.75 25.875 "
               "...], ...]")
UNARY_CASES = {  # kernel, float64 reference, printed output
    "recip": (recip_kernel, lambda x: 1.0 / x,
              "[[1 0.888889 0.8 0.727273 0.666667 0.615385 0.571429 0.533333 ...], [0.111111 0.109589 0.108108 "
              "0.106667 0.105263 0.103896 0.102564 0.101266 ...], [0.058824 0.058394 0.057971 0.057554 0.057143 "
              "0.056738 0.056338 0.055944 ...], [0.04 0.039801 0.039604 0.039409 0.039216 0.039024 0.038835 0.038647 "
              "...], ...]"),
    "rsqrt": (rsqrt_kernel, lambda x: 1.0 / np.sqrt(x),
              "[[1 0.942809 0.894427 0.852803 0.816497 0.784465 0.755929 0.730297 ...], [0.333333 0.331042 0.328798 "
              "0.326599 0.324443 0.322329 0.320256 0.318223 ...], [0.242536 0.241649 0.240772 0.239904 0.239046 "
              "0.238197 0.237356 0.236525 ...], [0.2 0.199502 0.199007 0.198517 0.19803 0.197546 0.197066 0.196589 "
              "...], ...]"),
}


@pytest.mark.parametrize("case", sorted(UNARY_CASES))
def test_recip_rsqrt_pages(backend, case):
    fn, ref, printed = UNARY_CASES[case]
    a = ramp((64, 64), 1, 0.125, np.float32)
    assert_printed(a, UNARY_INPUT)
    out = run(fn, backend, a, np.zeros((64, 64), np.float32))[1]
    assert_printed(out, printed)
    np.testing.assert_allclose(out, ref(a.astype(np.float64)), rtol=2.4e-7, atol=0)  # within 2 ulp of exact


# math_functions/sum.md (dim = 0)
def row_sum_kernel(a: pl.Tensor[[64, 128], pl.DT_FP32],
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
        pl.sum(cur_out, cur_a, cur_tmp)
        pl.store(out, cur_out, [0, 0])


# math_functions/sum.md (dim = 1)
def col_sum_kernel(a: pl.Tensor[[64, 128], pl.DT_FP32],
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
        pl.sum(cur_out, cur_a, cur_tmp, dim=1)
        pl.store(out, cur_out, [0, 0])


SUM_CASES = {  # dim: kernel, output shape, printed output
    0: (row_sum_kernel, (64, 1), "[[1.008000e+03], [5.104000e+03], [9.200000e+03], [1.329600e+04], ...]"),
    1: (col_sum_kernel, (1, 128), "[[6.400000e+04 6.401600e+04 6.403200e+04 6.404800e+04 6.406400e+04 6.408000e+04 "
                                  "6.409600e+04 6.411200e+04 ...]]"),
}


@pytest.mark.parametrize("dim", [0, 1])
def test_sum_page(backend, dim):
    fn, out_shape, printed = SUM_CASES[dim]
    a = ramp((64, 128), -8, 0.25, np.float32)
    assert_printed(a, ARG_INPUT)
    out = run(fn, backend, a, np.zeros(out_shape, np.float32))[1]
    assert_printed(out, printed)
    # multiples of 1/4 below 2^17: every partial sum is exact in fp32, whatever the order
    np.testing.assert_array_equal(out, a.astype(np.float64).sum(axis=1 - dim, keepdims=True).astype(np.float32))


# ================================================================================================= selection
# selection/select.md
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
        pl.gt(mask_vec, mask_fp16, 0.0)
        pl.select(tile_out, mask_vec, tile_a, tile_b, tmp_vec)
        pl.store(out, tile_out, [0, 0])


def test_select_page(backend):
    a = ramp((64, 128), 1, 0.25, np.float32)
    b = ramp((64, 128), 8, -0.125, np.float32)
    mask = np.tile(np.array([1, -1], np.float16), (64, 64))
    assert_printed(a, "[[1 1.25 1.5 1.75 2 2.25 2.5 2.75 ...], [33 33.25 33.5 33.75 34 34.25 34.5 34.75 ...], [65 "
                      "65.25 65.5 65.75 66 66.25 66.5 66.75 ...], [97 97.25 97.5 97.75 98 98.25 98.5 98.75 ...], ...]")
    assert_printed(b, "[[8 7.875 7.75 7.625 7.5 7.375 7.25 7.125 ...], [-8 -8.125 -8.25 -8.375 -8.5 -8.625 -8.75 "
                      "-8.875 ...], [-24 -24.125 -24.25 -24.375 -24.5 -24.625 -24.75 -24.875 ...], [-40 -40.125 "
                      "-40.25 -40.375 -40.5 -40.625 -40.75 -40.875 ...], ...]")
    assert_printed(mask, "[[1 -1 1 -1 1 -1 1 -1 ...], [1 -1 1 -1 1 -1 1 -1 ...], [1 -1 1 -1 1 -1 1 -1 ...], [1 -1 1 "
                         "-1 1 -1 1 -1 ...], ...]")
    out = run(scalar_gt_select_kernel, backend, a, b, mask, np.zeros((64, 128), np.float32))[3]
    assert_printed(out, "[[1 7.875 1.5 7.625 2 7.375 2.5 7.125 ...], [33 -8.125 33.5 -8.375 34 -8.625 34.5 -8.875 "
                        "...], [65 -24.125 65.5 -24.375 66 -24.625 66.5 -24.875 ...], [97 -40.125 97.5 -40.375 98 "
                        "-40.625 98.5 -40.875 ...], ...]")
    np.testing.assert_array_equal(out, np.where(mask > 0, a, b))


# ========================================================================================== type_conversion
# type_conversion/cast.md
def cast_kernel(
    src: pl.Tensor[[64, 128], pl.DT_FP16],
    out: pl.Tensor[[64, 128], pl.DT_FP32],
):
    tt_in = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tt_out = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_src = pl.make_tile_group(type=tt_in, addrs=0x0000, mutex_ids=[0])
    tile_out = pl.make_tile_group(type=tt_out, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        cur_src = tile_src.current()
        cur_out = tile_out.current()
        pl.load(cur_src, src, [0, 0])
        pl.cast(cur_out, cur_src, mode=pl.RoundMode.CAST_ROUND)
        pl.store(out, cur_out, [0, 0])


def test_cast_page(backend):
    src = ramp((64, 128), -4, 0.25, np.float16)
    rows = ("[[-4 -3.75 -3.5 -3.25 -3 -2.75 -2.5 -2.25 ...], [28 28.25 28.5 28.75 29 29.25 29.5 29.75 ...], [60 60.25 "
            "60.5 60.75 61 61.25 61.5 61.75 ...], [92 92.25 92.5 92.75 93 93.25 93.5 93.75 ...], ...]")
    assert_printed(src, rows)
    out = run(cast_kernel, backend, src, np.zeros((64, 128), np.float32))[1]
    assert_printed(out, rows)
    np.testing.assert_array_equal(out, src.astype(np.float32))  # widening: exact


# ============================================================================== transpose_and_element_access
# transpose_and_element_access/transpose.md
def transpose_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP16],
    out: pl.Tensor[[64, 64], pl.DT_FP16],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_out = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.transpose(cur_out, cur_a)
        pl.store(out, cur_out, [0, 0])


def test_transpose_page(backend):
    a = ramp((64, 64), 1, 0.25, np.float16)
    assert_printed(a, "[[1 1.25 1.5 1.75 2 2.25 2.5 2.75 ...], [17 17.25 17.5 17.75 18 18.25 18.5 18.75 ...], [33 "
                      "33.25 33.5 33.75 34 34.25 34.5 34.75 ...], [49 49.25 49.5 49.75 50 50.25 50.5 50.75 ...], ...]")
    out = run(transpose_kernel, backend, a, np.zeros((64, 64), np.float16))[1]
    assert_printed(out, "[[1 17 33 49 65 81 97 113 ...], [1.25 17.25 33.25 49.25 65.25 81.25 97.25 113.25 ...], [1.5 "
                        "17.5 33.5 49.5 65.5 81.5 97.5 113.5 ...], [1.75 17.75 33.75 49.75 65.75 81.75 97.75 113.75 "
                        "...], ...]")
    np.testing.assert_array_equal(out, a.T)


# transpose_and_element_access/getval.md and setval.md (Tile scenario, the same kernel on both pages)
def getval_setval_kernel(
    a: pl.Tensor[[64, 128], pl.DT_FP16],
):
    tile_a_group = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x0000, mutex_ids=[0])
    with pl.section_vector():
        tile_a = tile_a_group.current()
        pl.load(tile_a, a, [0, 0])
        value = tile_a[0, 0]
        tile_a[0, 1] = value
        pl.store(a, tile_a, [0, 0])


def test_getval_setval_tile_page(backend):
    a = ramp((64, 128), 1, 0.25, np.float16)  # the pages print no data: any distinct values do
    got = run(getval_setval_kernel, backend, a)[0]
    want = a.copy()
    want[0, 1] = a[0, 0]
    np.testing.assert_array_equal(got, want)


# transpose_and_element_access/getval.md and setval.md (Tensor scenario)
def tensor_getval_setval_kernel(
    scale_tensor: pl.Tensor[[2], pl.DT_FP32],
):
    scale = scale_tensor[0]
    scale_tensor[1] = scale


def test_getval_setval_tensor_page(backend):
    got = run(tensor_getval_setval_kernel, backend, np.array([0.375, -7.0], np.float32))[0]
    np.testing.assert_array_equal(got, np.array([0.375, 0.375], np.float32))


# transpose_and_element_access/set_validshape.md (single tile)
def validshape_kernel(
    a: pl.Tensor[[64, 128], pl.DT_FP32],
    rows: pl.DT_INT64,
    cols: pl.DT_INT64,
    out: pl.Tensor[[64, 128], pl.DT_FP32],
):
    tile_type = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                            valid_shape=[-1, -1])
    tile_group = pl.make_tile_group(type=tile_type, addrs=0x0000, mutex_ids=[0])
    with pl.section_vector():
        tile = tile_group.current()
        pl.set_validshape(tile, [rows, cols])
        pl.load(tile, a, [0, 0])
        pl.store(out, tile, [0, 0])


# transpose_and_element_access/set_validshape.md (tile_group)
def tile_group_validshape_kernel(
    a: pl.Tensor[[128, 128], pl.DT_FP16],
    rows: pl.DT_INT64,
    cols: pl.DT_INT64,
    output: pl.Tensor[[128, 128], pl.DT_FP16],
):
    tile_type = pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, valid_shape=[-1, -1])
    tile_a = pl.make_tile_group(
        type=tile_type, addrs=0x0000, mutex_ids=[0])
    pl.set_validshape(tile_a, [rows, cols])
    with pl.section_vector():
        cur_a = tile_a.current()
        pl.load(cur_a, a, [0, 0])
        pl.store(output, cur_a, [0, 0])


@pytest.mark.parametrize("group", [False, True], ids=["tile", "tile_group"])
@pytest.mark.parametrize("rows,cols", [(64, 128), (37, 100), (1, 8)])
def test_set_validshape_page(backend, group, rows, cols):
    """Only the [rows, cols] window is moved: the rest of ``out`` keeps its old contents (the page
    prints no data)."""
    fn, n, dtype = (tile_group_validshape_kernel, 128, np.float16) if group else (validshape_kernel, 64, np.float32)
    a = ramp((n, 128), 1, 0.25, dtype)
    out = run(fn, backend, a, rows, cols, np.full((n, 128), -1, dtype))[3]
    want = np.full((n, 128), -1, dtype)
    want[:rows, :cols] = a[:rows, :cols]
    np.testing.assert_array_equal(out, want)


# math_functions/max.md and min.md print no kernel: their snippets' expressions in one vector kernel
def max_min_snippets_kernel(out: pl.Tensor[[1, 8], pl.DT_FP32], m_dim: pl.DT_INT64, trunk_len: pl.DT_INT64,
                            topk: pl.DT_INT64):
    tile_group = pl.make_tile_group(
        type=pl.TileType(shape=[1, 8], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
        addrs=0x0000, mutex_ids=[0])
    with pl.section_vector():
        tile = tile_group.current()
        i = 3
        m_size = pl.min(m_dim - i, 64)
        bottom_k = pl.max(1, trunk_len - topk + 1)
        c = max(m_size, bottom_k)
        scale_max = pl.max(pl.const(2.5, pl.DT_FP32), pl.const(-1.5, pl.DT_FP32))
        scale_min = pl.min(pl.const(2.5, pl.DT_FP32), pl.const(-1.5, pl.DT_FP32))
        pl.expands(tile, 0.0)
        tile[0, 0] = m_size
        tile[0, 1] = bottom_k
        tile[0, 2] = c
        tile[0, 3] = scale_max
        tile[0, 4] = scale_min
        pl.store(out, tile, [0, 0])


@pytest.mark.parametrize("m_dim,trunk_len,topk", [(100, 5, 10), (20, 40, 8)])
def test_max_min_page_snippets(backend, m_dim, trunk_len, topk):
    out = run(max_min_snippets_kernel, backend, np.zeros((1, 8), np.float32), m_dim, trunk_len, topk)[0]
    m_size, bottom_k = min(m_dim - 3, 64), max(1, trunk_len - topk + 1)
    np.testing.assert_array_equal(out[0], [m_size, bottom_k, max(m_size, bottom_k), 2.5, -1.5, 0, 0, 0])


# ============================================================================================ scatter_gather
# scatter_gather/gather.md (调用示例): dst_flat[i] = src_flat[idx[i]], here each row reversed
def gather_page_kernel(
    src: pl.Tensor[[64, 128], pl.DT_FP16],
    indices: pl.Tensor[[64, 128], pl.DT_INT32],
    dst: pl.Tensor[[64, 128], pl.DT_FP16],
):
    tt_fp16 = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tt_int32 = pl.TileType(shape=[64, 128], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    tile_src = pl.make_tile_group(type=tt_fp16, addrs=0x0000, mutex_ids=[0])
    tile_idx = pl.make_tile_group(type=tt_int32, addrs=0x4000, mutex_ids=[1])
    tile_tmp = pl.make_tile_group(type=tt_int32, addrs=0xC000, mutex_ids=[2])
    tile_dst = pl.make_tile_group(type=tt_fp16, addrs=0x14000, mutex_ids=[3])
    with pl.section_vector():
        cur_src = tile_src.current()
        cur_idx = tile_idx.current()
        cur_tmp = tile_tmp.current()
        cur_dst = tile_dst.current()
        pl.load(cur_src, src, [0, 0])
        pl.load(cur_idx, indices, [0, 0])
        pl.gather(cur_dst, cur_src, cur_idx, cur_tmp)
        pl.store(dst, cur_dst, [0, 0])


def _reversed_rows(shape=(64, 128)):
    """The page's indices: row r holds (r + 1) * 128 - 1 - c, each row of src read backwards."""
    r, c = np.indices(shape)
    return ((r + 1) * shape[1] - 1 - c).astype(np.int32)


def test_gather_page(backend):
    src = ramp((64, 128), 1.0, 0.25, np.float16)
    idx = _reversed_rows()
    assert_printed(src, "[[1 1.25 1.5 1.75 2 2.25 2.5 2.75 3 3.25 3.5 3.75 4 4.25 4.5 4.75 ...], "
                        "[33 33.25 33.5 33.75 34 34.25 34.5 34.75 35 35.25 35.5 35.75 36 36.25 36.5 36.75 ...]]")
    assert_printed(idx, "[[127 126 125 124 123 122 121 120 119 118 117 116 115 114 113 112 ...], "
                        "[255 254 253 252 251 250 249 248 247 246 245 244 243 242 241 240 ...]]", exact=True)
    dst = run(gather_page_kernel, backend, src, idx, np.zeros((64, 128), np.float16))[2]
    assert_printed(dst, "[[32.75 32.5 32.25 32 31.75 31.5 31.25 31 30.75 30.5 30.25 30 29.75 29.5 29.25 29 ...], "
                        "[64.75 64.5 64.25 64 63.75 63.5 63.25 63 62.75 62.5 62.25 62 61.75 61.5 61.25 61 ...], "
                        "[96.75 96.5 96.25 96 95.75 95.5 95.25 95 94.75 94.5 94.25 94 93.75 93.5 93.25 93 ...], "
                        "[128.75 128.5 128.25 128 127.75 127.5 127.25 127 126.75 126.5 126.25 126 125.75 125.5 "
                        "125.25 125 ...]]", exact=True)
    np.testing.assert_array_equal(dst, src.reshape(-1)[idx])


# scatter_gather/gather.md (the offset fragment): the offset joins the index; an index outside src raises
def gather_offset_kernel(src: pl.Tensor[[8, 32], pl.DT_FP32], indices: pl.Tensor[[8, 32], pl.DT_INT32],
                         dst: pl.Tensor[[8, 32], pl.DT_FP32]):
    tf = pl.TileType(shape=[8, 32], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    ti = pl.TileType(shape=[8, 32], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    g_src = pl.make_tile_group(type=tf, addrs=0x0000, mutex_ids=[0])
    g_idx = pl.make_tile_group(type=ti, addrs=0x1000, mutex_ids=[1])
    g_tmp = pl.make_tile_group(type=ti, addrs=0x2000, mutex_ids=[2])
    g_dst = pl.make_tile_group(type=tf, addrs=0x3000, mutex_ids=[3])
    with pl.section_vector():
        s, i, t, d = g_src.current(), g_idx.current(), g_tmp.current(), g_dst.current()
        pl.load(s, src, [0, 0])
        pl.load(i, indices, [0, 0])
        pl.gather(d, s, i, t, offset=16)
        pl.store(dst, d, [0, 0])


def test_gather_offset_and_out_of_range_index(backend):
    src = ramp((8, 32), 0.0, 1.0, np.float32)
    idx = np.random.default_rng(3).integers(0, 8 * 32 - 16, (8, 32)).astype(np.int32)
    dst = run(gather_offset_kernel, backend, src, idx, np.zeros((8, 32), np.float32))[2]
    np.testing.assert_array_equal(dst, src.reshape(-1)[idx + 16])
    idx[5, 7] = 8 * 32 - 16  # + 16 is one past the end
    with pytest.raises(pl.KernelRuntimeError, match=r"pl.gather: index 256 at \(5, 7\) is outside src's 8x32"):
        run(gather_offset_kernel, backend, src, idx, np.zeros((8, 32), np.float32))


# scatter_gather/gathermask.md (调用示例): the even columns of a 64x128 FP16 tile
def gathermask_page_kernel(
    src: pl.Tensor[[64, 128], pl.DT_FP16],
    dst: pl.Tensor[[64, 64], pl.DT_FP16],
):
    tile_src_group = pl.make_tile_group(
        type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x0000, mutex_ids=[0])
    tile_dst_group = pl.make_tile_group(
        type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        tile_src = tile_src_group.current()
        tile_dst = tile_dst_group.current()
        pl.load(tile_src, src, [0, 0])
        pl.gathermask(tile_dst, tile_src, pattern_mode=1)
        pl.store(dst, tile_dst, [0, 0])


def test_gathermask_page(backend):
    src = ramp((64, 128), 1.0, 0.25, np.float16)
    dst = run(gathermask_page_kernel, backend, src, np.zeros((64, 64), np.float16))[1]
    assert_printed(dst, "[[1 1.5 2 2.5 3 3.5 4 4.5 ...], [33 33.5 34 34.5 35 35.5 36 36.5 ...], "
                        "[65 65.5 66 66.5 67 67.5 68 68.5 ...], [97 97.5 98 98.5 99 99.5 100 100.5 ...]]", exact=True)
    np.testing.assert_array_equal(dst, src[:, 0::2])


def _gathermask_kernel(mode: int, cols: int):
    """pattern ``mode`` of a 16x64 INT32 tile into a 16x``cols`` one (the page's other modes)."""
    def gathermask_mode_kernel(src: pl.Tensor[[16, 64], pl.DT_INT32], dst: pl.Tensor[[16, cols], pl.DT_INT32]):
        g_src = pl.make_tile_group(type=pl.TileType(shape=[16, 64], dtype=pl.DT_INT32,
                                                    target_memory=pl.MemorySpace.Vec), addrs=0x0000, mutex_ids=[0])
        g_dst = pl.make_tile_group(type=pl.TileType(shape=[16, cols], dtype=pl.DT_INT32,
                                                    target_memory=pl.MemorySpace.Vec), addrs=0x1000, mutex_ids=[1])
        with pl.section_vector():
            s, d = g_src.current(), g_dst.current()
            pl.load(s, src, [0, 0])
            pl.gathermask(d, s, pattern_mode=mode)
            pl.store(dst, d, [0, 0])
    return gathermask_mode_kernel


GATHERMASK_MODES = {2: np.s_[:, 1::2], 3: np.s_[:, 0::4], 4: np.s_[:, 1::4], 5: np.s_[:, 2::4], 6: np.s_[:, 3::4],
                    7: np.s_[:, :]}
GATHERMASK_KERNELS = {m: _gathermask_kernel(m, 64 // {2: 2, 7: 1}.get(m, 4)) for m in GATHERMASK_MODES}


@pytest.mark.parametrize("mode", list(GATHERMASK_MODES))
def test_gathermask_other_modes(backend, mode):
    src = np.arange(16 * 64, dtype=np.int32).reshape(16, 64) * 3 - 500
    want = src[GATHERMASK_MODES[mode]]
    dst = run(GATHERMASK_KERNELS[mode], backend, src, np.zeros(want.shape, np.int32))[1]
    np.testing.assert_array_equal(dst, want)


# scatter_gather/scatter.md (调用示例): dst_flat[idx[i, j]] = src[i, j], here the whole tile reversed
def scatter_page_kernel(
    src: pl.Tensor[[64, 128], pl.DT_FP32],
    indices: pl.Tensor[[64, 128], pl.DT_INT32],
    dst: pl.Tensor[[64, 128], pl.DT_FP32],
):
    tile_src = pl.make_tile_group(type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                                  addrs=0x0000, mutex_ids=[0])
    tile_idx = pl.make_tile_group(type=pl.TileType(shape=[64, 128], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec),
                                  addrs=0x8000, mutex_ids=[1])
    tile_dst = pl.make_tile_group(type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                                  addrs=0x10000, mutex_ids=[2])
    with pl.section_vector():
        cur_src = tile_src.current()
        cur_idx = tile_idx.current()
        cur_dst = tile_dst.current()
        pl.load(cur_src, src, [0, 0])
        pl.load(cur_idx, indices, [0, 0])
        pl.scatter(cur_dst, cur_src, cur_idx)
        pl.store(dst, cur_dst, [0, 0])


def test_scatter_page(backend):
    src = ramp((64, 128), 1.0, 0.25, np.float32)
    idx = (64 * 128 - 1 - np.arange(64 * 128)).reshape(64, 128).astype(np.int32)
    assert_printed(idx, "[[8191 8190 8189 8188 8187 8186 8185 8184 8183 8182 8181 8180 8179 8178 8177 8176 ...], "
                        "[8063 8062 8061 8060 8059 8058 8057 8056 8055 8054 8053 8052 8051 8050 8049 8048 ...]]",
                   exact=True)
    dst = run(scatter_page_kernel, backend, src, idx, np.zeros((64, 128), np.float32))[2]
    assert_printed(dst, "[[2.048750e+03 2.048500e+03 2.048250e+03 2.048000e+03 2.047750e+03 2.047500e+03 ...], "
                        "[2.016750e+03 2.016500e+03 2.016250e+03 2.016000e+03 2.015750e+03 2.015500e+03 ...], "
                        "[1.984750e+03 1.984500e+03 1.984250e+03 1.984000e+03 1.983750e+03 1.983500e+03 ...], "
                        "[1.952750e+03 1.952500e+03 1.952250e+03 1.952000e+03 1.951750e+03 1.951500e+03 ...]]")
    want = np.empty(64 * 128, np.float32)
    want[idx.reshape(-1)] = src.reshape(-1)
    np.testing.assert_array_equal(dst, want.reshape(64, 128))


# scatter_gather/scatter.md: a partial scatter keeps dst's other elements; duplicates keep the last
# write in row-major order; an index outside dst raises
def scatter_partial_kernel(src: pl.Tensor[[4, 16], pl.DT_INT16], indices: pl.Tensor[[4, 16], pl.DT_INT16],
                           dst: pl.Tensor[[8, 16], pl.DT_INT16]):
    g_src = pl.make_tile_group(type=pl.TileType(shape=[4, 16], dtype=pl.DT_INT16, target_memory=pl.MemorySpace.Vec),
                               addrs=0x0000, mutex_ids=[0])
    g_idx = pl.make_tile_group(type=pl.TileType(shape=[4, 16], dtype=pl.DT_INT16, target_memory=pl.MemorySpace.Vec),
                               addrs=0x1000, mutex_ids=[1])
    g_dst = pl.make_tile_group(type=pl.TileType(shape=[8, 16], dtype=pl.DT_INT16, target_memory=pl.MemorySpace.Vec),
                               addrs=0x2000, mutex_ids=[2])
    with pl.section_vector():
        s, i, d = g_src.current(), g_idx.current(), g_dst.current()
        pl.load(d, dst, [0, 0])
        pl.load(s, src, [0, 0])
        pl.load(i, indices, [0, 0])
        pl.scatter(d, s, i)
        pl.store(dst, d, [0, 0])


def test_scatter_keeps_other_elements_and_the_last_duplicate(backend):
    src = (np.arange(64).reshape(4, 16) + 100).astype(np.int16)
    idx = np.random.default_rng(5).integers(0, 128, (4, 16)).astype(np.int16)
    idx[3, 15] = idx[0, 0]  # a duplicate: the later (row-major) write wins
    dst0 = np.full((8, 16), -7, np.int16)
    want = dst0.reshape(-1).copy()
    for k, v in zip(idx.reshape(-1), src.reshape(-1)):
        want[k] = v
    dst = run(scatter_partial_kernel, backend, src, idx, dst0)[2]
    np.testing.assert_array_equal(dst, want.reshape(8, 16))
    idx[2, 3] = 128
    with pytest.raises(pl.KernelRuntimeError, match=r"pl.scatter: index 128 at \(2, 3\) is outside dst's 8x16"):
        run(scatter_partial_kernel, backend, src, idx, dst0)

"""Fixes for the tile-language findings of the acceptance testers.

Kernels are plain functions (the parser reads their source) compiled per backend with
``pl.jit(backend=...)(fn)``.  Error tests mark the offending line with ``# E:<tag>`` and check that
the message names the kernel and quotes that line.
"""
import importlib.util
import itertools
import sys

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelMemoryError, KernelSyntaxError, KernelTypeError

FP32, FP16, UINT8, INT32 = pl.DT_FP32, pl.DT_FP16, pl.DT_UINT8, pl.DT_INT32
BACKENDS = ["interp", "cpu", "sim"]
K = 3  # a module constant used by the '**' kernels


def marker_line(tag: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith(f"# E:{tag}"))


def assert_points_at(err, tag: str, kernel: str) -> None:
    text = str(err)
    assert f"[kernel {kernel}]" in text, text
    assert f"test_acceptance_language.py:{marker_line(tag)}" in text, text
    assert f"# E:{tag}" in text, text


def vec(shape, dtype, addr, mutex, layout=None, valid_shape=None):
    """Inlined into kernels: a Vec tile in a one-slot group under auto_mutex (so the simulator sees
    the loads, vector ops and stores ordered without hand-written flags)."""
    tt = pl.TileType(shape, dtype, pl.MemorySpace.Vec, layout=layout, valid_shape=valid_shape)
    return pl.make_tile_group(type=tt, addrs=addr, mutex_ids=[mutex]).current()


def launch(fn, backend, *args):
    """Compile ``fn`` for ``backend`` and run it on copies of ``args``; returns the copies."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    pl.jit(backend=backend)(fn)(*copies)
    return copies


def rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------------------------
# 1. fused and part ops do not read a pure-output destination (sim: no false KernelUninitError)
# ----------------------------------------------------------------------------------------------
FUSED = ["add_relu", "sub_relu", "add_relu_cast", "sub_relu_cast", "mul_cast", "addc"]


def fused_kernel(name: str):
    """A kernel whose destination tile is never written before ``pl.<name>`` fills it."""
    op = getattr(pl, name)
    cast = name.endswith("_cast")
    kw = {"target_type": FP16} if cast else {}
    out_dtype = FP16 if cast else FP32

    def fused(a: pl.Tensor[[8, 64], FP32], b: pl.Tensor[[8, 64], FP32], out: pl.Tensor[[8, 64], out_dtype]):
        ta = vec([8, 64], FP32, 0x0, 0)
        tb = vec([8, 64], FP32, 0x800, 1)
        to = vec([8, 64], out_dtype, 0x1000, 2)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            if pl.constexpr(name == "addc"):
                op(to, ta, tb, tb)
            else:
                op(to, ta, tb, **kw)
            pl.store(out, to, [0, 0])
    return fused


@pytest.mark.parametrize("name", FUSED)
def test_fused_ops_do_not_read_their_output_tile_on_sim(name):
    fn = fused_kernel(name)
    out_np = np.float16 if name.endswith("_cast") else np.float32
    a, b = rand((8, 64), seed=1), rand((8, 64), seed=2)
    got = launch(fn, "sim", a, b, np.zeros((8, 64), out_np))[2]
    want = launch(fn, "interp", a, b, np.zeros((8, 64), out_np))[2]
    np.testing.assert_array_equal(got, want)
    if name == "add_relu":
        np.testing.assert_array_equal(got, np.maximum(a + b, 0))


PART = {"partadd": np.add, "partmax": np.maximum, "partmin": np.minimum, "partmul": np.multiply}


def part_kernel(name: str):
    """s0 is valid in its first 5 rows, s1 in its first 24 columns; each is loaded only inside its
    window.  With ``init`` dst is loaded first (its elements outside both windows must survive)."""
    op = getattr(pl, name)

    def part(a: pl.Tensor[[8, 64], FP32], b: pl.Tensor[[8, 64], FP32], out: pl.Tensor[[8, 64], FP32],
             init: bool):
        s0 = vec([8, 64], FP32, 0x0, 0, valid_shape=[-1, -1])
        s1 = vec([8, 64], FP32, 0x800, 1, valid_shape=[-1, -1])
        d = vec([8, 64], FP32, 0x1000, 2)
        with pl.section_vector():
            pl.set_validshape(s0, [5, 64])
            pl.set_validshape(s1, [8, 24])
            pl.load(s0, a, [0, 0])
            pl.load(s1, b, [0, 0])
            if init:
                pl.load(d, out, [0, 0])
            op(d, s0, s1)
            if init:
                pl.store(out, d, [0, 0])
            else:
                pl.store(out, d[0:5, :], [0, 0])
                pl.store(out, d[5:8, 0:24], [5, 0])
    return part


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(PART))
def test_part_ops_read_only_the_source_windows(name, backend):
    """dst = op where both are valid, a copy of the valid one elsewhere, its old value outside both."""
    a, b, init = rand((8, 64), seed=3), rand((8, 64), seed=4), rand((8, 64), seed=5)
    want = init.copy()
    want[:5, :] = a[:5, :]
    want[:, :24] = b[:, :24]
    want[:5, :24] = PART[name](a[:5, :24], b[:5, :24])
    fn = part_kernel(name)
    got = launch(fn, backend, a, b, init, True)[2]
    np.testing.assert_array_equal(got, want)
    if backend == "sim":  # dst never written before the op: only the union of the windows is stored
        got = launch(fn, backend, a, b, init, False)[2]
        np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------------------------------------
# 2. floats where integers are required are KernelTypeErrors, not truncated
# ----------------------------------------------------------------------------------------------
def float_offset(a: pl.Tensor[[16, 16], FP32], out: pl.Tensor[[8, 16], FP32], x: float, n: int):
    t = vec([8, 16], FP32, 0, 0)
    with pl.section_vector():
        pl.load(t, a, [1.5, 0])  # E:const_offset


def runtime_float_offset(a: pl.Tensor[[16, 16], FP32], out: pl.Tensor[[8, 16], FP32], x: float, n: int):
    t = vec([8, 16], FP32, 0, 0)
    with pl.section_vector():
        pl.store(out, t, [x, 0])  # E:runtime_offset


def float_setval(a: pl.Tensor[[16, 16], FP32], out: pl.Tensor[[8, 16], FP32], x: float, n: int):
    t = vec([8, 16], FP32, 0, 0)
    with pl.section_vector():
        pl.setval(t, 2.5, x)  # E:setval


def float_subscript(a: pl.Tensor[[16, 16], FP32], out: pl.Tensor[[8, 16], FP32], x: float, n: int):
    t = vec([8, 16], FP32, 0, 0)
    with pl.section_vector():
        t[n, x] = 1.0  # E:subscript


def float_validshape(a: pl.Tensor[[16, 16], FP32], out: pl.Tensor[[8, 16], FP32], x: float, n: int):
    g = pl.make_tile_group(type=pl.TileType([8, 16], FP32, valid_shape=[-1, -1]), addrs=0, mutex_ids=[0])
    with pl.section_vector():
        pl.set_validshape(g, [x, 16])  # E:validshape


def float_range(a: pl.Tensor[[16, 16], FP32], out: pl.Tensor[[8, 16], FP32], x: float, n: int):
    with pl.section_vector():
        for i in pl.range(x):  # E:range
            pass


def float_subview(a: pl.Tensor[[16, 16], FP32], out: pl.Tensor[[8, 16], FP32], x: float, n: int):
    t = vec([8, 16], FP32, 0, 0)
    with pl.section_vector():
        pl.store(out, t[0:2.5, :], [0, 0])  # E:subview


def float_group_index(a: pl.Tensor[[16, 16], FP32], out: pl.Tensor[[8, 16], FP32], x: float, n: int):
    g = pl.make_tile_group(type=pl.TileType([8, 16], FP32), addrs=0, depth=2)
    t = g[1.0]  # E:group_index


FLOAT_INDEX = {"const_offset": (float_offset, "'offsets' entry must be an integer, got float 1.5"),
               "runtime_offset": (runtime_float_offset, "'offsets' entry must be an integer, got runtime FP32 x"),
               "setval": (float_setval, "element indices must be integers, got float 2.5"),
               "subscript": (float_subscript, "element indices must be integers, got runtime FP32 x"),
               "validshape": (float_validshape, "'shape' entry must be an integer, got runtime FP32 x"),
               "range": (float_range, "pl.range bound must be an integer, got runtime FP32 x"),
               "subview": (float_subview, "subview bound on axis 0 must be an integer, got float 2.5"),
               "group_index": (float_group_index, "a tile group index g\\[i\\] must be an integer, got float 1.0")}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tag", sorted(FLOAT_INDEX))
def test_floats_are_rejected_where_integers_are_required(tag, backend):
    fn, words = FLOAT_INDEX[tag]
    out = np.full((8, 16), 7.0, np.float32)
    with pytest.raises(KernelTypeError, match=words) as e:
        pl.jit(backend=backend)(fn)(np.zeros((16, 16), np.float32), out, 3.7, 1)
    assert_points_at(e.value, tag, fn.__name__)
    assert np.all(out == 7.0)


# ----------------------------------------------------------------------------------------------
# 3. '**' folds on compile-time values; runtime operands get a clear error
# ----------------------------------------------------------------------------------------------
def powers(out: pl.Tensor[[1, 8], pl.DT_INT64], f: pl.Tensor[[1, 8], FP32], n: int):
    e = K
    e **= 2
    with pl.section_vector():
        pl.setval(out, [0, 0], 2 ** K)
        pl.setval(out, [0, 1], e)
        pl.setval(f, [0, 0], K ** 0.5)
        pl.setval(f, [0, 1], 2.0 ** -K)


def runtime_power(out: pl.Tensor[[1, 8], pl.DT_INT64], f: pl.Tensor[[1, 8], FP32], n: int):
    with pl.section_vector():
        pl.setval(out, [0, 0], n ** 2)  # E:runtime_pow


@pytest.mark.parametrize("backend", BACKENDS)
def test_power_of_compile_time_values_is_folded(backend):
    out, f = launch(powers, backend, np.zeros((1, 8), np.int64), np.zeros((1, 8), np.float32), 2)[:2]
    assert out[0, :2].tolist() == [8, 9]
    assert f[0, :2].tolist() == [np.float32(3 ** 0.5), 0.125]


def test_power_of_a_runtime_scalar_is_a_syntax_error():
    with pytest.raises(KernelSyntaxError, match="operator '\\*\\*' needs compile-time operands") as e:
        pl.jit(backend="interp")(runtime_power)(np.zeros((1, 8), np.int64), np.zeros((1, 8), np.float32), 2)
    assert_points_at(e.value, "runtime_pow", "runtime_power")


# ----------------------------------------------------------------------------------------------
# 4. 'from __future__ import annotations' with closure variables in the annotations
# ----------------------------------------------------------------------------------------------
FUTURE_SOURCE = '''from __future__ import annotations
import pypto_pro.language as pl


def factory(M, backend):
    @pl.jit(backend=backend)
    def copy(a: pl.Tensor[[M, 16], pl.DT_FP32], out: pl.Tensor[[M, 16], pl.DT_FP32]):
        g = pl.make_tile_group(type=pl.TileType([M, 16], pl.DT_FP32), addrs=0, mutex_ids=[0])
        with pl.section_vector():
            pl.load(g.current(), a, [0, 0])
            pl.store(out, g.current(), [0, 0])
    return copy


def annotation_only(N):
    @pl.jit(backend="interp")
    def k(a: pl.Tensor[[N, 16], pl.DT_FP32]):
        pass
    return k
'''
_modules = itertools.count()


def future_module(tmp_path):
    path = tmp_path / f"future_kernels_{next(_modules)}.py"
    path.write_text(FUTURE_SOURCE)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("backend", BACKENDS)
def test_future_annotations_see_closure_variables(tmp_path, backend):
    a, out = rand((16, 16)), np.zeros((16, 16), np.float32)
    future_module(tmp_path).factory(16, backend)(a, out)
    np.testing.assert_array_equal(out, a)


def test_future_annotations_name_only_in_annotations_explains_why(tmp_path):
    with pytest.raises(KernelSyntaxError, match="name 'N' is not defined .*only if the kernel body uses it"):
        future_module(tmp_path).annotation_only(16)(np.zeros((16, 16), np.float32))


# ----------------------------------------------------------------------------------------------
# 5. argument errors of pl functions name the function and its signature
# ----------------------------------------------------------------------------------------------
def positional_addr(out: pl.Tensor[[16, 16], FP32]):
    t = pl.make_tile(pl.TileType([16, 16], FP32), 0)  # E:positional_addr


def missing_operand(out: pl.Tensor[[16, 16], FP32]):
    t = pl.make_tile(pl.TileType([16, 16], FP32), addr=0)
    with pl.section_vector():
        pl.add(t, t)  # E:missing_operand


def extra_argument(out: pl.Tensor[[16, 16], FP32]):
    with pl.section_vector():
        i = pl.get_block_idx(0)  # E:extra_argument


def group_without_addrs(out: pl.Tensor[[16, 16], FP32]):
    g = pl.make_tile_group(type=pl.TileType([16, 16], FP32), depth=2)  # E:no_addrs


SIGNATURES = {
    "positional_addr": (positional_addr, "pl.make_tile: takes 1 positional argument, got 2; addr, size are "
                                         "keyword-only; expected pl.make_tile(tile_type, *, addr, size=None)"),
    "missing_operand": (missing_operand, "pl.add: missing a required argument: 'rhs'; expected "
                                         "pl.add(out, lhs, rhs)"),
    "extra_argument": (extra_argument, "pl.get_block_idx: takes 0 positional arguments, got 1; expected "
                                       "pl.get_block_idx()"),
    "no_addrs": (group_without_addrs, "pl.make_tile_group: missing a required argument: 'addrs'; expected "
                                      "pl.make_tile_group(*, type, addrs, mutex_ids=None, depth=None"),
}


@pytest.mark.parametrize("tag", sorted(SIGNATURES))
def test_argument_errors_name_the_pl_function_and_its_signature(tag):
    fn, words = SIGNATURES[tag]
    with pytest.raises(KernelSyntaxError) as e:
        pl.jit(backend="interp")(fn)(np.zeros((16, 16), np.float32))
    assert words in str(e.value)
    assert "KernelParser" not in str(e.value) and "intrinsic_" not in str(e.value)
    assert_points_at(e.value, tag, fn.__name__)


# ----------------------------------------------------------------------------------------------
# 6. compare masks declared with the shape of narrow data tiles
# ----------------------------------------------------------------------------------------------
def mask_kernel(R: int, C: int, dtype):
    def relu_by_select(a: pl.Tensor[[R, C], dtype], out: pl.Tensor[[R, C], dtype]):
        x = vec([R, C], dtype, 0x0, 0)
        o = vec([R, C], dtype, 0x400, 1)
        t = vec([R, C], dtype, 0x800, 2)
        m = vec([R, C], UINT8, 0xC00, 3)  # the mask has the data tile's shape: C bytes per row
        with pl.section_vector():
            pl.load(x, a, [0, 0])
            pl.gt(m, x, 0.0)
            pl.select(o, m, x, 0.0, t)
            pl.store(out, o, [0, 0])
    return relu_by_select


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("R,C,dtype", [(8, 8, FP32), (8, 16, FP32), (8, 16, FP16)],
                         ids=["FP32x8", "FP32x16", "FP16x16"])
def test_compare_masks_of_narrow_data_tiles(R, C, dtype, backend):
    npd = np.float32 if dtype == FP32 else np.float16
    a = rand((R, C), npd, seed=6)
    out = launch(mask_kernel(R, C, dtype), backend, a, np.zeros((R, C), npd))[1]
    np.testing.assert_array_equal(out, np.maximum(a, 0))


def narrow_uint8_as_data(a: pl.Tensor[[8, 16], UINT8]):
    m = pl.make_tile(pl.TileType([8, 16], UINT8), addr=0)
    with pl.section_vector():
        pl.load(m, a, [0, 0])  # E:narrow_data


def test_narrow_uint8_tile_is_only_a_mask():
    with pytest.raises(KernelMemoryError, match="cols x element bytes to be a multiple of 32 \\(got 16 x 1\\); "
                                                "such a UINT8 tile can only be the mask") as e:
        pl.jit(backend="interp")(narrow_uint8_as_data)(np.zeros((8, 16), np.uint8))
    assert_points_at(e.value, "narrow_data", "narrow_uint8_as_data")


# ----------------------------------------------------------------------------------------------
# 7. ND [R,1] tiles are laid out like DN [R,1]: accepted for argmax/argmin and row results
# ----------------------------------------------------------------------------------------------
def row_results(a: pl.Tensor[[16, 64], FP32], idx: pl.Tensor[[16, 1], INT32], centred: pl.Tensor[[16, 64], FP32]):
    x = vec([16, 64], FP32, 0x0, 0)
    t = vec([16, 64], FP32, 0x1000, 1)
    i = vec([16, 1], INT32, 0x2000, 2)  # ND (no layout): one column
    r = vec([16, 1], FP32, 0x2100, 3)
    with pl.section_vector():
        pl.load(x, a, [0, 0])
        pl.argmax(i, x, t, dim=0)
        pl.maximum(r, x, t, dim=0)
        pl.expand_sub(t, x, r, dim=0)
        pl.store(idx, i, [0, 0])
        pl.store(centred, t, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_nd_one_column_tiles_hold_row_results(backend):
    a = rand((16, 64), seed=7)
    idx, centred = launch(row_results, backend, a, np.zeros((16, 1), np.int32), np.zeros((16, 64), np.float32))[1:]
    np.testing.assert_array_equal(idx[:, 0], a.argmax(axis=1))
    np.testing.assert_array_equal(centred, a - a.max(axis=1, keepdims=True))


def short_column(a: pl.Tensor[[16, 64], FP32]):
    c = pl.make_tile(pl.TileType([4, 1], FP32), addr=0)  # E:short_column


def test_nd_one_column_tile_needs_32_byte_columns():
    with pytest.raises(KernelMemoryError, match="rows x element bytes to be a multiple of 32 \\(got 4 x 4\\)") as e:
        pl.jit(backend="interp")(short_column)(np.zeros((16, 64), np.float32))
    assert_points_at(e.value, "short_column", "short_column")


# ----------------------------------------------------------------------------------------------
# 8. xor's scratch tile must be a separate tile of the same type
# ----------------------------------------------------------------------------------------------
def xor_tmp_is_dst(a: pl.Tensor[[8, 32], INT32]):
    x = pl.make_tile(pl.TileType([8, 32], INT32), addr=0)
    o = pl.make_tile(pl.TileType([8, 32], INT32), addr=0x400)
    with pl.section_vector():
        pl.xor(o, x, x, o)  # E:xor_overlap


def xor_tmp_shape(a: pl.Tensor[[8, 32], INT32]):
    x = pl.make_tile(pl.TileType([8, 32], INT32), addr=0)
    o = pl.make_tile(pl.TileType([8, 32], INT32), addr=0x400)
    t = pl.make_tile(pl.TileType([16, 32], INT32), addr=0x800)
    with pl.section_vector():
        pl.xor(o, x, x, t)  # E:xor_shape


@pytest.mark.parametrize("fn,tag,words", [(xor_tmp_is_dst, "xor_overlap", "'tmp' \\(o\\) overlaps 'dst'"),
                                          (xor_tmp_shape, "xor_shape", "'tmp' has shape \\[16, 32\\]")],
                         ids=["overlap", "shape"])
def test_xor_scratch_tile_rules(fn, tag, words):
    with pytest.raises(KernelTypeError, match=words) as e:
        pl.jit(backend="interp")(fn)(np.zeros((8, 32), np.int32))
    assert_points_at(e.value, tag, fn.__name__)


# ----------------------------------------------------------------------------------------------
# group slots of fractal tiles whose 32-byte runs are padded would overlap: rejected
# ----------------------------------------------------------------------------------------------
def padded_mat_group(x: pl.Tensor[[16, 8], FP16], y: pl.Tensor[[16, 8], FP16]):
    tt = pl.TileType(shape=[16, 8], dtype=FP16, target_memory=pl.MemorySpace.Mat)
    g = pl.make_tile_group(type=tt, addrs=0, mutex_ids=[0, 1])  # E:slots
    with pl.section_cube():
        pl.load(g[0], x, [0, 0])
        pl.load(g[1], y, [0, 0])


def whole_fractal_mat_group(x: pl.Tensor[[16, 32], FP16], y: pl.Tensor[[16, 32], FP16]):
    tt = pl.TileType(shape=[16, 32], dtype=FP16, target_memory=pl.MemorySpace.Mat)
    g = pl.make_tile_group(type=tt, addrs=0, mutex_ids=[0, 1])
    with pl.section_cube():
        pl.load(g[0], x, [0, 0])
        pl.load(g[1], y, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_group_slots_of_padded_fractal_tiles_must_not_overlap(backend):
    """A [16,8] FP16 NZ tile pads its rows to the 16-element run (512 bytes), but its slots are
    prod(shape) x 2 = 256 bytes apart (docs/language.md "Tiles"): loading slot 1 would overwrite slot 0."""
    with pytest.raises(KernelMemoryError, match="overlap: .* occupies 512 bytes .* 256 bytes apart") as e:
        launch(padded_mat_group, backend, rand((16, 8), np.float16), rand((16, 8), np.float16))
    assert_points_at(e.value, "slots", "padded_mat_group")
    launch(whole_fractal_mat_group, backend, rand((16, 32), np.float16), rand((16, 32), np.float16))


# ----------------------------------------------------------------------------------------------
# host-side spellings of the official tutorials
# ----------------------------------------------------------------------------------------------
def test_platform_info_cube_core_num():
    from pypto_pro.runtime.platform import get_platform_info

    info = get_platform_info("a5")
    assert info.cube_core_num == info.core_num == 32 and info.vector_core_num == 64


ARRAY_TILING = """
from __future__ import annotations
from dataclasses import dataclass
import pypto_pro.language as pl

@dataclass
class ArrTiling:
    total: int
    opkind: int[8]

@pl.jit(backend="interp")
def with_array_tiling(x: pl.Tensor[[8], pl.DT_INT64], t: ArrTiling):
    with pl.section_vector():
        x[0] = t.total
"""


def test_tiling_array_field_from_a_module_with_future_annotations(tmp_path):
    path = tmp_path / "array_tiling.py"
    path.write_text(ARRAY_TILING)
    spec = importlib.util.spec_from_file_location("array_tiling", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["array_tiling"] = mod
    try:
        spec.loader.exec_module(mod)
        x = np.zeros(8, np.int64)
        mod.with_array_tiling(x, mod.ArrTiling(3, [0] * 8))
        assert x[0] == 3
        with pytest.raises(ValueError, match=r"'t.opkind': expected a list of 8 values"):
            mod.with_array_tiling(x, mod.ArrTiling(3, None))
    finally:
        del sys.modules["array_tiling"]


# ----------------------------------------------------------------------------------------------
# official API pages: 64-bit shifts, dcci's signature, TensorLayout, not-implemented structs
# ----------------------------------------------------------------------------------------------
def shifts_64(a: pl.Tensor[[8, 32], pl.DT_INT64], b: pl.Tensor[[8, 32], pl.DT_INT64],
              u: pl.Tensor[[8, 32], pl.DT_UINT64], n: pl.Tensor[[8, 32], pl.DT_UINT64],
              out_l: pl.Tensor[[8, 32], pl.DT_INT64], out_r: pl.Tensor[[8, 32], pl.DT_UINT64]):
    ta = vec([8, 32], pl.DT_INT64, 0x0, 0)
    tb = vec([8, 32], pl.DT_INT64, 0x800, 1)
    tu = vec([8, 32], pl.DT_UINT64, 0x1000, 2)
    tl = vec([8, 32], pl.DT_INT64, 0x1800, 3)
    tr = vec([8, 32], pl.DT_UINT64, 0x2000, 4)
    tn = vec([8, 32], pl.DT_UINT64, 0x2800, 5)
    with pl.section_vector():
        pl.system.dcci(a, [0, 0], cache_line=pl.CacheLine.SINGLE_CACHE_LINE, dst=pl.DcciDst.CACHELINE_OUT)
        pl.system.dcci(a, cache_line=pl.CacheLine.ENTIRE_DATA_CACHE)
        pl.load(ta, a, [0, 0])
        pl.load(tb, b, [0, 0])
        pl.load(tu, u, [0, 0])
        pl.load(tn, n, [0, 0])
        pl.shl(tl, ta, tb)
        pl.shr(tr, tu, tn)
        pl.store(out_l, tl, [0, 0])
        pl.store(out_r, tr, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_64_bit_shifts_and_dcci_signature(backend):
    """shl/shr take INT64/UINT64 (the official pages list them); dcci takes the official
    offset / cache_line= / dst= arguments (no effect on values)."""
    rng = np.random.default_rng(3)
    a = rng.integers(-2**40, 2**40, (8, 32), dtype=np.int64)
    b = rng.integers(0, 64, (8, 32), dtype=np.int64)
    u = rng.integers(0, 2**63, (8, 32), dtype=np.uint64) * np.uint64(2)
    n = rng.integers(0, 64, (8, 32), dtype=np.uint64)
    out = launch(shifts_64, backend, a, b, u, n, np.zeros((8, 32), np.int64), np.zeros((8, 32), np.uint64))
    assert np.array_equal(out[4], np.left_shift(a, b)) and np.array_equal(out[5], np.right_shift(u, n))


def test_official_layout_and_struct_names():
    assert pl.TensorLayout.NZ is pl.NZ and pl.TensorLayout is pl.Layout
    for name in ("struct", "struct_array", "make_tuple"):  # kernel-only intrinsics (tests/pro/test_structs.py)
        with pytest.raises(KernelSyntaxError, match=f"pl.{name}\\(\\) can only be used inside a @pl.jit kernel"):
            getattr(pl, name)()


def printf_fp16(x: pl.Tensor[[1, 16], pl.DT_FP16]):
    t = vec([1, 16], pl.DT_FP16, 0x0, 0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.printf("%f\n", t[0, 0])  # E:printf


def test_printf_f_needs_fp32():
    """docs/language.md "SPMD, sections, synchronisation": %f takes FP32 only (a 16-bit float is cast first)."""
    with pytest.raises(KernelTypeError, match="%f needs an FP32 value, got FP16") as e:
        launch(printf_fp16, "interp", np.zeros((1, 16), np.float16))
    assert_points_at(e.value, "printf", "printf_fp16")

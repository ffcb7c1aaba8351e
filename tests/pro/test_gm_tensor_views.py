"""Raw pointers and GM tensor views (``pl.Ptr``, ``pl.addptr``, ``pl.make_ptr``, ``pl.make_tensor``,
``pl.set_stride``) and TilingData array fields (``T[N]``) on interp, cpu and sim: views at offsets, with
strides, retyped, shaped by runtime values, made per core; their bounds and argument checks.
The strict simulator must not report a race, deadlock or uninitialised read where none exists.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto_pro.language as pl
from pypto_pro import KernelLaunchError, KernelRaceError, KernelRuntimeError, KernelSyntaxError, KernelTypeError
from pypto_pro.backends import cpu

from .on_every_backend import EVERY_BACKEND, backend  # noqa: F401,E402  (backend: fixture)

pytestmark = EVERY_BACKEND


@functools.lru_cache(maxsize=None)
def on(fn, backend: str):
    return pl.jit(fn, backend=backend)


# =====================================================================================================
# A scratch pointer: a view at an element offset, written and read back
# =====================================================================================================
def through_scratch(x: pl.Tensor[[32, 64], pl.DT_FP16], scratch: pl.Ptr[pl.DT_FP16],
                    y: pl.Tensor[[32, 64], pl.DT_FP16]):
    upper = pl.make_tensor(pl.addptr(scratch, 32 * 64), [32, 64], [64, 1])  # the second half of scratch
    ring = pl.make_tile_group(type=pl.TileType([32, 64], pl.DT_FP16, pl.MemorySpace.Vec), addrs=0x800,
                              mutex_ids=[2, 3])
    with pl.section_vector():
        first = ring.next()
        pl.load(first, x, [0, 0])
        pl.mul(first, first, -2.0)
        pl.store(upper, first, [0, 0])
        # the store (MTE3) must land in GM before the load (MTE2) reads it back
        pl.system.sync_src(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.MTE2, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.MTE2, event_id=1)
        again = ring.next()
        pl.load(again, upper, [0, 0])
        pl.store(y, again, [0, 0])


def test_view_at_an_offset_of_a_scratch_pointer(backend):
    x = torch.rand(32, 64, dtype=torch.float16)
    scratch = torch.full((2 * 32 * 64,), 5.5, dtype=torch.float16)
    y = torch.zeros(32, 64, dtype=torch.float16)
    on(through_scratch, backend)[None, 1](x, scratch, y)
    assert torch.equal(y, x * -2)
    assert torch.equal(scratch[32 * 64:].view(32, 64), x * -2)  # addptr moved the view to the second half
    assert torch.equal(scratch[:32 * 64], torch.full((32 * 64,), 5.5, dtype=torch.float16))


def test_a_pointer_takes_any_contiguous_array(backend):
    """A pointer argument is the bytes of any contiguous tensor or array, whatever its shape."""
    x = np.random.default_rng(1).random((32, 64)).astype(np.float16)
    scratch = np.zeros((8, 16, 32), np.float16)
    y = np.zeros((32, 64), np.float16)
    on(through_scratch, backend)[None, 1](x, scratch, y)
    assert np.array_equal(y, x * np.float16(-2))
    assert np.array_equal(scratch.reshape(-1)[32 * 64:].reshape(32, 64), x * np.float16(-2))


def bytes_as_fp32(raw: pl.Ptr[pl.DT_UINT8], y: pl.Tensor[[16, 32], pl.DT_FP32]):
    view = pl.make_tensor(pl.make_ptr(raw, dtype=pl.DT_FP32), [16, 32])
    ring = pl.make_tile_group(type=pl.TileType([16, 32], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0, mutex_ids=[1])
    with pl.section_vector():
        pl.load(ring[0], view, [0, 0])
        pl.store(y, ring[0], [0, 0])


def test_make_ptr_retypes_a_byte_pointer(backend):
    data = np.random.default_rng(6).standard_normal((16, 32)).astype(np.float32)
    raw = data.view(np.uint8).reshape(-1).copy()
    y = np.zeros((16, 32), np.float32)
    on(bytes_as_fp32, backend)[None, 1](raw, y)
    assert np.array_equal(y, data)


# =====================================================================================================
# make_tensor.md: stride views (pitched rows, a transposed view of the same memory)
# =====================================================================================================
def stride_views_kernel(
    p: pl.Ptr[pl.DT_FP32],
    pitched_out: pl.Tensor[[8, 16], pl.DT_FP32],
    transposed_out: pl.Tensor[[16, 8], pl.DT_FP32],
):
    pitched = pl.make_tensor(p, [8, 16], [32, 1])
    transposed = pl.make_tensor(p, [16, 8], [1, 16])
    tt = pl.TileType(shape=[8, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tt_t = pl.TileType(shape=[16, 8], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    a = pl.make_tile_group(type=tt, addrs=0x0, mutex_ids=[1]).current()
    b = pl.make_tile_group(type=tt_t, addrs=0x1000, mutex_ids=[2]).current()
    with pl.section_vector():
        pl.load(a, pitched, [0, 0])
        pl.load(b, transposed, [0, 0])
        pl.store(pitched_out, a, [0, 0])
        pl.store(transposed_out, b, [0, 0])


def test_make_tensor_stride_views(backend):
    mem = np.arange(8 * 32, dtype=np.float32)
    pitched = np.zeros((8, 16), np.float32)
    transposed = np.zeros((16, 8), np.float32)
    on(stride_views_kernel, backend)(mem, pitched, transposed)
    assert np.array_equal(pitched, mem.reshape(8, 32)[:, :16])  # pitched[i, j] = p[i * 32 + j]
    assert np.array_equal(transposed, mem[:128].reshape(8, 16).T)  # transposed[j, i] = p[j + i * 16]


# make_tensor of a GM tensor: merge axes, reinterpret the dtype, default row-major strides
def merge_axes_kernel(x: pl.Tensor[[4, 8, 32], pl.DT_FP32], y: pl.Tensor[[32, 32], pl.DT_FP32]):
    x2 = pl.make_tensor(x, [32, 32])
    bits = pl.make_tensor(x2, [32, 32], dtype=pl.DT_INT32)
    t = pl.make_tile_group(type=pl.TileType([32, 32], pl.DT_FP32), addrs=0, mutex_ids=[3]).current()
    u = pl.make_tile_group(type=pl.TileType([32, 32], pl.DT_INT32), addrs=0x1000, mutex_ids=[4]).current()
    with pl.section_vector():
        pl.load(t, x2, [0, 0])
        pl.store(y, t, [0, 0])
        pl.load(u, bits, [0, 0])
        pl.store(bits, u, [0, 0])  # a same-value store through the reinterpreting view


def test_make_tensor_of_a_tensor(backend):
    x = np.random.default_rng(2).standard_normal((4, 8, 32)).astype(np.float32)
    before = x.copy()
    y = np.zeros((32, 32), np.float32)
    on(merge_axes_kernel, backend)(x, y)
    assert np.array_equal(y, before.reshape(32, 32))
    assert np.array_equal(x, before)


# =====================================================================================================
# Views of 2-4-D host shapes folded to 2-D by TilingData array fields; tails by valid windows
# =====================================================================================================
BR, BC = 64, 128  # the block a core handles per iteration


@dataclass
class FoldTiling:
    dims: int[4]     # the host shape, leading unused dims 1
    select: int[8]   # select[4] picks the op: 0 add, 1 sub, anything else mul


def folded_elementwise(x: pl.Ptr[pl.DT_FP16], y: pl.Ptr[pl.DT_FP16], z: pl.Ptr[pl.DT_FP16], td: FoldTiling):
    cols = td.dims[3]
    rows = td.dims[0] * td.dims[1] * td.dims[2]
    xv, yv, zv = pl.make_tensor(x, [rows, cols]), pl.make_tensor(y, [rows, cols]), pl.make_tensor(z, [rows, cols])
    block = pl.TileType([BR, BC], pl.DT_FP16, pl.MemorySpace.Vec, valid_shape=[-1, -1])
    xs = pl.make_tile_group(type=block, addrs=0x00000, mutex_ids=[0, 1])
    ys = pl.make_tile_group(type=block, addrs=0x08000, mutex_ids=[2, 3])
    zs = pl.make_tile_group(type=block, addrs=0x10000, mutex_ids=[4, 5])
    with pl.section_vector():
        across = (cols + BC - 1) // BC
        blocks = ((rows + BR - 1) // BR) * across
        for b in pl.range(pl.get_block_idx(), blocks, pl.get_block_num()):
            br, bc = b // across, b % across
            height = pl.min(rows - br * BR, BR)
            width = pl.min(cols - bc * BC, BC)
            tx, ty, tz = xs.next(), ys.next(), zs.next()
            for t in (tx, ty, tz):
                pl.set_validshape(t, [height, width])
            pl.load_tile(tx, xv, [br, bc])
            pl.load_tile(ty, yv, [br, bc])
            which = td.select[4]
            if which == 0:
                pl.add(tz, tx, ty)
            elif which == 1:
                pl.sub(tz, tx, ty)
            else:
                pl.mul(tz, tx, ty)
            pl.store_tile(zv, tz, [br, bc])


FOLD_OPS = {"add": (0, np.add), "sub": (1, np.subtract), "mul": (7, np.multiply)}
FOLD_SHAPES = [[256, 384], [4, 64, 128], [2, 3, 64, 256], [257, 300], [130, 127], [3, 45, 200], [2, 2, 5, 129],
               [1, 1, 1, 70]]


@pytest.mark.cpu_sample
@pytest.mark.parametrize("shape", FOLD_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("op", sorted(FOLD_OPS))
def test_tiling_arrays_fold_any_rank_and_tails(backend, shape, op):
    code, np_op = FOLD_OPS[op]
    rng = np.random.default_rng(len(shape) * 1000 + shape[-1])
    x, y = (rng.uniform(-4, 4, shape).astype(np.float16) for _ in range(2))
    z = np.full(shape, np.nan, np.float16)
    dims = [1] * (4 - len(shape)) + list(shape)
    select = [9, 9, 9, 9, code, 9, 9, 9]
    blocks = -(-int(np.prod(shape[:-1])) // BR) * -(-shape[-1] // BC)
    on(folded_elementwise, backend)[None, min(blocks, 6)](x, y, z, FoldTiling(dims=dims, select=select))
    want = np_op(x.astype(np.float32), y.astype(np.float32)).astype(np.float16)
    assert np.array_equal(z, want)


# TilingData.md (在Kernel签名中声明TilingData): views whose dims are TilingData fields, no strides given
@dataclass
class OpTiling:
    sq: int
    skv: int
    d: int


def fa_views_kernel(
    q: pl.Ptr[pl.DT_FP16],
    k: pl.Ptr[pl.DT_FP16],
    o: pl.Ptr[pl.DT_FP16],
    tiling: OpTiling,
):
    tensor_q = pl.make_tensor(q, [tiling.sq, tiling.d])
    tensor_k = pl.make_tensor(k, [tiling.skv, tiling.d])
    tensor_o = pl.make_tensor(o, [tiling.sq, tiling.d])
    tt = pl.TileType(shape=[16, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    a = pl.make_tile_group(type=tt, addrs=0, mutex_ids=[5]).current()
    b = pl.make_tile_group(type=tt, addrs=0x800, mutex_ids=[6]).current()
    with pl.section_vector():
        for r in pl.range(pl.get_block_idx(), tiling.sq // 16, pl.get_block_num()):
            pl.load(a, tensor_q, [r * 16, 0])
            pl.load(b, tensor_k, [(r * 16) % tiling.skv, 0])
            pl.add(a, a, b)
            pl.store(tensor_o, a, [r * 16, 0])


def test_views_shaped_by_tiling_fields(backend):
    rng = np.random.default_rng(3)
    q = rng.random((64, 64)).astype(np.float16)
    k = rng.random((32, 64)).astype(np.float16)
    o = np.zeros((64, 64), np.float16)
    on(fa_views_kernel, backend)[None, 2](q, k, o, OpTiling(sq=64, skv=32, d=64))
    want = (q.astype(np.float32) + np.tile(k, (2, 1)).astype(np.float32)).astype(np.float16)
    assert np.array_equal(o, want)


# =====================================================================================================
# Views made per core and per iteration; races between views of one pointer
# =====================================================================================================
def per_core_view_kernel(src: pl.Tensor[[4, 64], pl.DT_FP32], ws: pl.Ptr[pl.DT_FP32],
                         dst: pl.Tensor[[4, 64], pl.DT_FP32], overlap: pl.DT_INT64):
    t = pl.make_tile_group(type=pl.TileType([1, 64], pl.DT_FP32), addrs=0, mutex_ids=[7]).current()
    with pl.section_vector():
        core = pl.get_block_idx()
        mine = pl.make_tensor(pl.addptr(ws, core * (64 - overlap)), [1, 64])
        pl.load(t, src, [core, 0])
        pl.store(mine, t, [0, 0])
        pl.load(t, mine, [0, 0])
        pl.store(dst, t, [core, 0])


def test_each_core_makes_its_own_view(backend):
    src = np.arange(4 * 64, dtype=np.float32).reshape(4, 64)
    ws = np.zeros(4 * 64, np.float32)
    dst = np.zeros((4, 64), np.float32)
    on(per_core_view_kernel, backend)[None, 4](src, ws, dst, 0)
    assert np.array_equal(dst, src)
    assert np.array_equal(ws, src.reshape(-1))


def test_sim_reports_a_race_between_views_of_one_pointer():
    """Cores 0 and 1 write overlapping bytes through their own views of one pointer, unordered."""
    src = np.ones((4, 64), np.float32)
    ws = np.zeros(4 * 64, np.float32)
    dst = np.zeros((4, 64), np.float32)
    src[1] = 2.0  # different values: not a benign same-value write
    with pytest.raises(KernelRaceError, match="ws_view"):
        on(per_core_view_kernel, "sim")[None, 2](src, ws, dst, 8)


# =====================================================================================================
# Errors
# =====================================================================================================
def test_view_outside_the_pointer_memory_is_a_runtime_error(backend):
    x = torch.rand(32, 64, dtype=torch.float16)
    y = torch.zeros(32, 64, dtype=torch.float16)
    with pytest.raises(KernelRuntimeError, match=r"tensor view 'scratch_view1' \(pl.make_tensor at line \d+\) of "
                                                 r"'scratch'.*spans bytes \[4096, 8192\) of 'scratch', which "
                                                 r"holds 6000 bytes") as e:
        on(through_scratch, backend)[None, 1](x, torch.zeros(3000, dtype=torch.float16), y)
    assert "test_gm_tensor_views.py" in str(e.value) and "pl.store(upper, first, [0, 0])" in str(e.value)


def misaligned_kernel(p: pl.Ptr[pl.DT_UINT8], out: pl.Tensor[[1, 32], pl.DT_FP32]):
    v = pl.make_tensor(pl.make_ptr(pl.addptr(p, 2), pl.DT_FP32), [1, 32])
    t = pl.make_tile_group(type=pl.TileType([1, 32], pl.DT_FP32), addrs=0, mutex_ids=[8]).current()
    with pl.section_vector():
        pl.load(t, v, [0, 0])
        pl.store(out, t, [0, 0])


def test_view_not_on_an_element_boundary_is_a_runtime_error(backend):
    with pytest.raises(KernelRuntimeError, match="starts 2 bytes into 'p', not a whole number of"):
        on(misaligned_kernel, backend)(np.zeros(256, np.uint8), np.zeros((1, 32), np.float32))


def negative_stride_kernel(p: pl.Ptr[pl.DT_FP32], s: pl.DT_INT64, out: pl.Tensor[[2, 8], pl.DT_FP32]):
    v = pl.make_tensor(p, [2, 8], [s, 1])
    t = pl.make_tile_group(type=pl.TileType([2, 8], pl.DT_FP32), addrs=0, mutex_ids=[9]).current()
    with pl.section_vector():
        pl.load(t, v, [0, 0])
        pl.store(out, t, [0, 0])


def test_runtime_stride_is_checked(backend):
    mem = np.arange(64, dtype=np.float32)
    out = np.zeros((2, 8), np.float32)
    on(negative_stride_kernel, backend)(mem, 32, out)
    assert np.array_equal(out, mem.reshape(2, 32)[:, :8])
    with pytest.raises(KernelRuntimeError, match="strides must be >= 0"):
        on(negative_stride_kernel, backend)(mem, -8, out)


def test_pointer_argument_checks():
    a = torch.rand(32, 64, dtype=torch.float16)
    out = torch.zeros(32, 64, dtype=torch.float16)
    k = on(through_scratch, "interp")
    with pytest.raises(KernelLaunchError, match="must be contiguous memory"):
        k(a, torch.zeros(64, 128, dtype=torch.float16)[:, ::2], out)
    with pytest.raises(KernelLaunchError, match="not a whole number of FP16 elements"):
        k(a, np.zeros(3, np.uint8), out)
    with pytest.raises(KernelLaunchError, match="expected a torch tensor or numpy array"):
        k(a, 12345, out)


def test_pointer_misuse_is_a_compile_error():
    def load_from_ptr(p: pl.Ptr[pl.DT_FP32], out: pl.Tensor[[1, 8], pl.DT_FP32]):
        t = pl.make_tile_group(type=pl.TileType([1, 8], pl.DT_FP32), addrs=0, mutex_ids=[10]).current()
        with pl.section_vector():
            pl.load(t, p, [0, 0])
            pl.store(out, t, [0, 0])

    def addptr_on_tensor(x: pl.Tensor[[1, 8], pl.DT_FP32]):
        pl.make_tensor(pl.addptr(x, 8), [1, 8])

    def float_offset(p: pl.Ptr[pl.DT_FP32]):
        pl.addptr(p, 1.5)

    def bad_stride(p: pl.Ptr[pl.DT_FP32]):
        pl.make_tensor(p, [2, 8], [8])

    mem, out = np.zeros(8, np.float32), np.zeros((1, 8), np.float32)
    with pytest.raises(KernelTypeError):
        pl.jit(load_from_ptr, backend="interp")(mem, out)
    with pytest.raises(KernelTypeError, match="pl.addptr takes a pl.Ptr pointer"):
        pl.jit(addptr_on_tensor, backend="interp")(out)
    with pytest.raises(KernelTypeError, match="the offset must be an integer"):
        pl.jit(float_offset, backend="interp")(mem)
    with pytest.raises(KernelTypeError, match="stride must be a list of 2 entries"):
        pl.jit(bad_stride, backend="interp")(mem)


# =====================================================================================================
# TilingData arrays
# =====================================================================================================
@dataclass
class ArrayTiling:
    n: int
    scales: float[2]
    flags: bool[3] = field(default_factory=lambda: [False, True, False])


def array_fields_kernel(x: pl.Tensor[[8, 64], pl.DT_FP32], y: pl.Tensor[[8, 64], pl.DT_FP32], td: ArrayTiling):
    t = pl.make_tile_group(type=pl.TileType([8, 64], pl.DT_FP32), addrs=0, mutex_ids=[11]).current()
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        if td.flags[1]:
            pl.mul(t, t, td.scales[0])
        pl.add(t, t, td.scales[-1] * len(td.scales))
        pl.store(y, t, [0, 0])


def test_tiling_array_fields(backend):
    x = np.ones((8, 64), np.float32)
    y = np.zeros_like(x)
    k = on(array_fields_kernel, backend)
    k(x, y, ArrayTiling(1, [3.0, 0.5]))
    assert np.all(y == 3.0 + 1.0)
    k(x, y, ArrayTiling(1, (3.0, 0.25), [False, False, True]))
    assert np.all(y == 1.0 + 0.5)


def test_tiling_array_length_mismatch_is_a_value_error():
    k = on(array_fields_kernel, "interp")
    x = np.ones((8, 64), np.float32)
    with pytest.raises(ValueError, match=r"argument 'td.scales': expected a list of 2 values \(declared FP32\[2\]\), "
                                         r"got 3 elements"):
        k(x, x, ArrayTiling(1, [1.0, 2.0, 3.0]))
    with pytest.raises(KernelLaunchError, match=r"td.flags\[0\]': expected a bool"):
        k(x, x, ArrayTiling(1, [1.0, 2.0], [2, 0, 0]))


@dataclass
class TooLong:
    a: int[2049]


@dataclass
class Indexed:
    a: int[4]


def test_tiling_array_declaration_and_index_errors():
    def uses_too_long(x: pl.Tensor[[8], pl.DT_INT64], td: TooLong):
        pass

    def runtime_index(x: pl.Tensor[[8], pl.DT_INT64], i: pl.DT_INT64, td: Indexed):
        with pl.section_vector():
            pl.setval(x, 0, td.a[i])

    def index_out_of_range(x: pl.Tensor[[8], pl.DT_INT64], td: Indexed):
        with pl.section_vector():
            pl.setval(x, 0, td.a[4])

    x = np.zeros(8, np.int64)
    with pytest.raises(TypeError, match=r"length of 'int\[2049\]' must be an int literal in 1..2048"):
        pl.jit(uses_too_long, backend="interp")(x, TooLong([0] * 2049))
    with pytest.raises(NotImplementedError, match="at a runtime index"):
        pl.jit(runtime_index, backend="interp")(x, 1, Indexed([1, 2, 3, 4]))
    with pytest.raises(KernelSyntaxError, match=r"index 4 is outside td.a \(length 4\)"):
        pl.jit(index_out_of_range, backend="interp")(x, Indexed([1, 2, 3, 4]))


# =====================================================================================================
# Random views: every backend reads exactly numpy's as_strided window, or raises the same error
# =====================================================================================================
def random_view_kernel(p: pl.Ptr[pl.DT_FP32], off: pl.DT_INT64, rs: pl.DT_INT64, cs: pl.DT_INT64,
                       out: pl.Tensor[[4, 8], pl.DT_FP32]):
    v = pl.make_tensor(pl.addptr(p, off), [4, 8], [rs, cs])
    t = pl.make_tile_group(type=pl.TileType([4, 8], pl.DT_FP32), addrs=0, mutex_ids=[20]).current()
    with pl.section_vector():
        pl.load(t, v, [0, 0])
        pl.store(out, t, [0, 0])


@settings(deadline=None, derandomize=True, database=None, max_examples=30)
@given(off=st.integers(-4, 40), rs=st.integers(0, 20), cs=st.integers(0, 4))
def test_random_views_agree_with_numpy(off, rs, cs):
    mem = np.arange(100, dtype=np.float32)
    need = off + 3 * rs + 7 * cs + 1
    outcomes = []
    for backend in ["interp", "sim"] + (["cpu"] if cpu.available() else []):
        out = np.zeros((4, 8), np.float32)
        try:
            on(random_view_kernel, backend)(mem, off, rs, cs, out)
            outcomes.append(out)
        except KernelRuntimeError as e:
            outcomes.append(str(e).split(" (on ")[0])
    if off >= 0 and need <= 100:
        want = np.lib.stride_tricks.as_strided(mem[off:], shape=(4, 8), strides=(rs * 4, cs * 4))
        for got in outcomes:
            assert isinstance(got, np.ndarray) and np.array_equal(got, want)
    else:
        assert all(isinstance(got, str) and "spans bytes" in got for got in outcomes)
        assert len(set(outcomes)) == 1, outcomes


# =====================================================================================================
# set_stride: the same tensor name steps by new strides from that statement on
# =====================================================================================================
XR, XC = 256, 64


def rows_apart(x: pl.Tensor[[XR, XC], pl.DT_FP16], gap: pl.Tensor[[1, 2], pl.DT_INT32],
               y: pl.Tensor[[2, XC], pl.DT_FP16]):
    ring = pl.make_tile_group(type=pl.TileType([2, XC], pl.DT_FP16, pl.MemorySpace.Vec), addrs=0x100,
                              mutex_ids=[3, 4])
    with pl.section_vector():
        step = gap[0, 1]
        pl.set_stride(x, [step, 1])
        pair = ring.next()
        pl.load(pair, x, [0, 0])
        pl.store(y, pair, [0, 0])


def strides_per_iteration(x: pl.Tensor[[XR, XC], pl.DT_FP16], gaps: pl.Tensor[[1, 4], pl.DT_INT32],
                          y: pl.Tensor[[8, XC], pl.DT_FP16]):
    ring = pl.make_tile_group(type=pl.TileType([2, XC], pl.DT_FP16, pl.MemorySpace.Vec), addrs=0x100,
                              mutex_ids=[3, 4])
    with pl.section_vector():
        for k in pl.range(4):
            pl.set_stride(x, [gaps[0, k], 1])
            pair = ring.next()
            pl.load(pair, x, [k, 0])
            pl.store(y, pair, [k * 2, 0])


@pytest.mark.parametrize("gap", [XC, 3 * XC, 100 * XC, XR * XC - XC])
def test_set_stride_loads_rows_a_gap_apart(backend, gap):
    """Row 1 of the re-strided tensor starts ``gap`` elements after row 0; a gap as large as the tensor
    less one row still reaches its last row."""
    x = torch.randn(XR, XC).half()
    y = torch.zeros(2, XC).half()
    on(rows_apart, backend)[None, 1](x, torch.tensor([[0, gap]], dtype=torch.int32), y)
    flat = x.reshape(-1)
    assert torch.equal(y, torch.stack([flat[:XC], flat[gap:gap + XC]]))


def test_set_stride_again_in_each_iteration_offsets_name_the_first_row(backend):
    """The load's offset [k, 0] names row k as the tensor was declared; only the tile's second row
    steps by the new stride (official set_stride: a gather of line k and line k + gap / XC)."""
    x = torch.randn(XR, XC).half()
    y = torch.zeros(8, XC).half()
    gaps = [2 * XC, 5 * XC, 3 * XC, 7 * XC]
    on(strides_per_iteration, backend)[None, 1](x, torch.tensor([gaps], dtype=torch.int32), y)
    flat = x.reshape(-1)
    want = [flat[k * XC + j * g:k * XC + j * g + XC] for k, g in enumerate(gaps) for j in (0, 1)]
    assert torch.equal(y, torch.stack(want))


def test_set_stride_rows_past_the_memory_are_not_addressable(backend):
    """The tensor keeps its declared rows, but only those inside the argument's memory can be accessed."""
    x = torch.randn(XR, XC).half()
    with pytest.raises(KernelRuntimeError, match=r"exceeds tensor 'x_strided\d+' of shape \[1, 64\]") as e:
        on(rows_apart, backend)[None, 1](x, torch.tensor([[0, XR * XC]], dtype=torch.int32), torch.zeros(2, XC).half())
    assert "pl.load(pair, x, [0, 0])" in str(e.value)


def test_set_stride_argument_errors():
    def not_a_name(x: pl.Tensor[[4, 8], pl.DT_FP32], y: pl.Tensor[[4, 8], pl.DT_FP32]):
        pl.set_stride([x, y][0], [8, 1])

    def wrong_length(x: pl.Tensor[[4, 8], pl.DT_FP32]):
        pl.set_stride(x, [8])

    x = np.zeros((4, 8), np.float32)
    with pytest.raises(KernelTypeError, match="takes a GM tensor by its name"):
        pl.jit(not_a_name, backend="interp")(x, x)
    with pytest.raises(KernelTypeError, match="stride must be a list of 2 entries"):
        pl.jit(wrong_length, backend="interp")(x)


def store_rows_apart(x: pl.Tensor[[2, XC], pl.DT_FP16], gap: pl.Tensor[[1, 2], pl.DT_INT32],
                     y: pl.Tensor[[XR, XC], pl.DT_FP16]):
    ring = pl.make_tile_group(type=pl.TileType([2, XC], pl.DT_FP16, pl.MemorySpace.Vec), addrs=0x100,
                              mutex_ids=[3, 4])
    with pl.section_vector():
        pair = ring.next()
        pl.load(pair, x, [0, 0])
        pl.set_stride(y, [gap[0, 1], 1])
        pl.store(y, pair, [gap[0, 0], 0])


def test_set_stride_store_starts_at_the_declared_row(backend):
    """A store into a re-strided tensor at [r, 0] writes row r (as declared) and row r + gap / XC."""
    x = torch.randn(2, XC).half()
    y = torch.zeros(XR, XC).half()
    on(store_rows_apart, backend)[None, 1](x, torch.tensor([[5, 9 * XC]], dtype=torch.int32), y)
    want = torch.zeros(XR, XC).half()
    want[5], want[14] = x[0], x[1]
    assert torch.equal(y, want)

"""Raw pointers and GM tensor views (API.md A1: ``pl.Ptr``, ``pl.addptr``, ``pl.make_ptr``, ``pl.make_tensor``)
and TilingData array fields (``T[N]``), on every backend.

The kernels of the official pages (hicann/pypto ``docs/zh/pypto_pro/``: api/SIMD-API/basic_data_structures/Ptr.md,
operation/resource_management/{addptr,make_ptr,make_tensor}.md, tutorials/.../TilingData.md and
tail_block_handling.md) are kept as on their pages; only the decorator is replaced by ``pl.jit(fn, backend=b, ...)``.
On ``sim`` the strict simulator must not report a race, deadlock or uninitialised read.
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

BACKENDS = ["interp", pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim"]

pytestmark = [pytest.mark.usefixtures("private_build_dir"), pytest.mark.every_backend]


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@functools.lru_cache(maxsize=None)
def on(fn, backend: str, **jit_kw):
    return pl.jit(fn, backend=backend, **jit_kw)


# =====================================================================================================
# Ptr.md / addptr.md / make_tensor.md (the same kernel on the three pages)
# =====================================================================================================
def workspace_kernel(
    a: pl.Tensor[[64, 128], pl.DT_FP16],
    workspace: pl.Ptr[pl.DT_FP16],
    out: pl.Tensor[[64, 128], pl.DT_FP16],
):
    ws_buf_ptr = pl.addptr(workspace, 64 * 128)
    ws_buf = pl.make_tensor(ws_buf_ptr, [64, 128], [128, 1])

    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tile = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])

    with pl.section_vector():
        t = tile.current()
        pl.load(t, a, [0, 0])
        pl.add(t, t, t)
        pl.store(ws_buf, t, [0, 0])
        pl.load(t, ws_buf, [0, 0])
        pl.store(out, t, [0, 0])


def test_workspace_page_kernel(backend):
    torch.manual_seed(0)
    a = torch.rand(64, 128, dtype=torch.float16)
    workspace = torch.full((2 * 64 * 128,), -7.0, dtype=torch.float16)
    out = torch.zeros(64, 128, dtype=torch.float16)
    on(workspace_kernel, backend, auto_mutex=True)[None, 1](a, workspace, out)
    assert torch.equal(out, a * 2)
    assert torch.equal(workspace[64 * 128:].view(64, 128), a * 2)  # the second half: addptr moved the view
    assert torch.equal(workspace[:64 * 128], torch.full((64 * 128,), -7.0, dtype=torch.float16))


def test_workspace_of_any_shape_and_numpy(backend):
    """A pointer argument is any contiguous tensor or array: its bytes, whatever its shape."""
    a = np.random.default_rng(1).random((64, 128)).astype(np.float16)
    workspace = np.zeros((4, 64, 64), np.float16)
    out = np.zeros((64, 128), np.float16)
    on(workspace_kernel, backend, auto_mutex=True)[None, 1](a, workspace, out)
    assert np.array_equal(out, a * 2)
    assert np.array_equal(workspace.reshape(-1)[64 * 128:].reshape(64, 128), a * 2)


# make_ptr.md
def make_ptr_kernel(
    workspace: pl.Ptr[pl.DT_UINT8],
    out: pl.Tensor[[64, 128], pl.DT_FP16],
):
    fp16_ptr = pl.make_ptr(workspace, dtype=pl.DT_FP16)
    ws_buf = pl.make_tensor(fp16_ptr, [64, 128], [128, 1])

    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tile = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])

    with pl.section_vector():
        t = tile.current()
        pl.load(t, ws_buf, [0, 0])
        pl.store(out, t, [0, 0])


def test_make_ptr_page_kernel(backend):
    torch.manual_seed(0)
    data = torch.randn(64, 128, dtype=torch.float16)
    workspace = data.view(torch.uint8).reshape(-1).clone()  # 16 KiB of bytes
    out = torch.zeros(64, 128, dtype=torch.float16)
    on(make_ptr_kernel, backend, auto_mutex=True)[None, 1](workspace, out)
    assert torch.equal(out, data)


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
    on(stride_views_kernel, backend, auto_mutex=True)(mem, pitched, transposed)
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
    on(merge_axes_kernel, backend, auto_mutex=True)(x, y)
    assert np.array_equal(y, before.reshape(32, 32))
    assert np.array_equal(x, before)


# =====================================================================================================
# TilingData.md / tail_block_handling.md: add_dynrank_kernel (pl.Ptr + make_tensor + int[N] fields), verbatim
# =====================================================================================================
MAX_RANK = 4
TILE_M = 128
TILE_N = 128


@dataclass
class AddTiling:
    shape: int[4]       # 未使用的前导维度填1
    opkind: int[8]      # opkind[4]保存算子选择值


def add_dynrank_kernel(
    x: pl.Ptr[pl.DT_FP16],
    y: pl.Ptr[pl.DT_FP16],
    z: pl.Ptr[pl.DT_FP16],
    tiling: AddTiling,
):
    # 把Host侧2～4维输入的shape折叠成Kernel内固定的二维[M, N] Tensor视图。
    n = tiling.shape[3]
    m = tiling.shape[0] * tiling.shape[1] * tiling.shape[2]
    tensor_x = pl.make_tensor(x, [m, n])
    tensor_y = pl.make_tensor(y, [m, n])
    tensor_z = pl.make_tensor(z, [m, n])

    tile_type = pl.TileType(
        shape=[TILE_M, TILE_N],
        dtype=pl.DT_FP16,
        target_memory=pl.MemorySpace.Vec,
        valid_shape=[-1, -1],
    )
    a_db = pl.make_tile_group(type=tile_type, addrs=0x0000, mutex_ids=[0, 1])
    b_db = pl.make_tile_group(type=tile_type, addrs=0x10000, mutex_ids=[2, 3])
    c_db = pl.make_tile_group(type=tile_type, addrs=0x20000, mutex_ids=[30, 31])
    with pl.section_vector():
        num_cores = pl.get_block_num()
        core_id = pl.get_block_idx()
        m_tiles = (m + TILE_M - 1) // TILE_M
        n_tiles = (n + TILE_N - 1) // TILE_N
        total_tiles = m_tiles * n_tiles

        for idx in pl.range(core_id, total_tiles, num_cores):
            i = idx // n_tiles
            j = idx % n_tiles
            tile_a = a_db.next()
            tile_b = b_db.next()
            tile_c = c_db.next()

            # 分别覆盖满块、尾列、尾行和尾角四种情况。
            rem_r = m - i * TILE_M
            rem_c = n - j * TILE_N
            if rem_r >= TILE_M:
                if rem_c >= TILE_N:
                    pl.set_validshape(tile_a, [TILE_M, TILE_N])
                    pl.set_validshape(tile_b, [TILE_M, TILE_N])
                    pl.set_validshape(tile_c, [TILE_M, TILE_N])
                else:
                    pl.set_validshape(tile_a, [TILE_M, rem_c])
                    pl.set_validshape(tile_b, [TILE_M, rem_c])
                    pl.set_validshape(tile_c, [TILE_M, rem_c])
            else:
                if rem_c >= TILE_N:
                    pl.set_validshape(tile_a, [rem_r, TILE_N])
                    pl.set_validshape(tile_b, [rem_r, TILE_N])
                    pl.set_validshape(tile_c, [rem_r, TILE_N])
                else:
                    pl.set_validshape(tile_a, [rem_r, rem_c])
                    pl.set_validshape(tile_b, [rem_r, rem_c])
                    pl.set_validshape(tile_c, [rem_r, rem_c])

            pl.load_tile(tile_a, tensor_x, [i, j])
            pl.load_tile(tile_b, tensor_y, [i, j])

            if tiling.opkind[4] == 0:
                pl.add(tile_c, tile_a, tile_b)
            elif tiling.opkind[4] == 1:
                pl.sub(tile_c, tile_a, tile_b)
            else:
                pl.mul(tile_c, tile_a, tile_b)

            pl.store_tile(tensor_z, tile_c, [i, j])


OP_CASES = [
    (0, lambda a, b: a + b, "add"),
    (1, lambda a, b: a - b, "sub"),
    (2, lambda a, b: a * b, "mul"),
]

# the page's shapes (the sim runs the smaller ones: its cost is per instruction)
PAGE_SHAPES = [[512, 512], [8, 256, 256], [2, 4, 256, 256], [513, 513], [513, 511], [200, 300], [2, 3, 513],
               [2, 2, 3, 200]]


def _run_dynrank_case(backend, shape, opkind, ref_fn):
    torch.manual_seed(0)
    x = torch.rand(shape, dtype=torch.float16)
    y = torch.rand(shape, dtype=torch.float16)
    z = torch.empty(shape, dtype=torch.float16)
    rank = len(shape)
    dims = [1] * MAX_RANK
    for i in range(rank):
        dims[MAX_RANK - rank + i] = shape[i]
    opkind_arr = [0] * 8
    opkind_arr[4] = opkind
    tiling = AddTiling(shape=dims, opkind=opkind_arr)
    n = shape[-1]
    m = x.numel() // n
    total_tiles = -(-m // TILE_M) * -(-n // TILE_N)
    num_cores = min(32, total_tiles)
    on(add_dynrank_kernel, backend, auto_mutex=True)[None, num_cores](x, y, z, tiling)
    z_ref = ref_fn(x.float(), y.float()).half()
    torch.testing.assert_close(z, z_ref, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("shape", PAGE_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("opkind,ref_fn,op_name", OP_CASES, ids=[c[2] for c in OP_CASES])
def test_add_dynamic_rank_page(backend, shape, opkind, ref_fn, op_name):
    if backend == "sim" and np.prod(shape) > 300_000:
        pytest.skip("the simulator runs the page's smaller shapes")
    _run_dynrank_case(backend, shape, opkind, ref_fn)


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
    on(fa_views_kernel, backend, auto_mutex=True)[None, 2](q, k, o, OpTiling(sq=64, skv=32, d=64))
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
    on(per_core_view_kernel, backend, auto_mutex=True)[None, 4](src, ws, dst, 0)
    assert np.array_equal(dst, src)
    assert np.array_equal(ws, src.reshape(-1))


def test_sim_reports_a_race_between_views_of_one_pointer():
    """Cores 0 and 1 write overlapping bytes through their own views of one pointer, unordered."""
    src = np.ones((4, 64), np.float32)
    ws = np.zeros(4 * 64, np.float32)
    dst = np.zeros((4, 64), np.float32)
    src[1] = 2.0  # different values: not a benign same-value write
    with pytest.raises(KernelRaceError, match="ws_view"):
        on(per_core_view_kernel, "sim", auto_mutex=True)[None, 2](src, ws, dst, 8)


# =====================================================================================================
# Errors
# =====================================================================================================
def test_view_outside_the_pointer_memory_is_a_runtime_error(backend):
    a = torch.rand(64, 128, dtype=torch.float16)
    out = torch.zeros(64, 128, dtype=torch.float16)
    with pytest.raises(KernelRuntimeError, match=r"tensor view 'workspace_view1' \(pl.make_tensor at line \d+\) of "
                                                 r"'workspace'.*spans bytes \[16384, 32768\) of 'workspace', which "
                                                 r"holds 16000 bytes") as e:
        on(workspace_kernel, backend, auto_mutex=True)[None, 1](a, torch.zeros(8000, dtype=torch.float16), out)
    assert "test_gm_views.py" in str(e.value) and "pl.store(ws_buf, t, [0, 0])" in str(e.value)


def misaligned_kernel(p: pl.Ptr[pl.DT_UINT8], out: pl.Tensor[[1, 32], pl.DT_FP32]):
    v = pl.make_tensor(pl.make_ptr(pl.addptr(p, 2), pl.DT_FP32), [1, 32])
    t = pl.make_tile_group(type=pl.TileType([1, 32], pl.DT_FP32), addrs=0, mutex_ids=[8]).current()
    with pl.section_vector():
        pl.load(t, v, [0, 0])
        pl.store(out, t, [0, 0])


def test_view_not_on_an_element_boundary_is_a_runtime_error(backend):
    with pytest.raises(KernelRuntimeError, match="starts 2 bytes into 'p', not a whole number of"):
        on(misaligned_kernel, backend, auto_mutex=True)(np.zeros(256, np.uint8), np.zeros((1, 32), np.float32))


def negative_stride_kernel(p: pl.Ptr[pl.DT_FP32], s: pl.DT_INT64, out: pl.Tensor[[2, 8], pl.DT_FP32]):
    v = pl.make_tensor(p, [2, 8], [s, 1])
    t = pl.make_tile_group(type=pl.TileType([2, 8], pl.DT_FP32), addrs=0, mutex_ids=[9]).current()
    with pl.section_vector():
        pl.load(t, v, [0, 0])
        pl.store(out, t, [0, 0])


def test_runtime_stride_is_checked(backend):
    mem = np.arange(64, dtype=np.float32)
    out = np.zeros((2, 8), np.float32)
    on(negative_stride_kernel, backend, auto_mutex=True)(mem, 32, out)
    assert np.array_equal(out, mem.reshape(2, 32)[:, :8])
    with pytest.raises(KernelRuntimeError, match="strides must be >= 0"):
        on(negative_stride_kernel, backend, auto_mutex=True)(mem, -8, out)


def test_pointer_argument_checks():
    a = torch.rand(64, 128, dtype=torch.float16)
    out = torch.zeros(64, 128, dtype=torch.float16)
    k = on(workspace_kernel, "interp", auto_mutex=True)
    with pytest.raises(KernelLaunchError, match="must be contiguous memory"):
        k(a, torch.zeros(64, 512, dtype=torch.float16)[:, ::2], out)
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
    k = on(array_fields_kernel, backend, auto_mutex=True)
    k(x, y, ArrayTiling(1, [3.0, 0.5]))
    assert np.all(y == 3.0 + 1.0)
    k(x, y, ArrayTiling(1, (3.0, 0.25), [False, False, True]))
    assert np.all(y == 1.0 + 0.5)


def test_tiling_array_length_mismatch_is_a_value_error():
    k = on(array_fields_kernel, "interp", auto_mutex=True)
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
            on(random_view_kernel, backend, auto_mutex=True)(mem, off, rs, cs, out)
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
# set_stride.md: re-striding a GM tensor in place (a gathering load of rows s elements apart)
# =====================================================================================================
N_LINES = 512
LINE = 128
N_PAIRS = 3


def set_stride_basic_kernel(
    x: pl.Tensor[[N_LINES, LINE], pl.DT_FP16],
    strides: pl.Tensor[[1, 1], pl.DT_INT32],
    out: pl.Tensor[[2, LINE], pl.DT_FP16],
):
    ub_type = pl.TileType(shape=[2, LINE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    ub_db = pl.make_tile_group(type=ub_type, addrs=0x0000, mutex_ids=[0, 1])

    with pl.section_vector():
        s = strides[0, 0]
        tile = ub_db.next()
        pl.set_stride(x, [s, 1])
        pl.load(tile, x, [0, 0])
        pl.store(out, tile, [0, 0])


# the page's loop fragment, in the page's kernel
def set_stride_loop_kernel(
    x: pl.Tensor[[N_LINES, LINE], pl.DT_FP16],
    strides: pl.Tensor[[1, N_PAIRS], pl.DT_INT32],
    out: pl.Tensor[[2 * N_PAIRS, LINE], pl.DT_FP16],
):
    ub_type = pl.TileType(shape=[2, LINE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    ub_db = pl.make_tile_group(type=ub_type, addrs=0x0000, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(0, N_PAIRS, 1):
            s = strides[0, i]
            tile = ub_db.next()
            pl.set_stride(x, [s, 1])
            pl.load(tile, x, [i, 0])
            pl.store(out, tile, [2 * i, 0])


@pytest.mark.parametrize("s", [128, 256, 1024, N_LINES * LINE - LINE])
def test_set_stride_page_kernel(backend, s):
    """Rows 0 and s / LINE in one load; a stride as large as the tensor still reaches its last row."""
    x = torch.randn(N_LINES, LINE).half()
    out = torch.zeros(2, LINE).half()
    on(set_stride_basic_kernel, backend, auto_mutex=True)[None, 1](x, torch.tensor([[s]], dtype=torch.int32), out)
    flat = x.reshape(-1)
    assert torch.equal(out, torch.stack([flat[:LINE], flat[s:s + LINE]]))


def test_set_stride_in_a_loop(backend):
    x = torch.randn(N_LINES, LINE).half()
    out = torch.zeros(2 * N_PAIRS, LINE).half()
    strides = [256, 384, 512]
    on(set_stride_loop_kernel, backend, auto_mutex=True)[None, 1](x, torch.tensor([strides], dtype=torch.int32), out)
    flat = x.reshape(-1)
    want = [flat[(i + j) * s:(i + j) * s + LINE] for i, s in enumerate(strides) for j in (0, 1)]
    assert torch.equal(out, torch.stack(want))


def test_set_stride_rows_past_the_memory_are_not_addressable(backend):
    """The tensor keeps its declared rows, but only those inside the argument's memory can be accessed."""
    x = torch.randn(N_LINES, LINE).half()
    with pytest.raises(KernelRuntimeError, match=r"exceeds tensor 'x_strided\d+' of shape \[1, 128\]") as e:
        on(set_stride_basic_kernel, backend, auto_mutex=True)[None, 1](
            x, torch.tensor([[N_LINES * LINE]], dtype=torch.int32), torch.zeros(2, LINE).half())
    assert "pl.load(tile, x, [0, 0])" in str(e.value)


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

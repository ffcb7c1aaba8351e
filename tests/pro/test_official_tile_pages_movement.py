"""The complete kernels of the official tile-level op pages outside memory_vector_computation/
(``docs/zh/pypto_pro/api/SIMD-API/operation/{memory_data_movement,matrix_computation,controlflow,
resource_management,synchronization,system_variables,transpose_and_element_access,cache_control}/``
in hicann/pypto), run on every backend.

Each kernel body is kept as on its page (only the decorator is replaced by ``pl.jit(fn, ..., backend=)``
with the page's decorator arguments).  Every test checks the full output against a numpy reference of
the documented semantics; on ``sim`` the strict simulator must not report a race, deadlock or
uninitialised read for these official kernels.  None of these pages prints measured rows, so the
quantitative statements of the page text (clamped subview extents, tile-unit offsets, ...) are checked
instead.  Pages whose 调用示例 is only a fragment get a small kernel around the fragment; phase.md's
three wrong uses must hang or race on ``sim``.  Pages whose kernel needs a feature we do not implement
(MX matmul, SSBUF, structs, quant, the VF API) have no test; the pl.Ptr / make_tensor / addptr / make_ptr
pages are in test_gm_views.py.
"""
import functools

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
def on(fn, backend: str, **jit_kw):
    """Kernel body ``fn`` jitted for ``backend`` with the page's decorator arguments (one compile each)."""
    return pl.jit(fn, backend=backend, **jit_kw)


def f16(rng, shape, lo=-8.0, hi=8.0):
    """fp16 inputs on a 1/64 grid: sums and doubles are exact in fp16."""
    return (rng.integers(int(lo * 64), int(hi * 64), shape) / 64).astype(np.float16)


def f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def fp16_add(a, b):
    """fp16 add: computed in fp32, rounded once to fp16 (docs/language.md)."""
    return (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16)


def assert_matmul_close(out, a, b):
    """``out`` (FP32 accumulator result) against the exact product, within the fp32 accumulation bound
    K * 2^-22 * sum|a||b| (the bound tests/pro/test_cube.py uses)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    bound = a.shape[1] * 2.0 ** -22 * (np.abs(a64) @ np.abs(b64)) + 1e-30
    err = np.abs(out.astype(np.float64) - a64 @ b64)
    assert np.all(err <= bound), f"max error {err.max()} over bound"


# =====================================================================================================
# memory_data_movement/
# =====================================================================================================

# load.md (调用示例) -- the same kernel is store.md's 调用示例
def load_add_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP16],
    b: pl.Tensor[[64, 64], pl.DT_FP16],
    out: pl.Tensor[[64, 64], pl.DT_FP16],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
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


def test_load_md_and_store_md_add_kernel(backend):
    rng = np.random.default_rng(1)
    a, b = f16(rng, (64, 64)), f16(rng, (64, 64))
    out = np.zeros((64, 64), np.float16)
    on(load_add_kernel, backend, auto_mutex=True)(a, b, out)
    np.testing.assert_array_equal(out, fp16_add(a, b))


# load.md (Cube侧转置场景): A given as A^T [K, M] and B as B^T [N, K]; each goes into a ZN Mat tile of the
# untransposed shape with order=[1, 0], then moves to Left/Right (the page's fragments take the GM tensors from
# pl.make_tensor(ptr, ...); here they are kernel parameters)
TR_M, TR_K, TR_N = 64, 128, 32


def load_transposed_operands_kernel(at: pl.Tensor[[TR_K, TR_M], pl.DT_FP16], bt: pl.Tensor[[TR_N, TR_K], pl.DT_FP16],
                                    c: pl.Tensor[[TR_M, TR_N], pl.DT_FP32]):
    a_mat = pl.make_tile(pl.TileType(shape=[TR_M, TR_K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat,
                                     layout=pl.ZN), addr=0x0, size=16384)
    b_mat = pl.make_tile(pl.TileType(shape=[TR_K, TR_N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat,
                                     layout=pl.ZN), addr=0x10000, size=8192)
    left = pl.make_tile(pl.TileType(shape=[TR_M, TR_K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
                        addr=0x0, size=16384)
    right = pl.make_tile(pl.TileType(shape=[TR_K, TR_N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right),
                         addr=0x0, size=8192)
    acc = pl.make_tile(pl.TileType(shape=[TR_M, TR_N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
                       addr=0x0, size=8192)
    with pl.section_cube():
        pl.load(a_mat, at, [0, 0], order=[1, 0])
        pl.load(b_mat, bt, [0, 0], order=[1, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.move(left, a_mat)
        pl.move(right, b_mat)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.matmul(acc, left, right)
        pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.store(c, acc, [0, 0])


def test_load_md_cube_side_transposed_operands(backend):
    rng = np.random.default_rng(31)
    a, b = f16(rng, (TR_M, TR_K), -2, 2), f16(rng, (TR_K, TR_N), -2, 2)
    c = np.zeros((TR_M, TR_N), np.float32)
    on(load_transposed_operands_kernel, backend)(np.ascontiguousarray(a.T), np.ascontiguousarray(b.T), c)
    assert_matmul_close(c, a, b)


# load.md / load_tile.md / store_tile.md (其他典型用法): a 4-D BSND tensor, tile over axes 1 and 3 (order=[1, 3]),
# the other axes pinned at their absolute offsets
BS_B, BS_S, BS_N, BS_D = 2, 128, 3, 64


def load_tile_bsnd_kernel(q: pl.Tensor[[BS_B, BS_S, BS_N, BS_D], pl.DT_FP16],
                          out: pl.Tensor[[BS_B, BS_S, BS_N, BS_D], pl.DT_FP16],
                          flat: pl.Tensor[[BS_B * BS_N * BS_S, BS_D], pl.DT_FP16]):
    q_buf = pl.make_tile_group(type=pl.TileType(shape=[64, BS_D], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
                               addrs=0x0, mutex_ids=[0, 1])
    with pl.section_vector():
        for b_idx in pl.range(BS_B):
            for n_idx in pl.range(BS_N):
                for qi in pl.range(BS_S // 64):
                    cur = q_buf.next()
                    pl.load_tile(cur, q, [b_idx, qi, n_idx, 0], order=[1, 3])
                    pl.store_tile(out, cur, [b_idx, qi, n_idx, 0], order=[1, 3])
                    pl.store_tile(flat, cur, [(b_idx * BS_N + n_idx) * (BS_S // 64) + qi, 0])


def test_load_tile_md_4d_order_fragment(backend):
    q = (np.arange(BS_B * BS_S * BS_N * BS_D) % 2039).reshape(BS_B, BS_S, BS_N, BS_D).astype(np.float16)
    out = np.zeros_like(q)
    flat = np.zeros((BS_B * BS_N * BS_S, BS_D), np.float16)
    on(load_tile_bsnd_kernel, backend, auto_mutex=True)(q, out, flat)
    np.testing.assert_array_equal(flat, q.transpose(0, 2, 1, 3).reshape(-1, BS_D))  # what each load_tile read
    np.testing.assert_array_equal(out, q)                                          # where store_tile put it back


# load_tile.md (调用示例)
def load_tile_kernel(
    x: pl.Tensor[[256, 64], pl.DT_FP16],   # four 64x64 blocks
    out: pl.Tensor[[256, 64], pl.DT_FP16],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    x_db = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0, 1])
    out_db = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[2, 3])

    with pl.section_vector():
        for ti in pl.range(0, 4, 1):
            cur_x = x_db.next()
            cur_out = out_db.next()
            pl.load_tile(cur_x, x, [ti, 0])
            pl.add(cur_out, cur_x, cur_x)
            pl.store_tile(out, cur_out, [ti, 0])


def test_load_tile_md_kernel(backend):
    rng = np.random.default_rng(2)
    x = f16(rng, (256, 64))
    out = np.zeros((256, 64), np.float16)
    on(load_tile_kernel, backend, auto_mutex=True)(x, out)
    np.testing.assert_array_equal(out, fp16_add(x, x))  # block ti lands at rows [64*ti, 64*ti+64)


# load_tile.md / store_tile.md (功能说明): a [64, 128] tile at tile_offsets [2, 2] is the element offset [128, 256]
def load_tile_offset_example_kernel(x: pl.Tensor[[256, 512], pl.DT_FP16], out: pl.Tensor[[256, 512], pl.DT_FP16]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    t = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    with pl.section_vector():
        cur = t.current()
        pl.load_tile(cur, x, [2, 2])
        pl.store_tile(out, cur, [2, 2])


def test_load_tile_and_store_tile_md_block_offset_example(backend):
    x = (np.arange(256 * 512) % 2039).reshape(256, 512).astype(np.float16)
    out = np.zeros_like(x)
    on(load_tile_offset_example_kernel, backend, auto_mutex=True)(x, out)
    expected = np.zeros_like(x)
    expected[128:192, 256:384] = x[128:192, 256:384]
    np.testing.assert_array_equal(out, expected)


# store_tile.md (调用示例)
def store_tile_kernel(
    x: pl.Tensor[[64, 64], pl.DT_FP16],
    out: pl.Tensor[[256, 64], pl.DT_FP16],   # four 64x64 blocks
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tile_x = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])

    with pl.section_vector():
        cur_x = tile_x.current()
        pl.load(cur_x, x, [0, 0])
        for ti in pl.range(0, 4, 1):
            pl.store_tile(out, cur_x, [ti, 0])


def test_store_tile_md_kernel(backend):
    rng = np.random.default_rng(3)
    x = f16(rng, (64, 64))
    out = np.zeros((256, 64), np.float16)
    on(store_tile_kernel, backend, auto_mutex=True)(x, out)
    np.testing.assert_array_equal(out, np.tile(x, (4, 1)))


# move.md (调用示例)
def matmul_move_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP16],
    b: pl.Tensor[[64, 64], pl.DT_FP16],
    out: pl.Tensor[[64, 64], pl.DT_FP32],
):
    tt_mat = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat)
    tt_left = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left)
    tt_right = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right)
    tt_acc = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc)

    a_l1 = pl.make_tile_group(type=tt_mat, addrs=0x0000, mutex_ids=[0])
    b_l1 = pl.make_tile_group(type=tt_mat, addrs=0x2000, mutex_ids=[1])
    a_l0a = pl.make_tile_group(type=tt_left, addrs=0x0000, mutex_ids=[2])
    b_l0b = pl.make_tile_group(type=tt_right, addrs=0x0000, mutex_ids=[3])
    c_l0c = pl.make_tile_group(type=tt_acc, addrs=0x0000, mutex_ids=[4])

    with pl.section_cube():
        cur_a_l1 = a_l1.current()
        cur_b_l1 = b_l1.current()
        cur_a_l0a = a_l0a.current()
        cur_b_l0b = b_l0b.current()
        cur_c_l0c = c_l0c.current()
        pl.load(cur_a_l1, a, [0, 0])
        pl.load(cur_b_l1, b, [0, 0])
        pl.move(cur_a_l0a, cur_a_l1)
        pl.move(cur_b_l0b, cur_b_l1)
        pl.matmul(cur_c_l0c, cur_a_l0a, cur_b_l0b)
        pl.store(out, cur_c_l0c, [0, 0])


def test_move_md_matmul_kernel(backend):
    rng = np.random.default_rng(4)
    a, b = f16(rng, (64, 64), -2, 2), f16(rng, (64, 64), -2, 2)
    out = np.zeros((64, 64), np.float32)
    on(matmul_move_kernel, backend, auto_mutex=True)(a, b, out)
    assert_matmul_close(out, a, b)


# subview.md (调用示例: 基本切片)
def tile_subview_kernel(
    a: pl.Tensor[[8, 64], pl.DT_FP16],
    out: pl.Tensor[[4, 34], pl.DT_FP16],
):
    tile_group = pl.make_tile_group(
        type=pl.TileType(shape=[8, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x0000, mutex_ids=[0],
    )
    with pl.section_vector():
        tile = tile_group.next()
        pl.load(tile, a, [0, 0])
        sub = tile[2:6, 16:50]
        pl.store(out, sub, [0, 0])


def test_subview_md_basic_slice(backend):
    a = np.arange(8 * 64).reshape(8, 64).astype(np.float16)
    out = np.zeros((4, 34), np.float16)
    on(tile_subview_kernel, backend, auto_mutex=True)(a, out)
    np.testing.assert_array_equal(out, a[2:6, 16:50])


# subview.md (调用示例: 与 set_validshape 交集)
def tile_subview_vshape_kernel(
    a: pl.Tensor[[8, 64], pl.DT_FP16],
    out1: pl.Tensor[[4, 24], pl.DT_FP16],
):
    tile_group = pl.make_tile_group(
        type=pl.TileType(shape=[8, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec,
                         valid_shape=[-1, -1]),
        addrs=0x0000, mutex_ids=[0],
    )
    with pl.section_vector():
        tile = tile_group.next()
        pl.load(tile, a, [0, 0])
        pl.set_validshape(tile, [6, 40])
        sub1 = tile[2:6, 16:50]
        pl.store(out1, sub1, [0, 0])


def test_subview_md_slice_clamped_by_valid_shape(backend):
    """The page: the [2:6, 16:50] slice of a tile whose valid shape is [6, 40] is clamped to [4, 24]."""
    a = np.arange(8 * 64).reshape(8, 64).astype(np.float16)
    out1 = np.zeros((4, 24), np.float16)
    on(tile_subview_vshape_kernel, backend, auto_mutex=True)(a, out1)
    np.testing.assert_array_equal(out1, a[2:6, 16:40])


# move.md (其他典型用法, fragment): extract a sub-block of a wider Mat tile with offset (TEXTRACT)
KL0 = 64


def move_extract_kernel(a: pl.Tensor[[64, 128], pl.DT_FP16], b: pl.Tensor[[64, 64], pl.DT_FP16],
                        out: pl.Tensor[[64, 64], pl.DT_FP32]):
    a_wide = pl.make_tile_group(type=pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
                                addrs=0x0, mutex_ids=[0])
    b_l1 = pl.make_tile_group(type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
                              addrs=0x10000, mutex_ids=[1])
    a_left = pl.make_tile_group(type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
                                addrs=0x0, mutex_ids=[2])
    b_right = pl.make_tile_group(type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP16,
                                                  target_memory=pl.MemorySpace.Right), addrs=0x0, mutex_ids=[3])
    acc = pl.make_tile_group(type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
                             addrs=0x0, mutex_ids=[4])
    with pl.section_cube():
        a_wide_slot = a_wide.current()
        cur_b = b_l1.current()
        cur_a_left = a_left.current()
        br = b_right.current()
        ac = acc.current()
        pl.load(a_wide_slot, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.move(cur_a_left, a_wide_slot, offset=[0, KL0])
        pl.move(br, cur_b)
        pl.matmul(ac, cur_a_left, br)
        pl.store(out, ac, [0, 0])


def test_move_md_extract_fragment(backend):
    rng = np.random.default_rng(25)
    a, b = f16(rng, (64, 128), -2, 2), f16(rng, (64, 64), -2, 2)
    out = np.zeros((64, 64), np.float32)
    on(move_extract_kernel, backend, auto_mutex=True)(a, b, out)
    assert_matmul_close(out, a[:, KL0:], b)


# move.md (其他典型用法, fragment): L0C -> UB with a fixpipe scale of 2.0 into AIV0, which stores it
def move_acc_to_vec_scale_kernel(a: pl.Tensor[[64, 64], pl.DT_FP16], b: pl.Tensor[[64, 64], pl.DT_FP16],
                                 out: pl.Tensor[[64, 64], pl.DT_FP32]):
    a_l1 = pl.make_tile_group(type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
                              addrs=0x0, mutex_ids=[0])
    b_l1 = pl.make_tile_group(type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
                              addrs=0x10000, mutex_ids=[1])
    a_left = pl.make_tile_group(type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
                                addrs=0x0, mutex_ids=[2])
    b_right = pl.make_tile_group(type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP16,
                                                  target_memory=pl.MemorySpace.Right), addrs=0x0, mutex_ids=[3])
    acc = pl.make_tile_group(type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
                             addrs=0x0, mutex_ids=[4])
    vec = pl.make_tile_group(type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                             addrs=0x0, mutex_ids=[5])
    with pl.section_cube():
        ca = a_l1.current()
        cb = b_l1.current()
        al = a_left.current()
        br = b_right.current()
        ac = acc.current()
        vec_tile = vec.current()
        pl.load(ca, a, [0, 0])
        pl.load(cb, b, [0, 0])
        pl.move(al, ca)
        pl.move(br, cb)
        pl.matmul(ac, al, br)
        pl.move(vec_tile, ac, scale=2.0, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)
        pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=0)
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=0)
        if pl.get_subblock_idx() == 0:
            vec_tile = vec.current()
            pl.store(out, vec_tile, [0, 0])


def test_move_md_acc_to_vec_scale_fragment(backend):
    rng = np.random.default_rng(26)
    a, b = f16(rng, (64, 64), -2, 2), f16(rng, (64, 64), -2, 2)
    out = np.zeros((64, 64), np.float32)
    on(move_acc_to_vec_scale_kernel, backend, auto_mutex=True)(a, b, out)
    assert_matmul_close(out / 2, a, b)  # scaling by 2 is exact


# move.md (其他典型用法, fragment): a move with offset whose source is smaller than its destination is an insert
def move_as_insert_kernel(x: pl.Tensor[[64, 64], pl.DT_FP32], rhs: pl.Tensor[[64, 64], pl.DT_FP32],
                          out: pl.Tensor[[64, 64], pl.DT_FP32]):
    p_mat = pl.make_tile(pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Mat,
                                     layout=pl.NZ), addr=0x10000, size=16384)
    with pl.section_vector():
        off = pl.get_subblock_idx() * 32
        tile_x = pl.make_tile(pl.TileType(shape=[32, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                              addr=0x0000, size=8192)
        tile_nz = pl.make_tile(pl.TileType(shape=[32, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                                           layout=pl.NZ), addr=0x2000, size=8192)
        pl.load(tile_x, x, [off, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.move(tile_nz, tile_x)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.move(p_mat, tile_nz, offset=[off, 0])
        pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=2)
    with pl.section_cube():
        rhs_mat = pl.make_tile(pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Mat,
                                           layout=pl.NZ), addr=0x0000, size=16384)
        p_left = pl.make_tile(pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Left,
                                          layout=pl.NZ), addr=0x0000, size=16384)
        rhs_right = pl.make_tile(pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Right,
                                             layout=pl.ZN), addr=0x0000, size=16384)
        c_l0c = pl.make_tile(pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc,
                                         layout=pl.NZ, fractal=1024), addr=0x0000, size=16384)
        pl.load(rhs_mat, rhs, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.move(rhs_right, rhs_mat)
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=2)
        pl.move(p_left, p_mat)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.matmul(c_l0c, p_left, rhs_right)
        pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.store(out, c_l0c, [0, 0])


def test_move_md_move_with_offset_becomes_insert_fragment(backend):
    rng = np.random.default_rng(27)
    x, rhs = f32(rng, (64, 64)), f32(rng, (64, 64))
    out = np.zeros_like(x)
    on(move_as_insert_kernel, backend)(x, rhs, out)
    assert_matmul_close(out, x, rhs)


# =====================================================================================================
# matrix_computation/
# =====================================================================================================
TILE = 128
M_SIZE = 256
K_SIZE_MM = 128
N_SIZE = 256


# matmul.md (调用示例) -- the same kernel is make_tile_group.md's 2-buffer example (MM_M/MM_K/MM_N)
def matmul_kernel(
    a: pl.Tensor[[M_SIZE, K_SIZE_MM], pl.DT_FP16],
    b: pl.Tensor[[K_SIZE_MM, N_SIZE], pl.DT_FP16],
    c: pl.Tensor[[M_SIZE, N_SIZE], pl.DT_FP32],
):
    a_l1_db = pl.make_tile_group(
        type=pl.TileType(shape=[TILE, K_SIZE_MM], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x00000, mutex_ids=[0, 1])
    b_l1_db = pl.make_tile_group(
        type=pl.TileType(shape=[K_SIZE_MM, TILE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x10000, mutex_ids=[2, 3])
    a_left = pl.make_tile_group(
        type=pl.TileType(shape=[TILE, K_SIZE_MM], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
        addrs=0x0000, mutex_ids=[4])
    b_right = pl.make_tile_group(
        type=pl.TileType(shape=[K_SIZE_MM, TILE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right),
        addrs=0x0000, mutex_ids=[5])
    acc = pl.make_tile_group(
        type=pl.TileType(shape=[TILE, TILE], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
        addrs=0x0000, mutex_ids=[6])

    with pl.section_cube():
        for i in pl.range(0, M_SIZE, TILE):
            for j in pl.range(0, N_SIZE, TILE):
                cur_a = a_l1_db.next()
                cur_b = b_l1_db.next()
                al = a_left.current()
                br = b_right.current()
                ac = acc.current()
                pl.load(cur_a, a, [i, 0])
                pl.load(cur_b, b, [0, j])
                pl.move(al, cur_a)
                pl.move(br, cur_b)
                pl.matmul(ac, al, br)
                pl.store(c, ac, [i, j])


def test_matmul_md_and_make_tile_group_md_2buffer_kernel(backend):
    rng = np.random.default_rng(5)
    a, b = f16(rng, (M_SIZE, K_SIZE_MM), -2, 2), f16(rng, (K_SIZE_MM, N_SIZE), -2, 2)
    c = np.zeros((M_SIZE, N_SIZE), np.float32)
    on(matmul_kernel, backend, auto_mutex=True)(a, b, c)
    assert_matmul_close(c, a, b)


K_SIZE_ACC = 256


# matmul_acc.md (调用示例) -- set_mm_layout_transform.md's kernel is the same with TILE_ACC = TILE
def matmul_acc_kernel(
    a: pl.Tensor[[TILE, K_SIZE_ACC], pl.DT_FP16],
    b: pl.Tensor[[K_SIZE_ACC, TILE], pl.DT_FP16],
    c: pl.Tensor[[TILE, TILE], pl.DT_FP32],
):
    a_l1 = pl.make_tile_group(
        type=pl.TileType(shape=[TILE, TILE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x00000, mutex_ids=[0, 1])
    b_l1 = pl.make_tile_group(
        type=pl.TileType(shape=[TILE, TILE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x10000, mutex_ids=[2, 3])
    a_left = pl.make_tile_group(
        type=pl.TileType(shape=[TILE, TILE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left,
                         layout=pl.NZ),
        addrs=0x0000, mutex_ids=[4, 5])
    b_right = pl.make_tile_group(
        type=pl.TileType(shape=[TILE, TILE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right),
        addrs=0x0000, mutex_ids=[6, 7])
    acc = pl.make_tile_group(
        type=pl.TileType(shape=[TILE, TILE], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc,
                         fractal=1024),
        addrs=0x0000, mutex_ids=[8])

    with pl.section_cube():
        pl.system.set_mm_layout_transform(enabled=True)
        ac = acc.current()
        for k in pl.range(0, K_SIZE_ACC, TILE):
            cur_a = a_l1.next()
            cur_b = b_l1.next()
            al = a_left.next()
            br = b_right.next()
            pl.load(cur_a, a, [0, k])
            pl.load(cur_b, b, [k, 0])
            pl.move(al, cur_a)
            pl.move(br, cur_b)
            if k == 0:
                pl.matmul(ac, al, br, phase=pl.AccPhase.Partial)
            else:
                pl.matmul_acc(ac, ac, al, br, phase=pl.AccPhase.Final)
        pl.store(c, ac, [0, 0], phase=pl.STPhase.Final)
        pl.system.set_mm_layout_transform(enabled=False)


def test_matmul_acc_md_and_set_mm_layout_transform_md_kernel(backend):
    rng = np.random.default_rng(6)
    a, b = f16(rng, (TILE, K_SIZE_ACC), -2, 2), f16(rng, (K_SIZE_ACC, TILE), -2, 2)
    c = np.zeros((TILE, TILE), np.float32)
    on(matmul_acc_kernel, backend, auto_mutex=True)(a, b, c)
    assert_matmul_close(c, a, b)


# phase.md (正确用法示例 and 错误案例 fragments) in the matmul_acc.md kernel with 64x64 blocks: the correct
# K-block chain (first/middle Partial, last Final, store Final) and the page's three wrong uses, which
# the page says hang or race on hardware -- the simulator must report exactly that.
PH_T = 64


def _phase_kernel(case: str, k_total: int):
    def phase_kernel(a: pl.Tensor[[PH_T, k_total], pl.DT_FP16], b: pl.Tensor[[k_total, PH_T], pl.DT_FP16],
                     out: pl.Tensor[[PH_T, PH_T], pl.DT_FP32]):
        a_l1 = pl.make_tile_group(
            type=pl.TileType(shape=[PH_T, PH_T], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
            addrs=0x00000, mutex_ids=[0, 1])
        b_l1 = pl.make_tile_group(
            type=pl.TileType(shape=[PH_T, PH_T], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
            addrs=0x10000, mutex_ids=[2, 3])
        a_left = pl.make_tile_group(
            type=pl.TileType(shape=[PH_T, PH_T], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left, layout=pl.NZ),
            addrs=0x0000, mutex_ids=[4, 5])
        b_right = pl.make_tile_group(
            type=pl.TileType(shape=[PH_T, PH_T], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right),
            addrs=0x0000, mutex_ids=[6, 7])
        acc = pl.make_tile_group(
            type=pl.TileType(shape=[PH_T, PH_T], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc, fractal=1024),
            addrs=0x0000, mutex_ids=[8])
        with pl.section_cube():
            pl.system.set_mm_layout_transform(enabled=True)
            ac = acc.current()
            for k in pl.range(0, k_total, PH_T):
                cur_a = a_l1.next()
                cur_b = b_l1.next()
                al = a_left.next()
                br = b_right.next()
                pl.load(cur_a, a, [0, k])
                pl.load(cur_b, b, [k, 0])
                pl.move(al, cur_a)
                pl.move(br, cur_b)
                if pl.constexpr(case in ("correct", "store_without_phase")):
                    if k == 0:
                        pl.matmul(ac, al, br, phase=pl.AccPhase.Partial)
                    elif k < k_total - PH_T:
                        pl.matmul_acc(ac, ac, al, br, phase=pl.AccPhase.Partial)
                    else:
                        pl.matmul_acc(ac, ac, al, br, phase=pl.AccPhase.Final)
                if pl.constexpr(case == "matmul_without_final"):   # 错误案例一
                    pl.matmul(ac, al, br, phase=pl.AccPhase.Partial)
                if pl.constexpr(case == "store_partial_in_loop"):  # 错误案例三 (the page passes an AccPhase)
                    pl.matmul(ac, al, br, phase=pl.AccPhase.Final)
                    pl.store(out, ac, [0, 0], phase=pl.AccPhase.Partial)
            if pl.constexpr(case in ("correct", "matmul_without_final")):
                pl.store(out, ac, [0, 0], phase=pl.STPhase.Final)
            if pl.constexpr(case == "store_without_phase"):      # 错误案例二
                pl.store(out, ac, [0, 0])
            pl.system.set_mm_layout_transform(enabled=False)
    return phase_kernel


phase_correct_kernel = _phase_kernel("correct", 3 * PH_T)
PHASE_ERROR_CASES = {  # case: (kernel, K, what the simulator reports)
    "matmul_without_final": (_phase_kernel("matmul_without_final", PH_T), PH_T, pl.KernelDeadlockError),
    "store_without_phase": (_phase_kernel("store_without_phase", 3 * PH_T), 3 * PH_T, pl.KernelRaceError),
    "store_partial_in_loop": (_phase_kernel("store_partial_in_loop", 2 * PH_T), 2 * PH_T, pl.KernelDeadlockError),
}


def test_phase_md_multi_block_chain(backend):
    rng = np.random.default_rng(28)
    a, b = f16(rng, (PH_T, 3 * PH_T), -2, 2), f16(rng, (3 * PH_T, PH_T), -2, 2)
    out = np.zeros((PH_T, PH_T), np.float32)
    on(phase_correct_kernel, backend, auto_mutex=True)(a, b, out)
    assert_matmul_close(out, a, b)


@pytest.mark.parametrize("case", list(PHASE_ERROR_CASES))
def test_phase_md_error_cases_hang_or_race_on_sim(case):
    kernel, k_total, error = PHASE_ERROR_CASES[case]
    a, b = np.ones((PH_T, k_total), np.float16), np.ones((k_total, PH_T), np.float16)
    with pytest.raises(error):
        on(kernel, "sim", auto_mutex=True)(a, b, np.zeros((PH_T, PH_T), np.float32))


MM_M, MM_K, MM_N = 256, 128, 256


# make_tile_group.md (调用示例: 4-buffer)
def tile_group_4buf_matmul_kernel(
    a: pl.Tensor[[MM_M, MM_K], pl.DT_FP16],
    b: pl.Tensor[[MM_K, MM_N], pl.DT_FP16],
    c: pl.Tensor[[MM_M, MM_N], pl.DT_FP32],
):
    a_l1 = pl.make_tile_group(
        type=pl.TileType(shape=[TILE, MM_K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x00000, mutex_ids=[0, 1, 2, 3])
    b_l1 = pl.make_tile_group(
        type=pl.TileType(shape=[MM_K, TILE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x20000, mutex_ids=[4, 5, 6, 7])
    a_left = pl.make_tile_group(
        type=pl.TileType(shape=[TILE, MM_K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
        addrs=0x0000, mutex_ids=[8])
    b_right = pl.make_tile_group(
        type=pl.TileType(shape=[MM_K, TILE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right),
        addrs=0x0000, mutex_ids=[9])
    acc = pl.make_tile_group(
        type=pl.TileType(shape=[TILE, TILE], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
        addrs=0x0000, mutex_ids=[10])

    with pl.section_cube():
        for i in pl.range(0, MM_M, TILE):
            for j in pl.range(0, MM_N, TILE):
                cur_a = a_l1.next()
                cur_b = b_l1.next()
                al = a_left.current()
                br = b_right.current()
                ac = acc.current()
                pl.load(cur_a, a, [i, 0])
                pl.load(cur_b, b, [0, j])
                pl.move(al, cur_a)
                pl.move(br, cur_b)
                pl.matmul(ac, al, br)
                pl.store(c, ac, [i, j])


def test_make_tile_group_md_4buffer_kernel(backend):
    rng = np.random.default_rng(7)
    a, b = f16(rng, (MM_M, MM_K), -2, 2), f16(rng, (MM_K, MM_N), -2, 2)
    c = np.zeros((MM_M, MM_N), np.float32)
    on(tile_group_4buf_matmul_kernel, backend, auto_mutex=True)(a, b, c)
    assert_matmul_close(c, a, b)


# make_tile_group.md (调用示例: address list for a non-contiguous layout), used in a 2-slot copy loop
def tile_group_addr_list_kernel(x: pl.Tensor[[256, 64], pl.DT_FP32], out: pl.Tensor[[256, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    buf = pl.make_tile_group(type=tt, addrs=[0x0, 0x10000], mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(4):
            t = buf.next()
            pl.load(t, x, [i * 64, 0])
            pl.store(out, t, [i * 64, 0])


def test_make_tile_group_md_address_list(backend):
    rng = np.random.default_rng(8)
    x = f32(rng, (256, 64))
    out = np.zeros_like(x)
    on(tile_group_addr_list_kernel, backend, auto_mutex=True)(x, out)
    np.testing.assert_array_equal(out, x)


# =====================================================================================================
# controlflow/
# =====================================================================================================
TILE_M = 64
TILE_N = 64


# range.md (调用示例)
def for_add_fp16_kernel(
    x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
    y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
    z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
):
    M = x.shape[0]
    N = x.shape[1]
    tile_type = pl.TileType(shape=[TILE_M, TILE_N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    a_db = pl.make_tile_group(type=tile_type, addrs=0x0000, mutex_ids=[0, 1])
    b_db = pl.make_tile_group(type=tile_type, addrs=0x4000, mutex_ids=[2, 3])
    c_db = pl.make_tile_group(type=tile_type, addrs=0x8000, mutex_ids=[30, 31])
    with pl.section_vector():
        for i in pl.range(0, M // TILE_M, 1):
            for j in pl.range(0, N // TILE_N, 1):
                tile_a = a_db.next()
                tile_b = b_db.next()
                tile_c = c_db.next()
                pl.load_tile(tile_a, x, [i, j])
                pl.load_tile(tile_b, y, [i, j])
                pl.add(tile_c, tile_a, tile_b)
                pl.store_tile(z, tile_c, [i, j])


@pytest.mark.parametrize("mn", [(64, 64), (128, 192)])
def test_range_md_kernel(backend, mn):
    rng = np.random.default_rng(9)
    x, y = f16(rng, mn), f16(rng, mn)
    z = np.zeros(mn, np.float16)
    on(for_add_fp16_kernel, backend, auto_mutex=True)(x, y, z)
    np.testing.assert_array_equal(z, fp16_add(x, y))


# range.md (参数范围): a negative step ends once the value reaches or passes below stop (runtime step here)
def range_negative_step_kernel(x: pl.Tensor[[256, 64], pl.DT_FP32], out: pl.Tensor[[256, 64], pl.DT_FP32],
                               step: int):
    t = pl.make_tile_group(type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                           addrs=0x0, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(3, -1, step):
            cur = t.next()
            pl.load(cur, x, [i * 64, 0])
            pl.store(out, cur, [(3 - i) * 64, 0])


@pytest.mark.parametrize("step", [-1, -2])
def test_range_md_negative_step(backend, step):
    rng = np.random.default_rng(29)
    x = f32(rng, (256, 64))
    out = np.zeros_like(x)
    on(range_negative_step_kernel, backend, auto_mutex=True)(x, out, step)
    expected = np.zeros_like(x)
    for i in range(3, -1, step):
        expected[(3 - i) * 64:(4 - i) * 64] = x[i * 64:(i + 1) * 64]
    np.testing.assert_array_equal(out, expected)


# section_vector.md and section_vector_section_cube.md (调用示例: section_vector)
def with_section_vector_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP32],
    out: pl.Tensor[[64, 64], pl.DT_FP32],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_out = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.relu(cur_out, cur_a)
        pl.store(out, cur_out, [0, 0])


def test_section_vector_md_kernel(backend):
    rng = np.random.default_rng(10)
    a = f32(rng, (64, 64))
    out = np.zeros_like(a)
    on(with_section_vector_kernel, backend, auto_mutex=True)(a, out)
    np.testing.assert_array_equal(out, np.maximum(a, 0))


# section_cube.md and section_vector_section_cube.md (调用示例: section_cube)
def with_section_cube_fp16_kernel(
    x: pl.Tensor[[64, 32], pl.DT_FP16],
    y: pl.Tensor[[32, 64], pl.DT_FP16],
    z: pl.Tensor[[64, 64], pl.DT_FP32],
):
    a_l1 = pl.make_tile_group(
        type=pl.TileType(shape=[64, 32], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x00000, mutex_ids=[0])
    b_l1 = pl.make_tile_group(
        type=pl.TileType(shape=[32, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x10000, mutex_ids=[1])
    a_l0a = pl.make_tile_group(
        type=pl.TileType(shape=[64, 32], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
        addrs=0x0000, mutex_ids=[2])
    b_l0b = pl.make_tile_group(
        type=pl.TileType(shape=[32, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right),
        addrs=0x0000, mutex_ids=[3])
    c_l0c = pl.make_tile_group(
        type=pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
        addrs=0x0000, mutex_ids=[4])
    with pl.section_cube():
        cur_a = a_l1.current()
        cur_b = b_l1.current()
        al = a_l0a.current()
        br = b_l0b.current()
        ac = c_l0c.current()
        pl.load(cur_a, x, [0, 0])
        pl.load(cur_b, y, [0, 0])
        pl.move(al, cur_a)
        pl.move(br, cur_b)
        pl.matmul(ac, al, br)
        pl.store(z, ac, [0, 0])


def test_section_cube_md_kernel(backend):
    rng = np.random.default_rng(11)
    x, y = f16(rng, (64, 32), -2, 2), f16(rng, (32, 64), -2, 2)
    z = np.zeros((64, 64), np.float32)
    on(with_section_cube_fp16_kernel, backend, auto_mutex=True)(x, y, z)
    assert_matmul_close(z, x, y)


# =====================================================================================================
# resource_management/
# =====================================================================================================

# make_tile.md (调用示例)
def make_tile_add_kernel(
    a: pl.Tensor[[64, 128], pl.DT_FP16],
    b: pl.Tensor[[64, 128], pl.DT_FP16],
    out: pl.Tensor[[64, 128], pl.DT_FP16],
):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile(tt, addr=0x0000, size=16384)
    tile_b = pl.make_tile(tt, addr=0x4000, size=16384)
    tile_out = pl.make_tile(tt, addr=0x8000, size=16384)

    with pl.section_vector():
        pl.load(tile_a, a, [0, 0])
        pl.load(tile_b, b, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.add(tile_out, tile_a, tile_b)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(out, tile_out, [0, 0])


def test_make_tile_md_kernel(backend):
    rng = np.random.default_rng(12)
    a, b = f16(rng, (64, 128)), f16(rng, (64, 128))
    out = np.zeros((64, 128), np.float16)
    on(make_tile_add_kernel, backend)(a, b, out)
    np.testing.assert_array_equal(out, fp16_add(a, b))


# =====================================================================================================
# synchronization/
# =====================================================================================================

# bar_v_bar_m_bar_all.md and barrier.md (调用示例: bar_all)
def bar_all_kernel(
    x: pl.Tensor[[128, 64], pl.DT_FP16],
    out: pl.Tensor[[128, 64], pl.DT_FP16],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tile_x = pl.make_tile(tt, addr=0x0000, size=8192)
    tile_out = pl.make_tile(tt, addr=0x2000, size=8192)
    with pl.section_vector():
        for i in pl.range(0, 128, 64):
            pl.system.bar_all()
            pl.load(tile_x, x, [i, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.add(tile_out, tile_x, tile_x)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.store(out, tile_out, [i, 0])


def test_barrier_md_bar_all_kernel(backend):
    rng = np.random.default_rng(13)
    x = f16(rng, (128, 64))
    out = np.zeros_like(x)
    on(bar_all_kernel, backend)(x, out)
    np.testing.assert_array_equal(out, fp16_add(x, x))


TILE64 = 64


# bar_v_bar_m_bar_all.md and barrier.md (调用示例: bar_m; the page's TILE is 64)
def bar_m_kernel(
    a: pl.Tensor[[TILE64, TILE64], pl.DT_FP16],
    b: pl.Tensor[[TILE64, TILE64], pl.DT_FP16],
    out: pl.Tensor[[TILE64, TILE64], pl.DT_FP32],
):
    a_l1 = pl.make_tile_group(
        type=pl.TileType(shape=[TILE64, TILE64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x0000, mutex_ids=[0])
    b_l1 = pl.make_tile_group(
        type=pl.TileType(shape=[TILE64, TILE64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x2000, mutex_ids=[1])
    a_l0a = pl.make_tile_group(
        type=pl.TileType(shape=[TILE64, TILE64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
        addrs=0x0000, mutex_ids=[2])
    b_l0b = pl.make_tile_group(
        type=pl.TileType(shape=[TILE64, TILE64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right),
        addrs=0x0000, mutex_ids=[3])
    c_l0c = pl.make_tile_group(
        type=pl.TileType(shape=[TILE64, TILE64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
        addrs=0x0000, mutex_ids=[4])

    with pl.section_cube():
        cur_a = a_l1.current()
        cur_b = b_l1.current()
        al = a_l0a.current()
        br = b_l0b.current()
        ac = c_l0c.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.move(al, cur_a)
        pl.move(br, cur_b)
        pl.matmul(ac, al, br)
        pl.system.bar_m()
        pl.matmul(ac, al, br)
        pl.store(out, ac, [0, 0])


def test_barrier_md_bar_m_kernel(backend):
    rng = np.random.default_rng(14)
    a, b = f16(rng, (64, 64), -2, 2), f16(rng, (64, 64), -2, 2)
    out = np.zeros((64, 64), np.float32)
    on(bar_m_kernel, backend, auto_mutex=True)(a, b, out)
    assert_matmul_close(out, a, b)  # the second matmul overwrites the first: out = a @ b


# bar_v_bar_m_bar_all.md (调用示例: bar_v)
def bar_v_kernel(
    a: pl.Tensor[[64, 128], pl.DT_FP32],
    b: pl.Tensor[[64, 128], pl.DT_FP32],
    mask_in: pl.Tensor[[64, 128], pl.DT_FP16],
    out: pl.Tensor[[64, 128], pl.DT_FP32],
):
    tt32 = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile(tt32, addr=0x0000, size=32768)
    tile_b = pl.make_tile(tt32, addr=0x8000, size=32768)
    tile_out = pl.make_tile(tt32, addr=0x10000, size=32768)
    tmp_vec = pl.make_tile(tt32, addr=0x18000, size=32768)
    mask_fp16 = pl.make_tile(pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
                             addr=0x20000, size=16384)
    mask_vec = pl.make_tile(pl.TileType(shape=[64, 128], dtype=pl.DT_UINT8, target_memory=pl.MemorySpace.Vec),
                            addr=0x24000, size=8192)
    with pl.section_vector():
        pl.load(tile_a, a, [0, 0])
        pl.load(tile_b, b, [0, 0])
        pl.load(mask_fp16, mask_in, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.gt(mask_vec, mask_fp16, 0.0)
        pl.system.bar_v()
        pl.select(tile_out, mask_vec, tile_a, tile_b, tmp_vec)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(out, tile_out, [0, 0])


def test_bar_v_bar_m_bar_all_md_bar_v_kernel(backend):
    rng = np.random.default_rng(15)
    a, b = f32(rng, (64, 128)), f32(rng, (64, 128))
    mask_in = rng.integers(-1, 2, (64, 128)).astype(np.float16)  # -1, 0, 1: 0 is not > 0
    out = np.zeros_like(a)
    on(bar_v_kernel, backend)(a, b, mask_in, out)
    np.testing.assert_array_equal(out, np.where(mask_in > 0, a, b))


# mutex_lock_mutex_unlock.md (调用示例)
def mutex_ab_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP32],
    b: pl.Tensor[[64, 64], pl.DT_FP32],
    out: pl.Tensor[[64, 64], pl.DT_FP32],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()

        pl.system.mutex_lock(pipe=pl.PipeType.MTE2, mutex_id=0)
        pl.load(cur_a, a, [0, 0])
        pl.system.mutex_unlock(pipe=pl.PipeType.MTE2, mutex_id=0)

        pl.system.mutex_lock(pipe=pl.PipeType.MTE2, mutex_id=1)
        pl.load(cur_b, b, [0, 0])
        pl.system.mutex_unlock(pipe=pl.PipeType.MTE2, mutex_id=1)

        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.add(cur_out, cur_a, cur_b)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)

        pl.system.mutex_lock(pipe=pl.PipeType.MTE3, mutex_id=2)
        pl.store(out, cur_out, [0, 0])
        pl.system.mutex_unlock(pipe=pl.PipeType.MTE3, mutex_id=2)


def test_mutex_lock_mutex_unlock_md_kernel(backend):
    rng = np.random.default_rng(16)
    a, b = f32(rng, (64, 64)), f32(rng, (64, 64))
    out = np.zeros_like(a)
    on(mutex_ab_kernel, backend, auto_mutex=False)(a, b, out)
    np.testing.assert_array_equal(out, a + b)


# mutex_lock.md and mutex_unlock.md (调用示例, the same kernel on both pages)
def mutex_x_kernel(
    x: pl.Tensor[[64, 64], pl.DT_FP32],
    out: pl.Tensor[[64, 64], pl.DT_FP32],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_x = pl.make_tile(tt, addr=0x0000, size=16384)
    tile_out = pl.make_tile(tt, addr=0x4000, size=16384)
    with pl.section_vector():
        pl.system.mutex_lock(pipe=pl.PipeType.MTE2, mutex_id=0)
        pl.load(tile_x, x, [0, 0])
        pl.system.mutex_unlock(pipe=pl.PipeType.MTE2, mutex_id=0)

        pl.system.mutex_lock(pipe=pl.PipeType.V, mutex_id=0)
        pl.system.mutex_lock(pipe=pl.PipeType.V, mutex_id=1)
        pl.add(tile_out, tile_x, tile_x)
        pl.system.mutex_unlock(pipe=pl.PipeType.V, mutex_id=1)
        pl.system.mutex_unlock(pipe=pl.PipeType.V, mutex_id=0)

        pl.system.mutex_lock(pipe=pl.PipeType.MTE3, mutex_id=1)
        pl.store(out, tile_out, [0, 0])
        pl.system.mutex_unlock(pipe=pl.PipeType.MTE3, mutex_id=1)


def test_mutex_lock_md_and_mutex_unlock_md_kernel(backend):
    rng = np.random.default_rng(17)
    x = f32(rng, (64, 64))
    out = np.zeros_like(x)
    on(mutex_x_kernel, backend, auto_mutex=False)(x, out)
    np.testing.assert_array_equal(out, x + x)


# set_cross_core.md (调用示例: 完整Kernel示例)
def cross_core_explicit_mode_kernel(
    x: pl.Tensor[[64, 64], pl.DT_FP32],
    y: pl.Tensor[[64, 64], pl.DT_FP32],
    rhs: pl.Tensor[[64, 64], pl.DT_FP32],
    out: pl.Tensor[[64, 64], pl.DT_FP32],
):
    v1_mat = pl.make_tile(
        pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Mat,
                    layout=pl.NZ),
        addr=0x10000, size=16384)

    with pl.section_vector():
        sub_index = pl.get_subblock_idx()
        off = sub_index * 32

        tile_x = pl.make_tile(
            pl.TileType(shape=[32, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
            addr=0x0000, size=8192)
        tile_y = pl.make_tile(
            pl.TileType(shape=[32, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
            addr=0x2000, size=8192)
        tile_sum = pl.make_tile(
            pl.TileType(shape=[32, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
            addr=0x4000, size=8192)
        tile_nz = pl.make_tile(
            pl.TileType(shape=[32, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                        layout=pl.NZ),
            addr=0x6000, size=8448)

        pl.load(tile_x, x, [off, 0])
        pl.load(tile_y, y, [off, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.add(tile_sum, tile_x, tile_y)
        pl.move(tile_nz, tile_sum)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=2)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=2)
        pl.insert(v1_mat, tile_nz, [off, 0])
        pl.system.set_cross_core(
            pipe=pl.PipeType.MTE3,
            event_id=2,
            sync_mode=pl.CrossCoreSyncMode.INTRA_BLOCK,
        )

    with pl.section_cube():
        rhs_mat = pl.make_tile(
            pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Mat,
                        layout=pl.NZ),
            addr=0x0000, size=16384)
        v1_left = pl.make_tile(
            pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Left,
                        layout=pl.NZ),
            addr=0x0000, size=16384)
        rhs_right = pl.make_tile(
            pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Right,
                        layout=pl.ZN),
            addr=0x0000, size=16384)
        c_l0c = pl.make_tile(
            pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc,
                        layout=pl.NZ, fractal=1024),
            addr=0x0000, size=16384)

        pl.load(rhs_mat, rhs, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.move(rhs_right, rhs_mat)
        pl.system.wait_cross_core(
            pipe=pl.PipeType.MTE1,
            event_id=2,
            sync_mode=pl.CrossCoreSyncMode.INTRA_BLOCK,
        )
        pl.move(v1_left, v1_mat)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.matmul(c_l0c, v1_left, rhs_right)
        pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.store(out, c_l0c, [0, 0])


# set_cross_core_wait_cross_core.md (调用示例): as above, the set side uses the default sync_mode
def cross_core_default_mode_kernel(
    x: pl.Tensor[[64, 64], pl.DT_FP32],
    y: pl.Tensor[[64, 64], pl.DT_FP32],
    rhs: pl.Tensor[[64, 64], pl.DT_FP32],
    out: pl.Tensor[[64, 64], pl.DT_FP32],
):
    v1_mat = pl.make_tile(
        pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Mat,
                    layout=pl.NZ),
        addr=0x10000, size=16384)

    with pl.section_vector():
        sub_index = pl.get_subblock_idx()
        off = sub_index * 32

        tile_x = pl.make_tile(pl.TileType(shape=[32, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                              addr=0x0000, size=8192)
        tile_y = pl.make_tile(pl.TileType(shape=[32, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                              addr=0x2000, size=8192)
        tile_sum = pl.make_tile(pl.TileType(shape=[32, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                                addr=0x4000, size=8192)
        tile_nz = pl.make_tile(
            pl.TileType(shape=[32, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                        layout=pl.NZ),
            addr=0x6000, size=8448)

        pl.load(tile_x, x, [off, 0])
        pl.load(tile_y, y, [off, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.add(tile_sum, tile_x, tile_y)
        pl.move(tile_nz, tile_sum)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=2)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=2)
        pl.insert(v1_mat, tile_nz, [off, 0])
        pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=2)

    with pl.section_cube():
        rhs_mat = pl.make_tile(
            pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Mat,
                        layout=pl.NZ),
            addr=0x0000, size=16384)
        v1_left = pl.make_tile(
            pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Left,
                        layout=pl.NZ),
            addr=0x0000, size=16384)
        rhs_right = pl.make_tile(
            pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Right,
                        layout=pl.ZN),
            addr=0x0000, size=16384)
        c_l0c = pl.make_tile(
            pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc,
                        layout=pl.NZ, fractal=1024),
            addr=0x0000, size=16384)

        pl.load(rhs_mat, rhs, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.move(rhs_right, rhs_mat)
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=2, sync_mode=pl.CrossCoreSyncMode.INTRA_BLOCK)
        pl.move(v1_left, v1_mat)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.matmul(c_l0c, v1_left, rhs_right)
        pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.store(out, c_l0c, [0, 0])


@pytest.mark.parametrize("kernel", [cross_core_explicit_mode_kernel, cross_core_default_mode_kernel],
                         ids=["set_cross_core.md", "set_cross_core_wait_cross_core.md"])
def test_set_cross_core_md_kernels(backend, kernel):
    rng = np.random.default_rng(18)
    x, y, rhs = f32(rng, (64, 64)), f32(rng, (64, 64)), f32(rng, (64, 64))
    out = np.zeros_like(x)
    on(kernel, backend)(x, y, rhs, out)
    assert_matmul_close(out, x + y, rhs)


# sync_all.md (调用示例: HARD AIV_ONLY)
def sync_all_kernel(
    x: pl.Tensor[[2048, 64], pl.DT_FP32],
    out: pl.Tensor[[2048, 64], pl.DT_FP32],
):
    tt = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    input_tiles = pl.make_tile_group(
        type=tt, addrs=[0x0000, 0x0100], mutex_ids=[0, 1])
    output_tiles = pl.make_tile_group(
        type=tt, addrs=[0x0200, 0x0300], mutex_ids=[2, 3])

    with pl.section_vector():
        for row in pl.range(pl.get_block_idx(), x.shape[0], pl.get_block_num()):
            tile_x = input_tiles.next()
            tile_out = output_tiles.next()
            pl.load(tile_x, x, [row, 0])
            pl.add(tile_out, tile_x, tile_x)
            pl.store(out, tile_out, [row, 0])

        pl.system.sync_all(
            mode=pl.SyncAllMode.HARD,
            core_type=pl.SyncCoreType.AIV_ONLY,
        )


@pytest.mark.parametrize("block_dim", [1, 8])
def test_sync_all_md_hard_kernel(backend, block_dim):
    rng = np.random.default_rng(19)
    x = f32(rng, (2048, 64))
    out = np.zeros_like(x)
    on(sync_all_kernel, backend, auto_mutex=True)[None, block_dim](x, out)
    np.testing.assert_array_equal(out, x + x)


# sync_all.md (调用示例: SOFT AIV_ONLY)
def soft_sync_all_kernel(
    x: pl.Tensor[[2048, 64], pl.DT_FP16],
    out: pl.Tensor[[2048, 64], pl.DT_FP16],
    sync_gm: pl.Tensor[[384], pl.DT_INT32],
):
    data_type = pl.TileType(
        shape=[1, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    data_tiles = pl.make_tile_group(
        type=data_type, addrs=[0x0000, 0x0100], mutex_ids=[0, 1])

    sync_ub_type = pl.TileType(
        shape=[1, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    sync_ub = pl.make_tile(sync_ub_type, addr=0x3000, size=256)

    with pl.section_vector():
        for row in pl.range(pl.get_block_idx(), x.shape[0], pl.get_block_num()):
            tile = data_tiles.next()
            pl.load(tile, x, [row, 0])
            pl.store(out, tile, [row, 0])

        pl.system.sync_all(
            [sync_gm, sync_ub],
            mode=pl.SyncAllMode.SOFT,
            core_type=pl.SyncCoreType.AIV_ONLY,
        )


@pytest.mark.parametrize("block_dim", [1, 8])
def test_sync_all_md_soft_kernel(backend, block_dim):
    rng = np.random.default_rng(20)
    x = f16(rng, (2048, 64))
    out = np.zeros_like(x)
    sync_gm = np.zeros(384, np.int32)
    on(soft_sync_all_kernel, backend, auto_mutex=True)[None, block_dim](x, out, sync_gm)
    np.testing.assert_array_equal(out, x)


# sync_all.md (SOFT fragment): only the first used_cores AIVs enter a SOFT barrier given [gm, ub, used_cores]
def soft_sync_all_used_cores_kernel(
    x: pl.Tensor[[2048, 64], pl.DT_FP16],
    out: pl.Tensor[[2048, 64], pl.DT_FP16],
    sync_gm: pl.Tensor[[384], pl.DT_INT32],
    used_cores: int,
):
    data_type = pl.TileType(
        shape=[1, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    data_tiles = pl.make_tile_group(
        type=data_type, addrs=[0x0000, 0x0100], mutex_ids=[0, 1])

    sync_ub_type = pl.TileType(
        shape=[1, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    sync_ub = pl.make_tile(sync_ub_type, addr=0x3000, size=256)

    with pl.section_vector():
        for row in pl.range(pl.get_block_idx(), x.shape[0], pl.get_block_num()):
            tile = data_tiles.next()
            pl.load(tile, x, [row, 0])
            pl.store(out, tile, [row, 0])

        if pl.get_block_idx() < used_cores:
            pl.system.sync_all(
                [sync_gm, sync_ub, used_cores],
                mode=pl.SyncAllMode.SOFT,
                core_type=pl.SyncCoreType.AIV_ONLY,
            )


def test_sync_all_md_soft_used_cores(backend):
    rng = np.random.default_rng(30)
    x = f16(rng, (2048, 64))
    out = np.zeros_like(x)
    on(soft_sync_all_used_cores_kernel, backend, auto_mutex=True)[None, 4](x, out, np.zeros(384, np.int32), 2)
    np.testing.assert_array_equal(out, x)


# sync_all.md: a core beyond used_cores (given as the keyword here) entering the barrier is an error, not a hang
def soft_sync_all_every_core_enters_kernel(
    x: pl.Tensor[[64, 64], pl.DT_FP16],
    sync_gm: pl.Tensor[[384], pl.DT_INT32],
):
    sync_ub_type = pl.TileType(shape=[1, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    sync_ub = pl.make_tile(sync_ub_type, addr=0x3000, size=256)
    with pl.section_vector():
        pl.system.sync_all([sync_gm, sync_ub], mode=pl.SyncAllMode.SOFT, core_type=pl.SyncCoreType.AIV_ONLY,
                           used_cores=2)


def test_sync_all_used_cores_rejects_a_core_beyond_them(backend):
    with pytest.raises(pl.KernelRuntimeError, match=r"sync_all\(used_cores=2\) waits for the first 2 AIV_ONLY cores"):
        on(soft_sync_all_every_core_enters_kernel, backend, auto_mutex=True)[None, 4](
            np.zeros((64, 64), np.float16), np.zeros(384, np.int32))


# sync_src_sync_dst.md (调用示例)
def sync_src_dst_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP32],
    b: pl.Tensor[[64, 64], pl.DT_FP32],
    out: pl.Tensor[[64, 64], pl.DT_FP32],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile(tt, addr=0x0000, size=16384)
    tile_b = pl.make_tile(tt, addr=0x4000, size=16384)
    tile_out = pl.make_tile(tt, addr=0x8000, size=16384)
    with pl.section_vector():
        pl.load(tile_a, a, [0, 0])
        pl.load(tile_b, b, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.add(tile_out, tile_a, tile_b)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(out, tile_out, [0, 0])


def test_sync_src_sync_dst_md_kernel(backend):
    rng = np.random.default_rng(21)
    a, b = f32(rng, (64, 64)), f32(rng, (64, 64))
    out = np.zeros_like(a)
    on(sync_src_dst_kernel, backend)(a, b, out)
    np.testing.assert_array_equal(out, a + b)


# Argument rules the synchronization pages say the front end rejects, each in the sync_src_sync_dst.md kernel:
# sync_src_sync_dst.md (wait_pipe must differ from set_pipe; no PipeType.ALL), mutex_lock.md / mutex_unlock.md
# (no PipeType.ALL; a bool is not a mutex id), set_cross_core.md (no PipeType.ALL).
def _sync_misuse_kernel(case: str):
    def sync_misuse_kernel(a: pl.Tensor[[64, 64], pl.DT_FP32], out: pl.Tensor[[64, 64], pl.DT_FP32]):
        t = pl.make_tile(pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                         addr=0x0, size=16384)
        with pl.section_vector():
            pl.load(t, a, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
            if pl.constexpr(case == "sync_src_same_pipe"):
                pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.V, event_id=1)
                pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.V, event_id=1)
            if pl.constexpr(case == "sync_src_pipe_all"):
                pl.system.sync_src(set_pipe=pl.PipeType.ALL, wait_pipe=pl.PipeType.MTE3, event_id=1)
                pl.system.sync_dst(set_pipe=pl.PipeType.ALL, wait_pipe=pl.PipeType.MTE3, event_id=1)
            if pl.constexpr(case == "mutex_pipe_all"):
                pl.system.mutex_lock(pipe=pl.PipeType.ALL, mutex_id=3)
                pl.system.mutex_unlock(pipe=pl.PipeType.ALL, mutex_id=3)
            if pl.constexpr(case == "mutex_id_bool"):
                pl.system.mutex_lock(pipe=pl.PipeType.V, mutex_id=True)
                pl.system.mutex_unlock(pipe=pl.PipeType.V, mutex_id=True)
            if pl.constexpr(case == "cross_core_pipe_all"):
                pl.system.set_cross_core(pipe=pl.PipeType.ALL, event_id=1,
                                         sync_mode=pl.CrossCoreSyncMode.INTER_BLOCK)
                pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=1,
                                          sync_mode=pl.CrossCoreSyncMode.INTER_BLOCK)
            pl.store(out, t, [0, 0])
    return sync_misuse_kernel


SYNC_MISUSE_CASES = ["sync_src_same_pipe", "sync_src_pipe_all", "mutex_pipe_all", "mutex_id_bool",
                     "cross_core_pipe_all"]
SYNC_MISUSE_KERNELS = {case: _sync_misuse_kernel(case) for case in SYNC_MISUSE_CASES}


@pytest.mark.parametrize("case", SYNC_MISUSE_CASES)
def test_sync_pages_documented_argument_errors(case):
    a = np.ones((64, 64), np.float32)
    with pytest.raises(pl.KernelError):  # checked when the kernel is parsed: the same on every backend
        on(SYNC_MISUSE_KERNELS[case], "interp")(a, np.zeros_like(a))


# =====================================================================================================
# system_variables/
# =====================================================================================================
NUM_CORES = 2


# get_block_idx.md and get_block_num.md (调用示例, the same kernel on both pages)
def multicore_add_kernel(
    x: pl.Tensor[[128, 128], pl.DT_FP16],
    y: pl.Tensor[[128, 128], pl.DT_FP16],
    z: pl.Tensor[[128, 128], pl.DT_FP16],
):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_c = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        vidx = pl.get_block_idx()
        _bnum = pl.get_block_num()
        offset = vidx * 64
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_c = tile_c.current()
        pl.load(cur_a, x, [offset, 0])
        pl.load(cur_b, y, [offset, 0])
        pl.add(cur_c, cur_a, cur_b)
        pl.store(z, cur_c, [offset, 0])


def test_get_block_idx_md_and_get_block_num_md_kernel(backend):
    rng = np.random.default_rng(22)
    x, y = f16(rng, (128, 128)), f16(rng, (128, 128))
    z = np.zeros_like(x)
    on(multicore_add_kernel, backend, auto_mutex=True)[None, NUM_CORES](x, y, z)
    np.testing.assert_array_equal(z, fp16_add(x, y))


# get_subblock_idx.md (调用示例)
def subblock_add_kernel(
    x: pl.Tensor[[64, 64], pl.DT_FP32],
    y: pl.Tensor[[64, 64], pl.DT_FP32],
    out: pl.Tensor[[64, 64], pl.DT_FP32],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tile_x = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_y = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[1])
    tile_sum = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2])
    with pl.section_vector():
        _sub_index = pl.get_subblock_idx()
        cur_x = tile_x.current()
        cur_y = tile_y.current()
        cur_sum = tile_sum.current()
        pl.load(cur_x, x, [0, 0])
        pl.load(cur_y, y, [0, 0])
        pl.add(cur_sum, cur_x, cur_y)
        pl.store(out, cur_sum, [0, 0])


def test_get_subblock_idx_md_kernel(backend):
    rng = np.random.default_rng(23)
    x, y = f32(rng, (64, 64)), f32(rng, (64, 64))
    out = np.zeros_like(x)
    on(subblock_add_kernel, backend, auto_mutex=True)(x, y, out)
    np.testing.assert_array_equal(out, x + y)


# get_subblock_num.md (调用示例 is a fragment): core_id = get_block_idx() // get_subblock_num() computed outside the
# sections of a mix kernel is the same AI Core number on the AIC and on both AIVs; each core writes what it sees
def subblock_num_core_id_kernel(out_c: pl.Tensor[[1, 8], pl.DT_INT32], out_v: pl.Tensor[[1, 16], pl.DT_INT32]):
    num_cores = pl.get_block_num()
    core_id = pl.get_block_idx() // pl.get_subblock_num()
    with pl.section_cube():
        pl.setval(out_c, pl.get_block_idx(), core_id * 100 + num_cores)
    with pl.section_vector():
        pl.setval(out_v, pl.get_block_idx(), core_id * 100 + pl.get_subblock_num())


def test_get_subblock_num_md_core_id_fragment(backend):
    out_c, out_v = np.full((1, 8), -1, np.int32), np.full((1, 16), -1, np.int32)
    on(subblock_num_core_id_kernel, backend)[None, 3](out_c, out_v)
    # AIC: subblock_num 1, block_idx = core;  AIV: subblock_num 2, block_idx = 2 * core + subblock
    np.testing.assert_array_equal(out_c[0, :3], [3, 103, 203])
    np.testing.assert_array_equal(out_v[0, :6], [2, 2, 102, 102, 202, 202])
    assert (out_c[0, 3:] == -1).all() and (out_v[0, 6:] == -1).all()


# =====================================================================================================
# transpose_and_element_access/
# =====================================================================================================
START = 0


# fill_index.md (调用示例)
def fill_index_kernel(
    out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_INT32],
):
    tt = pl.TileType(shape=[1, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    tile_out = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    with pl.section_vector():
        m_dim = out.shape[0]
        n_dim = out.shape[1]
        for i in pl.range(0, m_dim, 1):
            for j in pl.range(0, n_dim, 64):
                cur_out = tile_out.current()
                pl.fill_index(cur_out, START)
                pl.store(out, cur_out, [i, j])


@pytest.mark.parametrize("mn", [(1, 64), (3, 192)])
def test_fill_index_md_kernel(backend, mn):
    out = np.full(mn, -1, np.int32)
    on(fill_index_kernel, backend, auto_mutex=True)(out)
    # every [1, 64] block holds START + j for j in [0, 64)
    np.testing.assert_array_equal(out, np.broadcast_to(START + np.arange(mn[1]) % 64, mn))


# =====================================================================================================
# cache_control/
# =====================================================================================================

# dcci.md (调用示例 is a fragment: the single-cache-line call on a 2-D GM tensor); here placed in a copy kernel
def dcci_copy_kernel(inp: pl.Tensor[[64, 64], pl.DT_FP32], out: pl.Tensor[[64, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    t = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    with pl.section_vector():
        pl.system.dcci(
            inp,
            [0, 0],
            cache_line=pl.CacheLine.SINGLE_CACHE_LINE,
            dst=pl.DcciDst.CACHELINE_OUT,
        )
        pl.system.dcci(inp, cache_line=pl.CacheLine.ENTIRE_DATA_CACHE)
        cur = t.current()
        pl.load(cur, inp, [0, 0])
        pl.store(out, cur, [0, 0])


def test_dcci_md_fragment(backend):
    rng = np.random.default_rng(24)
    inp = f32(rng, (64, 64))
    out = np.zeros_like(inp)
    on(dcci_copy_kernel, backend, auto_mutex=True)(inp, out)
    np.testing.assert_array_equal(out, inp)

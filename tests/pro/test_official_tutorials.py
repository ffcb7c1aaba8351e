"""The complete SIMD (tile API) kernels of the official tile-level tutorials, run on every backend.

Pages (``docs/zh/pypto_pro/tutorials/`` in hicann/pypto): ``quick_start/`` (HelloWorld, Add, Matmul, CV
fused; the ``quick_start/SIMD/`` and ``getting_started/quick_start/SIMD_programming/`` copies carry the
same kernels unless noted), ``operator_development/tile_based_python_programming/`` (Tile_vector_computation,
Cube_matrix_computation, multi_core_partitioning_and_Tiling, tail_block_handling, TilingData, tiling_key),
``operator_development/kernel_function.md``, ``operator_development/compilation_and_execution/JIT_compilation.md``
and the ``programming_guide/`` copies where their kernels differ.

Each kernel body is kept as on its page; only the decorator is replaced by ``pl.jit(fn, backend=b, **page_kwargs)``
and NPU tensors become torch CPU tensors.  Results are checked with the page's own golden (torch) where the page
has one.  On ``sim`` the strict simulator must not report a race, deadlock or uninitialised read.
Pages that only show fragments get the smallest kernel around the fragment (marked "assembled").  Kernels that
need a feature we document as not implemented (the VF API, NZ GM tensors) are skipped with the reason; the
kernels with pl.Ptr / pl.make_tensor / TilingData arrays are in test_gm_views.py.
"""
import functools
import glob
import os
from dataclasses import dataclass

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.backends import cpu
from pypto_pro.runtime.platform import get_platform_info

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


# Tile sizes shared by the Tile_vector / Cube / multi-core / tail / TilingData pages
TILE_M = 128
TILE_N = 128
TILE_K = 128


# =====================================================================================================
# quick_start/
# =====================================================================================================

# quick_start/HelloWorld.md (same kernel in quick_start/SIMD/ and getting_started/.../SIMD_programming/)
def hello_world_kernel(out: pl.Tensor[[1], pl.DT_INT32]):
    with pl.section_vector():
        pl.printf("Hello World!!!\n")
        pl.setval(out, 0, 1)


def test_quick_start_hello_world(backend, capfd):
    out = torch.zeros(1, dtype=torch.int32)
    on(hello_world_kernel, backend)(out)
    print(f"kernel finished, out[0] = {out[0].item()}")
    text = capfd.readouterr().out
    assert "kernel finished, out[0] = 1" in text
    assert text.count("Hello World!!!\n") == 1  # block_dim 1: one vector core prints once


# quick_start/Add_operator_quick_start.md (same kernel in quick_start/SIMD/Add_operator.md and getting_started/)
def quick_start_add_kernel(a: pl.Tensor[[64, 64], pl.DT_FP16], b: pl.Tensor[[64, 64], pl.DT_FP16],
                           out: pl.Tensor[[64, 64], pl.DT_FP16]):
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


def test_quick_start_add(backend):
    torch.manual_seed(0)
    a = torch.rand(64, 64, dtype=torch.float16)
    b = torch.rand(64, 64, dtype=torch.float16)
    out = torch.empty(64, 64, dtype=torch.float16)
    on(quick_start_add_kernel, backend, auto_mutex=True)(a, b, out)
    torch.testing.assert_close(out, a + b, rtol=1e-2, atol=1e-2)
    assert torch.equal(out, a + b)  # one fp16 rounding of the fp32 sum, as torch does


# quick_start/Matmul_operator_quick_start.md (same kernel in getting_started/.../Matmul_operator_quick_start.md):
# tile groups declared outside section_cube
def quick_start_matmul_example(a: pl.Tensor[[pl.DYNAMIC, 128], pl.DT_FP16], b: pl.Tensor[[128, pl.DYNAMIC], pl.DT_FP16], out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]):  # noqa: E501
    num_cores = pl.get_block_num()
    core_id = pl.get_block_idx()
    M = a.shape[0]
    N = b.shape[1]

    a_mat_4_buffer = pl.make_tile_group(
        type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0, mutex_ids=[0, 1, 10, 11])
    b_mat_4_buffer = pl.make_tile_group(
        type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x20000, mutex_ids=[2, 3, 12, 13])
    a_left_db = pl.make_tile_group(
        type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
        addrs=0, mutex_ids=[4, 5])
    b_right_db = pl.make_tile_group(
        type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right),
        addrs=0, mutex_ids=[6, 7])
    acc_db = pl.make_tile_group(
        type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
        addrs=0, mutex_ids=[8, 9])

    with pl.section_cube():
        for i in pl.range(core_id, M // 128, num_cores):
            for j in pl.range(0, N // 128, 1):
                a_l1_tile = a_mat_4_buffer.next()
                pl.load_tile(a_l1_tile, a, [i, 0])
                b_l1_tile = b_mat_4_buffer.next()
                pl.load_tile(b_l1_tile, b, [0, j])

                cur_a_left = a_left_db.next()
                pl.move(cur_a_left, a_l1_tile)
                cur_b_right = b_right_db.next()
                pl.move(cur_b_right, b_l1_tile)

                acc_tile = acc_db.next()
                pl.matmul(acc_tile, cur_a_left, cur_b_right)

                pl.store_tile(out, acc_tile, [i, j])


# quick_start/SIMD/Matmul_operator.md: the same kernel with the tile groups declared inside section_cube
def simd_matmul_example(
    a: pl.Tensor[[pl.DYNAMIC, 128], pl.DT_FP16],
    b: pl.Tensor[[128, pl.DYNAMIC], pl.DT_FP16],
    out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
):
    num_cores = pl.get_block_num()
    core_id = pl.get_block_idx()
    m = a.shape[0]
    n = b.shape[1]

    with pl.section_cube():
        a_mat_4_buffer = pl.make_tile_group(
            type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
            addrs=0, mutex_ids=[0, 1, 10, 11])
        b_mat_4_buffer = pl.make_tile_group(
            type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
            addrs=0x20000, mutex_ids=[2, 3, 12, 13])
        a_left_db = pl.make_tile_group(
            type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
            addrs=0, mutex_ids=[4, 5])
        b_right_db = pl.make_tile_group(
            type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right),
            addrs=0, mutex_ids=[6, 7])
        acc_db = pl.make_tile_group(
            type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
            addrs=0, mutex_ids=[8, 9])

        for i in pl.range(core_id, m // 128, num_cores):
            for j in pl.range(0, n // 128, 1):
                a_l1_tile = a_mat_4_buffer.next()
                pl.load_tile(a_l1_tile, a, [i, 0])
                b_l1_tile = b_mat_4_buffer.next()
                pl.load_tile(b_l1_tile, b, [0, j])

                cur_a_left = a_left_db.next()
                pl.move(cur_a_left, a_l1_tile)
                cur_b_right = b_right_db.next()
                pl.move(cur_b_right, b_l1_tile)

                acc_tile = acc_db.next()
                pl.matmul(acc_tile, cur_a_left, cur_b_right)

                pl.store_tile(out, acc_tile, [i, j])


# programming_guide/.../multi_core_partitioning_and_Tiling.md (matmul的多核切分): DYNAMIC K, two statements per line
def multicore_guide_matmul_example(
    a:   pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
    b:   pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
    out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
):
    num_cores = pl.get_block_num()
    core_id   = pl.get_block_idx()  # noqa: E221
    M = a.shape[0]
    N = b.shape[1]

    with pl.section_cube():
        a_mat = pl.make_tile_group(
            type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
            addrs=0,       mutex_ids=[0, 1, 10, 11])
        b_mat = pl.make_tile_group(
            type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
            addrs=0x20000, mutex_ids=[2, 3, 12, 13])
        a_left  = pl.make_tile_group(  # noqa: E221
            type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),  addrs=0, mutex_ids=[4, 5])  # noqa: E241,E501
        b_right = pl.make_tile_group(
            type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right), addrs=0, mutex_ids=[6, 7])  # noqa: E501
        acc     = pl.make_tile_group(  # noqa: E221
            type=pl.TileType(shape=[128, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),   addrs=0, mutex_ids=[8, 9])  # noqa: E241,E501

        for i in pl.range(core_id, M // 128, num_cores):
            for j in pl.range(0, N // 128, 1):
                a_l1 = a_mat.next(); pl.load_tile(a_l1, a, [i, 0])  # noqa: E702
                b_l1 = b_mat.next(); pl.load_tile(b_l1, b, [0, j])  # noqa: E702
                cur_a = a_left.next();  pl.move(cur_a, a_l1)      # L1 -> L0A  # noqa: E702
                cur_b = b_right.next(); pl.move(cur_b, b_l1)      # L1 -> L0B  # noqa: E702
                acc_t = acc.next()
                pl.matmul(acc_t, cur_a, cur_b)                    # L0C = A @ B
                pl.store_tile(out, acc_t, [i, j])                 # L0C -> GM


MATMUL_PAGES = {
    # kernel, (M, K, N), seed, block_dim as the page computes it
    "quick_start": (quick_start_matmul_example, (384, 128, 256), 42, lambda m: 32),
    "quick_start_SIMD": (simd_matmul_example, (256, 128, 256), 0, lambda m: 32),  # the page's own test case
    "programming_guide_multi_core": (multicore_guide_matmul_example, (256, 128, 384), 0,
                                     lambda m: min(get_platform_info().core_num, m // 128)),
}


@pytest.mark.parametrize("page", list(MATMUL_PAGES))
def test_quick_start_matmul(backend, page):
    kernel, (m, k, n), seed, block_dim = MATMUL_PAGES[page]
    torch.manual_seed(seed)
    a = torch.randn(m, k, dtype=torch.float16)
    b = torch.randn(k, n, dtype=torch.float16)
    out = torch.zeros(m, n, dtype=torch.float32)
    on(kernel, backend, auto_mutex=True)[None, block_dim(m)](a, b, out)
    golden = torch.matmul(a.float(), b.float())
    torch.testing.assert_close(out, golden, rtol=1e-2, atol=1e-2)


# quick_start/CV_fused_operator_quick_start.md, Tile API version (same kernel in quick_start/SIMD/ and
# getting_started/); the page's constants live in a closure because TILE_M/TILE_N differ from the other pages
def _cv_fused_page():
    TILE_M = 64
    TILE_N = 64
    VEC_ROWS = 32
    K_SIZE = 128

    def matmul_softmax_kernel(a: pl.Tensor[[pl.DYNAMIC, K_SIZE], pl.DT_FP16],
                              b: pl.Tensor[[K_SIZE, pl.DYNAMIC], pl.DT_FP16],
                              out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
                              workspace: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]):
        M = a.shape[0]
        N = b.shape[1]
        N_TILES = (N + TILE_N - 1) // TILE_N
        valid_m = pl.min(TILE_M, M)

        tt_a_mat = pl.TileType(shape=[TILE_M, K_SIZE], dtype=pl.DT_FP16,
                               target_memory=pl.MemorySpace.Mat,
                               valid_shape=[-1, -1])
        tt_b_mat = pl.TileType(shape=[K_SIZE, TILE_N], dtype=pl.DT_FP16,
                               target_memory=pl.MemorySpace.Mat,
                               valid_shape=[-1, -1])
        tt_left = pl.TileType(shape=[TILE_M, K_SIZE], dtype=pl.DT_FP16,
                              target_memory=pl.MemorySpace.Left,
                              valid_shape=[-1, -1], compact=1)
        tt_right = pl.TileType(shape=[K_SIZE, TILE_N], dtype=pl.DT_FP16,
                               target_memory=pl.MemorySpace.Right,
                               valid_shape=[-1, -1], compact=1)
        tt_acc = pl.TileType(shape=[TILE_M, TILE_N], dtype=pl.DT_FP32,
                             target_memory=pl.MemorySpace.Acc,
                             valid_shape=[-1, -1], compact=1)

        a_l1 = pl.make_tile_group(type=tt_a_mat, addrs=0x0000, mutex_ids=[0])
        b_l1 = pl.make_tile_group(type=tt_b_mat, addrs=0x4000, mutex_ids=[1])
        a_l0a = pl.make_tile_group(type=tt_left, addrs=0x0000, mutex_ids=[2])
        b_l0b = pl.make_tile_group(type=tt_right, addrs=0x0000, mutex_ids=[3])
        qk_l0c = pl.make_tile_group(type=tt_acc, addrs=0x0000, mutex_ids=[4])

        tt_vec = pl.TileType(shape=[VEC_ROWS, TILE_N], dtype=pl.DT_FP32,
                             target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
        tt_red = pl.TileType(shape=[VEC_ROWS, 1], dtype=pl.DT_FP32,
                             target_memory=pl.MemorySpace.Vec, layout=pl.DN,
                             valid_shape=[-1, -1])
        tt_red_rm = pl.TileType(shape=[1, VEC_ROWS], dtype=pl.DT_FP32,
                                target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])

        qk_vec = pl.make_tile_group(type=tt_vec, addrs=0x0000, mutex_ids=[5])
        tmp_vec = pl.make_tile_group(type=tt_vec, addrs=0x2000, mutex_ids=[6])
        exp_vec = pl.make_tile_group(type=tt_vec, addrs=0x4000, mutex_ids=[7])
        red_vec = pl.make_tile_group(type=tt_red, addrs=0x6000, mutex_ids=[8])
        red_rm = pl.make_tile_group(type=tt_red_rm, addrs=0x6000, mutex_ids=[9])
        global_max = pl.make_tile_group(type=tt_red, addrs=0x6100, mutex_ids=[10])
        global_max_rm = pl.make_tile_group(type=tt_red_rm, addrs=0x6100, mutex_ids=[11])
        global_sum = pl.make_tile_group(type=tt_red, addrs=0x6200, mutex_ids=[12])
        global_sum_rm = pl.make_tile_group(type=tt_red_rm, addrs=0x6200, mutex_ids=[13])

        with pl.section_cube():
            cur_a_l1 = a_l1.current()
            cur_b_l1 = b_l1.current()
            cur_a_l0a = a_l0a.current()
            cur_b_l0b = b_l0b.current()
            cur_qk_l0c = qk_l0c.current()
            for nj in pl.range(0, N_TILES, 1):
                n_off = nj * TILE_N
                valid_n = pl.min(TILE_N, N - n_off)
                pl.set_validshape(cur_qk_l0c, [valid_m, valid_n])
                pl.set_validshape(cur_a_l1, [valid_m, K_SIZE])
                pl.set_validshape(cur_b_l1, [K_SIZE, valid_n])
                pl.load(cur_a_l1, a, [0, 0])
                pl.load(cur_b_l1, b, [0, n_off])
                pl.set_validshape(cur_a_l0a, [valid_m, K_SIZE])
                pl.set_validshape(cur_b_l0b, [K_SIZE, valid_n])
                pl.move(cur_a_l0a, cur_a_l1)
                pl.move(cur_b_l0b, cur_b_l1)
                pl.matmul(cur_qk_l0c, cur_a_l0a, cur_b_l0b)
                pl.store(workspace, cur_qk_l0c, [0, n_off])
            pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=0)

        with pl.section_vector():
            sub_id = pl.get_subblock_idx()
            pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=0)
            m_off = sub_id * VEC_ROWS
            if m_off < M:
                valid_rows = pl.min(VEC_ROWS, M - m_off)
                cur_qk = qk_vec.current()
                cur_tmp = tmp_vec.current()
                cur_exp = exp_vec.current()
                cur_red = red_vec.current()
                cur_red_rm = red_rm.current()
                cur_global_max = global_max.current()
                cur_global_max_rm = global_max_rm.current()
                cur_global_sum = global_sum.current()
                cur_global_sum_rm = global_sum_rm.current()
                pl.set_validshape(cur_red, [valid_rows, 1])
                pl.set_validshape(cur_red_rm, [1, valid_rows])
                pl.set_validshape(cur_global_max, [valid_rows, 1])
                pl.set_validshape(cur_global_max_rm, [1, valid_rows])
                pl.set_validshape(cur_global_sum, [valid_rows, 1])
                pl.set_validshape(cur_global_sum_rm, [1, valid_rows])

                for nj in pl.range(0, N_TILES, 1):
                    n_off = nj * TILE_N
                    valid_n = pl.min(TILE_N, N - n_off)
                    pl.set_validshape(cur_qk, [valid_rows, valid_n])
                    pl.set_validshape(cur_tmp, [valid_rows, valid_n])
                    pl.load(cur_qk, workspace, [m_off, n_off])
                    pl.maximum(cur_red, cur_qk, cur_tmp, dim=0)
                    if nj == 0:
                        pl.mul(cur_global_max_rm, cur_red_rm, 1.0)
                    else:
                        pl.maximum(cur_global_max_rm, cur_global_max_rm, cur_red_rm)

                for nj in pl.range(0, N_TILES, 1):
                    n_off = nj * TILE_N
                    valid_n = pl.min(TILE_N, N - n_off)
                    pl.set_validshape(cur_qk, [valid_rows, valid_n])
                    pl.set_validshape(cur_tmp, [valid_rows, valid_n])
                    pl.set_validshape(cur_exp, [valid_rows, valid_n])
                    pl.load(cur_qk, workspace, [m_off, n_off])
                    pl.expand_sub(cur_exp, cur_qk, cur_global_max, dim=0)
                    pl.exp(cur_exp, cur_exp)
                    pl.sum(cur_red, cur_exp, cur_tmp, dim=0)
                    if nj == 0:
                        pl.mul(cur_global_sum_rm, cur_red_rm, 1.0)
                    else:
                        pl.add(cur_global_sum_rm, cur_global_sum_rm, cur_red_rm)

                for nj in pl.range(0, N_TILES, 1):
                    n_off = nj * TILE_N
                    valid_n = pl.min(TILE_N, N - n_off)
                    pl.set_validshape(cur_qk, [valid_rows, valid_n])
                    pl.set_validshape(cur_exp, [valid_rows, valid_n])
                    pl.load(cur_qk, workspace, [m_off, n_off])
                    pl.expand_sub(cur_exp, cur_qk, cur_global_max, dim=0)
                    pl.exp(cur_exp, cur_exp)
                    pl.expand_div(cur_exp, cur_exp, cur_global_sum, dim=0)
                    pl.store(out, cur_exp, [m_off, n_off])

    return matmul_softmax_kernel, K_SIZE


cv_matmul_softmax_kernel, CV_K_SIZE = _cv_fused_page()


@pytest.mark.parametrize("m,n", [(48, 1024), (17, 200), (1, 64), (64, 130)],
                         ids=["page_48x1024", "tails_17x200", "m1_one_block", "m64_n_tail"])
def test_quick_start_cv_fused_matmul_softmax(backend, m, n):
    torch.manual_seed(0)
    a = torch.randn(m, CV_K_SIZE, dtype=torch.float16) * 0.1
    b = torch.randn(CV_K_SIZE, n, dtype=torch.float16) * 0.1
    out = torch.zeros(m, n, dtype=torch.float32)
    workspace = torch.zeros(m, n, dtype=torch.float32)
    on(cv_matmul_softmax_kernel, backend, auto_mutex=True)(a, b, out, workspace)
    matmul_golden = torch.matmul(a.float(), b.float())
    torch.testing.assert_close(workspace, matmul_golden, rtol=1e-2, atol=1e-2)
    golden = torch.softmax(matmul_golden, dim=-1)
    torch.testing.assert_close(out, golden, rtol=1e-2, atol=1e-2)


# =====================================================================================================
# operator_development/tile_based_python_programming/Tile_vector_computation.md
# =====================================================================================================

# Tile_vector_computation.md (完整示例, double-buffered add); the same kernel is multi_core_partitioning_and_Tiling.md's
# 完整可执行示例 (also in its programming_guide/ copy)
def tile_vector_add_kernel(
    x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
    y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
    z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
):
    tile_type = pl.TileType(shape=[TILE_M, TILE_N], dtype=pl.DT_FP16,
                            target_memory=pl.MemorySpace.Vec)

    a_db = pl.make_tile_group(type=tile_type, addrs=0x0000,  mutex_ids=[0, 1])  # noqa: E241
    b_db = pl.make_tile_group(type=tile_type, addrs=0x10000, mutex_ids=[2, 3])
    c_db = pl.make_tile_group(type=tile_type, addrs=0x20000, mutex_ids=[30, 31])

    with pl.section_vector():
        num_cores = pl.get_block_num()
        core_id   = pl.get_block_idx()  # noqa: E221
        m_tile_num = x.shape[0] // TILE_M
        n_tile_num = x.shape[1] // TILE_N

        for i in pl.range(core_id, m_tile_num, num_cores):
            for j in pl.range(0, n_tile_num, 1):
                tile_a = a_db.next()
                tile_b = b_db.next()
                tile_c = c_db.next()
                pl.load_tile(tile_a, x, [i, j])
                pl.load_tile(tile_b, y, [i, j])
                pl.add(tile_c, tile_a, tile_b)
                pl.store_tile(z, tile_c, [i, j])


@pytest.mark.parametrize("launch", ["tile_vector_page", "multi_core_page", "two_cores"])
def test_tile_vector_double_buffered_add(backend, launch):
    m_size, n_size = 640, 384
    total_tiles = m_size // TILE_M
    num_cores = {"tile_vector_page": min(get_platform_info().vector_core_num, total_tiles),
                 "multi_core_page": m_size // TILE_M,
                 "two_cores": 2}[launch]               # several row tiles per core: the slots rotate
    torch.manual_seed(0)
    x = torch.rand([m_size, n_size], dtype=torch.float16)
    y = torch.rand([m_size, n_size], dtype=torch.float16)
    z = torch.empty([m_size, n_size], dtype=torch.float16)
    on(tile_vector_add_kernel, backend, auto_mutex=True)[None, num_cores](x, y, z)
    torch.testing.assert_close(z, x + y)


# Tile_vector_computation.md (make_tile的手动同步), assembled: the page's three make_tile tiles and its manual-sync
# section around a 64x64 add
def tile_vector_make_tile_sync_kernel(a: pl.Tensor[[64, 64], pl.DT_FP16], b: pl.Tensor[[64, 64], pl.DT_FP16],
                                      out: pl.Tensor[[64, 64], pl.DT_FP16]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile(tt, addr=0x0000, size=8192)
    tile_b = pl.make_tile(tt, addr=0x2000, size=8192)
    tile_out = pl.make_tile(tt, addr=0x4000, size=8192)
    with pl.section_vector():
        pl.load(tile_a, a, [0, 0])
        pl.load(tile_b, b, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.add(tile_out, tile_a, tile_b)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(out, tile_out, [0, 0])


def test_tile_vector_make_tile_manual_sync(backend):
    torch.manual_seed(1)
    a = torch.rand(64, 64, dtype=torch.float16)
    b = torch.rand(64, 64, dtype=torch.float16)
    out = torch.empty(64, 64, dtype=torch.float16)
    on(tile_vector_make_tile_sync_kernel, backend)(a, b, out)
    assert torch.equal(out, a + b)


# Tile_vector_computation.md (Tile切片), assembled: the page's slice tile[2:6, 16:50] (shape [4, 34]) of a loaded
# group tile, stored to GM
def tile_vector_slice_kernel(src: pl.Tensor[[8, 64], pl.DT_FP16], dst: pl.Tensor[[4, 34], pl.DT_FP16]):
    tile_group = pl.make_tile_group(
        type=pl.TileType(shape=[8, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec),
        addrs=0x0, mutex_ids=[0])
    with pl.section_vector():
        tile = tile_group.next()
        pl.load(tile, src, [0, 0])

        sub_tile = tile[2:6, 16:50]
        pl.store(dst, sub_tile, [0, 0])


# Tile_vector_computation.md (Tile切片, valid_shape example), assembled: with the parent's valid shape [6, 40] the
# same slice has the valid shape [4, 24]
def tile_vector_slice_valid_kernel(src: pl.Tensor[[8, 64], pl.DT_FP16], dst: pl.Tensor[[4, 34], pl.DT_FP16]):
    tile_group = pl.make_tile_group(
        type=pl.TileType(shape=[8, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1]),
        addrs=0x0, mutex_ids=[0])
    with pl.section_vector():
        tile = tile_group.next()
        pl.set_validshape(tile, [6, 40])
        pl.load(tile, src, [0, 0])
        sub_tile = tile[2:6, 16:50]
        pl.store(dst, sub_tile, [0, 0])


@pytest.mark.parametrize("parent_valid", [False, True], ids=["full_parent", "parent_valid_6x40"])
def test_tile_vector_slice(backend, parent_valid):
    src = torch.arange(8 * 64, dtype=torch.float32).reshape(8, 64).half()
    dst = torch.zeros(4, 34, dtype=torch.float16)
    kernel = tile_vector_slice_valid_kernel if parent_valid else tile_vector_slice_kernel
    on(kernel, backend, auto_mutex=True)(src, dst)
    expected = torch.zeros(4, 34, dtype=torch.float16)
    cols = 24 if parent_valid else 34
    expected[:, :cols] = src[2:6, 16:16 + cols]
    assert torch.equal(dst, expected)


# multi_core_partitioning_and_Tiling.md (使用跨步循环进行多核切分 + 跨步切分示例), assembled: each core counts the tiles
# the page's strided loop gives it; the page's example (100 tiles, 32 cores) says cores 0..3 get 4, the others 3
def multicore_strided_partition_kernel(counts: pl.Tensor[[32], pl.DT_INT32], total_tiles: pl.DT_INT64):
    with pl.section_vector():
        num_cores = pl.get_block_num()
        core_id = pl.get_block_idx()
        n = 0
        for idx in pl.range(core_id, total_tiles, num_cores):
            n = n + 1
        pl.setval(counts, core_id, n)


def test_multicore_strided_partition_example(backend):
    counts = torch.zeros(32, dtype=torch.int32)
    on(multicore_strided_partition_kernel, backend)[None, 32](counts, 100)
    assert counts.tolist() == [4] * 4 + [3] * 28


# =====================================================================================================
# operator_development/tile_based_python_programming/Cube_matrix_computation.md
# =====================================================================================================

# Cube_matrix_computation.md (完整示例): L1 double buffer, single-buffered L0A/L0B/L0C via current()
def cube_matmul_kernel(
    a: pl.Tensor[[pl.DYNAMIC, TILE_K], pl.DT_FP16],
    b: pl.Tensor[[TILE_K, pl.DYNAMIC], pl.DT_FP16],
    out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
):
    num_cores = pl.get_block_num()
    core_id = pl.get_block_idx()
    M = a.shape[0]
    N = b.shape[1]

    a_l1 = pl.make_tile_group(
        type=pl.TileType(shape=[TILE_M, TILE_K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x00000, mutex_ids=[0, 1])
    b_l1 = pl.make_tile_group(
        type=pl.TileType(shape=[TILE_K, TILE_N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x10000, mutex_ids=[2, 3])
    a_left = pl.make_tile_group(
        type=pl.TileType(shape=[TILE_M, TILE_K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
        addrs=0x0000, mutex_ids=[4])
    b_right = pl.make_tile_group(
        type=pl.TileType(shape=[TILE_K, TILE_N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right),
        addrs=0x0000, mutex_ids=[5])
    acc = pl.make_tile_group(
        type=pl.TileType(shape=[TILE_M, TILE_N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
        addrs=0x0000, mutex_ids=[6])

    with pl.section_cube():
        for i in pl.range(core_id, M // TILE_M, num_cores):
            for j in pl.range(0, N // TILE_N, 1):
                cur_a = a_l1.next()
                cur_b = b_l1.next()
                pl.load_tile(cur_a, a, [i, 0])
                pl.load_tile(cur_b, b, [0, j])

                cur_a_left = a_left.current()
                cur_b_right = b_right.current()
                pl.move(cur_a_left, cur_a)
                pl.move(cur_b_right, cur_b)

                acc_tile = acc.current()
                pl.matmul(acc_tile, cur_a_left, cur_b_right)
                pl.store_tile(out, acc_tile, [i, j])


# programming_guide/.../Cube_matrix_computation.md (完整示例): the same kernel with acc.next() on the 1-slot Acc group
def cube_guide_matmul_kernel(
    a: pl.Tensor[[pl.DYNAMIC, TILE_K], pl.DT_FP16],
    b: pl.Tensor[[TILE_K, pl.DYNAMIC], pl.DT_FP16],
    out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
):
    num_cores = pl.get_block_num()
    core_id = pl.get_block_idx()
    M = a.shape[0]
    N = b.shape[1]

    a_l1 = pl.make_tile_group(
        type=pl.TileType(shape=[TILE_M, TILE_K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x00000, mutex_ids=[0, 1])
    b_l1 = pl.make_tile_group(
        type=pl.TileType(shape=[TILE_K, TILE_N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
        addrs=0x10000, mutex_ids=[2, 3])
    a_left = pl.make_tile_group(
        type=pl.TileType(shape=[TILE_M, TILE_K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
        addrs=0x0000, mutex_ids=[4])
    b_right = pl.make_tile_group(
        type=pl.TileType(shape=[TILE_K, TILE_N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right),
        addrs=0x0000, mutex_ids=[5])
    acc = pl.make_tile_group(
        type=pl.TileType(shape=[TILE_M, TILE_N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
        addrs=0x0000, mutex_ids=[6])

    with pl.section_cube():
        for i in pl.range(core_id, M // TILE_M, num_cores):
            for j in pl.range(0, N // TILE_N, 1):
                cur_a = a_l1.next()
                cur_b = b_l1.next()
                pl.load_tile(cur_a, a, [i, 0])
                pl.load_tile(cur_b, b, [0, j])

                cur_a_left = a_left.current()
                cur_b_right = b_right.current()
                pl.move(cur_a_left, cur_a)
                pl.move(cur_b_right, cur_b)

                acc_tile = acc.next()
                pl.matmul(acc_tile, cur_a_left, cur_b_right)
                pl.store_tile(out, acc_tile, [i, j])


@pytest.mark.parametrize("page", ["operator_development", "programming_guide"])
def test_cube_complete_matmul(backend, page):
    m_size, k_size, n_size = 384, 128, 256
    torch.manual_seed(42)
    a = torch.randn(m_size, k_size, dtype=torch.float16)
    b = torch.randn(k_size, n_size, dtype=torch.float16)
    out = torch.zeros(m_size, n_size, dtype=torch.float32)
    if page == "operator_development":
        block_dim = min(get_platform_info().cube_core_num, m_size // TILE_M)
        on(cube_matmul_kernel, backend, auto_mutex=True)[None, block_dim](a, b, out)
    else:
        on(cube_guide_matmul_kernel, backend, auto_mutex=True)[None, 32](a, b, out)
    golden = torch.matmul(a.float(), b.float())
    torch.testing.assert_close(out, golden, rtol=1e-2, atol=1e-2)


# Cube_matrix_computation.md (使用make_tile分配单个Tile + Cube侧同步), assembled: the page's make_tile allocation and
# its manually synchronised section_cube as one 128x128x128 kernel
def cube_make_tile_sync_kernel(a: pl.Tensor[[TILE_M, TILE_K], pl.DT_FP16], b: pl.Tensor[[TILE_K, TILE_N], pl.DT_FP16],
                               out: pl.Tensor[[TILE_M, TILE_N], pl.DT_FP32]):
    a_l1_type = pl.TileType(
        shape=[TILE_M, TILE_K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat)
    b_l1_type = pl.TileType(
        shape=[TILE_K, TILE_N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat)
    a_left_type = pl.TileType(
        shape=[TILE_M, TILE_K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left)
    b_right_type = pl.TileType(
        shape=[TILE_K, TILE_N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right)
    acc_type = pl.TileType(
        shape=[TILE_M, TILE_N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc)

    a_l1 = pl.make_tile(a_l1_type, addr=0x00000, size=32768)
    b_l1 = pl.make_tile(b_l1_type, addr=0x08000, size=32768)
    a_left = pl.make_tile(a_left_type, addr=0x0000, size=32768)
    b_right = pl.make_tile(b_right_type, addr=0x0000, size=32768)
    acc = pl.make_tile(acc_type, addr=0x0000, size=65536)

    with pl.section_cube():
        pl.load(a_l1, a, [0, 0])
        pl.load(b_l1, b, [0, 0])
        pl.system.sync_src(
            set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(
            set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)

        pl.move(a_left, a_l1)
        pl.move(b_right, b_l1)
        pl.system.sync_src(
            set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=1)
        pl.system.sync_dst(
            set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=1)

        pl.matmul(acc, a_left, b_right)
        pl.system.sync_src(
            set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=2)
        pl.system.sync_dst(
            set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=2)
        pl.store(out, acc, [0, 0])


def test_cube_make_tile_manual_sync(backend):
    torch.manual_seed(3)
    a = torch.randn(TILE_M, TILE_K, dtype=torch.float16)
    b = torch.randn(TILE_K, TILE_N, dtype=torch.float16)
    out = torch.zeros(TILE_M, TILE_N, dtype=torch.float32)
    on(cube_make_tile_sync_kernel, backend)(a, b, out)
    torch.testing.assert_close(out, torch.matmul(a.float(), b.float()), rtol=1e-2, atol=1e-2)


# Cube_matrix_computation.md (转置搬入, 左矩阵转置搬入示例), assembled: the page's kernel up to its "..." plus the
# Left/Right/Acc groups, moves, matmul and store of the page's other snippets; M/K/N live in a closure
def _left_transpose_page(M, K, N):
    def kernel_left_transpose(
        a: pl.Tensor[[K, M], pl.DT_FP16],
        b: pl.Tensor[[K, N], pl.DT_FP16],
        out: pl.Tensor[[M, N], pl.DT_FP32],
    ):
        a_l1 = pl.make_tile_group(
            type=pl.TileType(shape=[M, K], dtype=pl.DT_FP16,
                             target_memory=pl.MemorySpace.Mat, layout=pl.ZN),  # ZN
            addrs=0x00000, mutex_ids=[0])
        b_l1 = pl.make_tile_group(
            type=pl.TileType(shape=[K, N], dtype=pl.DT_FP16,
                             target_memory=pl.MemorySpace.Mat),
            addrs=0x10000, mutex_ids=[1])
        # (assembled) the page's "..."
        a_left = pl.make_tile_group(
            type=pl.TileType(shape=[M, K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
            addrs=0x0000, mutex_ids=[2])
        b_right = pl.make_tile_group(
            type=pl.TileType(shape=[K, N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right),
            addrs=0x0000, mutex_ids=[3])
        acc = pl.make_tile_group(
            type=pl.TileType(shape=[M, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
            addrs=0x0000, mutex_ids=[4])
        with pl.section_cube():
            cur_a = a_l1.current()
            pl.load(cur_a, a, [0, 0], order=[1, 0])
            cur_b = b_l1.current()
            pl.load(cur_b, b, [0, 0])
            # (assembled) L1 -> L0A/L0B, matmul, store as in the page's other snippets
            cur_a_left = a_left.current()
            cur_b_right = b_right.current()
            pl.move(cur_a_left, cur_a)
            pl.move(cur_b_right, cur_b)
            acc_tile = acc.current()
            pl.matmul(acc_tile, cur_a_left, cur_b_right)
            pl.store(out, acc_tile, [0, 0])

    return kernel_left_transpose


LT_M, LT_K, LT_N = 64, 128, 96
cube_left_transpose_kernel = _left_transpose_page(LT_M, LT_K, LT_N)


def test_cube_left_transposed_load(backend):
    torch.manual_seed(5)
    a_km = torch.randn(LT_K, LT_M, dtype=torch.float16)
    b = torch.randn(LT_K, LT_N, dtype=torch.float16)
    out = torch.zeros(LT_M, LT_N, dtype=torch.float32)
    on(cube_left_transpose_kernel, backend, auto_mutex=True)(a_km, b, out)
    torch.testing.assert_close(out, torch.matmul(a_km.float().T, b.float()), rtol=1e-2, atol=1e-2)


# Cube_matrix_computation.md (K维分块累加, same kernel in the programming_guide/ copy); TILE / K_SIZE live in a closure
def _k_accumulation_page(TILE, K_SIZE):
    def matmul_acc_kernel(
        a: pl.Tensor[[TILE, K_SIZE], pl.DT_FP16],
        b: pl.Tensor[[K_SIZE, TILE], pl.DT_FP16],
        c: pl.Tensor[[TILE, TILE], pl.DT_FP32],
    ):
        a_l1 = pl.make_tile_group(
            type=pl.TileType(shape=[TILE, TILE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
            addrs=0x00000, mutex_ids=[0, 1])
        b_l1 = pl.make_tile_group(
            type=pl.TileType(shape=[TILE, TILE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
            addrs=0x10000, mutex_ids=[2, 3])
        a_left = pl.make_tile_group(
            type=pl.TileType(shape=[TILE, TILE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
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
            for k in pl.range(0, K_SIZE, TILE):
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
                elif k < K_SIZE - TILE:
                    pl.matmul_acc(ac, ac, al, br, phase=pl.AccPhase.Partial)
                else:
                    pl.matmul_acc(ac, ac, al, br, phase=pl.AccPhase.Final)
            pl.store(c, ac, [0, 0], phase=pl.STPhase.Final)
            pl.system.set_mm_layout_transform(enabled=False)

    return matmul_acc_kernel


KACC_TILE, KACC_K = 128, 512
cube_k_accumulation_kernel = _k_accumulation_page(KACC_TILE, KACC_K)


def test_cube_k_block_accumulation(backend):
    torch.manual_seed(7)
    a = torch.randn(KACC_TILE, KACC_K, dtype=torch.float16)
    b = torch.randn(KACC_K, KACC_TILE, dtype=torch.float16)
    c = torch.zeros(KACC_TILE, KACC_TILE, dtype=torch.float32)
    on(cube_k_accumulation_kernel, backend, auto_mutex=True)(a, b, c)
    torch.testing.assert_close(c, torch.matmul(a.float(), b.float()), rtol=1e-2, atol=1e-2)


# =====================================================================================================
# operator_development/tile_based_python_programming/tail_block_handling.md and TilingData.md
# =====================================================================================================

# tail_block_handling.md (最小示例, same kernel in the programming_guide/ copy)
def tail_validshape_kernel(
    a: pl.Tensor[[64, 128], pl.DT_FP32],
    rows: pl.DT_INT64,
    cols: pl.DT_INT64,
    out: pl.Tensor[[64, 128], pl.DT_FP32],
):
    tile_type = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32,
                            target_memory=pl.MemorySpace.Vec,
                            valid_shape=[-1, -1])
    tile = pl.make_tile(tile_type, addr=0x0000, size=32768)
    with pl.section_vector():
        pl.load(tile, a, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.set_validshape(tile, [rows, cols])
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(out, tile, [0, 0])


@pytest.mark.parametrize("rows,cols", [(37, 72), (64, 128), (1, 1)])
def test_tail_block_set_validshape_minimal(backend, rows, cols):
    torch.manual_seed(0)
    a = torch.randn(64, 128, dtype=torch.float32)
    out = torch.zeros(64, 128, dtype=torch.float32)
    on(tail_validshape_kernel, backend)(a, rows, cols, out)
    expected = torch.zeros(64, 128, dtype=torch.float32)
    expected[:rows, :cols] = a[:rows, :cols]  # only the valid window is stored
    assert torch.equal(out, expected)


# tail_block_handling.md / TilingData.md (完整可执行示例, add_dynrank_kernel: pl.Ptr inputs, pl.make_tensor views,
# int[N] TilingData arrays) is tested verbatim in tests/pro/test_gm_views.py.


# TilingData.md (一个最小的纯标量示例, same kernel in the programming_guide/ copy)
@dataclass
class LoopTiling:
    n_iters: int


def tilingdata_copy_kernel(
    x: pl.Tensor[[1024, 256], pl.DT_FP16],
    z: pl.Tensor[[1024, 256], pl.DT_FP16],
    tiling: LoopTiling,
):
    tt = pl.TileType(shape=[1, 256], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    g  = pl.make_tile_group(type=tt, addrs=0x0, mutex_ids=[0, 1])  # noqa: E221
    with pl.section_vector():
        for i in pl.range(0, tiling.n_iters, 1):
            buf = g.next()
            pl.load_tile(buf, x, [i, 0])
            pl.store_tile(z, buf, [i, 0])


@pytest.mark.parametrize("n_iters", [4, 7])
def test_tilingdata_scalar_loop_bound(backend, n_iters):
    torch.manual_seed(0)
    x = torch.rand(1024, 256, dtype=torch.float16)
    z = torch.zeros(1024, 256, dtype=torch.float16)
    tiling = LoopTiling(n_iters=n_iters)
    on(tilingdata_copy_kernel, backend, auto_mutex=True)[None, 1](x, z, tiling)
    assert torch.equal(z[:n_iters], x[:n_iters])
    assert not z[n_iters:].any()


# tiling_key.md (速查), as on the page: the key field is a compile-time constant in the body
from pypto_pro.runtime.tilingkey import TilingKeyField  # noqa: E402


class MyKey:
    UseFastPath = TilingKeyField(bits=1, values=[0, 1])

    def is_valid(self, key):
        (use_fast_path,) = key
        return use_fast_path in (0, 1)


def tiling_key_quick_reference_kernel(x: pl.Ptr[pl.DT_FP16]):
    if UseFastPath == 1:       # 编译期常量  # noqa: F821
        pass
    for i in pl.range(0, 8):
        pass


@pytest.mark.parametrize("use_fast_path", [0, 1])
def test_tiling_key_quick_reference(backend, use_fast_path):
    x = torch.zeros(16, dtype=torch.float16)
    kernel = on(tiling_key_quick_reference_kernel, backend, auto_mutex=True, tiling_key=MyKey)
    kernel[None, 1, {"UseFastPath": use_fast_path}](x)
    assert not x.any()


# =====================================================================================================
# operator_development/kernel_function.md and compilation_and_execution/JIT_compilation.md
# =====================================================================================================

# JIT_compilation.md (基本用法, same kernel in the programming_guide/ copy); kernel_function.md assembles the same
# kernel from its signature, Tile分配 and 流水段 snippets (x/y/out names there)
def jit_page_add_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP16],
    b: pl.Tensor[[64, 64], pl.DT_FP16],
    out: pl.Tensor[[64, 64], pl.DT_FP16],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tile_a = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tile_b = pl.make_tile_group(type=tt, addrs=0x2000, mutex_ids=[1])
    tile_out = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[2])

    with pl.section_vector():
        cur_a = tile_a.current()
        cur_b = tile_b.current()
        cur_out = tile_out.current()
        pl.load(cur_a, a, [0, 0])
        pl.load(cur_b, b, [0, 0])
        pl.add(cur_out, cur_a, cur_b)
        pl.store(out, cur_out, [0, 0])


class _FakeStream:
    """Stands in for torch.npu.Stream(): launches accept and ignore any stream object (API.md C1)."""

    def synchronize(self):
        pass


def test_jit_compilation_page(backend):
    kernel = on(jit_page_add_kernel, backend, auto_mutex=True)
    a = torch.rand(64, 64, dtype=torch.float16)
    b = torch.rand(64, 64, dtype=torch.float16)
    out = torch.empty(64, 64, dtype=torch.float16)
    kernel[None, 1](a, b, out)
    assert torch.equal(out, a + b)
    out.zero_()
    kernel[None, 1](a, b, out)
    assert torch.equal(out, a + b)
    out.zero_()
    stream = _FakeStream()
    kernel[stream, 2](a, b, out)      # every core writes the same values (benign for the simulator)
    stream.synchronize()
    assert torch.equal(out, a + b)
    if backend == "cpu":
        root = os.environ.get("PYPTO_BUILD_DIR") or "build"
        cpps = glob.glob(os.path.join(root, "*jit_page_add_kernel__a5*", "**", "kernel.cpp"), recursive=True)
        assert cpps, f"no kernel.cpp under {root}"
        assert any(glob.glob(os.path.join(os.path.dirname(p), "call_kernel*.so")) for p in cpps)


def test_kernel_function_page(backend):
    kernel = on(jit_page_add_kernel, backend, arch="a5", auto_mutex=True, compile_timeout=200)
    a = torch.rand(64, 64, dtype=torch.float16)
    b = torch.rand(64, 64, dtype=torch.float16)
    out = torch.empty(64, 64, dtype=torch.float16)
    num_cores = 4
    kernel[None, num_cores](a, b, out)
    assert torch.equal(out, a + b)
    out.zero_()
    kernel(a, b, out)
    assert torch.equal(out, a + b)


def test_programming_guide_kernel_function_timeout_option_is_rejected():
    """programming_guide/.../kernel_function.md's JIT配置选项 example passes ``timeout=200``; pl.jit has no such
    option (``compile_timeout``, as the operator_development/ copy says), and unknown keywords are a TypeError
    (API.md A1) -- a page problem, not ours."""
    with pytest.raises(TypeError, match="timeout"):
        pl.jit(arch="a5", auto_mutex=True, timeout=200)


# =====================================================================================================
# debugging_and_optimization/functional_debugging.md
# =====================================================================================================

# functional_debugging.md (打印标量信息): no section; only core 0 prints, with its file:line (loc=True)
def debug_kernel(out: pl.Tensor[[16], pl.DT_INT32]):
    core_id = pl.get_block_idx()
    block_num = pl.get_block_num()
    if core_id == 0:
        pl.printf("core_id=%d, block_num=%d\n", core_id, block_num, loc=True)


def test_functional_debugging_printf_kernel(backend, capfd):
    on(debug_kernel, backend)[None, 4](torch.zeros(16, dtype=torch.int32))
    lines = [ln for ln in capfd.readouterr().out.splitlines() if "core_id=" in ln]
    assert lines and all(ln.endswith("core_id=0, block_num=4") for ln in lines)
    assert all("test_official_tutorials.py:" in ln for ln in lines)  # loc=True prefixes the kernel's file:line

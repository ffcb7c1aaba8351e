"""Official samples (insert.md, cross-core sync, DualModeSplitM/N tail tests, the matrix store of
Cube_matrix_computation.md) on every backend: interp is the oracle, cpu and sim must agree, and the
simulator must not report false races.  Each kernel body is jitted once per backend (``backend=``)."""
import functools

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import KernelRaceError
from pypto_pro.backends import cpu

FP16, FP32 = pl.DT_FP16, pl.DT_FP32
VEC, MAT, LEFT, RIGHT, ACC = (pl.MemorySpace.Vec, pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right,
                              pl.MemorySpace.Acc)
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
    """Kernel body ``fn`` jitted for ``backend`` (cached: one compile per backend)."""
    return pl.jit(fn, auto_mutex=True, backend=backend)


def _group(shape, dtype, space, addr, mutex, **kw):
    """A one-slot tile group (the official samples' style)."""
    return pl.make_tile_group(type=pl.TileType(shape=shape, dtype=dtype, target_memory=space, **kw), addrs=addr,
                              mutex_ids=[mutex])


# ================================================================ 1. insert of disjoint rows: no false race
def insert_matmul_kernel(x: pl.Tensor[[64, 64], FP32], y: pl.Tensor[[64, 64], FP32],
                         rhs: pl.Tensor[[64, 64], FP32], out: pl.Tensor[[64, 64], FP32], row_step: int):
    v1_mat_group = _group([64, 64], FP32, MAT, 0x10000, 0, layout=pl.NZ)
    with pl.section_vector():
        off = pl.get_subblock_idx() * row_step  # the sample's step is 32
        tile_x = _group([32, 64], FP32, VEC, 0x0000, 1).current()
        tile_y = _group([32, 64], FP32, VEC, 0x2000, 2).current()
        tile_sum = _group([32, 64], FP32, VEC, 0x4000, 3).current()
        tile_nz = _group([32, 64], FP32, VEC, 0x6000, 4, layout=pl.NZ).current()
        v1_mat = v1_mat_group.current()
        pl.load(tile_x, x, [off, 0])
        pl.load(tile_y, y, [off, 0])
        pl.add(tile_sum, tile_x, tile_y)
        pl.move(tile_nz, tile_sum)
        pl.insert(v1_mat, tile_nz, [off, 0])  # AIV0 rows 0-31, AIV1 rows 32-63: disjoint bytes of the NZ tile
        pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=2)
    with pl.section_cube():
        rhs_mat = _group([64, 64], FP32, MAT, 0x0000, 5, layout=pl.NZ).current()
        v1_left = _group([64, 64], FP32, LEFT, 0x0000, 6, layout=pl.NZ).current()
        rhs_right = _group([64, 64], FP32, RIGHT, 0x0000, 7, layout=pl.ZN).current()
        c_l0c = _group([64, 64], FP32, ACC, 0x0000, 8, layout=pl.NZ, fractal=1024).current()
        v1_mat = v1_mat_group.current()
        pl.load(rhs_mat, rhs, [0, 0])
        pl.move(rhs_right, rhs_mat)
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=2, sync_mode=pl.CrossCoreSyncMode.INTRA_BLOCK)
        pl.move(v1_left, v1_mat)
        pl.matmul(c_l0c, v1_left, rhs_right)
        pl.store(out, c_l0c, [0, 0])


def test_insert_disjoint_rows_of_nz_tile_is_race_free(backend):
    torch.manual_seed(0)
    x, y, r = torch.randn(64, 64), torch.randn(64, 64), torch.randn(64, 64)
    out = torch.zeros(64, 64)
    on(insert_matmul_kernel, backend)(x, y, r, out, 32)
    torch.testing.assert_close(out, (x + y) @ r, rtol=1e-3, atol=1e-2)


def test_insert_overlapping_rows_of_nz_tile_is_a_race():
    """With a step of 16 the two AIVs' inserts share rows 16-31: the exact-bytes check still reports it."""
    kernel = pl.jit(insert_matmul_kernel, auto_mutex=True, backend="sim", sim_options={"strict": False})
    x = torch.randn(64, 64)
    kernel(x, x, x, torch.zeros(64, 64), 16)
    races = [h for h in kernel.last_report.hazards if h.kind == "race"]
    assert races and all("pl.insert" in h.message and "v1_mat" in h.message for h in races)
    assert isinstance(races[0].error(kernel.name), KernelRaceError)


# ================================================================ 2. DualModeSplitM/N into a per-AIV half tile
TILE, K, N = 128, 128, 128


def _split_kernel(split_m: bool):
    """The official call_kernel_split_m / call_kernel_split_n: each AIV's Vec tile holds only its share."""
    mode = pl.AccToVecMode.DualModeSplitM if split_m else pl.AccToVecMode.DualModeSplitN
    vec_shape = [TILE // 2, N] if split_m else [TILE, N // 2]

    def split_kernel(a: pl.Tensor[[pl.DYNAMIC, K], FP16], b: pl.Tensor[[K, N], FP16],
                     out: pl.Tensor[[pl.DYNAMIC, N], FP32], m_total: pl.DT_INT32):
        a_l1 = _group([TILE, K], FP16, MAT, 0x00000, 0, valid_shape=[-1, -1], compact=1)
        b_l1 = _group([K, N], FP16, MAT, 0x20000, 1)
        a_l0a = _group([TILE, K], FP16, LEFT, 0x0000, 2, valid_shape=[-1, -1], compact=1)
        b_l0b = _group([K, N], FP16, RIGHT, 0x0000, 3)
        c_l0c = _group([TILE, N], FP32, ACC, 0x0000, 4, valid_shape=[-1, -1], compact=1)
        vec_grp = _group(vec_shape, FP32, VEC, 0x00000, 5, valid_shape=[-1, -1], compact=1)
        with pl.section_cube():
            cur_b = b_l1.current()
            br = b_l0b.current()
            pl.load(cur_b, b, [0, 0])
            pl.move(br, cur_b)
            for mi in pl.range(0, m_total, TILE):
                cur_a = a_l1.next()
                al = a_l0a.next()
                ac = c_l0c.next()
                vec = vec_grp.next()
                valid_m = pl.min(m_total - mi, TILE)
                pl.set_validshape(cur_a, [valid_m, K])
                pl.set_validshape(al, [valid_m, K])
                pl.load(cur_a, a, [mi, 0])
                pl.move(al, cur_a)
                pl.set_validshape(ac, [valid_m, N])
                pl.matmul(ac, al, br)
                pl.system.wait_cross_core(pipe=pl.PipeType.FIX, event_id=1)
                pl.move(vec, ac, acc_to_vec_mode=mode)
                pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=0)
        with pl.section_vector():
            pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=1)
            for mi in pl.range(0, m_total, TILE):
                valid_m = pl.min(m_total - mi, TILE)
                vec = vec_grp.next()
                sub_id = pl.get_subblock_idx()
                pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=0)
                if pl.constexpr(split_m):
                    v0 = (valid_m + 1) // 2
                    if sub_id == 0:
                        pl.set_validshape(vec, [v0, N])
                        pl.store(out, vec, [mi, 0])
                    else:
                        pl.set_validshape(vec, [valid_m - v0, N])
                        pl.store(out, vec, [mi + v0, 0])
                else:
                    pl.set_validshape(vec, [valid_m, N // 2])
                    pl.store(out, vec, [mi, sub_id * (N // 2)])
                pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=1)
    return split_kernel


split_m_kernel = _split_kernel(True)
split_n_kernel = _split_kernel(False)


@pytest.mark.parametrize("split_m", [True, False], ids=["split_m", "split_n"])
@pytest.mark.parametrize("m_total", [289, 288])
def test_dual_mode_split_into_half_size_vec_tile(backend, split_m, m_total):
    torch.manual_seed(0)
    a = torch.randn(m_total, K).half()
    b = torch.randn(K, N).half()
    out = torch.zeros(m_total, N)
    on(split_m_kernel if split_m else split_n_kernel, backend)(a, b, out, m_total)
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=2e-2, atol=2e-2)


# ================================================================ 3. a non-ND GM tensor layout is not silently ignored
def nz_gm_store_kernel(a: pl.Tensor[[64, 64], FP16], b: pl.Tensor[[64, 64], FP16],
                       nz_out: pl.Tensor[[64, 64], FP32, pl.NZ]):
    with pl.section_cube():
        ca = _group([64, 64], FP16, MAT, 0, 0).current()
        cb = _group([64, 64], FP16, MAT, 0x10000, 1).current()
        al = _group([64, 64], FP16, LEFT, 0, 2).current()
        br = _group([64, 64], FP16, RIGHT, 0, 3).current()
        ac = _group([64, 64], FP32, ACC, 0, 4).current()
        pl.load(ca, a, [0, 0])
        pl.load(cb, b, [0, 0])
        pl.move(al, ca)
        pl.move(br, cb)
        pl.matmul(ac, al, br)
        pl.store(nz_out, ac, [0, 0])


def test_nz_gm_tensor_is_not_implemented(backend):
    a, b, out = torch.randn(64, 64).half(), torch.randn(64, 64).half(), torch.zeros(64, 64)
    with pytest.raises(NotImplementedError, match=r"(?s)nz_gm_store_kernel.*'nz_out'.*pl\.NZ.*test_official_samples"):
        on(nz_gm_store_kernel, backend)(a, b, out)
    assert not out.any()

"""Data handed between the vector and cube cores of a block, on interp, cpu and sim:

* both AIVs ``insert`` their half of an NZ tile into one L1 (Mat) tile that the cube then multiplies:
  disjoint rows are race-free, overlapping rows are a race the simulator reports at the inserts;
* ``move`` Acc -> Vec with ``DualModeSplitM`` / ``DualModeSplitN`` gives each AIV its share of the
  result (AIV0 the first ceil(M/2) rows, or the first half of the columns) in a half-size Vec tile,
  with a tail block whose rows split unevenly;
* a GM tensor declared in a non-ND layout is refused, never silently treated as row-major.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelRaceError

from .on_every_backend import EVERY_BACKEND, backend, jit_on, run_on  # noqa: F401  (backend: fixture)

pytestmark = EVERY_BACKEND

F16, F32 = pl.DT_FP16, pl.DT_FP32
S = pl.MemorySpace


def one_slot(shape, dtype, space, addr, mutex, **kw):
    """A tile group of one slot with its own mutex id (auto_mutex orders the pipes around it)."""
    return pl.make_tile_group(type=pl.TileType(shape, dtype, space, **kw), addrs=addr, mutex_ids=[mutex])[0]


# ---------------------------------------------------------------------------------------------- insert into L1
def halves_then_matmul(p: pl.Tensor[[64, 32], F32], q: pl.Tensor[[64, 32], F32], w: pl.Tensor[[32, 32], F32],
                       r: pl.Tensor[[64, 32], F32], half: int):
    shared = one_slot([64, 32], F32, S.Mat, 0x8000, 10, layout=pl.NZ)
    with pl.section_vector():
        first_row = pl.get_subblock_idx() * half
        tp = one_slot([32, 32], F32, S.Vec, 0x0000, 11)
        tq = one_slot([32, 32], F32, S.Vec, 0x1000, 12)
        nz = one_slot([32, 32], F32, S.Vec, 0x2000, 13, layout=pl.NZ)
        pl.load(tp, p, [first_row, 0])
        pl.load(tq, q, [first_row, 0])
        pl.sub(tp, tp, tq)
        pl.move(nz, tp)  # ND -> NZ inside UB
        pl.insert(shared, nz, [first_row, 0])
        pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=4)
    with pl.section_cube():
        wm = one_slot([32, 32], F32, S.Mat, 0x0000, 14, layout=pl.NZ)
        left = one_slot([64, 32], F32, S.Left, 0x0000, 15, layout=pl.NZ)
        right = one_slot([32, 32], F32, S.Right, 0x0000, 16, layout=pl.ZN)
        acc = one_slot([64, 32], F32, S.Acc, 0x0000, 17, layout=pl.NZ, fractal=1024)
        pl.load(wm, w, [0, 0])
        pl.move(right, wm)
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=4, sync_mode=pl.CrossCoreSyncMode.INTRA_BLOCK)
        pl.move(left, shared)
        pl.matmul(acc, left, right)
        pl.store(r, acc, [0, 0])


def small_ints(shape, seed):
    return np.random.default_rng(seed).integers(-6, 7, shape).astype(np.float32)  # exact products and sums


def test_inserts_of_disjoint_rows_are_race_free(backend):
    p, q, w = small_ints((64, 32), 1), small_ints((64, 32), 2), small_ints((32, 32), 3)
    r = run_on(halves_then_matmul, backend, p, q, w, np.zeros((64, 32), np.float32), 32)[3]
    np.testing.assert_array_equal(r, (p - q) @ w)


def test_inserts_of_overlapping_rows_are_a_race():
    """A step of 16 rows: AIV1 inserts rows 16-47 while AIV0 inserts rows 0-31 of the same L1 tile."""
    k = pl.jit(halves_then_matmul, backend="sim", sim_options={"strict": False})
    x = small_ints((64, 32), 4)
    k(x, x, small_ints((32, 32), 5), np.zeros((64, 32), np.float32), 16)
    races = [h for h in k.last_report.hazards if h.kind == "race"]
    assert races and all("pl.insert" in h.message and "shared" in h.message for h in races)
    assert isinstance(races[0].error(k.name), KernelRaceError)


# ---------------------------------------------------------------------------------------------- Acc -> Vec splits
BM, KD, ND_ = 64, 64, 64


def _split_kernel(by_rows: bool):
    mode = pl.AccToVecMode.DualModeSplitM if by_rows else pl.AccToVecMode.DualModeSplitN
    share = [BM // 2, ND_] if by_rows else [BM, ND_ // 2]

    def split_result(a: pl.Tensor[[pl.DYNAMIC, KD], F16], b: pl.Tensor[[KD, ND_], F16],
                     c: pl.Tensor[[pl.DYNAMIC, ND_], F32], m: pl.DT_INT32):
        a1 = one_slot([BM, KD], F16, S.Mat, 0x00000, 0, valid_shape=[-1, -1], compact=1)
        b1 = one_slot([KD, ND_], F16, S.Mat, 0x10000, 1)
        a0 = one_slot([BM, KD], F16, S.Left, 0x0000, 2, valid_shape=[-1, -1], compact=1)
        b0 = one_slot([KD, ND_], F16, S.Right, 0x0000, 3)
        acc = one_slot([BM, ND_], F32, S.Acc, 0x0000, 4, valid_shape=[-1, -1], compact=1)
        part = one_slot(share, F32, S.Vec, 0x0000, 5, valid_shape=[-1, -1], compact=1)
        with pl.section_vector():
            pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=6)  # "my share tile is free"
            for row0 in pl.range(0, m, BM):
                rows = pl.min(m - row0, BM)
                me = pl.get_subblock_idx()
                pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=7)  # "your share has arrived"
                if pl.constexpr(by_rows):
                    top = (rows + 1) // 2  # AIV0 takes the larger half of an odd block
                    if me == 0:
                        pl.set_validshape(part, [top, ND_])
                        pl.store(c, part, [row0, 0])
                    else:
                        pl.set_validshape(part, [rows - top, ND_])
                        pl.store(c, part, [row0 + top, 0])
                else:
                    pl.set_validshape(part, [rows, ND_ // 2])
                    pl.store(c, part, [row0, me * (ND_ // 2)])
                pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=6)
        with pl.section_cube():
            pl.load(b1, b, [0, 0])
            pl.move(b0, b1)
            for row0 in pl.range(0, m, BM):
                rows = pl.min(m - row0, BM)
                pl.set_validshape(a1, [rows, KD])
                pl.set_validshape(a0, [rows, KD])
                pl.set_validshape(acc, [rows, ND_])
                pl.load(a1, a, [row0, 0])
                pl.move(a0, a1)
                pl.matmul(acc, a0, b0)
                pl.system.wait_cross_core(pipe=pl.PipeType.FIX, event_id=6)
                pl.move(part, acc, acc_to_vec_mode=mode)
                pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=7)

    split_result.__name__ = "split_rows" if by_rows else "split_cols"
    return split_result


SPLIT = {True: _split_kernel(True), False: _split_kernel(False)}


@pytest.mark.parametrize("by_rows", [True, False], ids=["split_m", "split_n"])
@pytest.mark.parametrize("m", [165, 128])  # 165: a tail block of 37 rows, split 19 / 18
def test_acc_to_vec_split_gives_each_aiv_its_share(backend, by_rows, m):
    rng = np.random.default_rng(m)
    a = rng.integers(-4, 5, (m, KD)).astype(np.float16)
    b = rng.integers(-4, 5, (KD, ND_)).astype(np.float16)
    c = run_on(SPLIT[by_rows], backend, a, b, np.full((m, ND_), np.nan, np.float32), m)[2]
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))  # small ints: exact


# ---------------------------------------------------------------------------------------------- non-ND GM tensors
def store_into_nz_tensor(x: pl.Tensor[[32, 32], F16], y: pl.Tensor[[32, 32], F32, pl.NZ]):
    with pl.section_cube():
        xm = one_slot([32, 32], F16, S.Mat, 0, 0)
        xl = one_slot([32, 32], F16, S.Left, 0, 1)
        xr = one_slot([32, 32], F16, S.Right, 0, 2)
        acc = one_slot([32, 32], F32, S.Acc, 0, 3)
        pl.load(xm, x, [0, 0])
        pl.move(xl, xm)
        pl.move(xr, xm)
        pl.matmul(acc, xl, xr)
        pl.store(y, acc, [0, 0])


def test_an_nz_gm_tensor_needs_an_nz_argument(backend):
    """An NZ GM tensor holds the logical values of an ``npu_format_cast(t, 29)`` tensor; a plain array is
    refused (the board would read its bytes as fractals) -- tests/pro/test_nz_gm_tensors.py has the rest."""
    import torch

    from pypto_pro.errors import KernelLaunchValueError
    from pypto_pro.npu.formats import npu_format_cast

    x, y = np.ones((32, 32), np.float16), np.zeros((32, 32), np.float32)
    with pytest.raises(KernelLaunchValueError, match=r"argument 'y': a ND tensor given to a parameter declared pl\.NZ"):
        jit_on(store_into_nz_tensor, backend)(x, y)
    assert not y.any()
    nz = npu_format_cast(torch.zeros(32, 32), 29)
    jit_on(store_into_nz_tensor, backend)(torch.from_numpy(x), nz)
    assert torch.equal(nz.cpu(), torch.full((32, 32), 32.0))


# ------------------------------------------------------------------- Acc -> Vec into a narrower Vec tile
NARROW = 24  # the Acc tile's valid columns; the Vec tile is [BM, ND_ // 2] wide


def single_into_narrow(a: pl.Tensor[[BM, KD], F16], b: pl.Tensor[[KD, ND_], F16], c: pl.Tensor[[BM, NARROW], F32]):
    a1 = one_slot([BM, KD], F16, S.Mat, 0x00000, 0)
    b1 = one_slot([KD, ND_], F16, S.Mat, 0x10000, 1)
    a0 = one_slot([BM, KD], F16, S.Left, 0x0000, 2)
    b0 = one_slot([KD, ND_], F16, S.Right, 0x0000, 3, valid_shape=[-1, -1])
    acc = one_slot([BM, ND_], F32, S.Acc, 0x0000, 4, valid_shape=[-1, -1])
    part = one_slot([BM, ND_ // 2], F32, S.Vec, 0x0000, 5, valid_shape=[-1, -1])
    with pl.section_vector():
        if pl.get_subblock_idx() == 0:
            pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=7)
            pl.set_validshape(part, [BM, NARROW])
            pl.store(c, part, [0, 0])
    with pl.section_cube():
        pl.load(a1, a, [0, 0])
        pl.load(b1, b, [0, 0])
        pl.move(a0, a1)
        pl.set_validshape(b0, [KD, ND_])
        pl.move(b0, b1)
        pl.set_validshape(b0, [KD, NARROW])
        pl.set_validshape(acc, [BM, NARROW])
        pl.matmul(acc, a0, b0)
        pl.move(part, acc, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)  # [BM, ND_] -> [BM, ND_ // 2]
        pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=7)


def test_acc_to_vec_into_a_narrower_vec_tile_that_holds_the_valid_window(backend):
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (BM, KD)).astype(np.float16)
    b = rng.integers(-4, 5, (KD, ND_)).astype(np.float16)
    c = run_on(single_into_narrow, backend, a, b, np.full((BM, NARROW), np.nan, np.float32))[2]
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b[:, :NARROW].astype(np.float32))

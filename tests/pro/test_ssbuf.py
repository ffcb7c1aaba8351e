"""SSBUF, the block's shared scalar buffer: ``pl.ssbuf_store`` / ``pl.ssbuf_load`` of a ``pl.struct`` between the
cores of a block (docs/language.md, "SSBUF"), and the ``UNICAST_BLOCK`` cross-core wait that pairs with it.
Every kernel runs on interp, cpu and sim against values computed here."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelDeadlockError, KernelRaceError, KernelRuntimeError, KernelUninitError

BACKENDS = ["interp", "cpu", "sim"]
pytestmark = pytest.mark.usefixtures("private_build_dir")
ROW = 48  # bytes of one Info struct: i64, i32, f32, bool (+7 padding), i64[3]


def relay(small: pl.Tensor[[2], pl.DT_INT32], out: pl.Tensor[[2, 8], pl.DT_INT64], fout: pl.Tensor[[2], pl.DT_FP32],
          seed: int, at: int):
    """Each AIV packs an Info struct from its own numbers and stores it at ``at + sub * ROW``; the cube waits
    for both, loads both into one struct and writes the fields out."""
    info = pl.struct("Info", a=0, w=small[0], f=0.0, flag=False, arr=[0, 0, 0])
    with pl.section_vector():
        sub = pl.get_subblock_idx()
        info.a = seed * 10 + sub
        info.w = small[sub] - 7
        info.f = 0.5 * (sub + 1) + seed
        info.flag = sub == 1
        for k in range(3):
            info.arr[k] = -(seed + k) * (sub + 2)
        pl.ssbuf_store(info, at + sub * ROW)
        pl.system.set_cross_core(pipe=pl.PipeType.S, event_id=3)
    with pl.section_cube():
        pl.system.wait_cross_core(pipe=pl.PipeType.S, event_id=3)
        for sub in range(2):
            pl.ssbuf_load(info, at + sub * ROW)
            out[sub, 0] = info.a
            out[sub, 1] = info.w
            out[sub, 2] = info.flag
            for k in range(3):
                out[sub, 3 + k] = info.arr[k]
            fout[sub] = info.f


def relay_model(small, seed):
    out = np.zeros((2, 8), np.int64)
    fout = np.zeros(2, np.float32)
    for sub in range(2):
        out[sub, :6] = [seed * 10 + sub, int(small[sub]) - 7, sub == 1] + [-(seed + k) * (sub + 2) for k in range(3)]
        fout[sub] = 0.5 * (sub + 1) + seed
    return out, fout


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed,at", [(3, 0), (-5, 100), (7, 160)])
def test_structs_travel_from_the_aivs_to_the_cube(backend, seed, at):
    small = np.array([2**31 - 1, -40], np.int32)
    out, fout = np.full((2, 8), -1, np.int64), np.zeros(2, np.float32)
    pl.jit(backend=backend)(relay)(small, out, fout, seed, at)
    want, fwant = relay_model(small, seed)
    want[:, 6:] = -1
    assert out.tolist() == want.tolist()
    assert fout.tolist() == fwant.tolist()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("at,words", [(2, "not a multiple of 4"), (212, r"bytes \[212, 260\) of the struct leave the "
                                                                       "256-byte SSBUF"), (-4, "leave the")])
def test_offsets_outside_the_buffer_are_runtime_errors(backend, at, words):
    small = np.zeros(2, np.int32)
    with pytest.raises(KernelRuntimeError, match=words):
        pl.jit(backend=backend)(relay)(small, np.zeros((2, 8), np.int64), np.zeros(2, np.float32), 1, at)


def unicast(out: pl.Tensor[[4], pl.DT_INT64], intra_wait: int):
    """Only AIV1 stores and signals (twice, INTRA_BLOCK sets); the cube's UNICAST_BLOCK waits take one set each."""
    msg = pl.struct("Msg", v=0)
    with pl.section_vector():
        if pl.get_subblock_idx() == 1:
            for k in range(2):
                if k == 1:
                    pl.system.wait_cross_core(pipe=pl.PipeType.S, event_id=5)
                msg.v = 40 + k
                pl.ssbuf_store(msg, 8 * k)
                pl.system.set_cross_core(pipe=pl.PipeType.S, event_id=4)
    with pl.section_cube():
        for k in range(2):
            if intra_wait:
                pl.system.wait_cross_core(pipe=pl.PipeType.S, event_id=4)
            else:
                pl.system.wait_cross_core(pipe=pl.PipeType.S, event_id=4, sync_mode=pl.CrossCoreSyncMode.UNICAST_BLOCK)
            pl.ssbuf_load(msg, 8 * k)
            out[k] = msg.v
            if k == 0:
                pl.system.set_cross_core(pipe=pl.PipeType.S, event_id=5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_unicast_wait_is_released_by_one_aiv(backend):
    out = np.zeros(4, np.int64)
    pl.jit(backend=backend)(unicast)(out, 0)
    assert out.tolist() == [40, 41, 0, 0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_intra_block_wait_needs_every_aiv(backend):
    with pytest.raises(KernelDeadlockError, match="wait_cross_core"):
        pl.jit(backend=backend)(unicast)(np.zeros(4, np.int64), 1)


def unsynced(out: pl.Tensor[[2], pl.DT_INT64], race: int):
    """race=1: both AIVs store at byte 0 with no order between them; race=0: the cube loads bytes nobody stored."""
    msg = pl.struct("Msg", v=0)
    with pl.section_vector():
        msg.v = pl.get_subblock_idx() + 1
        if race:
            pl.ssbuf_store(msg, 0)
        pl.system.set_cross_core(pipe=pl.PipeType.S, event_id=1)
    with pl.section_cube():
        pl.system.wait_cross_core(pipe=pl.PipeType.S, event_id=1)
        pl.ssbuf_load(msg, 0 if race else 64)
        out[0] = msg.v


def test_the_simulator_reports_racing_stores_and_unwritten_bytes():
    kernel = pl.jit(backend="sim")(unsynced)
    with pytest.raises(KernelRaceError, match="SSBUF of block 0"):
        kernel(np.zeros(2, np.int64), 1)
    with pytest.raises(KernelUninitError, match=r"SSBUF bytes \[64, 72\) of block 0"):
        kernel(np.zeros(2, np.int64), 0)

"""Data movement between GM and the on-chip memories, and the cube pipeline around it, on interp, cpu
and sim with our own kernels:

* ``load``/``store`` with ``order=`` (transposed operands into ZN tiles, a 4-D tensor tiled over two of
  its axes), ``load_tile``/``store_tile`` (offsets counted in tiles), subviews (sharing the parent's
  buffer, clamped by its valid window);
* ``move`` Mat -> Left/Right, with an offset (extract a block of a wider tile), Vec -> Mat with an offset
  (an insert), Acc -> Vec with a fixpipe scale;
* ``matmul``/``matmul_acc`` over M/N/K blocks with 2- and 4-slot tile groups, address-list groups,
  accumulation phases (and the simulator's verdict on the wrong uses of them).

Inputs of the cube tests are small integers, so every product and partial sum is exact in fp32 and the
results are compared exactly.  The strict simulator must report no hazard unless a test expects one.
"""
import numpy as np
import pytest

import pypto_pro.language as pl

from .on_every_backend import EVERY_BACKEND, backend, jit_on, run_on  # noqa: F401  (backend: fixture)

pytestmark = EVERY_BACKEND

F16, F32 = pl.DT_FP16, pl.DT_FP32
S = pl.MemorySpace
P = pl.PipeType


def ints(shape, seed, lo=-3, hi=4, dtype=np.float16):
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(dtype)


def exact_matmul(a, b):
    return a.astype(np.float32) @ b.astype(np.float32)


def ring(shape, dtype, space, addrs, mutex_ids, **kw):
    return pl.make_tile_group(type=pl.TileType(shape, dtype, space, **kw), addrs=addrs, mutex_ids=mutex_ids)


def handoff(set_pipe, wait_pipe, event):
    """Orders two pipes of one core (a flag set by ``set_pipe`` and waited for by ``wait_pipe``)."""
    pl.system.sync_src(set_pipe=set_pipe, wait_pipe=wait_pipe, event_id=event)
    pl.system.sync_dst(set_pipe=set_pipe, wait_pipe=wait_pipe, event_id=event)


# ---------------------------------------------------------------------------------------------- load order
TM, TK, TN = 32, 64, 48


def from_transposed(at: pl.Tensor[[TK, TM], F16], bt: pl.Tensor[[TN, TK], F16], c: pl.Tensor[[TM, TN], F32]):
    a1 = pl.make_tile(pl.TileType([TM, TK], F16, S.Mat, layout=pl.ZN), addr=0x0, size=TM * TK * 2)
    b1 = pl.make_tile(pl.TileType([TK, TN], F16, S.Mat, layout=pl.ZN), addr=0x8000, size=TK * TN * 2)
    a0 = pl.make_tile(pl.TileType([TM, TK], F16, S.Left), addr=0x0, size=TM * TK * 2)
    b0 = pl.make_tile(pl.TileType([TK, TN], F16, S.Right), addr=0x0, size=TK * TN * 2)
    acc = pl.make_tile(pl.TileType([TM, TN], F32, S.Acc), addr=0x0, size=TM * TN * 4)
    with pl.section_cube():
        pl.load(b1, bt, [0, 0], order=[1, 0])  # [N, K] in GM -> the [K, N] operand
        pl.load(a1, at, [0, 0], order=[1, 0])
        handoff(P.MTE2, P.MTE1, 3)
        pl.move(b0, b1)
        pl.move(a0, a1)
        handoff(P.MTE1, P.M, 3)
        pl.matmul(acc, a0, b0)
        handoff(P.M, P.FIX, 3)
        pl.store(c, acc, [0, 0])


def test_load_with_order_reads_transposed_operands(backend):
    a, b = ints((TM, TK), 1), ints((TK, TN), 2)
    c = run_on(from_transposed, backend, np.ascontiguousarray(a.T), np.ascontiguousarray(b.T),
               np.zeros((TM, TN), np.float32))[2]
    np.testing.assert_array_equal(c, exact_matmul(a, b))


DB, DS, DH, DD = 2, 64, 3, 32  # batch, sequence, heads, head dim


def per_head_blocks(q: pl.Tensor[[DB, DS, DH, DD], F16], back: pl.Tensor[[DB, DS, DH, DD], F16],
                    heads_first: pl.Tensor[[DB * DH * DS, DD], F16]):
    buf = ring([32, DD], F16, S.Vec, 0x400, [1, 2])
    with pl.section_vector():
        for bi in pl.range(DB):
            for h in pl.range(DH):
                for s in pl.range(DS // 32):
                    t = buf.next()
                    pl.load_tile(t, q, [bi, s, h, 0], order=[1, 3])  # tile axes: sequence x head dim
                    pl.store_tile(heads_first, t, [(bi * DH + h) * (DS // 32) + s, 0])
                    pl.store_tile(back, t, [bi, s, h, 0], order=[1, 3])


def test_load_tile_of_a_4d_tensor_over_two_axes(backend):
    q = (np.arange(DB * DS * DH * DD) % 1999 - 999).reshape(DB, DS, DH, DD).astype(np.float16)
    back = np.zeros_like(q)
    flat = np.zeros((DB * DH * DS, DD), np.float16)
    back, flat = run_on(per_head_blocks, backend, q, back, flat)[1:]
    np.testing.assert_array_equal(flat, q.transpose(0, 2, 1, 3).reshape(-1, DD))
    np.testing.assert_array_equal(back, q)


# ---------------------------------------------------------------------------------------------- load_tile / store_tile
def blockwise_negate(x: pl.Tensor[[160, 32], F32], y: pl.Tensor[[160, 32], F32]):
    xs = ring([32, 32], F32, S.Vec, 0x0000, [0, 1])
    ys = ring([32, 32], F32, S.Vec, 0x2000, [2, 3])
    with pl.section_vector():
        for blk in pl.range(5):
            tx, ty = xs.next(), ys.next()
            pl.load_tile(tx, x, [blk, 0])
            pl.neg(ty, tx)
            pl.store_tile(y, ty, [blk, 0])


def test_load_tile_offsets_count_whole_tiles(backend):
    x = ints((160, 32), 3, -100, 100, np.float32)
    y = run_on(blockwise_negate, backend, x, np.zeros_like(x))[1]
    np.testing.assert_array_equal(y, -x)


def one_block(x: pl.Tensor[[128, 192], F16], y: pl.Tensor[[128, 192], F16]):
    t = ring([32, 64], F16, S.Vec, 0, [0])[0]
    with pl.section_vector():
        pl.load_tile(t, x, [3, 1])
        pl.store_tile(y, t, [1, 2])


def test_tile_offsets_scale_by_the_tile_shape(backend):
    """[3, 1] of a [32, 64] tile is the element offset [96, 64]; [1, 2] is [32, 128]."""
    x = (np.arange(128 * 192) % 2003).reshape(128, 192).astype(np.float16)
    y = run_on(one_block, backend, x, np.zeros_like(x))[1]
    want = np.zeros_like(x)
    want[32:64, 128:192] = x[96:128, 64:128]
    np.testing.assert_array_equal(y, want)


def replicate(x: pl.Tensor[[32, 32], F16], y: pl.Tensor[[96, 32], F16]):
    t = ring([32, 32], F16, S.Vec, 0x200, [4])[0]
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        for blk in pl.range(3):
            pl.store_tile(y, t, [blk, 0])


def test_one_tile_stored_to_several_blocks(backend):
    x = ints((32, 32), 4, -50, 50)
    y = run_on(replicate, backend, x, np.zeros((96, 32), np.float16))[1]
    np.testing.assert_array_equal(y, np.vstack([x] * 3))


# ---------------------------------------------------------------------------------------------- subviews
def window_of(x: pl.Tensor[[16, 64], F16], y: pl.Tensor[[5, 40], F16], z: pl.Tensor[[5, 24], F16]):
    whole = ring([16, 64], F16, S.Vec, 0, [0], valid_shape=[-1, -1])
    with pl.section_vector():
        t = whole.next()
        pl.load(t, x, [0, 0])
        pl.store(y, t[3:8, 8:48], [0, 0])
        pl.set_validshape(t, [12, 32])
        pl.store(z, t[3:8, 8:48], [0, 0])  # the slice meets the valid window: columns 8..31 only


def test_subview_slices_share_the_tile_and_clamp_to_its_valid_window(backend):
    x = (np.arange(16 * 64) % 997).reshape(16, 64).astype(np.float16)
    y, z = run_on(window_of, backend, x, np.zeros((5, 40), np.float16), np.full((5, 24), -1, np.float16))[1:]
    np.testing.assert_array_equal(y, x[3:8, 8:48])
    np.testing.assert_array_equal(z, x[3:8, 8:32])


# ---------------------------------------------------------------------------------------------- cube moves
def plain_matmul(a: pl.Tensor[[48, 32], F16], b: pl.Tensor[[32, 64], F16], c: pl.Tensor[[48, 64], F32]):
    a1, b1 = ring([48, 32], F16, S.Mat, 0, [0])[0], ring([32, 64], F16, S.Mat, 0x4000, [1])[0]
    a0, b0 = ring([48, 32], F16, S.Left, 0, [2])[0], ring([32, 64], F16, S.Right, 0, [3])[0]
    acc = ring([48, 64], F32, S.Acc, 0, [4])[0]
    with pl.section_cube():
        pl.load(b1, b, [0, 0])
        pl.load(a1, a, [0, 0])
        pl.move(a0, a1)
        pl.move(b0, b1)
        pl.matmul(acc, a0, b0)
        pl.store(c, acc, [0, 0])


def test_mat_to_left_right_then_matmul(backend):
    a, b = ints((48, 32), 5), ints((32, 64), 6)
    c = run_on(plain_matmul, backend, a, b, np.zeros((48, 64), np.float32))[2]
    np.testing.assert_array_equal(c, exact_matmul(a, b))


def second_half_of_k(a: pl.Tensor[[32, 128], F16], b: pl.Tensor[[64, 32], F16], c: pl.Tensor[[32, 32], F32]):
    wide = ring([32, 128], F16, S.Mat, 0, [0])[0]
    b1 = ring([64, 32], F16, S.Mat, 0x8000, [1])[0]
    a0, b0 = ring([32, 64], F16, S.Left, 0, [2])[0], ring([64, 32], F16, S.Right, 0, [3])[0]
    acc = ring([32, 32], F32, S.Acc, 0, [4])[0]
    with pl.section_cube():
        pl.load(wide, a, [0, 0])
        pl.load(b1, b, [0, 0])
        pl.move(a0, wide, offset=[0, 64])  # columns 64..127 of the wide tile
        pl.move(b0, b1)
        pl.matmul(acc, a0, b0)
        pl.store(c, acc, [0, 0])


def test_move_with_an_offset_extracts_a_block(backend):
    a, b = ints((32, 128), 7), ints((64, 32), 8)
    c = run_on(second_half_of_k, backend, a, b, np.zeros((32, 32), np.float32))[2]
    np.testing.assert_array_equal(c, exact_matmul(a[:, 64:], b))


def scaled_to_ub(a: pl.Tensor[[32, 32], F16], b: pl.Tensor[[32, 32], F16], c: pl.Tensor[[32, 32], F32]):
    a1, b1 = ring([32, 32], F16, S.Mat, 0, [0])[0], ring([32, 32], F16, S.Mat, 0x4000, [1])[0]
    a0, b0 = ring([32, 32], F16, S.Left, 0, [2])[0], ring([32, 32], F16, S.Right, 0, [3])[0]
    acc = ring([32, 32], F32, S.Acc, 0, [4])[0]
    ub = ring([32, 32], F32, S.Vec, 0x1000, [5])
    with pl.section_cube():
        pl.load(a1, a, [0, 0])
        pl.load(b1, b, [0, 0])
        pl.move(a0, a1)
        pl.move(b0, b1)
        pl.matmul(acc, a0, b0)
        pl.move(ub[0], acc, scale=-0.5, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)
        pl.system.set_cross_core(pipe=P.FIX, event_id=5)
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=P.MTE3, event_id=5)
        if pl.get_subblock_idx() == 0:  # only AIV0 received the result
            pl.store(c, ub[0], [0, 0])


def test_acc_to_vec_move_applies_the_fixpipe_scale(backend):
    a, b = ints((32, 32), 9), ints((32, 32), 10)
    c = run_on(scaled_to_ub, backend, a, b, np.zeros((32, 32), np.float32))[2]
    np.testing.assert_array_equal(c, exact_matmul(a, b) * np.float32(-0.5))


def rows_into_l1(x: pl.Tensor[[32, 32], F32], w: pl.Tensor[[32, 32], F32], c: pl.Tensor[[32, 32], F32]):
    big = pl.make_tile(pl.TileType([32, 32], F32, S.Mat, layout=pl.NZ), addr=0x8000, size=4096)
    with pl.section_vector():
        top = pl.get_subblock_idx() * 16
        nd = pl.make_tile(pl.TileType([16, 32], F32, S.Vec), addr=0x0, size=2048)
        nz = pl.make_tile(pl.TileType([16, 32], F32, S.Vec, layout=pl.NZ), addr=0x1000, size=2048)
        pl.load(nd, x, [top, 0])
        handoff(P.MTE2, P.V, 1)
        pl.move(nz, nd)
        handoff(P.V, P.MTE3, 1)
        pl.move(big, nz, offset=[top, 0])  # smaller source, offset: an insert into L1
        pl.system.set_cross_core(pipe=P.MTE3, event_id=3)
    with pl.section_cube():
        wm = pl.make_tile(pl.TileType([32, 32], F32, S.Mat, layout=pl.NZ), addr=0x0, size=4096)
        left = pl.make_tile(pl.TileType([32, 32], F32, S.Left, layout=pl.NZ), addr=0x0, size=4096)
        right = pl.make_tile(pl.TileType([32, 32], F32, S.Right, layout=pl.ZN), addr=0x0, size=4096)
        acc = pl.make_tile(pl.TileType([32, 32], F32, S.Acc, layout=pl.NZ, fractal=1024), addr=0x0, size=4096)
        pl.load(wm, w, [0, 0])
        handoff(P.MTE2, P.MTE1, 2)
        pl.move(right, wm)
        pl.system.wait_cross_core(pipe=P.MTE1, event_id=3)
        pl.move(left, big)
        handoff(P.MTE1, P.M, 2)
        pl.matmul(acc, left, right)
        handoff(P.M, P.FIX, 2)
        pl.store(c, acc, [0, 0])


def test_move_of_a_smaller_tile_with_an_offset_inserts_it(backend):
    x, w = ints((32, 32), 11, dtype=np.float32), ints((32, 32), 12, dtype=np.float32)
    c = run_on(rows_into_l1, backend, x, w, np.zeros((32, 32), np.float32))[2]
    np.testing.assert_array_equal(c, x @ w)


# ---------------------------------------------------------------------------------------------- blocked matmuls
BT = 64


def _blocked(slots: int, m: int, k: int, n: int):
    ids = list(range(slots))
    more = [slots + i for i in ids]

    def blocked(a: pl.Tensor[[m, k], F16], b: pl.Tensor[[k, n], F16], c: pl.Tensor[[m, n], F32]):
        a1s = ring([BT, k], F16, S.Mat, 0x00000, ids)
        b1s = ring([k, BT], F16, S.Mat, 0x20000, more)
        a0 = ring([BT, k], F16, S.Left, 0, [2 * slots])
        b0 = ring([k, BT], F16, S.Right, 0, [2 * slots + 1])
        acc = ring([BT, BT], F32, S.Acc, 0, [2 * slots + 2])
        with pl.section_cube():
            for j in pl.range(0, n, BT):
                for i in pl.range(0, m, BT):
                    ta, tb = a1s.next(), b1s.next()
                    pl.load(ta, a, [i, 0])
                    pl.load(tb, b, [0, j])
                    pl.move(a0.current(), ta)
                    pl.move(b0.current(), tb)
                    pl.matmul(acc.current(), a0.current(), b0.current())
                    pl.store(c, acc.current(), [i, j])

    blocked.__name__ = f"blocked_{slots}_slots"
    return blocked


BLOCKED = {2: _blocked(2, 192, 64, 128), 4: _blocked(4, 128, 128, 256)}


@pytest.mark.parametrize("slots", sorted(BLOCKED))
def test_blocked_matmul_with_multi_slot_l1_groups(backend, slots):
    m, n = (192, 128) if slots == 2 else (128, 256)
    k = 64 if slots == 2 else 128
    a, b = ints((m, k), 13 + slots), ints((k, n), 14 + slots)
    c = run_on(BLOCKED[slots], backend, a, b, np.zeros((m, n), np.float32))[2]
    np.testing.assert_array_equal(c, exact_matmul(a, b))


def _k_chain(case: str, kt: int):
    """One [BT, BT] result accumulated over K blocks with phases.  ``case`` "right" is the documented
    chain; the others are the wrong uses: no Final matmul, a store without a phase, a Partial store
    inside the loop."""
    def k_chain(a: pl.Tensor[[BT, kt], F16], b: pl.Tensor[[kt, BT], F16], c: pl.Tensor[[BT, BT], F32]):
        a1s = ring([BT, BT], F16, S.Mat, 0x00000, [0, 1])
        b1s = ring([BT, BT], F16, S.Mat, 0x10000, [2, 3])
        a0s = ring([BT, BT], F16, S.Left, 0, [4, 5], layout=pl.NZ)
        b0s = ring([BT, BT], F16, S.Right, 0, [6, 7])
        acc = ring([BT, BT], F32, S.Acc, 0, [8], fractal=1024)[0]
        with pl.section_cube():
            pl.system.set_mm_layout_transform(enabled=True)
            for k0 in pl.range(0, kt, BT):
                ta, tb, la, rb = a1s.next(), b1s.next(), a0s.next(), b0s.next()
                pl.load(ta, a, [0, k0])
                pl.load(tb, b, [k0, 0])
                pl.move(la, ta)
                pl.move(rb, tb)
                last = k0 == kt - BT
                if pl.constexpr(case in ("right", "store_without_phase")):
                    if k0 == 0:
                        pl.matmul(acc, la, rb, phase=pl.AccPhase.Partial)
                    elif last:
                        pl.matmul_acc(acc, acc, la, rb, phase=pl.AccPhase.Final)
                    else:
                        pl.matmul_acc(acc, acc, la, rb, phase=pl.AccPhase.Partial)
                if pl.constexpr(case == "no_final_matmul"):
                    pl.matmul(acc, la, rb, phase=pl.AccPhase.Partial)
                if pl.constexpr(case == "partial_store_in_loop"):
                    pl.matmul(acc, la, rb, phase=pl.AccPhase.Final)
                    pl.store(c, acc, [0, 0], phase=pl.AccPhase.Partial)
            if pl.constexpr(case in ("right", "no_final_matmul")):
                pl.store(c, acc, [0, 0], phase=pl.STPhase.Final)
            if pl.constexpr(case == "store_without_phase"):
                pl.store(c, acc, [0, 0])
            pl.system.set_mm_layout_transform(enabled=False)

    k_chain.__name__ = "k_chain_" + case
    return k_chain


@pytest.mark.parametrize("blocks", [2, 4])
def test_matmul_acc_chain_over_k_blocks_with_phases(backend, blocks):
    kt = blocks * BT
    a, b = ints((BT, kt), 17 + blocks), ints((kt, BT), 18 + blocks)
    c = run_on(_K_RIGHT[blocks], backend, a, b, np.zeros((BT, BT), np.float32))[2]
    np.testing.assert_array_equal(c, exact_matmul(a, b))


_K_RIGHT = {n: _k_chain("right", n * BT) for n in (2, 4)}
PHASE_MISUSE = {"no_final_matmul": (1, pl.KernelDeadlockError), "store_without_phase": (3, pl.KernelRaceError),
                "partial_store_in_loop": (2, pl.KernelDeadlockError)}
_K_WRONG = {case: _k_chain(case, n * BT) for case, (n, _) in PHASE_MISUSE.items()}


@pytest.mark.parametrize("case", sorted(PHASE_MISUSE))
def test_wrong_phase_use_hangs_or_races_on_the_simulator(case):
    blocks, error = PHASE_MISUSE[case]
    a, b = np.ones((BT, blocks * BT), np.float16), np.ones((blocks * BT, BT), np.float16)
    with pytest.raises(error):
        jit_on(_K_WRONG[case], "sim")(a, b, np.zeros((BT, BT), np.float32))


def two_far_slots(x: pl.Tensor[[160, 32], F32], y: pl.Tensor[[160, 32], F32]):
    slots = ring([32, 32], F32, S.Vec, [0x0, 0x20000], [0, 1])  # explicit, non-adjacent addresses
    with pl.section_vector():
        for r in pl.range(0, 160, 32):
            t = slots.next()
            pl.load(t, x, [r, 0])
            pl.store(y, t, [r, 0])


def test_tile_group_from_an_address_list(backend):
    x = ints((160, 32), 21, -99, 99, np.float32)
    y = run_on(two_far_slots, backend, x, np.zeros_like(x))[1]
    np.testing.assert_array_equal(y, x)

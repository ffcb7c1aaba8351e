"""Control flow, sections, synchronisation and the per-core system values, on interp, cpu and sim with
our own kernels:

* ``pl.range`` over runtime bounds (dynamic tensor dims, a runtime negative step);
* ``section_vector`` / ``section_cube``; ``make_tile`` with hand-written ``sync_src``/``sync_dst`` flags;
* ``bar_all``, ``bar_m``, ``bar_v``; ``mutex_lock``/``mutex_unlock`` with ``auto_mutex=False``;
* ``set_cross_core``/``wait_cross_core`` (explicit INTRA_BLOCK and the default mode);
* ``sync_all`` HARD and SOFT over 1 and 8 cores, ``used_cores`` (as the last workspace item and as the
  keyword, where a core beyond them entering the barrier is an error);
* the documented argument rules of flags, mutexes and cross-core events (compile-time errors);
* ``get_block_idx``/``get_block_num``/``get_subblock_idx``/``get_subblock_num``, ``fill_index``, ``dcci``.

The strict simulator must report no race, deadlock or uninitialised read in any of them.
"""
import numpy as np
import pytest

import pypto_pro.language as pl

from .on_every_backend import EVERY_BACKEND, backend, jit_on, run_on  # noqa: F401  (backend: fixture)

pytestmark = EVERY_BACKEND

F16, F32, I32 = pl.DT_FP16, pl.DT_FP32, pl.DT_INT32
S = pl.MemorySpace
P = pl.PipeType


def ints(shape, seed, lo=-20, hi=21, dtype=np.float32):
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(dtype)


def ring(shape, dtype, space, addrs, mutex_ids, **kw):
    return pl.make_tile_group(type=pl.TileType(shape, dtype, space, **kw), addrs=addrs, mutex_ids=mutex_ids)


def handoff(set_pipe, wait_pipe, event):
    pl.system.sync_src(set_pipe=set_pipe, wait_pipe=wait_pipe, event_id=event)
    pl.system.sync_dst(set_pipe=set_pipe, wait_pipe=wait_pipe, event_id=event)


# ---------------------------------------------------------------------------------------------- pl.range
def blockwise_max(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F16], y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F16],
                  z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F16]):
    rows, cols = x.shape[0], x.shape[1]
    xs = ring([32, 64], F16, S.Vec, 0x0000, [0, 1])
    ys = ring([32, 64], F16, S.Vec, 0x2000, [2, 3])
    zs = ring([32, 64], F16, S.Vec, 0x4000, [4, 5])
    with pl.section_vector():
        for bc in pl.range(cols // 64):
            for br in pl.range(0, rows // 32, 1):
                tx, ty, tz = xs.next(), ys.next(), zs.next()
                pl.load_tile(tx, x, [br, bc])
                pl.load_tile(ty, y, [br, bc])
                pl.maximum(tz, tx, ty)
                pl.store_tile(z, tz, [br, bc])


@pytest.mark.parametrize("shape", [(32, 64), (96, 192)])
def test_loops_bounded_by_dynamic_dims(backend, shape):
    x, y = ints(shape, 1, dtype=np.float16), ints(shape, 2, dtype=np.float16)
    z = run_on(blockwise_max, backend, x, y, np.zeros(shape, np.float16))[2]
    np.testing.assert_array_equal(z, np.maximum(x, y))


def reverse_blocks(x: pl.Tensor[[160, 32], F32], y: pl.Tensor[[160, 32], F32], step: int):
    slots = ring([32, 32], F32, S.Vec, 0, [0, 1])
    with pl.section_vector():
        for blk in pl.range(4, -1, step):  # a negative step stops at or below the bound
            t = slots.next()
            pl.load(t, x, [blk * 32, 0])
            pl.store(y, t, [(4 - blk) * 32, 0])


@pytest.mark.parametrize("step", [-1, -3])
def test_range_with_a_runtime_negative_step(backend, step):
    x = ints((160, 32), 3)
    y = run_on(reverse_blocks, backend, x, np.zeros_like(x), step)[1]
    want = np.zeros_like(x)
    for blk in range(4, -1, step):
        want[(4 - blk) * 32:(5 - blk) * 32] = x[blk * 32:(blk + 1) * 32]
    np.testing.assert_array_equal(y, want)


# ---------------------------------------------------------------------------------------------- sections, make_tile
def vector_only(x: pl.Tensor[[16, 64], F32], y: pl.Tensor[[16, 64], F32]):
    t = ring([16, 64], F32, S.Vec, 0, [0])[0]
    u = ring([16, 64], F32, S.Vec, 0x1000, [1])[0]
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.abs(u, t)
        pl.store(y, u, [0, 0])


def test_vector_section(backend):
    x = ints((16, 64), 4)
    np.testing.assert_array_equal(run_on(vector_only, backend, x, np.zeros_like(x))[1], np.abs(x))


def cube_only(a: pl.Tensor[[32, 16], F16], b: pl.Tensor[[16, 48], F16], c: pl.Tensor[[32, 48], F32]):
    a1, b1 = ring([32, 16], F16, S.Mat, 0, [0])[0], ring([16, 48], F16, S.Mat, 0x2000, [1])[0]
    a0, b0 = ring([32, 16], F16, S.Left, 0, [2])[0], ring([16, 48], F16, S.Right, 0, [3])[0]
    acc = ring([32, 48], F32, S.Acc, 0, [4])[0]
    with pl.section_cube():
        pl.load(a1, a, [0, 0])
        pl.load(b1, b, [0, 0])
        pl.move(a0, a1)
        pl.move(b0, b1)
        pl.matmul(acc, a0, b0)
        pl.store(c, acc, [0, 0])


def test_cube_section(backend):
    a, b = ints((32, 16), 5, -3, 4, np.float16), ints((16, 48), 6, -3, 4, np.float16)
    c = run_on(cube_only, backend, a, b, np.zeros((32, 48), np.float32))[2]
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


def flags_by_hand(x: pl.Tensor[[32, 64], F16], y: pl.Tensor[[32, 64], F16], z: pl.Tensor[[32, 64], F16]):
    kind = pl.TileType([32, 64], F16, S.Vec)
    tx = pl.make_tile(kind, addr=0x1000, size=4096)
    ty = pl.make_tile(kind, addr=0x2000, size=4096)
    tz = pl.make_tile(kind, addr=0x3000, size=4096)
    with pl.section_vector():
        pl.load(tx, x, [0, 0])
        pl.load(ty, y, [0, 0])
        handoff(P.MTE2, P.V, 4)
        pl.sub(tz, tx, ty)
        handoff(P.V, P.MTE3, 5)
        pl.store(z, tz, [0, 0])


def test_plain_tiles_ordered_by_hand_written_flags(backend):
    x, y = ints((32, 64), 7, dtype=np.float16), ints((32, 64), 8, dtype=np.float16)
    z = run_on(flags_by_hand, backend, x, y, np.zeros_like(x))[2]
    np.testing.assert_array_equal(z, x - y)


# ---------------------------------------------------------------------------------------------- barriers
def double_each_block(x: pl.Tensor[[96, 32], F16], y: pl.Tensor[[96, 32], F16]):
    tx = pl.make_tile(pl.TileType([32, 32], F16, S.Vec), addr=0x0, size=2048)
    ty = pl.make_tile(pl.TileType([32, 32], F16, S.Vec), addr=0x800, size=2048)
    with pl.section_vector():
        for r in pl.range(0, 96, 32):
            pl.system.bar_all()  # the previous store has finished before tx/ty are reused
            pl.load(tx, x, [r, 0])
            handoff(P.MTE2, P.V, 0)
            pl.add(ty, tx, tx)
            handoff(P.V, P.MTE3, 1)
            pl.store(y, ty, [r, 0])


def test_bar_all_between_loop_iterations(backend):
    x = ints((96, 32), 9, dtype=np.float16)
    np.testing.assert_array_equal(run_on(double_each_block, backend, x, np.zeros_like(x))[1], x + x)


def matmul_twice(a: pl.Tensor[[32, 32], F16], b: pl.Tensor[[32, 32], F16], c: pl.Tensor[[32, 32], F32]):
    a1, b1 = ring([32, 32], F16, S.Mat, 0, [0])[0], ring([32, 32], F16, S.Mat, 0x1000, [1])[0]
    a0, b0 = ring([32, 32], F16, S.Left, 0, [2])[0], ring([32, 32], F16, S.Right, 0, [3])[0]
    acc = ring([32, 32], F32, S.Acc, 0, [4])[0]
    with pl.section_cube():
        pl.load(a1, a, [0, 0])
        pl.load(b1, b, [0, 0])
        pl.move(a0, a1)
        pl.move(b0, b1)
        pl.matmul(acc, a0, b0)
        pl.system.bar_m()
        pl.matmul(acc, a0, b0)  # overwrites: matmul does not accumulate
        pl.store(c, acc, [0, 0])


def test_bar_m_between_two_matmuls(backend):
    a, b = ints((32, 32), 10, -3, 4, np.float16), ints((32, 32), 11, -3, 4, np.float16)
    c = run_on(matmul_twice, backend, a, b, np.zeros((32, 32), np.float32))[2]
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


def choose_by_sign(a: pl.Tensor[[16, 64], F32], b: pl.Tensor[[16, 64], F32], key: pl.Tensor[[16, 64], F16],
                   out: pl.Tensor[[16, 64], F32]):
    v32 = pl.TileType([16, 64], F32, S.Vec)
    ta, tb = pl.make_tile(v32, addr=0x0000, size=4096), pl.make_tile(v32, addr=0x1000, size=4096)
    to, scratch = pl.make_tile(v32, addr=0x2000, size=4096), pl.make_tile(v32, addr=0x3000, size=4096)
    tk = pl.make_tile(pl.TileType([16, 64], F16, S.Vec), addr=0x4000, size=2048)
    bits = pl.make_tile(pl.TileType([16, 64], pl.DT_UINT8, S.Vec), addr=0x5000, size=1024)
    with pl.section_vector():
        pl.load(ta, a, [0, 0])
        pl.load(tb, b, [0, 0])
        pl.load(tk, key, [0, 0])
        handoff(P.MTE2, P.V, 0)
        pl.gt(bits, tk, 0.0)
        pl.system.bar_v()  # the mask is complete before select reads it
        pl.select(to, bits, ta, tb, scratch)
        handoff(P.V, P.MTE3, 1)
        pl.store(out, to, [0, 0])


def test_bar_v_between_compare_and_select(backend):
    a, b = ints((16, 64), 12), ints((16, 64), 13)
    key = ints((16, 64), 14, -1, 2, np.float16)  # -1, 0, 1
    out = run_on(choose_by_sign, backend, a, b, key, np.zeros_like(a))[3]
    np.testing.assert_array_equal(out, np.where(key > 0, a, b))


# ---------------------------------------------------------------------------------------------- mutexes
def locked_pipes(a: pl.Tensor[[32, 32], F32], b: pl.Tensor[[32, 32], F32], c: pl.Tensor[[32, 32], F32]):
    ta = ring([32, 32], F32, S.Vec, 0x0000, [0])[0]
    tb = ring([32, 32], F32, S.Vec, 0x1000, [1])[0]
    tc = ring([32, 32], F32, S.Vec, 0x2000, [2])[0]
    with pl.section_vector():
        pl.system.mutex_lock(pipe=P.MTE2, mutex_id=1)
        pl.load(tb, b, [0, 0])
        pl.system.mutex_unlock(pipe=P.MTE2, mutex_id=1)
        pl.system.mutex_lock(pipe=P.MTE2, mutex_id=0)
        pl.load(ta, a, [0, 0])
        pl.system.mutex_unlock(pipe=P.MTE2, mutex_id=0)
        handoff(P.MTE2, P.V, 0)
        pl.mul(tc, ta, tb)
        handoff(P.V, P.MTE3, 1)
        pl.system.mutex_lock(pipe=P.MTE3, mutex_id=2)
        pl.store(c, tc, [0, 0])
        pl.system.mutex_unlock(pipe=P.MTE3, mutex_id=2)


def nested_locks(x: pl.Tensor[[32, 32], F32], y: pl.Tensor[[32, 32], F32]):
    tx = pl.make_tile(pl.TileType([32, 32], F32, S.Vec), addr=0x0, size=4096)
    ty = pl.make_tile(pl.TileType([32, 32], F32, S.Vec), addr=0x1000, size=4096)
    with pl.section_vector():
        pl.system.mutex_lock(pipe=P.MTE2, mutex_id=3)
        pl.load(tx, x, [0, 0])
        pl.system.mutex_unlock(pipe=P.MTE2, mutex_id=3)
        pl.system.mutex_lock(pipe=P.V, mutex_id=3)  # waits for the load's unlock
        pl.system.mutex_lock(pipe=P.V, mutex_id=4)
        pl.sub(ty, tx, tx)
        pl.add(ty, ty, tx)
        pl.system.mutex_unlock(pipe=P.V, mutex_id=4)
        pl.system.mutex_unlock(pipe=P.V, mutex_id=3)
        pl.system.mutex_lock(pipe=P.MTE3, mutex_id=4)
        pl.store(y, ty, [0, 0])
        pl.system.mutex_unlock(pipe=P.MTE3, mutex_id=4)


def test_hand_written_mutexes_without_auto_mutex(backend):
    a, b = ints((32, 32), 15), ints((32, 32), 16)
    c = run_on(locked_pipes, backend, a, b, np.zeros_like(a), auto_mutex=False)[2]
    np.testing.assert_array_equal(c, a * b)
    y = run_on(nested_locks, backend, a, np.zeros_like(a), auto_mutex=False)[1]
    np.testing.assert_array_equal(y, a)


# ---------------------------------------------------------------------------------------------- cross-core events
def _sum_then_matmul(explicit_mode: bool):
    def sum_then_matmul(x: pl.Tensor[[32, 32], F32], y: pl.Tensor[[32, 32], F32], w: pl.Tensor[[32, 32], F32],
                        c: pl.Tensor[[32, 32], F32]):
        l1 = pl.make_tile(pl.TileType([32, 32], F32, S.Mat, layout=pl.NZ), addr=0x8000, size=4096)
        with pl.section_vector():
            top = pl.get_subblock_idx() * 16
            tx = pl.make_tile(pl.TileType([16, 32], F32, S.Vec), addr=0x0000, size=2048)
            ty = pl.make_tile(pl.TileType([16, 32], F32, S.Vec), addr=0x0800, size=2048)
            nz = pl.make_tile(pl.TileType([16, 32], F32, S.Vec, layout=pl.NZ), addr=0x1000, size=2048)
            pl.load(tx, x, [top, 0])
            pl.load(ty, y, [top, 0])
            handoff(P.MTE2, P.V, 0)
            pl.add(tx, tx, ty)
            pl.move(nz, tx)
            handoff(P.V, P.MTE3, 1)
            pl.insert(l1, nz, [top, 0])
            if pl.constexpr(explicit_mode):
                pl.system.set_cross_core(pipe=P.MTE3, event_id=6, sync_mode=pl.CrossCoreSyncMode.INTRA_BLOCK)
            else:
                pl.system.set_cross_core(pipe=P.MTE3, event_id=6)
        with pl.section_cube():
            wm = pl.make_tile(pl.TileType([32, 32], F32, S.Mat, layout=pl.NZ), addr=0x0, size=4096)
            left = pl.make_tile(pl.TileType([32, 32], F32, S.Left, layout=pl.NZ), addr=0x0, size=4096)
            right = pl.make_tile(pl.TileType([32, 32], F32, S.Right, layout=pl.ZN), addr=0x0, size=4096)
            acc = pl.make_tile(pl.TileType([32, 32], F32, S.Acc, layout=pl.NZ, fractal=1024), addr=0x0, size=4096)
            pl.load(wm, w, [0, 0])
            handoff(P.MTE2, P.MTE1, 0)
            pl.move(right, wm)
            pl.system.wait_cross_core(pipe=P.MTE1, event_id=6, sync_mode=pl.CrossCoreSyncMode.INTRA_BLOCK)
            pl.move(left, l1)
            handoff(P.MTE1, P.M, 0)
            pl.matmul(acc, left, right)
            handoff(P.M, P.FIX, 0)
            pl.store(c, acc, [0, 0])

    sum_then_matmul.__name__ = "sum_then_matmul_" + ("intra_block" if explicit_mode else "default_mode")
    return sum_then_matmul


CROSS = {"intra_block": _sum_then_matmul(True), "default_mode": _sum_then_matmul(False)}


@pytest.mark.parametrize("mode", sorted(CROSS))
def test_cube_waits_for_both_vector_cores(backend, mode):
    x, y, w = ints((32, 32), 17, -4, 5), ints((32, 32), 18, -4, 5), ints((32, 32), 19, -4, 5)
    c = run_on(CROSS[mode], backend, x, y, w, np.zeros((32, 32), np.float32))[3]
    np.testing.assert_array_equal(c, (x + y) @ w)


# ---------------------------------------------------------------------------------------------- sync_all
def rows_tripled(x: pl.Tensor[[512, 32], F32], y: pl.Tensor[[512, 32], F32]):
    ins = ring([1, 32], F32, S.Vec, [0x000, 0x400], [0, 1])
    outs = ring([1, 32], F32, S.Vec, [0x800, 0xC00], [2, 3])
    with pl.section_vector():
        for r in pl.range(pl.get_block_idx(), 512, pl.get_block_num()):
            ti, to = ins.next(), outs.next()
            pl.load(ti, x, [r, 0])
            pl.add(to, ti, ti)
            pl.add(to, to, ti)
            pl.store(y, to, [r, 0])
        pl.system.sync_all(mode=pl.SyncAllMode.HARD, core_type=pl.SyncCoreType.AIV_ONLY)


def rows_copied_soft(x: pl.Tensor[[512, 32], F16], y: pl.Tensor[[512, 32], F16], flags: pl.Tensor[[256], I32],
                     cores: int):
    rows = ring([1, 32], F16, S.Vec, [0x000, 0x400], [0, 1])
    ub = pl.make_tile(pl.TileType([1, 64], I32, S.Vec), addr=0x1000, size=256)
    with pl.section_vector():
        for r in pl.range(pl.get_block_idx(), 512, pl.get_block_num()):
            t = rows.next()
            pl.load(t, x, [r, 0])
            pl.store(y, t, [r, 0])
        if cores == 0:
            pl.system.sync_all([flags, ub], mode=pl.SyncAllMode.SOFT, core_type=pl.SyncCoreType.AIV_ONLY)
        elif pl.get_block_idx() < cores:  # only the first `cores` AIVs take part
            pl.system.sync_all([flags, ub, cores], mode=pl.SyncAllMode.SOFT, core_type=pl.SyncCoreType.AIV_ONLY)


@pytest.mark.parametrize("blocks", [1, 8])
def test_sync_all_hard_and_soft(backend, blocks):
    x = ints((512, 32), 20)
    y = run_on(rows_tripled, backend, x, np.zeros_like(x), blocks=blocks)[1]
    np.testing.assert_array_equal(y, 3 * x)
    h = x.astype(np.float16)
    y = run_on(rows_copied_soft, backend, h, np.zeros_like(h), np.zeros(256, np.int32), 0, blocks=blocks)[1]
    np.testing.assert_array_equal(y, h)


def test_sync_all_with_used_cores_in_the_workspace_list(backend):
    h = ints((512, 32), 21, dtype=np.float16)
    y = run_on(rows_copied_soft, backend, h, np.zeros_like(h), np.zeros(256, np.int32), 3, blocks=5)[1]
    np.testing.assert_array_equal(y, h)


def all_enter(x: pl.Tensor[[8, 32], F16], flags: pl.Tensor[[256], I32]):
    ub = pl.make_tile(pl.TileType([1, 64], I32, S.Vec), addr=0x1000, size=256)
    with pl.section_vector():
        pl.system.sync_all([flags, ub], mode=pl.SyncAllMode.SOFT, core_type=pl.SyncCoreType.AIV_ONLY,
                           used_cores=3)


def test_a_core_beyond_used_cores_entering_sync_all_is_an_error(backend):
    with pytest.raises(pl.KernelRuntimeError, match=r"sync_all\(used_cores=3\) waits for the first 3 AIV_ONLY cores"):
        run_on(all_enter, backend, np.zeros((8, 32), np.float16), np.zeros(256, np.int32), blocks=5)


# ---------------------------------------------------------------------------------------------- argument rules
def _misuse(case: str):
    def misuse(x: pl.Tensor[[8, 32], F32], y: pl.Tensor[[8, 32], F32]):
        t = pl.make_tile(pl.TileType([8, 32], F32, S.Vec), addr=0, size=1024)
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            handoff(P.MTE2, P.MTE3, 2)
            if pl.constexpr(case == "flag_on_one_pipe"):
                handoff(P.MTE3, P.MTE3, 3)
            if pl.constexpr(case == "flag_from_all_pipes"):
                handoff(P.ALL, P.MTE3, 3)
            if pl.constexpr(case == "mutex_on_all_pipes"):
                pl.system.mutex_lock(pipe=P.ALL, mutex_id=1)
                pl.system.mutex_unlock(pipe=P.ALL, mutex_id=1)
            if pl.constexpr(case == "bool_mutex_id"):
                pl.system.mutex_lock(pipe=P.MTE3, mutex_id=False)
                pl.system.mutex_unlock(pipe=P.MTE3, mutex_id=False)
            if pl.constexpr(case == "cross_core_on_all_pipes"):
                pl.system.set_cross_core(pipe=P.ALL, event_id=2, sync_mode=pl.CrossCoreSyncMode.INTER_BLOCK)
                pl.system.wait_cross_core(pipe=P.MTE3, event_id=2, sync_mode=pl.CrossCoreSyncMode.INTER_BLOCK)
            pl.store(y, t, [0, 0])

    misuse.__name__ = "misuse_" + case
    return misuse


MISUSE = {c: _misuse(c) for c in ("flag_on_one_pipe", "flag_from_all_pipes", "mutex_on_all_pipes", "bool_mutex_id",
                                  "cross_core_on_all_pipes")}


@pytest.mark.parametrize("case", sorted(MISUSE))
def test_sync_argument_rules_are_compile_errors(case):
    x = np.ones((8, 32), np.float32)
    with pytest.raises(pl.KernelError):  # rejected when the kernel is parsed, so one backend is enough
        jit_on(MISUSE[case], "interp")(x, np.zeros_like(x))


# ---------------------------------------------------------------------------------------------- system values
def half_per_core(x: pl.Tensor[[64, 64], F16], y: pl.Tensor[[64, 64], F16], z: pl.Tensor[[64, 64], F16]):
    tx = ring([32, 64], F16, S.Vec, 0x0000, [0])[0]
    ty = ring([32, 64], F16, S.Vec, 0x1000, [1])[0]
    with pl.section_vector():
        first = pl.get_block_idx() * (64 // pl.get_block_num())
        pl.load(tx, x, [first, 0])
        pl.load(ty, y, [first, 0])
        pl.minimum(tx, tx, ty)
        pl.store(z, tx, [first, 0])


def test_each_core_takes_its_share_by_block_index(backend):
    x, y = ints((64, 64), 22, dtype=np.float16), ints((64, 64), 23, dtype=np.float16)
    z = run_on(half_per_core, backend, x, y, np.zeros_like(x), blocks=2)[2]
    np.testing.assert_array_equal(z, np.minimum(x, y))


def vector_only_subblock(x: pl.Tensor[[8, 32], F32], y: pl.Tensor[[8, 32], F32]):
    t = ring([8, 32], F32, S.Vec, 0, [0])[0]
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.add(t, t, pl.get_subblock_idx() * 10.0)  # 0 in a vector-only kernel
        pl.store(y, t, [0, 0])


def test_subblock_index_of_a_vector_only_kernel_is_zero(backend):
    x = ints((8, 32), 24)
    np.testing.assert_array_equal(run_on(vector_only_subblock, backend, x, np.zeros_like(x))[1], x)


def who_am_i(cube_out: pl.Tensor[[1, 8], I32], vec_out: pl.Tensor[[1, 16], I32]):
    core = pl.get_block_idx() // pl.get_subblock_num()  # the same AI Core number on the AIC and both AIVs
    with pl.section_cube():
        pl.setval(cube_out, pl.get_block_idx(), core * 1000 + pl.get_block_num())
    with pl.section_vector():
        pl.setval(vec_out, pl.get_block_idx(), core * 1000 + pl.get_subblock_num() * 10 + pl.get_subblock_idx())


def test_block_and_subblock_values_in_a_mix_kernel(backend):
    cube, vec = run_on(who_am_i, backend, np.full((1, 8), -1, np.int32), np.full((1, 16), -1, np.int32), blocks=4)
    np.testing.assert_array_equal(cube[0], [4, 1004, 2004, 3004, -1, -1, -1, -1])
    np.testing.assert_array_equal(vec[0, :8], [20, 21, 1020, 1021, 2020, 2021, 3020, 3021])
    assert (vec[0, 8:] == -1).all()


# ---------------------------------------------------------------------------------------------- fill_index, dcci
FIRST = 7


def ramps(out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], I32]):
    t = ring([1, 32], I32, S.Vec, 0, [0])[0]
    with pl.section_vector():
        for r in pl.range(out.shape[0]):
            for c in pl.range(0, out.shape[1], 32):
                pl.fill_index(t, FIRST)
                pl.store(out, t, [r, c])


@pytest.mark.parametrize("shape", [(1, 32), (4, 96)])
def test_fill_index_counts_from_its_start(backend, shape):
    out = run_on(ramps, backend, np.full(shape, -1, np.int32))[0]
    np.testing.assert_array_equal(out, np.broadcast_to(FIRST + np.arange(shape[1]) % 32, shape))


def flush_then_copy(x: pl.Tensor[[16, 32], F32], y: pl.Tensor[[16, 32], F32]):
    t = ring([16, 32], F32, S.Vec, 0, [0])[0]
    with pl.section_vector():
        pl.system.dcci(x, [3, 0], cache_line=pl.CacheLine.SINGLE_CACHE_LINE, dst=pl.DcciDst.CACHELINE_OUT)
        pl.system.dcci(x, cache_line=pl.CacheLine.ENTIRE_DATA_CACHE)
        pl.load(t, x, [0, 0])
        pl.store(y, t, [0, 0])


def test_dcci_changes_no_data(backend):
    x = ints((16, 32), 25)
    np.testing.assert_array_equal(run_on(flush_then_copy, backend, x, np.zeros_like(x))[1], x)

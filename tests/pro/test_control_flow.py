"""Kernel-body control flow and SPMD (docs/language.md, docs/contract.md): runtime/compile-time loops and
branches, scalars, inlined helpers, tile-group cursors, core numbering, cross-core events,
barriers, deadlocks, printf and pto_assert.  Scalars are observed by writing them into GM tensors
(``out[i] = v``)."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelDeadlockError, KernelRuntimeError

from .kernels import assert_bits_equal

UNSET = -999
MODE = 2
OFFSETS = [1, 5, 7]


def unset(shape, dtype=np.int64):
    return np.full(shape, UNSET, dtype)


# ----------------------------------------------------------------------------------------------
# loops
# ----------------------------------------------------------------------------------------------
@pl.jit
def range_forms(out: pl.Tensor[[6, 16], pl.DT_INT64], n: int, lo: int, hi: int, step: int):
    k = 0
    for i in pl.range(n):
        out[0, k] = i
        k = k + 1
    k = 0
    for i in pl.range(lo, hi):
        out[1, k] = i
        k += 1
    k = 0
    for i in pl.range(lo, hi, step):
        out[2, k] = i
        k += 1
    k = 0
    for i in pl.range(hi, lo, -2):
        out[3, k] = i
        k += 1
    k = 0
    for i in pl.range(hi, lo, -step):
        out[4, k] = i
        k += 1
    k = 0
    for i in pl.range(3, 9, step=2):
        out[5, k] = i
        k += 1


@pytest.mark.parametrize("n,lo,hi,step", [(5, 2, 11, 3), (0, 4, 4, 1), (1, -3, 6, 4)])
def test_pl_range_forms(n, lo, hi, step):
    out = unset((6, 16))
    range_forms(out, n, lo, hi, step)
    rows = [range(n), range(lo, hi), range(lo, hi, step), range(hi, lo, -2), range(hi, lo, -step), range(3, 9, 2)]
    want = unset((6, 16))
    for r, values in enumerate(rows):
        want[r, :len(values)] = list(values)
    assert_bits_equal(out, want)


@pl.jit
def while_break_continue(out: pl.Tensor[[4], pl.DT_INT64], n: int, limit: int):
    i = 0
    total = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if i > limit:
            break
        total += i
    out[0] = total
    out[1] = i
    hits = 0
    for j in pl.range(100):
        if j % 2 == 1:
            continue
        if j >= n:
            break
        hits = hits + 1
    out[2] = hits


def py_while_break_continue(n, limit):
    i = total = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if i > limit:
            break
        total += i
    hits = 0
    for j in range(100):
        if j % 2 == 1:
            continue
        if j >= n:
            break
        hits += 1
    return [total, i, hits, UNSET]


@pytest.mark.parametrize("n,limit", [(10, 100), (10, 5), (0, 3), (20, 13)])
def test_while_break_continue(n, limit):
    out = unset(4)
    while_break_continue(out, n, limit)
    assert out.tolist() == py_while_break_continue(n, limit)


# ----------------------------------------------------------------------------------------------
# branches, ternaries, min/max, const/constexpr
# ----------------------------------------------------------------------------------------------
@pl.jit
def branches(out: pl.Tensor[[8], pl.DT_INT64], x: int, y: int):
    if x < 0:
        code = 1
    elif x == 0:
        code = 2
    elif x < y:
        code = 3
    else:
        code = 4
    out[0] = code
    out[1] = x if x > y else y * 2
    out[2] = pl.min(x, y)
    out[3] = max(x, y)
    out[4] = min(x, 7) + pl.max(3, 5)
    if MODE == 2:
        out[5] = 20
    else:
        out[5] = 21
    if pl.constexpr(MODE > 5):
        out[6] = 30
    else:
        out[6] = 31
    out[7] = 1 if MODE == 2 else x


@pytest.mark.parametrize("x,y", [(-4, 0), (0, 3), (2, 9), (9, 2)])
def test_branches_ternaries_min_max(x, y):
    out = unset(8)
    branches(out, x, y)
    code = 1 if x < 0 else 2 if x == 0 else 3 if x < y else 4
    assert out.tolist() == [code, x if x > y else y * 2, min(x, y), max(x, y), min(x, 7) + 5, 20, 31, 1]


@pl.jit
def consts(out: pl.Tensor[[4], pl.DT_FP32], f: float):
    a = pl.const(300, pl.DT_INT8)
    b = pl.const(0.1, pl.DT_FP16)
    out[0] = a
    out[1] = b
    out[2] = pl.max(f, b)
    out[3] = f / 4.0


def test_pl_const_is_typed_and_float_scalars_are_fp32():
    out = np.zeros(4, np.float32)
    consts(out, -2.5)
    assert_bits_equal(out, np.array([44, np.float16(0.1), np.float16(0.1), -0.625], np.float32))


# ----------------------------------------------------------------------------------------------
# compile-time unrolling and inlined helpers
# ----------------------------------------------------------------------------------------------
def square(v):
    return v * v


def scaled_add(dst, src, factor):
    """A helper taking tiles: dst = src * factor + 1."""
    pl.mul(dst, src, factor)
    pl.add(dst, dst, 1.0)


def pick(flag, a, b):
    if flag:
        return a
    return b


@pl.jit
def unroll_and_inline(x: pl.Tensor[[8, 32], pl.DT_FP32], out: pl.Tensor[[3, 8, 32], pl.DT_FP32],
                      ints: pl.Tensor[[16], pl.DT_INT64], n: int):
    ta = pl.make_tile(pl.TileType([8, 32], pl.DT_FP32), addr=0)
    tb = pl.make_tile(pl.TileType([8, 32], pl.DT_FP32), addr=0x1000)
    tc = pl.make_tile(pl.TileType([8, 32], pl.DT_FP32), addr=0x2000)
    with pl.section_vector():
        pl.load(ta, x, [0, 0])
        scaled_add(tb, ta, 2.0)
        pl.add(tc, ta, 0.0)
        for t in [ta, tb, tc]:
            pl.mul(t, t, 10.0)
        k = 0
        for t in (ta, tb, tc):
            pl.store(out, t, [k, 0, 0])
            k = k + 1
        for j in OFFSETS:
            ints[j] = j * 10
        for j in range(2):
            ints[10 + j] = square(n + j)
        ints[12] = pick(True, n, 0)
        ints[13] = pick(False, n, 0)
        ints[14] = square(3)


def test_unrolling_and_inlined_helpers():
    x = np.arange(256, dtype=np.float32).reshape(8, 32)
    out = np.zeros((3, 8, 32), np.float32)
    ints = unset(16)
    unroll_and_inline(x, out, ints, 6)
    assert_bits_equal(out, np.stack([x * 10, (x * 2 + 1) * 10, x * 10]))
    want = unset(16)
    want[[1, 5, 7]] = [10, 50, 70]
    want[10:15] = [36, 49, 6, 0, 9]
    assert_bits_equal(ints, want)


@pl.jit
def scalars_in_runtime_flow(out: pl.Tensor[[4], pl.DT_INT64], n: int):
    acc = 0
    last = -1
    for i in pl.range(n):
        if i % 2 == 0:
            acc = acc + i
        else:
            acc = acc - 1
            last = i
    out[0] = acc
    out[1] = last
    if n > 3:
        flag = n * 2
    else:
        flag = 0
    out[2] = flag


@pytest.mark.parametrize("n", [0, 1, 4, 9])
def test_scalar_variables_mutated_in_runtime_loops_and_branches(n):
    out = unset(4)
    scalars_in_runtime_flow(out, n)
    acc, last = 0, -1
    for i in range(n):
        if i % 2 == 0:
            acc += i
        else:
            acc, last = acc - 1, i
    assert out.tolist() == [acc, last, n * 2 if n > 3 else 0, UNSET]


# ----------------------------------------------------------------------------------------------
# tile groups
# ----------------------------------------------------------------------------------------------
@pl.jit
def group_cursor(out: pl.Tensor[[16], pl.DT_INT32], n: int):
    g = pl.make_tile_group(type=pl.TileType([1, 8], pl.DT_INT32), addrs=0x0, mutex_ids=[0, 1, 2])
    with pl.section_vector():
        for s in range(3):
            pl.expands(g[s], s)
        out[0] = g.current()[0, 0]
        out[1] = g.next()[0, 0]
        out[2] = g.current()[0, 0]
        out[3] = g.previous()[0, 0]
        out[4] = g.next()[0, 0]
        out[5] = g.previous()[0, 0]
        out[6] = g[2][0, 0]
        out[7] = g.current()[0, 0]
        for i in pl.range(n):
            out[8 + i] = g.next()[0, 0]


def test_tile_group_cursor_rules():
    """Before any next(), current() is slot depth-1; the first next() is slot 0; g[i] leaves the cursor."""
    out = np.full(16, -1, np.int32)
    group_cursor(out, 5)
    assert out.tolist() == [2, 0, 0, 2, 1, 0, 2, 1, 2, 0, 1, 2, 0, -1, -1, -1]


@pl.jit
def group_without_mutex(out: pl.Tensor[[4], pl.DT_INT32]):
    g = pl.make_tile_group(type=pl.TileType([1, 8], pl.DT_INT32), addrs=[0x400, 0x0], depth=2)
    one = pl.make_tile_group(type=pl.TileType([1, 8], pl.DT_INT32), addrs=0x800, depth=1)
    with pl.section_vector():
        pl.expands(g[0], 10)
        pl.expands(g[1], 11)
        pl.expands(one.next(), 5)
        out[0] = g.current()[0, 0]
        out[1] = g.next()[0, 0]
        out[2] = one.current()[0, 0] + one.previous()[0, 0]
        out[3] = one[0][0, 0]


def test_tile_group_address_list_and_depth_one():
    out = np.zeros(4, np.int32)
    group_without_mutex(out)
    assert out.tolist() == [11, 10, 10, 5]


# ----------------------------------------------------------------------------------------------
# SPMD numbering
# ----------------------------------------------------------------------------------------------
@pl.jit
def vector_ids(out: pl.Tensor[[8, 4], pl.DT_INT64]):
    t = pl.make_tile(pl.TileType([1, 8], pl.DT_INT32), addr=0)
    with pl.section_vector():
        b = pl.get_block_idx()
        out[b, 0] = b
        out[b, 1] = pl.get_block_num()
        out[b, 2] = pl.get_subblock_idx()
        out[b, 3] = pl.get_subblock_num()


def test_vector_only_kernel_numbering():
    out = unset((8, 4))
    vector_ids[None, 5](out)
    want = unset((8, 4))
    for b in range(5):
        want[b] = [b, 5, 0, 1]
    assert_bits_equal(out, want)


@pl.jit
def mix_ids(cube_out: pl.Tensor[[4, 3], pl.DT_INT64], vec_out: pl.Tensor[[8, 3], pl.DT_INT64],
            everywhere: pl.Tensor[[2, 8], pl.DT_INT64]):
    everywhere[pl.get_subblock_num() - 1, pl.get_block_idx()] = pl.get_block_num()
    with pl.section_cube():
        b = pl.get_block_idx()
        cube_out[b, 0] = b
        cube_out[b, 1] = pl.get_subblock_idx()
        cube_out[b, 2] = pl.get_subblock_num()
    with pl.section_vector():
        v = pl.get_block_idx()
        vec_out[v, 0] = v
        vec_out[v, 1] = pl.get_subblock_idx()
        vec_out[v, 2] = pl.get_block_idx() // pl.get_subblock_num()


def test_mix_kernel_numbering_and_code_outside_sections_runs_on_every_core():
    cube_out, vec_out, everywhere = unset((4, 3)), unset((8, 3)), unset((2, 8))
    mix_ids[None, 3](cube_out, vec_out, everywhere)
    want_c, want_v, want_e = unset((4, 3)), unset((8, 3)), unset((2, 8))
    for b in range(3):
        want_c[b] = [b, 0, 1]
        want_e[0, b] = 3
        for s in range(2):
            want_v[2 * b + s] = [2 * b + s, s, b]
            want_e[1, 2 * b + s] = 3
    assert_bits_equal(cube_out, want_c)
    assert_bits_equal(vec_out, want_v)
    assert_bits_equal(everywhere, want_e)


# ----------------------------------------------------------------------------------------------
# cross-core events, barriers, deadlock
# ----------------------------------------------------------------------------------------------
ROUNDS = 4


@pl.jit
def ping_pong(state: pl.Tensor[[32, 32], pl.DT_FP32], eye: pl.Tensor[[32, 32], pl.DT_FP32],
              work: pl.Tensor[[32, 32], pl.DT_FP32], log: pl.Tensor[[ROUNDS, 32, 32], pl.DT_FP32]):
    s1 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, pl.MemorySpace.Mat), addr=0)
    e1 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, pl.MemorySpace.Mat), addr=0x8000)
    s0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, pl.MemorySpace.Left), addr=0)
    e0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, pl.MemorySpace.Right), addr=0)
    acc = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, pl.MemorySpace.Acc), addr=0)
    v = pl.make_tile(pl.TileType([16, 32], pl.DT_FP32), addr=0)
    with pl.section_cube():
        pl.load(e1, eye, [0, 0])
        pl.move(e0, e1)
        for r in pl.range(ROUNDS):
            if r > 0:
                pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=1)
            pl.load(s1, state, [0, 0])
            pl.move(s0, s1)
            pl.matmul(acc, s0, e0)
            pl.store(work, acc, [0, 0], scale=2.0)
            pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=0)
    with pl.section_vector():
        row = pl.get_subblock_idx() * 16
        for r in pl.range(ROUNDS):
            pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=0)
            pl.load(v, work, [row, 0])
            pl.add(v, v, 1.0)
            pl.store(state, v, [row, 0])
            pl.store(log, v, [r, row, 0])
            pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=1)


def test_cube_vector_ping_pong_over_several_rounds():
    """Each round the cube doubles the state (through a matmul with I and a scaled store) and the AIVs
    add one; the next round must see the AIVs' result, so the cores really alternate."""
    x = np.arange(32 * 32, dtype=np.float32).reshape(32, 32) % 7
    state = x.copy()
    log = np.zeros((ROUNDS, 32, 32), np.float32)
    ping_pong(state, np.eye(32, dtype=np.float32), np.zeros((32, 32), np.float32), log)
    want = x.copy()
    for r in range(ROUNDS):
        want = want * 2 + 1
        assert_bits_equal(log[r], want, f"round {r}")
    assert_bits_equal(state, want)


@pl.jit
def grid_barrier(slots: pl.Tensor[[8], pl.DT_INT64], sums: pl.Tensor[[8], pl.DT_INT64]):
    t = pl.make_tile(pl.TileType([1, 8], pl.DT_INT32), addr=0)
    with pl.section_vector():
        b = pl.get_block_idx()
        slots[b] = (b + 1) * 10
        pl.system.sync_all(core_type=pl.SyncCoreType.AIV_ONLY)
        total = 0
        for i in pl.range(pl.get_block_num()):
            total = total + slots[i]
        sums[b] = total


def test_sync_all_makes_every_core_see_every_write():
    slots, sums = np.zeros(8, np.int64), unset(8)
    grid_barrier[None, 4](slots, sums)
    assert sums.tolist() == [100] * 4 + [UNSET] * 4


@pl.jit
def never_signalled(out: pl.Tensor[[4], pl.DT_INT64]):
    with pl.section_cube():
        out[0] = 1
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=pl.PipeType.V, event_id=5)
        out[1] = 2


def test_wait_that_is_never_satisfied_is_a_deadlock():
    out = np.zeros(4, np.int64)
    with pytest.raises(KernelDeadlockError, match="event_id=5"):
        never_signalled(out)


# ----------------------------------------------------------------------------------------------
# printf and pto_assert
# ----------------------------------------------------------------------------------------------
@pl.jit
def printer(n: int, f: pl.DT_FP32):  # a pl.DT_* annotation makes it a kernel (ints/floats alone: a plain function)
    with pl.section_vector():
        for i in pl.range(n):
            pl.printf("i=%d f=%.2f hex=%x\n", i, f, i + 10)
        pl.printf("[%5d|%-4d|%+d]\n", n, n, n)


def test_printf_output(capfd):
    printer(2, 1.5)
    out = capfd.readouterr().out
    assert "i=0 f=1.50 hex=a\ni=1 f=1.50 hex=b\n" in out
    assert "[    2|2   |+2]" in out


@pl.jit
def c_printer(n: int, z: int, m: pl.DT_INT32, h: pl.DT_INT16):
    with pl.section_vector():
        pl.printf("[%08.3d|%-6.3d|%#x|%#.0x|%.0d|%+u|% x]\n", n, -n, z, z, z, n, n)
        pl.printf("[%x|%u|%x|%p|%#08x]\n", m, h, z - 1, n, n)


def test_printf_follows_c_not_python(capfd):
    """docs/language.md: printf's grammar is C's: '0' is ignored with a precision, '.0' prints nothing for 0, '#x' adds no
    0x to 0, '+'/space only sign %d/%i, %u/%x of a narrower-than-64-bit value wrap at 32 bits (C's default
    promotion to int), %p prints 0x like glibc.  Expected strings are what gcc's printf prints."""
    c_printer(42, 0, -1, -2)
    out = capfd.readouterr().out
    assert "[     042|-042  |0|||42|2a]" in out
    assert "[ffffffff|4294967294|ffffffffffffffff|0x2a|0x00002a]" in out


@pl.jit
def asserting(out: pl.Tensor[[2], pl.DT_INT64], x: int):
    with pl.section_vector():
        pl.pto_assert(x < 3, "x=%d", x)
        out[0] = x


def test_pto_assert_reports_and_continues(capfd):
    out = np.zeros(2, np.int64)
    asserting(out, 1)
    assert "Assertion failed" not in capfd.readouterr().out
    asserting(out, 5)
    text = capfd.readouterr().out
    assert "Assertion failed: x < 3" in text and "x=5" in text
    assert out[0] == 5  # the official pto_assert does not abort


def test_pto_assert_strict_mode_raises(monkeypatch):
    monkeypatch.setenv("PYPTO_STRICT_ASSERT", "1")

    @pl.jit
    def strict(out: pl.Tensor[[2], pl.DT_INT64], x: int):
        with pl.section_vector():
            pl.pto_assert(x < 3)
            out[0] = x

    out = np.zeros(2, np.int64)
    with pytest.raises(KernelRuntimeError, match="Assertion failed: x < 3"):
        strict(out, 7)


@pl.jit
def scalar_arith(out: pl.Tensor[[6], pl.DT_INT64], a: int, b: int):
    out[0] = a // b
    out[1] = a % b
    out[2] = (a << 2) | 1
    out[3] = a & b
    out[4] = -a if a < 0 else a
    out[5] = (a > 0 and b > 0) or a == b


@pytest.mark.parametrize("a,b", [(7, 2), (-7, 2), (7, -2), (-8, -3)])
def test_runtime_scalar_integer_arithmetic_follows_python(a, b):
    """Decision: kernel scalars use Python semantics (floor division, sign-of-divisor modulo)."""
    out = unset(6)
    scalar_arith(out, a, b)
    assert out.tolist() == [a // b, a % b, (a << 2) | 1, a & b, abs(a), int((a > 0 and b > 0) or a == b)]


@pl.jit
def while_on_tile_value(out: pl.Tensor[[1, 8], pl.DT_INT32], limit: int):
    t = pl.make_tile(pl.TileType([1, 8], pl.DT_INT32), addr=0)
    with pl.section_vector():
        pl.expands(t, 1)
        while t[0, 0] < limit:
            pl.mul(t, t, 3)
        pl.store(out, t, [0, 0])


def test_while_condition_reads_a_tile_every_iteration():
    out = np.zeros((1, 8), np.int32)
    while_on_tile_value(out, 100)
    assert out.tolist() == [[243] * 8]


@pl.jit
def zero_step(out: pl.Tensor[[2], pl.DT_INT64], s: int):
    for i in pl.range(0, 4, s):
        out[0] = i


def test_runtime_zero_step_is_a_runtime_error():
    with pytest.raises(KernelRuntimeError, match="step"):
        zero_step(np.zeros(2, np.int64), 0)

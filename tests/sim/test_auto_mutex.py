"""The auto_mutex pass: where locks go, and what the simulator makes of kernels relying on it."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import KernelRaceError
from pypto_pro.ir import nodes as ir
from pypto_pro.passes import insert_auto_mutex

TT = pl.TileType([16, 64], pl.DT_FP32)


@pl.jit(backend="sim")
def grouped(x: pl.Tensor[[64, 64], pl.DT_FP32], y: pl.Tensor[[64, 64], pl.DT_FP32]):
    gx = pl.make_tile_group(type=TT, addrs=0x0, mutex_ids=[0, 1])
    go = pl.make_tile_group(type=TT, addrs=0x2000, mutex_ids=[[2, 4], [3, 4]])
    scratch = pl.make_tile(TT, addr=0x8000)
    with pl.section_vector():
        for i in pl.range(4):
            tx = gx.next()
            to = go.next()
            pl.set_validshape(gx, [16, 64])
            pl.load(tx, x, [i * 16, 0])
            pl.add(to, tx, tx)
            pl.add(scratch, tx, tx)
            pl.store(y, to, [i * 16, 0])


def _ops(stmts):
    return [s for s in ir.walk(stmts) if isinstance(s, ir.OpStmt)]


def _compiled(kernel, *args):
    kernel.ir_text(*args)
    return next(iter(kernel._variants.values()))


def test_locks_wrap_group_operands_only():
    x = np.zeros((64, 64), np.float32)
    kir = insert_auto_mutex(_compiled(grouped, x, x))
    names = [s.op.name for s in _ops(kir.body)]
    body = names[names.index("set_validshape"):]
    # set_validshape is descriptor-only: no lock around it
    assert body[:2] == ["set_validshape", "mutex_lock"]
    load_at = body.index("load")
    assert body[load_at - 1] == "mutex_lock" and body[load_at + 1] == "mutex_unlock"
    locks = [s for s in _ops(kir.body) if s.op.name == "mutex_lock"]
    assert {s.args["pipe"] for s in locks} == {pl.PipeType.MTE2, pl.PipeType.V, pl.PipeType.MTE3}
    # runtime slots lock a runtime id chosen among the group's ids; the shared id 4 is a constant
    dynamic = [s for s in locks if isinstance(s.args["mutex_id"], ir.Expr)]
    assert dynamic and all(s.args["mutex_ids"] in ([0, 1], [2, 3]) for s in dynamic)
    assert any(s.args["mutex_id"] == 4 for s in locks)
    assert kir.auto_mutex is False and insert_auto_mutex(kir) is kir


def _value(e, env):
    """A scalar expression's value (the node kinds the pass emits for runtime mutex ids)."""
    if isinstance(e, ir.Const):
        return e.value
    if isinstance(e, ir.Var):
        return env[e.name]
    if isinstance(e, ir.Select):
        return _value(e.if_true, env) if _value(e.cond, env) else _value(e.if_false, env)
    ops = {"%": lambda a, b: a % b, "+": lambda a, b: a + b, "*": lambda a, b: a * b, "==": lambda a, b: a == b}
    return ops[e.op](_value(e.lhs, env), _value(e.rhs, env))


@pytest.mark.parametrize("ids, evenly_spaced", [([0, 1], True), ([2, 3], True), ([4, 6, 8], True), ([7, 5, 3], True),
                                                ([0, 5, 1], False), ([3, 3, 4], False)])
def test_runtime_mutex_id_is_the_slots_id(ids, evenly_spaced):
    from types import SimpleNamespace

    from pypto_pro.passes.auto_mutex import _slot_id_expr
    group = SimpleNamespace(mutex_ids=[[i] for i in ids], depth=len(ids))
    cursor = ir.Var("cursor", ir.DT_INT64)
    expr = _slot_id_expr(group, cursor, 0)
    # evenly spaced ids are slot arithmetic, others a Select chain
    assert isinstance(expr, ir.BinOp if evenly_spaced else ir.Select)
    for i in range(2 * len(ids)):
        assert _value(expr, {"cursor": i}) == ids[i % len(ids)]


def test_make_tile_operands_get_no_lock():
    x = np.zeros((64, 64), np.float32)
    kir = insert_auto_mutex(_compiled(grouped, x, x))
    ops = _ops(kir.body)
    scratch_add = [i for i, s in enumerate(ops) if s.op.name == "add"][1]
    # the second add locks only gx's slot (its scratch destination is a make_tile tile)
    assert [s.op.name for s in ops[scratch_add - 1:scratch_add]] == ["mutex_lock"]
    assert ops[scratch_add - 2].op.name != "mutex_lock"


def test_auto_mutex_kernel_is_race_free_and_correct():
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    y = np.zeros_like(x)
    grouped(x, y)
    np.testing.assert_array_equal(y, x + x)
    assert grouped.last_report.hazards == []


def _reload(fixed):
    @pl.jit(backend="sim")
    def reload(x: pl.Tensor[[32, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
        g = pl.make_tile_group(type=TT, addrs=0x0, mutex_ids=[0])
        with pl.section_vector():
            pl.load(g.current(), x, [0, 0])
            if pl.constexpr(fixed):
                pl.system.bar_mte2()
            pl.load(g.current(), x, [16, 0])
            pl.store(y, g.current(), [0, 0])
    return reload


def test_same_pipe_write_after_write_needs_bar_mte2():
    x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    y = np.zeros((16, 64), np.float32)
    with pytest.raises(KernelRaceError, match="bar_mte2"):
        _reload(False)(x, y)
    k = _reload(True)
    k(x, y)
    np.testing.assert_array_equal(y, x[16:])
    assert k.last_report.hazards == []


def test_auto_mutex_off_leaves_group_kernels_racy():
    @pl.jit(backend="sim", auto_mutex=False)
    def plain(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
        g = pl.make_tile_group(type=TT, addrs=0x0, mutex_ids=[0])
        with pl.section_vector():
            pl.load(g.current(), x, [0, 0])
            pl.store(y, g.current(), [0, 0])

    x = np.zeros((16, 64), np.float32)
    with pytest.raises(KernelRaceError):
        plain(x, x.copy())


def test_cross_core_traffic_is_not_covered_by_auto_mutex():
    @pl.jit(backend="sim")
    def cv(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
        gm = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Mat), addrs=0x0,
                                mutex_ids=[0])
        gv = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32), addrs=0x0, mutex_ids=[1])
        with pl.section_vector():
            pl.load(gv.current(), x, [0, 0])
            pl.store(y, gv.current(), [0, 0])
        with pl.section_cube():
            pl.load(gm.current(), y, [0, 0])

    x = np.zeros((16, 64), np.float32)
    with pytest.raises(KernelRaceError, match="different cores"):
        cv(x, x.copy())

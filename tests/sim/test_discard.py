"""The internal ``discard`` op (the tensor-level lowering marks tiles dead with it): the interpreter
refills the tile with the never-written pattern and the simulator reports a later read as an
uninitialised read, so a discard of a live tile cannot silently give right-looking numbers."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import KernelUninitError
from pypto_pro.ir import nodes as ir
from pypto_pro.ir.optable import OPS
from pypto_pro.runtime.jit import execute

VEC = pl.TileType([8, 64], pl.DT_FP32)


@pl.jit
def copy_tile(x: pl.Tensor[[8, 64], pl.DT_FP32], y: pl.Tensor[[8, 64], pl.DT_FP32]):
    t = pl.make_tile(VEC, addr=0x0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(y, t, [0, 0])


def _with_discard_before_store():
    """copy_tile's IR with ``discard(t)`` inserted right before the store."""
    kir = copy_tile.compile({})
    section = next(s for s in kir.body if isinstance(s, ir.Section))
    store = next(i for i, s in enumerate(section.body) if isinstance(s, ir.OpStmt) and s.op.name == "store")
    tile = section.body[store].args["src"]
    section.body.insert(store, ir.OpStmt(None, OPS["discard"], OPS["discard"].bind((), {"tile": tile}), None))
    return kir


def _tensors():
    x = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    return x, np.zeros_like(x)


def test_discard_has_no_public_name():
    assert not hasattr(pl, "discard") and not hasattr(pl.system, "discard")


def test_interpreter_poisons_a_discarded_tile():
    x, y = _tensors()
    execute(_with_discard_before_store(), {0: x, 1: y}, {}, 1, backend="interp")
    assert np.isnan(y).all()  # 0xFF bytes: NaN, not the loaded values


def test_simulator_reports_a_read_of_a_discarded_tile():
    x, y = _tensors()
    with pytest.raises(KernelUninitError) as e:
        execute(_with_discard_before_store(), {0: x, 1: y}, {}, 1, backend="sim")
    assert "pl.store" in str(e.value) and "never written" in str(e.value)


def test_without_discard_the_copy_is_exact():
    x, y = _tensors()
    copy_tile(x, y)
    np.testing.assert_array_equal(x, y)

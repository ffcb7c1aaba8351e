"""The op table is the one list of tile ops; each backend's per-op registry covers it exactly.

* interp: every op has its numpy reference (``OpDef.run``);
* cpu: every op has a C++ emitter in ``backends/cpu/registry.py`` or an explicit "not implemented: why";
* sim: every op has a cost rule in the simulator's own table, from its cost class;
* no registry and no lowering names an op the table does not have (a renamed or removed op fails here,
  not in a user's kernel);
* the traits are consistent with the signatures that the passes and backends rely on.
"""
from __future__ import annotations

import re
from pathlib import Path

import pypto_pro.ops  # noqa: F401  (fills the op table)
from pypto_pro.backends.cpu import registry as cpu_registry
from pypto_pro.backends.sim import costs as sim_costs
from pypto_pro.ir.optable import COST_CLASSES, OPS

SRC = Path(__file__).resolve().parents[2] / "src"


def test_every_op_has_an_interpreter_reference():
    assert [n for n, op in OPS.items() if not callable(op.run) or not callable(op.check)] == []


def test_every_op_has_a_cpu_emitter_or_a_reason():
    table = cpu_registry.table()
    missing = sorted(set(OPS) - set(table) - set(cpu_registry.NOT_IMPLEMENTED))
    assert missing == [], f"ops without a cpu emitter (register one, or not_implemented(name, why)): {missing}"
    assert sorted(set(table) & set(cpu_registry.NOT_IMPLEMENTED)) == []
    assert all(why.strip() for why in cpu_registry.NOT_IMPLEMENTED.values())


def test_every_op_has_a_sim_cost():
    table = sim_costs.op_costs()
    assert sorted(set(OPS) - set(table)) == []
    assert set(sim_costs.CLASS_COST) == set(COST_CLASSES)


def test_no_registry_names_an_unknown_op():
    unknown = {
        "cpu emitters": set(cpu_registry.table()) - set(OPS),
        "cpu not implemented": set(cpu_registry.NOT_IMPLEMENTED) - set(OPS),
        "sim costs": set(sim_costs.op_costs()) - set(OPS),
    }
    assert {k: sorted(v) for k, v in unknown.items() if v} == {}


# op names written as literals where code builds or looks up ops: OPS["x"], builder.op("x", ...),
# builder._raw("x", ...), register("x", ...), not_implemented("x", ...)
_OP_LITERALS = re.compile(r'(?:OPS\[|\b(?:b|self\.b|builder)\.op\(|\._raw\(|\bregister\(|\b_register\(|'
                          r'\bnot_implemented\()\s*"([a-z_0-9]+)"')


def test_no_source_names_an_unknown_op():
    unknown = []
    for path in sorted(SRC.rglob("*.py")):
        for m in _OP_LITERALS.finditer(path.read_text()):
            if m.group(1) not in OPS:
                unknown.append(f"{path.relative_to(SRC)}: {m.group(0)}")
    assert unknown == []


def test_traits_match_signatures():
    for name, op in OPS.items():
        if op.fusable:  # the cpu fusion reads these operands by name
            assert op.elementwise, name
            assert {"dst"} <= set(op.param_map) and ({"lhs", "rhs"} <= set(op.param_map) or "src" in op.param_map
                                                     or "scalar" in op.param_map), name
        if op.commutative:
            assert {"lhs", "rhs"} <= set(op.param_map), name
        if op.phased:
            assert "phase" in op.param_map, name
        if op.element_of:
            assert op.element_of in op.param_map, name
        for arg in op.writes_args:
            assert arg in op.param_map, name
        if op.reduction and op.reduce_dim is None:
            assert "dim" in op.param_map, name


def test_trait_values_are_checked():
    import pytest
    from pypto_pro.ir.optable import OpDef

    with pytest.raises(ValueError, match="sync"):
        OpDef("bogus", (), "V", lambda c, a: None, lambda ctx, a: None, sync="sometimes")


# ------------------------------------------------------------------ the tensor graph's node ops
def test_every_node_op_has_a_numpy_reference():
    from pypto.nodeops import NODE_OPS

    assert len(NODE_OPS) >= 20
    assert [n for n, op in NODE_OPS.items() if not callable(op.reference) or not op.doc] == []


def test_tensor_code_builds_only_declared_node_ops():
    from pypto.graph import Node
    from pypto.lower.vector import Pass
    from pypto.nodeops import NODE_OPS

    built = set()
    for path in sorted((SRC / "pypto").rglob("*.py")):
        built |= set(re.findall(r'\bNode\(\s*"([a-z_]+)"', path.read_text()))
    assert built and sorted(built - set(NODE_OPS)) == []
    lowered = {name[2:] for name in dir(Pass) if name.startswith("e_")}
    assert sorted(lowered - set(NODE_OPS)) == []  # the lowering names no undeclared node op
    import pytest
    with pytest.raises(ValueError, match="not declared"):
        Node("no_such_op", (), (1,), None)


def test_node_references_compute_the_documented_values():
    """A few references against plain numpy, through a recorded graph evaluated by pypto.reference."""
    import numpy as np
    from pypto.nodeops import NODE_OPS

    class Ev:
        def scalar(self, v):
            return v

    class N:
        def __init__(self, op, dtype, attrs, inputs=()):
            self.op, self.dtype, self.attrs, self.inputs = op, dtype, attrs, inputs

    from pypto_pro import dtypes as dt
    x = np.array([[1.5, -2.0], [3.0, 4.0]], np.float32)
    y = np.array([[2.0, 2.0], [-1.0, 8.0]], np.float32)
    ref = lambda op, attrs, *ins, dtype=dt.DT_FP32: NODE_OPS[op].reference(Ev(), N(op, dtype, attrs), list(ins), [2, 2])  # noqa: E731
    np.testing.assert_array_equal(ref("binary", {"fn": "maximum"}, x, y), np.maximum(x, y))
    np.testing.assert_array_equal(ref("binary_scalar", {"fn": "sub", "scalar": 1.0, "reverse": True}, x), 1.0 - x)
    np.testing.assert_array_equal(ref("compare", {"fn": "lt"}, x, y), x < y)
    np.testing.assert_array_equal(ref("binary", {"fn": "div"}, np.array([[-7, 7], [7, -7]], np.int32),
                                      np.array([[2, 2], [-2, -2]], np.int32), dtype=dt.DT_INT32),
                                  [[-3, 3], [-3, 3]])  # C division truncates toward zero
    np.testing.assert_array_equal(NODE_OPS["reduce"].reference(Ev(), N("reduce", dt.DT_FP32, {"fn": "sum", "axis": 1}),
                                                               [x], [2, 1]), x.sum(axis=1, keepdims=True))


def test_tensor_element_functions_are_tile_ops():
    """The ``fn`` of unary / binary / compare nodes is lowered to the tile op of that name."""
    from pypto import nodeops
    from pypto.ops import elementwise

    names = set(elementwise.UNARY) | set(elementwise.BINARY) | set(elementwise.COMPARE)
    names |= set(nodeops._BIN) | set(nodeops._UN) | set(nodeops._CMP)
    assert sorted(names - set(OPS)) == []

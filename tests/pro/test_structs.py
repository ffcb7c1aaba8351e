"""Scalar aggregates: ``pl.struct``, ``pl.struct_array``, ``pl.make_tuple`` (docs/language.md, "Structs and
tuples").  They are flattened to scalar variables by the parser, so each kernel here runs on every backend
and its results are checked against a plain-Python model of the same steps."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto_pro.language as pl
from pypto_pro import KernelRuntimeError, KernelSyntaxError, KernelTypeError

BACKENDS = ["interp", "cpu", "sim"]
pytestmark = pytest.mark.usefixtures("private_build_dir")


def bump(rec, by):
    """A helper that changes its argument's fields: structs are passed by reference."""
    rec.hits = rec.hits + 1
    rec.total += by


def fill_row(table, row, scale):
    for col in pl.range(3):
        table[row].cells[col] = row * scale + col


def records(out: pl.Tensor[[32], pl.DT_INT64], fout: pl.Tensor[[4], pl.DT_FP32], n: int, pick: int):
    rec = pl.struct("Rec", hits=0, total=5, ratio=0.5, on=False, hist=[0, 0, 0, 0])
    alias = rec
    with pl.section_vector():
        for i in pl.range(n):
            bump(alias, i)
            rec.hist[i % 4] = rec.hist[i % 4] + i      # runtime index, read and write
            if i % 3 == 0:
                rec.on = not rec.on
        rec.ratio = rec.ratio * 3.0
        out[0] = rec.hits
        out[1] = rec.total
        out[2] = rec.hist[0] * 1000 + rec.hist[1] * 100 + rec.hist[2] * 10 + rec.hist[3]
        out[3] = rec.hist[pick]
        fout[0] = rec.ratio
        if rec.on:
            out[4] = 1
        else:
            out[4] = 0
        rec.hist = [7, 8, 9, 10]                         # whole-array assignment
        out[5] = rec.hist[3] - rec.hist[0]

        table = pl.struct_array(3, "Row", tag=0, cells=[0, 0, 0])
        for r in pl.range(3):
            fill_row(table, r, 10)
            table[r].tag = r + 100
        slot = pick % 3
        view = table[slot]                                # a view keeps the element it was taken for
        slot = slot + 1
        out[6] = view.tag
        view.cells[pick % 3] = 99
        out[7] = table[0].cells[0] + table[1].cells[1] + table[2].cells[2]
        j = 2
        out[8] = table[pick % 3].cells[j]
        first = table[0]
        out[9] = first.tag

        made = pl.struct("Fresh", v=0)                    # created inside a runtime loop: reset each time
        seen = 0
        for k in pl.range(4):
            fresh = pl.struct("Fresh", v=k)
            fresh.v += 1
            seen = seen + fresh.v
        out[10] = seen + made.v

        x = rec.hits
        t = pl.make_tuple(before=x, inner=pl.make_tuple(w=x * 2))
        x = x + 100                                       # the tuple keeps the values it was made with
        out[11] = t.before
        out[12] = t.inner.w
        out[13] = x
        lo, hi = t                                        # unpacks like a tuple
        out[14] = lo + hi.w

        weights = (3, 5, 7, 11)
        out[15] = weights[pick]                           # a compile-time tuple at a runtime index

        a = 1
        b = 2
        for _ in pl.range(n):
            a, b = b, a + b                               # every value is read before any is assigned
        out[16] = a
        out[17] = b


def records_model(n, pick):
    out = [0] * 32
    hits, total, ratio, on, hist = 0, 5, 0.5, False, [0, 0, 0, 0]
    for i in range(n):
        hits, total = hits + 1, total + i
        hist[i % 4] += i
        if i % 3 == 0:
            on = not on
    out[0:4] = [hits, total, hist[0] * 1000 + hist[1] * 100 + hist[2] * 10 + hist[3], hist[pick]]
    out[4] = int(on)
    out[5] = 3
    table = [[r * 10 + c for c in range(3)] for r in range(3)]
    out[6] = pick % 3 + 100
    table[pick % 3][pick % 3] = 99
    out[7] = table[0][0] + table[1][1] + table[2][2]
    out[8] = table[pick % 3][2]
    out[9] = 100
    out[10] = sum(k + 1 for k in range(4))
    out[11:15] = [hits, hits * 2, hits + 100, hits + hits * 2]
    out[15] = (3, 5, 7, 11)[pick]
    a, b = 1, 2
    for _ in range(n):
        a, b = b, a + b
    out[16:18] = [a, b]
    return np.array(out, np.int64), np.array([ratio * 3.0, 0, 0, 0], np.float32)


RECORDS = {b: pl.jit(backend=b)(records) for b in BACKENDS}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n,pick", [(0, 0), (7, 2), (10, 3)])
def test_struct_fields_arrays_views_and_tuples(backend, n, pick):
    out, fout = np.zeros(32, np.int64), np.zeros(4, np.float32)
    RECORDS[backend](out, fout, n, pick)
    want, fwant = records_model(n, pick)
    assert out.tolist() == want.tolist()
    assert fout.tolist() == fwant.tolist()


# ----------------------------------------------------------------------------------------------
# runtime indices: differential against a Python model, and the range check
# ----------------------------------------------------------------------------------------------
def scatter(ops: pl.Tensor[[16, 3], pl.DT_INT32], out: pl.Tensor[[4, 5], pl.DT_INT64], count: int):
    """Applies ``grid[slot].cells[col] += value`` for each (slot, col, value) row, then dumps the grid."""
    grid = pl.struct_array(4, "Line", cells=[0, 0, 0, 0, 0])
    with pl.section_vector():
        for k in pl.range(count):
            line = grid[ops[k, 0]]
            line.cells[ops[k, 1]] += ops[k, 2]
        for r in pl.range(4):
            for c in pl.range(5):
                out[r, c] = grid[r].cells[c]


SCATTER = {b: pl.jit(backend=b)(scatter) for b in ("interp", "cpu")}


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(-50, 50)), min_size=0, max_size=16))
def test_runtime_indexed_writes_match_a_python_model(rows):
    ops = np.zeros((16, 3), np.int32)
    if rows:
        ops[:len(rows)] = rows
    want = np.zeros((4, 5), np.int64)
    for slot, col, value in rows:
        want[slot, col] += value
    for backend, kernel in SCATTER.items():
        out = np.full((4, 5), -1, np.int64)
        kernel(ops, out, len(rows))
        assert out.tolist() == want.tolist(), backend


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bad", [4, -1])
def test_runtime_index_out_of_range_is_a_runtime_error(backend, bad):
    ops = np.zeros((16, 3), np.int32)
    ops[1] = (bad, 0, 1)
    kernel = SCATTER.get(backend) or pl.jit(backend=backend)(scatter)
    with pytest.raises(KernelRuntimeError, match=f"index {bad} is out of bounds for an array of length 4"):
        kernel(ops, np.zeros((4, 5), np.int64), 2)


# ----------------------------------------------------------------------------------------------
# errors
# ----------------------------------------------------------------------------------------------
def bad_const_index(out: pl.Tensor[[4], pl.DT_INT64]):
    arr = pl.struct_array(3, "S", v=0)
    with pl.section_vector():
        out[0] = arr[3].v


def bad_field(out: pl.Tensor[[4], pl.DT_INT64]):
    s = pl.struct("S", v=0)
    with pl.section_vector():
        out[0] = s.w


def tuple_is_read_only(out: pl.Tensor[[4], pl.DT_INT64]):
    t = pl.make_tuple(v=1)
    with pl.section_vector():
        t.v = 2
        out[0] = t.v


def bad_size(out: pl.Tensor[[4], pl.DT_INT64]):
    arr = pl.struct_array(0, "S", v=0)
    with pl.section_vector():
        out[0] = arr[0].v


def positional_tuple(out: pl.Tensor[[4], pl.DT_INT64]):
    t = pl.make_tuple(1, 2)
    with pl.section_vector():
        out[0] = t[0]


def tile_field(out: pl.Tensor[[4], pl.DT_INT64]):
    tt = pl.TileType(shape=[8, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    s = pl.struct("S", t=pl.make_tile(tt, addr=0))
    with pl.section_vector():
        out[0] = 1


def whole_array_wrong_length(out: pl.Tensor[[4], pl.DT_INT64]):
    s = pl.struct("S", arr=[0, 0])
    with pl.section_vector():
        s.arr = [1, 2, 3]
        out[0] = s.arr[0]


@pytest.mark.parametrize("fn,error,words", [
    (bad_const_index, KernelSyntaxError, "index 3 is out of bounds for struct array S of length 3"),
    (bad_field, KernelSyntaxError, "struct S has no field 'w'"),
    (tuple_is_read_only, KernelSyntaxError, "pl.make_tuple fields are read-only"),
    (bad_size, KernelSyntaxError, "size must be a positive integer"),
    (positional_tuple, KernelSyntaxError, "pl.make_tuple takes keyword arguments only"),
    (tile_field, KernelTypeError, "field 't' must be a scalar"),
    (whole_array_wrong_length, KernelTypeError, "array field of length 2 takes a list of 2 scalars"),
])
def test_aggregate_errors_name_the_problem_and_line(fn, error, words):
    with pytest.raises(error, match=words) as e:
        pl.jit(backend="interp")(fn)(np.zeros(4, np.int64))
    assert e.value.loc is not None and e.value.loc.lineno > 0

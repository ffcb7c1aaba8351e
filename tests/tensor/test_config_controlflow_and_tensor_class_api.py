"""The official tensor-level API pages other than the operation pages (hicann/pypto ``docs/zh/api/``, current
layout ``docs/zh/api/tensor_api/<folder>/``): ``config/``, ``controlflow/``, ``datatype/``, ``element/``,
``others/``, ``symbolic/`` and the ``tensor/`` pages about the Tensor class itself and its method forms (the
pages not already covered by ``test_op_call_examples_p_to_z.py``).  Each test runs a page's example or checks a
statement of the page (signature, defaults, enum members, accepted / rejected values, printed results) on our
implementation.  Where the page shows an example's data with no printed result, the expected value is the
page's described semantics.

A difference found that looks like a bug of ours is kept as a strict xfail naming the difference; documented
decisions of ours (docs/tensor.md: options rejected unless left at their default, NZ tensors, conv, split-K,
``return`` in a kernel) are asserted as such.
"""
import inspect
import math

import pytest
import torch

import pypto

BOTH = pytest.mark.both_backends
F32 = torch.float32
D = pypto.DYNAMIC


def near(got: torch.Tensor, want, tol: float) -> None:
    w = torch.tensor(want, dtype=torch.float64)
    assert tuple(got.shape) == tuple(w.shape), f"shape {tuple(got.shape)} != {tuple(w.shape)}"
    err = (got.double() - w).abs().max().item()
    assert err <= tol + 1e-9, f"got {got.tolist()}, page prints {want} (max err {err:.3g})"


def exact(got: torch.Tensor, want, dtype=None) -> None:
    if dtype is not None:
        assert got.dtype == dtype
    assert got.tolist() == want, f"got {got.tolist()}, page prints {want}"


def xfail(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


# ================================================================================================ datatype/
PAGE_DTYPE_BITS = {  # DataType.md: the constants we provide and the sizes the page states (bytes * 8)
    "DT_INT4": 4, "DT_INT8": 8, "DT_INT16": 16, "DT_INT32": 32, "DT_INT64": 64, "DT_FP8": 8, "DT_FP16": 16,
    "DT_FP32": 32, "DT_BF16": 16, "DT_HF4": 4, "DT_HF8": 8, "DT_FP8E5M2": 8, "DT_UINT8": 8, "DT_UINT16": 16,
    "DT_UINT32": 32, "DT_UINT64": 64, "DT_BOOL": 8,
}


# DataType.md (the constants, each a pypto.DataType of the stated size)
def test_datatype_page_constants_and_sizes():
    for name, bits in PAGE_DTYPE_BITS.items():
        dt = getattr(pypto, name)
        assert isinstance(dt, pypto.DataType), name
        assert dt.get_bit() == bits, name
    assert len({getattr(pypto, n).name for n in PAGE_DTYPE_BITS}) == len(PAGE_DTYPE_BITS)


# DataType.md (the constants of the page's prototype; DT_DOUBLE has no counterpart here: no FP64 tiles)
def test_datatype_page_constants():
    for name in ("DT_FP4E2M1", "DT_FP8E4M3", "DT_FP8E8M0", "DT_FP4_E2M1X2", "DT_FP4_E1M2X2"):
        assert isinstance(getattr(pypto, name), pypto.DataType), name
    assert pypto.DT_FP8E4M3 == pypto.DT_FP8E4M3FN and pypto.DT_FP4_E2M1X2 == pypto.DT_FP4E2M1


# pypto-bytes_of.md
def test_bytes_of_page():
    assert pypto.bytes_of(pypto.DT_FP32) == 4
    assert pypto.bytes_of(pypto.DT_FP16) == 2 and pypto.bytes_of(pypto.DT_INT8) == 1


PAGE_ENUMS = {  # page: (enum name, members of the page's prototype)
    "CastMode.md": ("CastMode", ["CAST_NONE", "CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC",
                                 "CAST_ODD"]),
    "PrecisionType.md": ("PrecisionType", ["INTRINSIC", "HIGH_PRECISION"]),
    "ReLuType.md": ("ReLuType", ["NO_RELU", "RELU"]),
    "TileOpFormat.md": ("TileOpFormat", ["TILEOP_ND", "TILEOP_NZ"]),
    "TopKAlgo.md": ("TopKAlgo", ["MERGE_SORT", "RADIX_SELECT"]),
    "SaturationMode.md": ("SaturationMode", ["OFF", "ON"]),
    "TransMode.md": ("TransMode", ["CAST_NONE", "CAST_RINT", "CAST_ROUND"]),
    "ScatterMode.md": ("ScatterMode", ["NONE", "ADD", "MULTIPLY"]),
    "ReduceMode.md": ("ReduceMode", ["ATOMIC_ADD"]),
    "LogBaseType.md": ("LogBaseType", ["LOG_E", "LOG_2", "LOG_10"]),
    "OpType.md": ("OpType", ["EQ", "NE", "LT", "LE", "GT", "GE"]),
    "OutType.md": ("OutType", ["BOOL", "BIT"]),
    "CachePolicy.md": ("CachePolicy", ["PREFETCH", "NONE_CACHEABLE"]),
}
MISSING_ENUMS = ()


# datatype/<Enum>.md: every member of the page's prototype exists, and the members are distinct
@pytest.mark.parametrize("page", [
    pytest.param(p, marks=xfail(f"pypto.{PAGE_ENUMS[p][0]} (page {p}) is not provided")) if p in MISSING_ENUMS
    else p for p in PAGE_ENUMS])
def test_enum_page_members(page):
    enum_name, members = PAGE_ENUMS[page]
    enum = getattr(pypto, enum_name)
    values = [getattr(enum, m) for m in members]
    assert len(set(values)) == len(members)


# CastMode.md: the page's rounding rules (float -> int and FP32 -> FP16), the default mode table
# (CAST_NONE: truncation for float -> int, nearest-even otherwise), an unsupported mode (CAST_ODD other than
# FP32 -> FP16) falling back to that default, and widening conversions ignoring the mode.
CAST_MODES = ["CAST_NONE", "CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC", "CAST_ODD"]
U16 = 2.0 ** -10  # an FP16 ulp at 1.0
CAST_TO_INT = {  # x = [2.5, -2.5, 1.5, -1.7, 0.3, 2.7, -0.5, 3.5]
    "CAST_NONE": [2, -2, 1, -1, 0, 2, 0, 3], "CAST_RINT": [2, -2, 2, -2, 0, 3, 0, 4],
    "CAST_ROUND": [3, -3, 2, -2, 0, 3, -1, 4], "CAST_FLOOR": [2, -3, 1, -2, 0, 2, -1, 3],
    "CAST_CEIL": [3, -2, 2, -1, 1, 3, 0, 4], "CAST_TRUNC": [2, -2, 1, -1, 0, 2, 0, 3],
    "CAST_ODD": [2, -2, 1, -1, 0, 2, 0, 3],
}
# h = 1 + k * ulp for k in [0.625, -0.625 (negated value), 0.5, 1.5, 0.25, -0.25 (negated)]: the ulps kept
CAST_TO_FP16 = {
    "CAST_NONE": [1, -1, 0, 2, 0, 0], "CAST_RINT": [1, -1, 0, 2, 0, 0], "CAST_ROUND": [1, -1, 1, 2, 0, 0],
    "CAST_FLOOR": [0, -1, 0, 1, 0, -1], "CAST_CEIL": [1, 0, 1, 2, 1, 0], "CAST_TRUNC": [0, 0, 0, 1, 0, 0],
    "CAST_ODD": [1, -1, 1, 1, 1, -1],
}


@BOTH
def test_castmode_page_rounding_rules():
    @pypto.frontend.jit
    def castmode_page(x: pypto.Tensor(), h: pypto.Tensor(), i0: pypto.Tensor(), i1: pypto.Tensor(),
                      i2: pypto.Tensor(), i3: pypto.Tensor(), i4: pypto.Tensor(), i5: pypto.Tensor(),
                      i6: pypto.Tensor(), h0: pypto.Tensor(), h1: pypto.Tensor(), h2: pypto.Tensor(),
                      h3: pypto.Tensor(), h4: pypto.Tensor(), h5: pypto.Tensor(), h6: pypto.Tensor(),
                      w: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16)
        for o, m in zip([i0, i1, i2, i3, i4, i5, i6], CAST_MODES):
            o[:] = pypto.cast(x, pypto.DT_INT32, getattr(pypto.CastMode, m))
        for o, m in zip([h0, h1, h2, h3, h4, h5, h6], CAST_MODES):
            o[:] = pypto.cast(h, pypto.DT_FP16, getattr(pypto.CastMode, m))
        w[:] = pypto.cast(pypto.cast(h, pypto.DT_FP16), pypto.DT_FP32, pypto.CastMode.CAST_FLOOR)

    x = torch.tensor([2.5, -2.5, 1.5, -1.7, 0.3, 2.7, -0.5, 3.5])
    ks = [0.625, -0.625, 0.5, 1.5, 0.25, -0.25]
    h = torch.tensor([math.copysign(1 + abs(k) * U16, k) for k in ks])
    ints = [torch.zeros(8, dtype=torch.int32) for _ in CAST_MODES]
    halves = [torch.zeros(6, dtype=torch.float16) for _ in CAST_MODES]
    w = torch.zeros(6)
    castmode_page(x, h, *ints, *halves, w)
    for m, o in zip(CAST_MODES, ints):
        assert o.tolist() == CAST_TO_INT[m], m
    for m, o in zip(CAST_MODES, halves):
        kept = [round((abs(v) - 1) / U16) * (1 if v > 0 else -1) for v in o.double().tolist()]
        assert kept == CAST_TO_FP16[m], m
    assert torch.equal(w, h.half().float())  # FP16 -> FP32 is exact whatever the mode


# PrecisionType.md (the example's calls on FP16 [1, 3] tensors: div in both modes, the default, the operator,
# exp / sqrt / pow with a mode; every backend computes in FP32 and rounds once, docs/tensor.md).  The page's
# pypto.log(a, pypto.LogBaseType.LOG_E, ...) line does not match pypto-log.md's signature (input, precision_type)
# and is left out.
def test_precisiontype_page_example():
    P = pypto.PrecisionType

    @pypto.frontend.jit
    def precision_page(a: pypto.Tensor(), b: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(),
                       o3: pypto.Tensor(), o4: pypto.Tensor(), o5: pypto.Tensor(), o6: pypto.Tensor(),
                       o7: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 16)
        o1[:] = pypto.div(a, b, P.HIGH_PRECISION)
        o2[:] = pypto.div(a, b, P.INTRINSIC)
        o3[:] = pypto.div(a, b)
        o4[:] = a / b
        o5[:] = pypto.exp(a, P.HIGH_PRECISION)
        o6[:] = pypto.sqrt(a, P.INTRINSIC)
        o7[:] = pypto.pow(a, b, P.HIGH_PRECISION)

    a = torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float16)
    b = torch.tensor([[2.0, 3.0, 0.5]], dtype=torch.float16)
    outs = [torch.zeros(1, 3, dtype=torch.float16) for _ in range(7)]
    precision_page(a, b, *outs)
    af, bf = a.float(), b.float()
    for o, ref in zip(outs, [af / bf] * 4 + [af.exp(), af.sqrt(), af.pow(bf)]):
        assert torch.equal(o, ref.half())


# TopKAlgo.md (the example's positional algo argument; the default is MERGE_SORT; both give the same here)
def test_topkalgo_page_example():
    assert inspect.signature(pypto.topk).parameters["algo"].default == pypto.TopKAlgo.MERGE_SORT

    @pypto.frontend.jit
    def topkalgo_page(x: pypto.Tensor(), v1: pypto.Tensor(), i1: pypto.Tensor(), v2: pypto.Tensor(),
                      v3: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        r = pypto.topk(x, 2, -1, True, pypto.TopKAlgo.MERGE_SORT)
        v1[:] = r[0]
        i1[:] = r[1]
        v2[:] = pypto.topk(x, 2, -1, True, pypto.TopKAlgo.RADIX_SELECT)[0]
        v3[:] = pypto.topk(x, 2, -1, True)[0]

    x = torch.tensor([[1.0, 5.0, 3.0], [6.0, 2.0, 4.0]])
    v1, v2, v3, i1 = torch.zeros(2, 2), torch.zeros(2, 2), torch.zeros(2, 2), torch.zeros(2, 2, dtype=torch.int64)
    topkalgo_page(x, v1, i1, v2, v3)
    exact(v1, [[5.0, 3.0], [6.0, 4.0]])
    exact(i1, [[1, 2], [0, 2]])
    assert torch.equal(v2, v1) and torch.equal(v3, v1)


# SaturationMode.md (OFF is the default of cast's satmode)
def test_saturationmode_page_default():
    assert inspect.signature(pypto.cast).parameters["satmode"].default == pypto.SaturationMode.OFF


# ================================================================================================= element/
# pypto-Element_constructor.md, pypto-Element-dtype.md, pypto-Element-value.md
def test_element_pages():
    t = pypto.Element(pypto.DT_FP32, 3)
    assert t.dtype == pypto.DT_FP32
    assert t.value == 3 and isinstance(t.value, (int, float))
    i = pypto.Element(pypto.DT_INT32, 3)
    assert i.dtype == pypto.DT_INT32 and i.value == 3
    with pytest.raises(AttributeError):  # Element.value: read-only
        t.value = 4


# pypto-Element-dtype.md ("read-only")
def test_element_dtype_read_only():
    t = pypto.Element(pypto.DT_FP32, 3)
    with pytest.raises(AttributeError):
        t.dtype = pypto.DT_INT32


# pypto-Element_constructor.md (the Element as a scalar operand inside a kernel)
def test_element_page_in_kernel():
    @pypto.frontend.jit
    def element_page(x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8)
        o[:] = x + pypto.Element(pypto.DT_FP32, 3)

    o = torch.zeros(8)
    element_page(torch.ones(8), o)
    exact(o, [4.0] * 8)


# ================================================================================================ symbolic/
S = pypto.SymbolicScalar


# pypto-SymbolicScalar_constructor.md (the five forms of the example)
def test_symbolic_constructor_page():
    a = S()
    b = S(10)
    c = S("x")
    d = S("x", 10)
    e = S(c)
    assert a.is_symbol() and not a.is_concrete()
    assert b.is_immediate() and b.concrete() == 10
    assert c.is_symbol() and not c.is_concrete()
    assert isinstance(d, S)
    assert e.is_symbol() and not e.is_concrete()


# pypto-SymbolicScalar_constructor.md ("if arg0 is an int, arg1 is ignored")
def test_symbolic_constructor_int_ignores_arg1():
    assert S(5, 7).concrete() == 5


# pypto-SymbolicScalar-as_variable.md (in place, returns None)
def test_symbolic_as_variable_page():
    s = S("x")
    assert s.as_variable() is None
    assert s.is_symbol()


# pypto-SymbolicScalar-concrete.md (out1 10; a symbol raises ValueError)
def test_symbolic_concrete_page():
    assert S(10).concrete() == 10
    with pytest.raises(ValueError):
        S("x").concrete()


# pypto-SymbolicScalar-is_concrete.md, -is_expression.md, -is_immediate.md, -is_symbol.md (printed results)
def test_symbolic_kind_pages():
    s1, s2 = S(10), S("x")
    s3 = s2 + 5
    assert (s1.is_concrete(), s2.is_concrete()) == (True, False)
    assert (s1.is_expression(), s2.is_expression(), s3.is_expression()) == (False, False, True)
    assert (s1.is_immediate(), s2.is_immediate()) == (True, False)
    assert (s1.is_symbol(), s2.is_symbol()) == (False, True)


# pypto-SymbolicScalar-max.md / -min.md (out1/out2 concrete; out3 a symbolic expression)
def test_symbolic_max_min_pages():
    s1, s2, s3 = S(10), S(5), S("x")
    assert s1.max(s2).concrete() == 10 and s1.max(13).concrete() == 13
    assert s1.min(s2).concrete() == 5 and s1.min(3).concrete() == 3
    for r in (s3.max(2), s3.min(2)):
        assert isinstance(r, S) and not r.is_concrete()


# pypto-SymbolicScalar-max.md ("if both values are concrete, a concrete constant is returned": out1 prints 10)
def test_symbolic_max_of_concrete_is_a_constant():
    assert S(10).max(S(5)) == 10
    assert S(10).min(3) == 3


# pypto-SymbolicScalar-min.md / -max.md usage section: (n - i * tile).min(tile) for the valid rows of the last
# tile of a DYNAMIC dim, .max(0), and a runtime `if` on a symbolic comparison (one compilation for every n)
@BOTH
def test_symbolic_min_max_in_kernel():
    @pypto.frontend.jit
    def symbolic_tiles(x: pypto.Tensor([D, 8], pypto.DT_FP32), o: pypto.Tensor([D, 8], pypto.DT_FP32),
                       flag: pypto.Tensor([1, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        n = x.shape[0]
        tile = 4
        for i in pypto.loop((n + tile - 1) // tile):
            rows = (n - i * tile).min(tile)
            v = pypto.view(x, [tile, 8], [i * tile, 0], valid_shape=[rows, 8])
            pypto.assemble(v * 2.0, [i * tile, 0], o)
        if (n - 6).max(0) == 0:
            flag[:] = pypto.full([1, 8], 100.0, pypto.DT_FP32)
        else:
            flag[:] = pypto.full([1, 8], 1.0, pypto.DT_FP32)

    for n, f in ((10, 1.0), (3, 100.0), (8, 1.0)):
        x = torch.arange(n * 8.0).reshape(n, 8)
        o, flag = torch.zeros(n, 8), torch.zeros(1, 8)
        symbolic_tiles(x, o, flag)
        assert torch.equal(o, 2 * x) and flag[0, 0].item() == f, n
    assert symbolic_tiles.compile_count == 1


# ============================================================================================= controlflow/
# pypto-loop.md (the example's call with name / idx_name; loop(stop) and loop(start, stop, step); the
# submit_before_loop and parallel keywords)
@BOTH
def test_loop_page():
    @pypto.frontend.jit
    def loop_page(x: pypto.Tensor(), o: pypto.Tensor(), o2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 8)
        for b_idx in pypto.loop(0, 10, 1, name="LOOP_L0_bIdx_mla_prolog", idx_name="b_idx"):
            o[b_idx:b_idx + 1, :] = x[b_idx:b_idx + 1, :] * 2.0
        for i in pypto.loop(3):
            o2[i:i + 1, :] = x[i:i + 1, :] + 1.0
        for i in pypto.loop(3, 10, 2, submit_before_loop=True, parallel=True):
            o2[i:i + 1, :] = x[i:i + 1, :] + 2.0

    x = torch.arange(80.0).reshape(10, 8)
    o, o2 = torch.zeros(10, 8), torch.zeros(10, 8)
    loop_page(x, o, o2)
    assert torch.equal(o, 2 * x)
    exact(o2[:, 0], [1.0, 9.0, 17.0, 26.0, 0.0, 42.0, 0.0, 58.0, 0.0, 74.0])


# pypto-loop.md (constraint: the loop index is a SymInt and cannot subscript a Python list)
def test_loop_page_index_not_a_list_subscript():
    @pypto.frontend.jit
    def loop_page_list(x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 8)
        scales = [1.0, 2.0, 3.0]
        for i in pypto.loop(3):
            o[i:i + 1, :] = x[i:i + 1, :] * scales[i]

    with pytest.raises(TypeError):
        loop_page_list(torch.ones(3, 8), torch.zeros(3, 8))


# pypto-loop_unroll.md (the example: (idx, unroll_factor) pairs, unroll_list=[1, 2, 4]; a body that handles
# unroll_factor rows per iteration covers every row once; the one- and two-argument forms)
@BOTH
def test_loop_unroll_page():
    factors = []

    @pypto.frontend.jit
    def loop_unroll_page(x: pypto.Tensor(), o: pypto.Tensor(), o2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 8)
        for idx, unroll_factor in pypto.loop_unroll(0, 10, 1, name="LOOP_L0_bIdx_mla_prolog", idx_name="b_idx",
                                                    unroll_list=[1, 2, 4]):
            factors.append(unroll_factor)
            o[idx:idx + unroll_factor, :] = x[idx:idx + unroll_factor, :] * 3.0
        for idx, uf in pypto.loop_unroll(10):
            o2[idx:idx + uf, :] = x[idx:idx + uf, :] - 1.0
        for idx, uf in pypto.loop_unroll(2, 6):
            o2[idx:idx + uf, :] = x[idx:idx + uf, :] + 100.0

    x = torch.arange(80.0).reshape(10, 8)
    o, o2 = torch.zeros(10, 8), torch.zeros(10, 8)
    loop_unroll_page(x, o, o2)
    assert torch.equal(o, 3 * x)
    assert factors and set(factors) <= {1, 2, 4}
    want = x - 1.0
    want[2:6] = x[2:6] + 100.0
    assert torch.equal(o2, want)


def _last_step_helper(x, last, i):
    """Not decorated: pypto-cond.md says the condition is wrapped in pypto.cond here."""
    if pypto.cond(pypto.is_loop_end(i)):
        last[:] = x[i:i + 1, :]


# pypto-cond.md, pypto-is_loop_begin.md, pypto-is_loop_end.md (both spellings of the condition; the
# undecorated-helper form with pypto.cond; a loop with a step: iterations 1, 4, 7).  Every runtime `if`
# doubles the recorded paths (docs/tensor.md), so the spellings go into separate kernels.
@BOTH
def test_cond_and_is_loop_begin_end_pages():
    @pypto.frontend.jit
    def is_loop_pages(x: pypto.Tensor(), first: pypto.Tensor(), last: pypto.Tensor(), first_s: pypto.Tensor(),
                      last_s: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 8)
        for idx in pypto.loop(0, 10, 1):
            if pypto.is_loop_begin(idx):
                first[:] = x[idx:idx + 1, :]
            if pypto.is_loop_end(idx):
                last[:] = x[idx:idx + 1, :]
        for s in pypto.loop(1, 10, 3):
            if pypto.is_loop_begin(s):
                first_s[:] = x[s:s + 1, :]
            if pypto.is_loop_end(s):
                last_s[:] = x[s:s + 1, :]

    @pypto.frontend.jit
    def cond_page(x: pypto.Tensor(), first_c: pypto.Tensor(), last_c: pypto.Tensor(), last_h: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 8)
        for idx in pypto.loop(0, 10, 1):
            if pypto.cond(pypto.is_loop_begin(idx)):
                first_c[:] = x[idx:idx + 1, :]
            if pypto.cond(pypto.is_loop_end(idx)):
                last_c[:] = x[idx:idx + 1, :]
            _last_step_helper(x, last_h, idx)

    x = torch.arange(80.0).reshape(10, 8)
    first, last, first_s, last_s, first_c, last_c, last_h = [torch.full((1, 8), -1.0) for _ in range(7)]
    is_loop_pages(x, first, last, first_s, last_s)
    cond_page(x, first_c, last_c, last_h)
    assert torch.equal(first, x[0:1]) and torch.equal(first_c, x[0:1])
    assert torch.equal(last, x[9:10]) and torch.equal(last_c, x[9:10]) and torch.equal(last_h, x[9:10])
    assert torch.equal(first_s, x[1:2]) and torch.equal(last_s, x[7:8])


# pypto-is_loop_begin.md / pypto-is_loop_end.md ("if the argument is not a loop index, ValueError is raised")
@pytest.mark.parametrize("which", ["is_loop_begin", "is_loop_end"])
def test_is_loop_begin_end_page_not_a_loop_index(which):
    def body(x: pypto.Tensor([D, 8], pypto.DT_FP32), o: pypto.Tensor([D, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        if getattr(pypto, which)(x.shape[0]):
            o[:] = x

    body.__name__ = f"not_a_loop_index_{which}"
    with pytest.raises(ValueError):
        pypto.frontend.jit(body)(torch.ones(4, 8), torch.zeros(4, 8))


# controlflow/pypto-function.md (with pypto.function("main", a, b, c): ... as a context manager)
def test_function_page():
    @pypto.frontend.jit
    def function_page(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
        with pypto.function("main", a, b, c):
            pypto.set_vec_tile_shapes(16, 16)
            for _ in pypto.loop(0, 1, 1, name="LOOP_L0_bIdx_mla_prolog", idx_name="b_idx"):
                c[:] = a + b

    a, b, c = torch.ones(16, 16), torch.full((16, 16), 2.0), torch.zeros(16, 16)
    function_page(a, b, c)
    assert torch.equal(c, a + b)


# ================================================================================================== others/
# pypto-DYNAMIC.md example 1 (batch 2 and 8 share one compilation; DYN is DYNAMIC; a fixed dim of another size
# raises at launch: our launch checks are always on, the page needs runtime_debug_mode=3, docs/tensor.md)
@BOTH
def test_dynamic_page_example1():
    hidden_size = 128

    @pypto.frontend.jit
    def add_bias(x: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32),
                 bias: pypto.Tensor([hidden_size], pypto.DT_FP32),
                 out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 128)
        out[:] = x + bias

    assert pypto.DYN is pypto.DYNAMIC
    bias = torch.arange(128.0)
    for batch in (2, 8):
        x, out = torch.randn(batch, 128), torch.zeros(batch, 128)
        add_bias(x, bias, out)
        assert torch.equal(out, x + bias)
    assert add_bias.compile_count == 1
    with pytest.raises(pypto.KernelLaunchError):
        add_bias(torch.randn(2, 128), torch.arange(64.0), torch.zeros(2, 128))


# pypto-DYNAMIC.md (the marks table: a STATIC axis recompiles when its size changes, a DYNAMIC one does not)
def test_dynamic_page_static_axis_recompiles():
    @pypto.frontend.jit
    def static_axis(x: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32),
                    out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 128)
        out[:] = x * 2.0

    for shape in ((2, 128), (5, 128), (2, 64)):
        x, out = torch.randn(*shape), torch.zeros(*shape)
        static_axis(x, out)
        assert torch.equal(out, 2 * x)
    assert static_axis.compile_count == 2


# pypto-DYNAMIC.md example 2 (two DYNAMIC axes, B=4/SEQ=16 then B=2/SEQ=32 without recompiling).  The page's
# body ends with `return out`; a kernel returns nothing here (docs/tensor.md "Calling", jit page "no return values").
def test_dynamic_page_example2():
    hidden = 768

    @pypto.frontend.jit
    def attention_kernel(q: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, hidden], pypto.DT_FP32),
                         k: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, hidden], pypto.DT_FP32),
                         v: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, hidden], pypto.DT_FP32),
                         out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, hidden], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8, 256)
        out[:] = q + k * v

    for b, s in ((4, 16), (2, 32)):
        q, k, v = torch.randn(b, s, hidden), torch.randn(b, s, hidden), torch.randn(b, s, hidden)
        out = torch.zeros(b, s, hidden)
        attention_kernel(q, k, v, out)
        assert torch.allclose(out, q + k * v, rtol=0, atol=1e-6)
    assert attention_kernel.compile_count == 1


# pypto-from_torch.md (dtype= re-declares the same bytes, so it must have the element size of the data:
# docs/tensor.md)
def test_from_torch_page():
    x_pto = pypto.from_torch(torch.randn(2, 3))
    assert x_pto.shape == [2, 3] and x_pto.dtype == pypto.DT_FP32
    y_pto = pypto.from_torch(torch.randn(2, 3), "y", dynamic_axis=[0])
    assert y_pto.shape == [pypto.DYNAMIC, 3] and y_pto.name == "y"
    z_pto = pypto.from_torch(torch.zeros(2, 3, dtype=torch.int16), "z", dtype=pypto.DT_FP16)
    assert z_pto.dtype == pypto.DT_FP16
    with pytest.raises(pypto.KernelValueError, match="bit"):
        pypto.from_torch(torch.randn(2, 3), "k", dtype=pypto.DT_FP16)


# pypto-frontend-function.md (a decorated helper with pypto.Tensor annotations is inlined into the jit kernel)
def test_frontend_function_page():
    @pypto.frontend.function
    def reusable_function(arg1: pypto.Tensor, arg2: pypto.Tensor) -> pypto.Tensor:
        return arg1 * arg2 + 1.0

    @pypto.frontend.jit
    def frontend_function_page(x: pypto.Tensor(), y: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8)
        o[:] = reusable_function(reusable_function(x, y), y)

    o = torch.zeros(8)
    frontend_function_page(torch.arange(8.0), torch.full((8,), 2.0), o)
    exact(o, [((v * 2 + 1) * 2 + 1) for v in range(8)])


# pypto-pass_verify_print.md / pypto-pass_verify_save.md (with enable_pass_verify, in a pypto.loop(10), the
# second call under cond=(idx == 5)); the kernel's results are unchanged
@pytest.mark.parametrize("which", ["pass_verify_print", "pass_verify_save"])
@xfail("pypto.pass_verify_print / pypto.pass_verify_save are not provided")
def test_pass_verify_print_save_pages(which, tmp_path):
    verify_options = {"enable_pass_verify": True, "pass_verify_save_tensor_dir": str(tmp_path)}

    def body(x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 8)
        for idx in pypto.loop(10):
            t2 = x[idx:idx + 1, :] * 2.0
            if which == "pass_verify_print":
                pypto.pass_verify_print(t2)
                pypto.pass_verify_print(t2, cond=(idx == 5))
            else:
                pypto.pass_verify_save(t2, "t2-fileprefix")
                pypto.pass_verify_save(t2, "t3_debug_loop_$idx", cond=(idx == 5), idx=5)
            o[idx:idx + 1, :] = t2 + 1.0

    body.__name__ = f"{which}_page"
    kernel = pypto.frontend.jit(body, verify_options=verify_options)
    x, o = torch.arange(80.0).reshape(10, 8), torch.zeros(10, 8)
    kernel(x, o)
    assert torch.equal(o, 2 * x + 1)


# pypto-set_verify_golden_data.md
def test_set_verify_golden_data_page():
    golden_out0 = torch.ones(4)
    pypto.set_verify_options(enable_pass_verify=True)
    pypto.set_verify_golden_data(goldens=[None, None, golden_out0])
    pypto.set_verify_golden_data([torch.ones(4), torch.ones(4), torch.zeros(4)], [None, None, golden_out0])


# ================================================================================================== config/
# pypto-frontend-jit.md example 1, with the output passed (the page calls add_kernel(x, y) with three
# parameters) and b in ND (b declared TILEOP_NZ takes NZ tensors only, and a 1-D tensor has no NZ form:
# docs/tensor.md "Calling")
@BOTH
def test_jit_page_example1():
    @pypto.frontend.jit
    def add_kernel(a: pypto.Tensor([3], pypto.DT_FP32), b: pypto.Tensor([3], pypto.DT_FP32),
                   out: pypto.Tensor([3], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8)
        out[:] = pypto.add(a, b)

    x, y, out = torch.randn(3), torch.randn(3), torch.zeros(3)
    assert add_kernel(x, y, out) is None  # outputs are written in place, nothing is returned
    assert torch.equal(out, x + y)
    with pytest.raises(pypto.KernelLaunchError):  # the page's two-argument call: `out` is missing
        add_kernel(x, y)
    @pypto.frontend.jit
    def add_nz(a: pypto.Tensor([3], pypto.DT_FP32),
               b: pypto.Tensor([3], pypto.DT_FP32, format=pypto.TileOpFormat.TILEOP_NZ),
               out: pypto.Tensor([3], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8)
        out[:] = pypto.add(a, b)

    with pytest.raises(pypto.KernelLaunchError, match="the format of the 2nd input tensor ND does not match"):
        add_nz(x, y, out)


# pypto-frontend-jit.md example 2 (run_mode NPU and SIM give the same results)
def test_jit_page_example2_run_modes():
    def body(x: pypto.Tensor, o: pypto.Tensor):
        pypto.set_vec_tile_shapes(8)
        o[:] = x * 2.0

    x = torch.arange(8.0)
    for mode in (pypto.RunMode.NPU, pypto.RunMode.SIM):
        body.__name__ = f"jit_page_run_mode_{mode.name.lower()}"
        kernel = pypto.frontend.jit(runtime_options={"run_mode": mode})(body)
        o = torch.zeros(8)
        kernel(x, o)
        assert torch.equal(o, 2 * x), mode


# pypto-frontend-jit.md constraints (tensor parameters first; non-tensor ones by position, keyword or default;
# pypto.Tensor[] unsupported; no return values) and pypto.jit as an alias
def test_jit_page_constraints():
    assert pypto.jit is pypto.frontend.jit

    @pypto.frontend.jit
    def jit_page_scalars(x: pypto.Tensor(), o: pypto.Tensor(), s: float = 2.0, add: int = 1):
        pypto.set_vec_tile_shapes(8)
        o[:] = x * s + add

    x, o = torch.arange(8.0), torch.zeros(8)
    jit_page_scalars(x, o)
    assert torch.equal(o, x * 2 + 1)
    jit_page_scalars(x, o, 3.0)
    assert torch.equal(o, x * 3 + 1)
    jit_page_scalars(x, o, add=5)
    assert torch.equal(o, x * 2 + 5)

    @pypto.frontend.jit
    def jit_page_order(s: int, x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8)
        o[:] = x + s

    with pytest.raises(pypto.KernelSyntaxError):
        jit_page_order(1, torch.ones(8), torch.zeros(8))
    with pytest.raises(TypeError):
        pypto.Tensor[()]

    @pypto.frontend.jit
    def jit_page_return(x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8)
        o[:] = x
        return o

    with pytest.raises(pypto.KernelSyntaxError):
        jit_page_return(torch.ones(8), torch.zeros(8))


# pypto-frontend-jit.md runtime_options table: the defaults (device_sched_mode 0, stitch_function_max_num 128,
# max_workspace_kb 0, valid_shape_optimize 0, ready_on_host_tensors [], device_sched_parallelism 1) are
# accepted; other values of the scheduling knobs are recorded without effect (docs/tensor.md)
def test_jit_page_runtime_option_defaults():
    got = pypto.get_runtime_options()
    assert got["device_sched_mode"] == 0 and got["stitch_function_max_num"] == 128
    assert got["max_workspace_kb"] == 0 and got["valid_shape_optimize"] == 0
    assert got["ready_on_host_tensors"] == [] and got["device_sched_parallelism"] == 1
    pypto.set_runtime_options(device_sched_mode=0, stitch_function_max_num=128, max_workspace_kb=0,
                              valid_shape_optimize=0, ready_on_host_tensors=[], device_sched_parallelism=1,
                              run_mode=pypto.RunMode.SIM)
    pypto.set_runtime_options(run_mode=0)  # run_mode: an int or a pypto.RunMode, 0 or 1
    pypto.set_runtime_options(run_mode=1)
    pypto.set_runtime_options(device_sched_mode=1)  # an NPU knob: recorded
    assert pypto.get_runtime_options()["device_sched_mode"] == 1


# pypto-frontend-jit.md (launch_sched_aicpu_num: default 7)
def test_jit_page_launch_sched_aicpu_num_default():
    assert pypto.get_runtime_options()["launch_sched_aicpu_num"] == 7
    pypto.set_runtime_options(launch_sched_aicpu_num=7)


# pypto-set_host_options.md / pypto-get_host_options.md (honoured keys of the example set and read back;
# reset_options restores the defaults)
def test_host_options_page():
    pypto.set_host_options(compile_stage=pypto.CompStage.EXECUTE_GRAPH, compile_monitor_enable=1,
                           compile_timeout=120)
    got = pypto.get_host_options()
    assert isinstance(got, dict)
    assert got["compile_stage"] == pypto.CompStage.EXECUTE_GRAPH
    assert got["compile_monitor_enable"] == 1 and got["compile_timeout"] == 120
    pypto.reset_options()
    assert pypto.get_host_options()["compile_stage"] == pypto.CompStage.ALL_COMPLETE
    assert pypto.get_host_options()["compile_timeout"] == 600
    assert pypto.get_host_options()["compile_monitor_print_interval"] == 60


# pypto-set_host_options.md example (compile_timeout_stage=30 and compile_monitor_print_interval=20 are NPU
# knobs: recorded without effect, docs/tensor.md)
def test_host_options_page_example_knobs_recorded():
    pypto.set_host_options(compile_stage=pypto.CompStage.EXECUTE_GRAPH, compile_monitor_enable=1,
                           compile_timeout=120, compile_timeout_stage=30, compile_monitor_print_interval=20)
    got = pypto.get_host_options()
    assert got["compile_timeout_stage"] == 30 and got["compile_monitor_print_interval"] == 20


# pypto-set_host_options.md (compile_stage TENSOR_GRAPH stops after the tensor graph: nothing runs)
def test_host_options_page_compile_stage():
    @pypto.frontend.jit(host_options={"compile_stage": pypto.CompStage.TENSOR_GRAPH})
    def compile_stage_page(x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8)
        o[:] = x + 1.0

    o = torch.zeros(8)
    compile_stage_page(torch.ones(8), o)
    exact(o, [0.0] * 8)


# pypto-set_host_options.md (defaults: compile_timeout_stage 0 = disabled; compile_monitor_enable is 0 here,
# not the page's 1, because 1 prints every compile's stage times: docs/tensor.md)
def test_host_options_page_defaults():
    got = pypto.get_host_options()
    assert got["compile_monitor_enable"] == 0 and got["compile_timeout_stage"] == 0


# pypto-set_host_options.md (value ranges [0, 2147483647]: 0 disables the timeout warnings)
@pytest.mark.parametrize("key", ["compile_timeout", "compile_timeout_stage"])
def test_host_options_page_zero_disables(key):
    pypto.set_host_options(**{key: 0})
    assert pypto.get_host_options()[key] == 0


# pypto-set_host_options.md (compile_stage takes CompStage.CODEGEN_BINARY too)
def test_host_options_page_codegen_binary():
    pypto.set_host_options(compile_stage=pypto.CompStage.CODEGEN_BINARY)
    assert pypto.get_host_options()["compile_stage"] == pypto.CompStage.CODEGEN_BINARY


# pypto-set_codegen_options.md / pypto-get_codegen_options.md (support_dynamic_aligned honoured; enable_pmu_trace
# rejected unless False, docs/tensor.md)
def test_codegen_options_page():
    assert pypto.get_codegen_options() == {"support_dynamic_aligned": False, "enable_pmu_trace": False}
    pypto.set_codegen_options(support_dynamic_aligned=True)
    assert pypto.get_codegen_options()["support_dynamic_aligned"] is True
    pypto.set_codegen_options(enable_pmu_trace=True)  # profiling: recorded, no effect
    assert pypto.get_codegen_options()["enable_pmu_trace"] is True


# pypto-set_pass_options.md / pypto-get_pass_options.md (every key of the page is reported; the examples that
# restore the defaults are accepted; the merge settings of the examples are recorded, docs/tensor.md)
def test_pass_options_page():
    got = pypto.get_pass_options()
    for key in ("vec_nbuffer_setting", "cube_l1_reuse_setting", "cube_nbuffer_setting", "sg_set_scope",
                "sg_set_ooo_scope", "ooo_sched_mode", "sg_set_tunevf_mode"):
        assert key in got, key
    pypto.set_pass_options(sg_set_scope=-1)
    pypto.set_pass_options(sg_set_ooo_scope=-1)
    pypto.set_pass_options(sg_set_tunevf_mode=0)
    pypto.set_pass_options(vec_nbuffer_setting={}, cube_l1_reuse_setting={})
    pypto.set_pass_options(vec_nbuffer_setting={"DEFAULT": 2}, sg_set_scope=(1, True, False))
    got = pypto.get_pass_options()
    assert got["vec_nbuffer_setting"] == {"DEFAULT": 2} and got["sg_set_scope"] == (1, True, False)


# pypto-set_pass_options.md (the page's defaults, which "default-only" keys must accept)
@pytest.mark.parametrize("kw", [{"ooo_sched_mode": ""}, {"cube_nbuffer_setting": {"DEFAULT": 1}},
                                {"sg_set_scope": (-1, False, False)}], ids=lambda kw: next(iter(kw)))
def test_pass_options_page_defaults_accepted(kw):
    pypto.set_pass_options(**kw)


# pypto-set_semantic_label.md
def test_set_semantic_label_page():
    @pypto.frontend.jit
    def semantic_label_page(kv_tmp: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 4, 16)
        pypto.set_semantic_label("kv")
        compressed_kv = pypto.view(kv_tmp, [2, 4, 16], [0, 0, 0])
        pypto.set_semantic_label("")
        o[:] = compressed_kv

    kv = torch.randn(2, 4, 16)
    o = torch.zeros(2, 4, 16)
    semantic_label_page(kv, o)
    assert torch.equal(o, kv)


# pypto-set_pass_config.md / pypto-get_pass_config.md
def test_pass_config_page():
    key = pypto.PassConfigKey.KEY_DUMP_GRAPH
    assert pypto.get_pass_config("PVC2_OOO", "ExpandFunction", key, False) is False
    pypto.set_pass_config("PVC2_OOO", "ExpandFunction", key, True)
    assert pypto.get_pass_config("PVC2_OOO", "ExpandFunction", key, False) is True


# pypto-get_pass_configs.md (a PassConfigs object with read-only attributes)
def test_get_pass_configs_page():
    cfg = pypto.get_pass_configs("PVC2_OOO", "ExpandFunction")
    for attr in ("printGraph", "dumpGraph", "dumpPassTimeCost", "preCheck", "postCheck", "disablePass",
                 "healthCheck"):
        assert hasattr(cfg, attr), attr


# pypto-set_pass_default_config.md / pypto-get_pass_default_config.md
def test_pass_default_config_page():
    key = pypto.PassConfigKey.KEY_DUMP_GRAPH
    pypto.set_pass_default_config(key, True)
    assert pypto.get_pass_default_config(key, False) is True


# pypto-experimental-set_runtime_options.md / pypto-experimental-get_runtime_options.md: the workspace sub-pool
# sizes are an NPU scheduling knob, so (docs/tensor.md "Options") the page's [64, 1, 1] is recorded without
# effect; ill-formed values raise ValueError
def test_experimental_runtime_options_page():
    assert pypto.experimental.get_runtime_options()["stitch_function_num_per_pool"] == [0, 0, 0]
    pypto.experimental.set_runtime_options(stitch_function_num_per_pool=[0, 0, 0])
    pypto.experimental.set_runtime_options(stitch_function_num_per_pool=[64, 1, 1])
    assert pypto.experimental.get_runtime_options()["stitch_function_num_per_pool"] == [64, 1, 1]
    for bad in ([1, 1], [0, 0, 1025], [True, 0, 0], "000"):
        with pytest.raises(ValueError):
            pypto.experimental.set_runtime_options(stitch_function_num_per_pool=bad)
    assert pypto.experimental.get_runtime_options()["stitch_function_num_per_pool"] == [64, 1, 1]


# pypto-experimental-set_runtime_options.md example 1's kernel (loop_unroll loops, a matmul of row views with
# b_trans, assembles into pypto.tensor workspaces), without the experimental call: output1 = dy @ w^T,
# output2 = dy + dy
def test_experimental_runtime_options_page_kernel():
    b_, l_, h_, d_ = 1, 64, 1, 16

    @pypto.frontend.jit
    def k_tmp_to_d_emb(dy: pypto.Tensor([b_, l_, h_, d_], pypto.DT_FP32),
                       weight: pypto.Tensor([h_, d_, d_], pypto.DT_FP32),
                       output1: pypto.Tensor([b_, l_, d_], pypto.DT_FP32),
                       output2: pypto.Tensor([b_, l_, d_], pypto.DT_FP32)):
        tmp_assemble = pypto.tensor([b_, l_, h_, d_], output1.dtype, "tmp_assemble")
        tmp_exclusive = pypto.tensor([b_, l_, h_, d_], output2.dtype, "tmp_exclusive")
        for i_idx, t in pypto.loop_unroll(0, 1, 1, name="l_loop_0"):
            pypto.set_vec_tile_shapes(1, 64, 1, 256)
            tmp_exclusive[:] = pypto.add(dy, dy)
        for j_idx, t in pypto.loop_unroll(0, l_, 1, name="l_loop_1"):
            pypto.set_vec_tile_shapes(1, 64, 1, 256)
            dy_v = dy[0, j_idx:j_idx + t, 0]
            pypto.set_cube_tile_shapes([128, 128], [128, 128], [128, 128])
            dx = pypto.matmul(dy_v, weight[0], pypto.DT_FP32, b_trans=True)
            pypto.set_vec_tile_shapes(1, 64, 1, 512)
            tmp_assemble[0, j_idx:j_idx + t, 0] = dx + 0.0
        for k_idx, t in pypto.loop_unroll(0, l_, 1, name="l_loop_2"):
            pypto.set_vec_tile_shapes(1, 64, 1, 512)
            output1[0, k_idx:k_idx + t] = tmp_assemble[0, k_idx:k_idx + t, 0]
            output2[0, k_idx:k_idx + t] = tmp_exclusive[0, k_idx:k_idx + t, 0]

    g = torch.Generator().manual_seed(7)
    dy = torch.randint(-3, 4, (1, 64, 1, 16), generator=g).float()
    w = torch.randint(-3, 4, (1, 16, 16), generator=g).float()
    o1, o2 = torch.zeros(1, 64, 16), torch.zeros(1, 64, 16)
    k_tmp_to_d_emb(dy, w, o1, o2)
    assert torch.equal(o1[0], dy[0, :, 0] @ w[0].T)
    assert torch.equal(o2[0], 2 * dy[0, :, 0])


# pypto-set_verify_options.md / pypto-get_verify_options.md (the example's settings, read back)
def test_verify_options_page():
    verify_options = {"enable_pass_verify": True, "pass_verify_save_tensor": True,
                      "pass_verify_save_tensor_dir": "/LARGE/DRIVE/DIR"}
    pypto.set_verify_options(**verify_options)
    got = pypto.get_verify_options()
    for k, v in verify_options.items():
        assert got[k] == v, k
    pypto.set_verify_options(pass_verify_error_tol=[1e-3, 1e-3])


# pypto-set_debug_options.md / pypto-get_debug_options.md (example calls with 0/1 modes)
def test_debug_options_page():
    got = pypto.get_debug_options()
    assert got["compile_debug_mode"] == 0 and got["runtime_debug_mode"] == 0
    pypto.set_debug_options(compile_debug_mode=1)
    pypto.set_debug_options(runtime_debug_mode=1)
    assert pypto.get_debug_options()["compile_debug_mode"] == 1
    assert pypto.get_debug_options()["runtime_debug_mode"] == 1


# pypto-set_debug_options.md (compile_debug_mode=2 and dump_pass_graph as a list of pass identifiers, default [])
@pytest.mark.parametrize("kw", [{"compile_debug_mode": 2},
                                {"dump_pass_graph": ["RemoveRedundantReshape", "InferMemoryConflict"]}],
                         ids=lambda kw: next(iter(kw)))
def test_debug_options_page_values(kw):
    assert pypto.get_debug_options()["dump_pass_graph"] == []
    pypto.set_debug_options(**kw)
    key, value = next(iter(kw.items()))
    assert pypto.get_debug_options()[key] == value


# pypto-set_vec_tile_shapes.md / pypto-get_vec_tile_shapes.md (the example; every dim > 0; decision: up to 8 dims,
# as the official 5-D slice tests set 5 though the page says 4, docs/tensor.md)
def test_vec_tile_shapes_page():
    pypto.set_vec_tile_shapes(1, 1, 8, 8)
    assert pypto.get_vec_tile_shapes() == [1, 1, 8, 8]
    pypto.set_vec_tile_shapes(1, 1, 1, 8, 8)
    for bad in ((0, 8), (8, -1), (1,) * 9):
        with pytest.raises((TypeError, ValueError)):
            pypto.set_vec_tile_shapes(*bad)


# pypto-set_cube_tile_shapes.md / pypto-get_cube_tile_shapes.md (the example; L0 > 0, L0 <= L1, L1 % L0 == 0;
# enable_split_k=True is reported back, docs/tensor.md)
def test_cube_tile_shapes_page():
    pypto.set_cube_tile_shapes([128, 128], [128, 128], [128, 128])
    assert pypto.get_cube_tile_shapes() == ([128, 128], [128, 128], [128, 128], False)
    for m in ([0, 64], [128, 64], [32, 48]):
        with pytest.raises((TypeError, ValueError)):
            pypto.set_cube_tile_shapes(m, [128, 128], [128, 128])
    pypto.set_cube_tile_shapes([128, 128], [64, 256], [128, 128], enable_split_k=True)
    assert pypto.get_cube_tile_shapes() == ([128, 128], [64, 256], [128, 128], True)


# The official frontend also takes k = [kL0, kL1, kL1b] (a model block passes [128, 1024, 512]); the third
# entry only steers NPU tiling: recorded, a multiple of kL0, and the product is the same.
@BOTH
def test_cube_tile_shapes_three_entry_k():
    pypto.set_cube_tile_shapes([16, 16], [32, 128, 64], [16, 16])
    assert pypto.get_cube_tile_shapes() == ([16, 16], [32, 128, 64], [16, 16], False)
    with pytest.raises(pypto.KernelTypeError, match=r"k=\[32, 128, 48\]"):
        pypto.set_cube_tile_shapes([16, 16], [32, 128, 48], [16, 16])
    with pytest.raises(pypto.KernelTypeError, match=r"m=\[16, 16, 16\]"):
        pypto.set_cube_tile_shapes([16, 16, 16], [32, 128], [16, 16])

    @pypto.frontend.jit
    def three_entry_k(a: pypto.Tensor(), b: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 16], [32, 128, 64], [16, 16])
        o[:] = pypto.matmul(a, b, pypto.DT_FP32)

    g = torch.Generator().manual_seed(5)
    a = torch.randint(-3, 4, (32, 96), generator=g).float()
    b = torch.randint(-3, 4, (96, 48), generator=g).float()
    o = torch.zeros(32, 48)
    three_entry_k(a, b, o)
    assert torch.equal(o, a @ b)


# pypto-set_cube_tile_shapes.md ("must be called before pypto.matmul")
def test_cube_tile_shapes_page_required_before_matmul():
    @pypto.frontend.jit
    def no_cube_tiles(a: pypto.Tensor(), b: pypto.Tensor(), o: pypto.Tensor()):
        o[:] = pypto.matmul(a, b, pypto.DT_FP32)

    with pytest.raises(pypto.KernelSyntaxError, match="set_cube_tile_shapes"):
        no_cube_tiles(torch.ones(16, 16), torch.ones(16, 16), torch.zeros(16, 16))


# pypto-set_matrix_size.md (the example: a [1, 32, 64] @ b [3, 64, 16], matrix size [32, 64, 16]; it has no
# effect on ND tensors, docs/tensor.md)
@BOTH
def test_set_matrix_size_page():
    @pypto.frontend.jit
    def matrix_size_page(a: pypto.Tensor(), b: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_matrix_size([32, 64, 16])
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [16, 16])
        o[:] = pypto.matmul(a, b, pypto.DT_FP32)

    g = torch.Generator().manual_seed(3)
    a = torch.randint(-3, 4, (1, 32, 64), generator=g).float()
    b = torch.randint(-3, 4, (3, 64, 16), generator=g).float()
    o = torch.zeros(3, 32, 16)
    matrix_size_page(a, b, o)
    assert torch.equal(o, a @ b)


# pypto-set_conv_tile_shapes.md / pypto-get_conv_tile_shapes.md (NPU conv tiles: checked, recorded, no effect;
# docs/tensor.md)
def test_conv_tile_shapes_pages_recorded():
    with pytest.raises(pypto.KernelTypeError):
        pypto.set_conv_tile_shapes(None)
    l1 = pypto.pypto_impl.TileL1Info(tileHin=2, tileHout=1, tileWin=16, tileWout=16, tileCinFmap=16,
                                     tileCinWeight=16, tileN=32, tileBatch=1)
    pypto.set_conv_tile_shapes(l1)
    assert pypto.get_conv_tile_shapes() == (l1, None, False)


# pypto-reset_options.md (every group back to its defaults; tile shapes set outside kernels forgotten)
def test_reset_options_page():
    defaults = {g: getattr(pypto, f"get_{g}_options")() for g in ("host", "codegen", "pass", "runtime", "verify",
                                                                  "debug")}
    pypto.set_host_options(compile_timeout=120)
    pypto.set_codegen_options(support_dynamic_aligned=True)
    pypto.set_runtime_options(max_workspace_kb=1024)
    pypto.set_verify_options(enable_pass_verify=True)
    pypto.set_debug_options(runtime_debug_mode=1)
    pypto.set_vec_tile_shapes(8, 8)
    assert pypto.reset_options() is None
    for g, want in defaults.items():
        assert getattr(pypto, f"get_{g}_options")() == want, g
    assert pypto.get_vec_tile_shapes() == []


# ================================================================================================== tensor/
# pypto-Tensor-dim.md, -dtype.md, -name.md, -format.md (printed results of the examples)
def test_tensor_attribute_pages():
    seen = {}

    @pypto.frontend.jit
    def tensor_attribute_pages(x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        seen["dim"] = pypto.tensor((2, 3, 4), pypto.DT_FP32).dim
        t = pypto.tensor((2, 3), pypto.DT_FP32)
        seen["dtype"] = t.dtype
        seen["n1"] = t.name
        t.name = "my_tensor"
        seen["n2"] = t.name
        seen["format"] = pypto.tensor((4, 4), pypto.DT_FP32, format=pypto.TileOpFormat.TILEOP_ND).format
        o[:] = x

    tensor_attribute_pages(torch.ones(4, 4), torch.zeros(4, 4))
    assert seen["dim"] == 3
    assert seen["dtype"] == pypto.DT_FP32
    assert (seen["n1"], seen["n2"]) == ("", "my_tensor")
    assert seen["format"] == pypto.TileOpFormat.TILEOP_ND


# pypto-Tensor-id.md (a read-only int unique per tensor)
def test_tensor_id_page():
    seen = {}

    @pypto.frontend.jit
    def tensor_id_page(x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        seen["ids"] = (pypto.tensor((4, 4), pypto.DT_FP32).id, pypto.tensor((4, 4), pypto.DT_FP32).id)
        o[:] = x

    tensor_id_page(torch.ones(4, 4), torch.zeros(4, 4))
    a, b = seen["ids"]
    assert isinstance(a, int) and isinstance(b, int) and a != b


# pypto-Tensor-get_cache_policy.md / pypto-Tensor-set_cache_policy.md (PREFETCH off by default; NONE_CACHEABLE
# set to True reads back True)
def test_tensor_cache_policy_pages():
    seen = {}

    @pypto.frontend.jit
    def tensor_cache_policy_pages(x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 16)
        t = pypto.tensor((16, 16), pypto.DT_FP32)
        seen["prefetch"] = t.get_cache_policy(pypto.CachePolicy.PREFETCH)
        t.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
        seen["none"] = t.get_cache_policy(pypto.CachePolicy.NONE_CACHEABLE)
        t[:] = x
        o[:] = t

    x, o = torch.randn(16, 16), torch.zeros(16, 16)
    tensor_cache_policy_pages(x, o)
    assert seen == {"prefetch": False, "none": True}
    assert torch.equal(o, x)


# pypto-Tensor-move.md (t1.move(t2) moves t2's data into t1)
def test_tensor_move_page():
    @pypto.frontend.jit
    def tensor_move_page(x: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        t1 = pypto.tensor((2, 3), pypto.DT_FP32)
        t2 = pypto.tensor((2, 3), pypto.DT_FP32)
        t2[:] = x * 2.0
        t1.move(t2)
        o.move(t1 + 1.0)

    x, o = torch.arange(6.0).reshape(2, 3), torch.zeros(2, 3)
    tensor_move_page(x, o)
    assert torch.equal(o, 2 * x + 1)


GI_A = torch.arange(1.0, 17.0).reshape(4, 4)


# pypto-Tensor-getitem.md examples 1-6 and 8 (a[:] is a itself; slices; a missing index; mixed int and slice;
# negative indices; ...; a[0:index] = gather(a, 0, index))
@BOTH
def test_tensor_getitem_page():
    seen = {}

    @pypto.frontend.jit
    def getitem_page(a: pypto.Tensor(), idx: pypto.Tensor(), b1: pypto.Tensor(), b2: pypto.Tensor(),
                     b3: pypto.Tensor(), b4: pypto.Tensor(), b5: pypto.Tensor(), b6: pypto.Tensor(),
                     b8: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        seen["self"] = a[:] is a
        b1[:] = a[:]
        b2[:] = a[:2, :2]
        b3[:] = a[1]
        b4[:] = a[1, 1:3]
        b5[:] = a[-1, -3:-1]
        b6[:] = a[..., 1:3]
        b8[:] = a[0:idx]

    outs = [torch.zeros(4, 4), torch.zeros(2, 2), torch.zeros(4), torch.zeros(2), torch.zeros(2), torch.zeros(4, 2),
            torch.zeros(1, 4)]
    getitem_page(GI_A, torch.tensor([[0, 1, 2, 3]], dtype=torch.int32), *outs)
    assert seen["self"]
    b1, b2, b3, b4, b5, b6, b8 = outs
    assert torch.equal(b1, GI_A)
    exact(b2, [[1, 2], [5, 6]])
    exact(b3, [5, 6, 7, 8])
    exact(b4, [6, 7])
    exact(b5, [14, 15])
    exact(b6, [[2, 3], [6, 7], [10, 11], [14, 15]])
    exact(b8, [[1, 6, 11, 16]])


# pypto-Tensor-getitem.md example 7 (all-int index on a DT_INT32 tensor): the element is a SymbolicScalar
# holding its run-time value (docs/tensor.md, value-dependent scalars)
def test_tensor_getitem_page_single_element():
    seen = {}

    @pypto.frontend.jit
    def getitem_page_element(a: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        b = a[0, 0]
        seen["type"] = type(b)
        o[:] = a[1:2, :] * b

    a = torch.arange(1, 17, dtype=torch.int32).reshape(4, 4)
    o = torch.zeros(1, 4, dtype=torch.int32)
    getitem_page_element(a, o)
    assert seen["type"] is pypto.SymbolicScalar
    exact(o, [[5, 6, 7, 8]])


# pypto-Tensor-getitem.md constraints (no slice step; at most as many indices as dims)
def test_tensor_getitem_page_constraints():
    def body_step(a: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = a[1:2:2, :]

    def body_rank(a: pypto.Tensor(), o: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = a[0, 0, 0]

    for body in (body_step, body_rank):
        body.__name__ = f"getitem_page_{body.__name__}"
        with pytest.raises((ValueError, IndexError, TypeError, NotImplementedError)):
            pypto.frontend.jit(body)(GI_A.clone(), torch.zeros(1, 4))


# pypto-Tensor-setitem.md examples 1, 3, 4 and 7 (c[:] = a + b on INT32 with pypto.Tensor[[], dtype]
# annotations; mixed int and slice; negative indices; a[0:indices] = values is a scatter)
@BOTH
def test_tensor_setitem_page():
    @pypto.frontend.jit
    def setitem_page(a: pypto.Tensor[[], pypto.DT_INT32], b: pypto.Tensor[[], pypto.DT_INT32],
                     c: pypto.Tensor[[], pypto.DT_INT32], v2: pypto.Tensor(), a3: pypto.Tensor(), a4: pypto.Tensor(),
                     a7: pypto.Tensor(), indices: pypto.Tensor(), values: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        c[:] = a + b
        a3[0, 1:3] = v2
        a4[-1, -3:-1] = v2
        a7[0:indices] = values

    a = torch.arange(1, 17, dtype=torch.int32).reshape(4, 4)
    c = torch.zeros(4, 4, dtype=torch.int32)
    a3, a4, a7 = torch.zeros(4, 4), torch.zeros(4, 4), torch.zeros(4, 4)
    setitem_page(a, torch.ones(4, 4, dtype=torch.int32), c, torch.full((2,), 10.0), a3, a4, a7,
                 torch.tensor([[0, 1, 2, 3]], dtype=torch.int32), torch.full((1, 4), 10.0))
    exact(c, [[2, 3, 4, 5], [6, 7, 8, 9], [10, 11, 12, 13], [14, 15, 16, 17]])
    exact(a3, [[0, 10, 10, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    exact(a4, [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 10, 10, 0]])
    exact(a7, [[10, 0, 0, 0], [0, 10, 0, 0], [0, 0, 10, 0], [0, 0, 0, 10]])


# pypto-Tensor-setitem.md examples 2 and 5 (all-slice keys are assemble(value, starts, a): a [2, 2] value into
# a[0:, 0:] / a[..., 2:4] lands at (0, 0) / (0, 2))
@pytest.mark.parametrize("example", ["a[0:, 0:]", "a[..., 2:4]"])
def test_tensor_setitem_page_assemble_smaller_value(example):
    def body(a: pypto.Tensor(), b: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        if example == "a[0:, 0:]":
            a[0:, 0:] = b
        else:
            a[..., 2:4] = b

    body.__name__ = "setitem_page_assemble_" + ("ex2" if example == "a[0:, 0:]" else "ex5")
    a = torch.zeros(4, 4)
    pypto.frontend.jit(body)(a, torch.full((2, 2), 10.0))
    want = torch.zeros(4, 4)
    if example == "a[0:, 0:]":
        want[0:2, 0:2] = 10.0
    else:
        want[0:2, 2:4] = 10.0
    assert torch.equal(a, want)


# pypto-Tensor-setitem.md example 6 (a[2, 3] = 5 on a DT_INT32 tensor)
def test_tensor_setitem_page_single_element():
    @pypto.frontend.jit
    def setitem_page_element(a: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        a[2, 3] = 5

    a = torch.zeros(4, 4, dtype=torch.int32)
    setitem_page_element(a)
    exact(a, [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 5], [0, 0, 0, 0]])


# pypto-Tensor-<method>.md pages not covered by test_op_call_examples_p_to_z.py: each page gives the method's
# signature and refers to its op page, whose example data the method form runs here
P = pypto.PrecisionType
I32 = torch.int32
METHOD_PAGES = {  # page: (method call, inputs, printed result, tolerance or None for exact)
    "add": (lambda a, b: a.add(b), [[[1.0, 2.0, 3.0]], [[2.0, 3.0, 4.0]]], [[3.0, 5.0, 7.0]], None),
    "add_scalar": (lambda a: a.add(2), [[[1.0, 2.0, 3.0]]], [[3.0, 4.0, 5.0]], None),
    "amax": (lambda x: x.amax(-1, True), [[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]], [[3.0], [3.0]], None),
    "amin": (lambda x: x.amin(0), [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]], [1.0, 2.0, 3.0], None),
    "ceil": (lambda x: x.ceil(), [[1.2, 4.7, -1.1, 9.0, 3.9]], [2.0, 5.0, -1.0, 9.0, 4.0], None),
    "clone": (lambda x: x.clone(), [[[1.0, 2.0], [3.0, 4.0]]], [[1.0, 2.0], [3.0, 4.0]], None),
    "cos": (lambda x: x.cos(), [[0.0, 0.7854, 1.5708, 2.3562]], [1.0000, 0.7071, 0.0000, -0.7071], 1e-4),
    "cumprod": (lambda x: x.cumprod(0), [[[0.0, 1, 2], [3, 4, 5]]], [[0.0, 1, 2], [0, 4, 10]], None),
    "cumsum": (lambda x: x.cumsum(0), [torch.tensor([[0, 1, 2], [3, 4, 5]], dtype=I32)], [[0, 1, 2], [3, 5, 7]],
               None),
    "div": (lambda a, b: a.div(b, P.HIGH_PRECISION), [[[2.0, 4.0, 6.0]], [[2.0, 2.0, 2.0]]], [[1.0, 2.0, 3.0]],
            None),
    "exp": (lambda x: x.exp(P.INTRINSIC), [[0.0, 1.0, 2.0]], [1.0000, 2.7183, 7.3891], 5e-5),
    "exp2": (lambda x: x.exp2(), [[0.0, 1.0, 2.0]], [1.0, 2.0, 4.0], None),
    "expand_clone": (lambda x: x.expand_clone([4, 8]), [torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]], dtype=I32)],
                     [[1, 2, 3, 4, 5, 6, 7, 8]] * 4, None),
    "expm1": (lambda x: x.expm1(), [[[1.0, 2.0], [3.0, 4.0]]], [[1.7183, 6.3891], [19.0855, 53.5981]], 1e-4),
    "floor": (lambda x: x.floor(), [[1.2, 4.3, 9.8, 16.5, 25.4]], [1.0, 4.0, 9.0, 16.0, 25.0], None),
    "fmod": (lambda a, b: a.fmod(b), [[[7.0, 8.0, 9.0]], [[3.0, 3.0, 3.0]]], [[1.0, 2.0, 0.0]], None),
    "fmod_precision": (lambda a: a.fmod(3.0, P.INTRINSIC), [[[7.0, 8.0, 9.0]]], [[1.0, 2.0, 0.0]], None),
    "gather": (lambda x, i: x.gather(0, i), [torch.arange(15, dtype=I32).reshape(3, 5),
                                              torch.tensor([[0, 1, 2, 0], [1, 2, 0, 1], [2, 2, 1, 0]], dtype=I32)],
               [[0, 6, 12, 3], [5, 11, 2, 8], [10, 11, 7, 3]], None),
    "gcd": (lambda a, b: a.gcd(b), [torch.tensor([[9, 9, 9], [6, 6, 6]], dtype=I32),
                                    torch.tensor([[1, 2, 3], [1, 2, 3]], dtype=I32)], [[1, 1, 3], [1, 2, 3]], None),
    "index_add": (lambda x, i, s: x.index_add(0, i, s, alpha=1), [torch.zeros(2, 3, dtype=I32),
                                                                 torch.tensor([0, 1, 0], dtype=I32),
                                                                 torch.ones(3, 3, dtype=I32)],
                  [[2, 2, 2], [1, 1, 1]], None),
    "log": (lambda x: x.log(), [[1.0, 2.0, 3.0]], [0.0000, 0.6931, 1.0986], 5e-5),
    "log10": (lambda x: x.log10(), [[1.0, 2.0, 3.0]], [0.0000, 0.3010, 0.4771], 5e-5),
    "log2": (lambda x: x.log2(P.HIGH_PRECISION), [[1.0, 2.0, 3.0]], [0.0000, 1.0000, 1.5849], 1e-4),
    "logical_not": (lambda x: x.logical_not(), [torch.arange(5, dtype=I32)], [True, False, False, False, False],
                    None),
    "maximum": (lambda a, b: a.maximum(b), [torch.tensor([0, 2, 4], dtype=I32), torch.tensor([3, 1, 3], dtype=I32)],
                [3, 2, 4], None),
    "mul": (lambda a, b: a.mul(b), [[[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]]], [[1.0, 4.0, 9.0]], None),
}
OUT_DTYPES = {"cumsum": torch.int64, "logical_not": torch.bool}


def _method_kernel(page, fn, n_inputs):
    if n_inputs == 1:
        def body(a: pypto.Tensor(), o: pypto.Tensor()):
            pypto.set_vec_tile_shapes(4, 16)
            o[:] = fn(a)
    elif n_inputs == 2:
        def body(a: pypto.Tensor(), b: pypto.Tensor(), o: pypto.Tensor()):
            pypto.set_vec_tile_shapes(4, 16)
            o[:] = fn(a, b)
    else:
        def body(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor(), o: pypto.Tensor()):
            pypto.set_vec_tile_shapes(4, 16)
            o[:] = fn(a, b, c)
    body.__name__ = f"tensor_method_api_page_{page}"  # one kernel name per page
    return pypto.frontend.jit(body)


@pytest.mark.parametrize("page", sorted(METHOD_PAGES))
def test_tensor_method_pages(page):
    fn, inputs, want, tol = METHOD_PAGES[page]
    inputs = [x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=F32) for x in inputs]
    out_dtype = OUT_DTYPES.get(page, inputs[0].dtype)
    o = torch.zeros(torch.tensor(want).shape, dtype=out_dtype)
    _method_kernel(page, fn, len(inputs))(*inputs, o)
    if tol is None:
        exact(o, want)
    else:
        near(o, want, tol)


# pypto-Tensor-index_add_.md (in place, returns self) and pypto-Tensor-matmul.md (the method form with its
# keyword-only b_trans)
def test_tensor_index_add__and_matmul_method_pages():
    seen = {}

    @pypto.frontend.jit
    def tensor_inplace_matmul_methods(x: pypto.Tensor(), index: pypto.Tensor(), source: pypto.Tensor(),
                                      a: pypto.Tensor(), b: pypto.Tensor(), bt: pypto.Tensor(), o1: pypto.Tensor(),
                                      o2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        seen["self"] = x.index_add_(0, index, source) is x
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        o1[:] = a.matmul(b, pypto.DT_FP32)
        o2[:] = a.matmul(bt, pypto.DT_FP32, b_trans=True)

    x = torch.zeros(2, 3, dtype=I32)
    g = torch.Generator().manual_seed(5)
    a = torch.randint(-3, 4, (16, 32), generator=g).float()
    b = torch.randint(-3, 4, (32, 16), generator=g).float()
    o1, o2 = torch.zeros(16, 16), torch.zeros(16, 16)
    tensor_inplace_matmul_methods(x, torch.tensor([0, 1, 0], dtype=I32), torch.ones(3, 3, dtype=I32), a, b,
                                  b.T.contiguous(), o1, o2)
    assert seen["self"]
    exact(x, [[2, 2, 2], [1, 1, 1]])
    assert torch.equal(o1, a @ b) and torch.equal(o2, a @ b)


# pypto-Tensor-assemble.md (assemble(self, input, offsets): self is the destination, as pypto.assemble(input,
# offsets, self); the op page's example: a [2, 2] block of ones at [0, 0] of a [4, 4] zero tensor)
def test_tensor_assemble_method_page():
    @pypto.frontend.jit
    def tensor_assemble_method(a: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        out.assemble(a, [0, 0])

    out = torch.zeros(4, 4)
    tensor_assemble_method(torch.ones(2, 2), out)
    exact(out, [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])


# ScatterMode.md: the enum selects scatter's reduction (NONE / ADD / MULTIPLY = reduce None / "add" / "multiply")
@pytest.mark.both_backends
def test_scatter_mode_selects_the_reduction():
    @pypto.frontend.jit
    def scatter_mode_page(x: pypto.Tensor(), idx: pypto.Tensor(), src: pypto.Tensor(), a: pypto.Tensor(),
                          m: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 16)
        a[:] = pypto.scatter(x, 1, idx, src, reduce=pypto.ScatterMode.ADD)
        m[:] = pypto.scatter(x, 1, idx, src, reduce=pypto.ScatterMode.MULTIPLY)

    x = torch.full((2, 4), 2.0)
    idx = torch.tensor([[0, 1], [3, 3]])
    src = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    a, m = torch.zeros(2, 4), torch.zeros(2, 4)
    scatter_mode_page(x, idx, src, a, m)
    assert torch.equal(a, x.scatter_add(1, idx, src))
    assert torch.equal(m, x.scatter_reduce(1, idx, src, "prod"))


# set_cache_policy: the two policies cannot both be on (the first set is kept), values must be bools
def test_cache_policy_conflict_keeps_the_first():
    t = pypto.Tensor([4, 4], pypto.DT_FP32)
    t.set_cache_policy(pypto.CachePolicy.PREFETCH, True)
    t.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    assert t.get_cache_policy(pypto.CachePolicy.PREFETCH) is True
    assert t.get_cache_policy(pypto.CachePolicy.NONE_CACHEABLE) is False
    t.set_cache_policy(pypto.CachePolicy.PREFETCH, False)
    t.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    assert t.get_cache_policy(pypto.CachePolicy.NONE_CACHEABLE) is True
    with pytest.raises(pypto.KernelTypeError):
        t.set_cache_policy(pypto.CachePolicy.PREFETCH, 1)

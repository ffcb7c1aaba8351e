"""Differential fuzzing of what ``test_random_programs.py`` leaves out: control flow, matmul and
integer / BOOL programs.  Hypothesis generates ``@pypto.frontend.jit`` kernels that run on the
``interp`` and ``cpu`` backends and are checked against float64 numpy (with the per-element error
bounds of ``test_random_programs.Ref``) or, for integers, exactly against torch:

* ``pypto.loop`` over row blocks of a (possibly ``DYNAMIC``) first dim in four forms (block count,
  ``(0, n, T)``, a start offset, a negative step), nested loops over column blocks, views with
  ``valid_shape`` or clipped at the boundary, ``assemble``, ``unroll_list``, and
  ``is_loop_begin``/``is_loop_end`` initialising and finalising an accumulator tensor;
* runtime ``if`` on a DYNAMIC dim and on a loop index, called at sizes that take every branch
  without recompiling;
* matmul: 2-D and batched (with batch broadcasting), FP16/BF16/FP32/INT8 operands, ``a_trans`` /
  ``b_trans``, bias, ``out_dtype``, element-wise and reduction epilogues, M/K/N that are not
  multiples of the cube tiles;
* integer DAGs (wrapping ``+ - *``, ``//``, ``%``, compares, ``where``, ``clip``) with BOOL masks,
  casts in both directions (every ``CastMode``, ``SaturationMode``), argmax/argmin, prod, cumsum,
  cumprod.

Bugs the generators found are kept as minimal regression tests at the end of the file.
"""
import dataclasses
import os
from typing import Callable, Dict, List, Optional, Sequence, Tuple
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import pypto
from pypto_pro.backends import cpu
from test_random_programs import (BACKENDS, FUZZ_SETTINGS, PYPTO_DTYPES, SENTINEL, TORCH_DTYPES, U32, Prec, Ref, _bits,
                                  check_close, r_add, r_cast, r_div, r_exp, r_maximum, r_mul, r_reduce, r_relu,
                                  r_scalar, r_sigmoid, r_sub)

pytestmark = pytest.mark.skipif(not cpu.available(), reason="no C++ compiler for the cpu backend")

INT_TORCH = {"INT8": torch.int8, "INT16": torch.int16, "INT32": torch.int32, "INT64": torch.int64,
             "BOOL": torch.bool}
ALL_TORCH = {**TORCH_DTYPES, **INT_TORCH}
ALL_PYPTO = {**PYPTO_DTYPES, "INT8": pypto.DT_INT8, "INT16": pypto.DT_INT16, "INT32": pypto.DT_INT32,
             "INT64": pypto.DT_INT64, "BOOL": pypto.DT_BOOL}


def _float_ref(t: torch.Tensor) -> Ref:
    """An input as an exact reference value."""
    return Ref(t.double().numpy(), np.zeros(t.shape))


def _float_input(rng: np.random.Generator, shape: Sequence[int], dtype: str, scale: float = 1.5) -> torch.Tensor:
    return torch.from_numpy((rng.standard_normal(tuple(shape)) * scale).astype(np.float32)).to(TORCH_DTYPES[dtype])


# ----------------------------------------------------------------------------- block bodies
def r_softmax(v: Ref, p: Prec) -> Ref:
    """``softmax(v, -1)`` as documented (FP32 ``e * (1 / sum(e))``, ``e = exp(v - amax)``), rounded once."""
    f = Prec.of("FP32")
    e = r_exp(r_sub(v, r_reduce("amax", v, -1, True, f), f), f)
    total = r_reduce("sum", e, -1, True, f)
    return r_cast(r_mul(e, r_div(r_scalar(total, 1.0), total, f), f), p)


@dataclasses.dataclass(frozen=True)
class Body:
    """What a loop iteration computes on its ``[rows, cols]`` view: the pypto expression, its reference
    on a block, whether it reduces the last axis to 1 (then ``combine`` accumulates two partials over
    column blocks)."""
    kernel: Callable
    ref: Callable
    reduces: bool = False
    combine: Optional[Tuple[Callable, Callable]] = None  # (pypto, reference)


BODIES: Dict[str, Body] = {
    "affine": Body(lambda v: v * 1.5 - 0.25,
                   lambda v, p: r_sub(r_mul(v, r_scalar(v, 1.5), p), r_scalar(v, 0.25), p)),
    "silu": Body(lambda v: pypto.sigmoid(v) * v, lambda v, p: r_mul(r_sigmoid(v, p), v, p)),
    "center": Body(lambda v: v - pypto.amax(v, -1, keepdim=True),
                   lambda v, p: r_sub(v, r_reduce("amax", v, -1, True, p), p)),
    "softmax": Body(lambda v: pypto.softmax(v, -1), r_softmax),
    "sum": Body(lambda v: pypto.sum(v, -1, keepdim=True), lambda v, p: r_reduce("sum", v, -1, True, p),
                reduces=True, combine=(lambda a, b: a + b, r_add)),
    "amax": Body(lambda v: pypto.amax(v, -1, keepdim=True), lambda v, p: r_reduce("amax", v, -1, True, p),
                 reduces=True, combine=(pypto.maximum, r_maximum)),
}


def _ceil_div(n, d: int):
    return (n + d - 1) // d


# ----------------------------------------------------------------------------- 1. loops over blocks
ROW_LOOPS = ("count", "step", "start", "reverse")
COL_LOOPS = ("none", "count", "step", "reverse")


@dataclasses.dataclass(frozen=True)
class LoopProgram:
    """``for i in pypto.loop(...)`` over row blocks of ``T`` rows (form ``rows``), optionally an inner
    loop over column blocks of ``TC`` columns (form ``cols``); each block is a view of ``x`` (with an
    explicit ``valid_shape`` or clipped at the boundary) that ``body`` maps and ``assemble`` writes back.
    A reducing body with column blocks accumulates into ``acc`` (``is_loop_begin`` stores the first
    partial, later ones combine) and ``is_loop_end`` writes ``acc / C`` to ``y``."""
    dtype: str
    sizes: Tuple[int, ...]  # the first dim at each call (one size unless ``dynamic``)
    cols: int
    T: int
    TC: int
    rows: str
    col_loop: str
    start: int  # first row of the "start" form
    valid_shape: bool
    body: str
    unroll: Optional[Tuple[int, ...]]
    dynamic: bool
    tile: Tuple[int, int]
    threads: int

    def row_offsets(self, n: int) -> List[int]:
        """The row offset of each iteration, in iteration order."""
        blocks = list(range(0, n, self.T))
        return {"count": blocks, "step": blocks, "start": list(range(self.start, n, self.T)),
                "reverse": blocks[::-1]}[self.rows]

    def col_offsets(self) -> List[int]:
        blocks = list(range(0, self.cols, self.TC))
        return blocks[::-1] if self.col_loop == "reverse" else blocks

    @property
    def out_cols(self) -> int:
        return 1 if BODIES[self.body].reduces else self.cols


@st.composite
def loop_programs(draw) -> LoopProgram:
    body = draw(st.sampled_from(sorted(BODIES)))
    cols = draw(st.integers(1, 100))
    col_loop = draw(st.sampled_from(COL_LOOPS))
    dynamic = draw(st.booleans())
    sizes = tuple(draw(st.lists(st.integers(1, 40), min_size=2 if dynamic else 1, max_size=2 if dynamic else 1,
                                unique=True)))
    prog = LoopProgram(
        dtype=draw(st.sampled_from(["FP32", "FP32", "FP16", "BF16"])), sizes=sizes, cols=cols,
        T=draw(st.integers(1, 16)), TC=draw(st.integers(1, max(1, cols))), rows=draw(st.sampled_from(ROW_LOOPS)),
        col_loop=col_loop, start=draw(st.integers(1, 3)), valid_shape=draw(st.booleans()), body=body,
        unroll=draw(st.sampled_from([None, (2, 1), (4, 2, 1)])), dynamic=dynamic,
        tile=(draw(st.integers(1, 16)), draw(st.integers(8, 128))), threads=draw(st.integers(1, 3)))
    return prog


def _loop_args(form: str, extent, block: int, start: int) -> Tuple[tuple, Callable]:
    """``pypto.loop`` arguments of a loop form over ``extent`` elements in blocks, and the block's first
    element as a function of the loop index."""
    if form in ("count", "none"):
        return (_ceil_div(extent, block),), lambda i: i * block
    if form == "step":
        return (0, extent, block), lambda i: i
    if form == "start":
        return (start, extent, block), lambda i: i
    return (_ceil_div(extent, block) - 1, -1, -1), lambda i: i * block  # reverse


def build_loop_kernel(prog: LoopProgram, backend: str) -> Callable:
    """``loops(x, y, acc)`` for ``prog`` (``acc`` is only written by accumulating programs)."""
    dt = PYPTO_DTYPES[prog.dtype]
    rows = pypto.DYNAMIC if prog.dynamic else prog.sizes[0]
    body = BODIES[prog.body]
    T, TC, C = prog.T, prog.TC, prog.cols

    def block(x, r, c, n, width, cols):
        if prog.valid_shape:
            return pypto.view(x, [T, width], [r, c], valid_shape=[pypto.min(T, n - r), pypto.min(width, cols - c)])
        return pypto.view(x, [T, width], [r, c])

    @pypto.frontend.jit(backend=backend)
    def loops(x: pypto.Tensor([rows, C], dt), y: pypto.Tensor([rows, prog.out_cols], dt),
              acc: pypto.Tensor([rows, 1], dt)):
        pypto.set_vec_tile_shapes(*prog.tile)
        n = x.shape[0]
        row_args, row_of = _loop_args(prog.rows, n, T, prog.start)
        col_args, col_of = _loop_args(prog.col_loop, C, TC, 0)
        for i in pypto.loop(*row_args, unroll_list=prog.unroll):
            r = row_of(i)
            if prog.col_loop == "none":
                pypto.assemble(body.kernel(block(x, r, 0, n, C, C)), [r, 0], y)
            else:
                for j in pypto.loop(*col_args):
                    c = col_of(j)
                    part = body.kernel(block(x, r, c, n, TC, C))
                    if not body.reduces:
                        pypto.assemble(part, [r, c], y)
                    elif pypto.is_loop_begin(j):
                        pypto.assemble(part, [r, 0], acc)
                    else:
                        pypto.assemble(body.combine[0](block(acc, r, 0, n, 1, 1), part), [r, 0], acc)
                    if body.reduces and pypto.is_loop_end(j):
                        pypto.assemble(block(acc, r, 0, n, 1, 1) * (1.0 / C), [r, 0], y)

    return loops


def loop_reference(prog: LoopProgram, x: torch.Tensor) -> Tuple[Ref, Ref]:
    """The expected ``y`` and ``acc`` (NaN where the kernel leaves the sentinel), block by block."""
    p = Prec.of(prog.dtype)
    xr = _float_ref(x)
    n = x.shape[0]
    y = Ref(np.full((n, prog.out_cols), SENTINEL), np.zeros((n, prog.out_cols)))
    acc = Ref(np.full((n, 1), SENTINEL), np.zeros((n, 1)))
    body = BODIES[prog.body]

    def sub(v: Ref, rows: slice, cols: slice) -> Ref:
        return Ref(v.val[rows, cols], v.err[rows, cols])

    def put(dst: Ref, rows: slice, cols: slice, v: Ref) -> None:
        dst.val[rows, cols], dst.err[rows, cols] = v.val, v.err

    for r in prog.row_offsets(n):
        rows = slice(r, min(r + prog.T, n))
        if prog.col_loop == "none":
            put(y, rows, slice(None), body.ref(sub(xr, rows, slice(None)), p))
            continue
        total = None
        for c in prog.col_offsets():
            cols = slice(c, min(c + prog.TC, prog.cols))
            part = body.ref(sub(xr, rows, cols), p)
            if not body.reduces:
                put(y, rows, cols, part)
            else:
                total = part if total is None else body.combine[1](total, part, p)
        if body.reduces:
            put(acc, rows, slice(None), total)
            put(y, rows, slice(None), r_mul(total, r_scalar(total, 1.0 / prog.cols), p))
    return y, acc


def run_loop_program(prog: LoopProgram, seed: int, backends: Sequence[str] = BACKENDS) -> None:
    """``backends`` at every size (one compile each), against the reference and (interp vs cpu)
    each other."""
    kernels = {b: build_loop_kernel(prog, b) for b in backends}
    rng = np.random.default_rng(seed)
    dt = TORCH_DTYPES[prog.dtype]
    for n in prog.sizes:
        x = _float_input(rng, (n, prog.cols), prog.dtype)
        want = loop_reference(prog, x)
        results = {}
        for backend, k in kernels.items():
            y = torch.full((n, prog.out_cols), SENTINEL, dtype=dt)
            acc = torch.full((n, 1), SENTINEL, dtype=dt)
            with mock.patch.dict(os.environ, PYPTO_NUM_THREADS=str(prog.threads)):
                k(x, y, acc)
            for name, got, w in zip(("y", "acc"), (y, acc), want):
                check_close(got, w, f"{name} on {backend} n={n}\n{prog!r}")
            results[backend] = (y, acc)
        if {"interp", "cpu"} <= results.keys():
            for a, b in zip(results["interp"], results["cpu"]):
                assert np.array_equal(_bits(a), _bits(b)), f"cpu and interp differ\n{prog!r}"
    assert all(k.compile_count == 1 for k in kernels.values())


@settings(max_examples=8, **FUZZ_SETTINGS)
@given(prog=loop_programs(), seed=st.integers(0, 2 ** 31 - 1))
def test_loop_blocks(prog: LoopProgram, seed: int) -> None:
    """The official ``loop`` + ``view`` + ``assemble`` pattern (rows and column blocks, every loop form,
    ragged DYNAMIC tails, accumulators set up and finished by ``is_loop_begin/end``) computes each block
    like the whole-tensor reference and never recompiles for a new DYNAMIC size."""
    run_loop_program(prog, seed)


@settings(max_examples=15, **FUZZ_SETTINGS)
@given(prog=loop_programs(), seed=st.integers(0, 2 ** 31 - 1))
def test_loop_blocks_on_the_simulator(prog: LoopProgram, seed: int) -> None:
    """The same loop programs on the AI-Core simulator: correct, and free of races and uninitialised
    reads across loop iterations, views and accumulators."""
    run_loop_program(prog, seed, backends=("sim",))


# ----------------------------------------------------------------------------- 2. runtime branches
BRANCHES = ("dim", "parity", "index", "tail")


@dataclasses.dataclass(frozen=True)
class BranchProgram:
    """A runtime ``if`` choosing between two bodies: on the DYNAMIC row count (``n > threshold``,
    ``n % 2 == 0``) around a whole-tensor store, or inside a loop over row blocks of ``T`` on the
    loop index (even blocks) or on the block being the ragged tail."""
    dtype: str
    sizes: Tuple[int, ...]  # the row count of each call
    cols: int
    T: int
    kind: str
    threshold: int
    then: str
    other: str
    tile: Tuple[int, int]

    def taken(self, n: int, r: int) -> bool:
        """Whether the ``then`` body applies to the block of rows starting at ``r`` when there are ``n``."""
        return {"dim": n > self.threshold, "parity": n % 2 == 0, "index": (r // self.T) % 2 == 0,
                "tail": r + self.T > n}[self.kind]


@st.composite
def branch_programs(draw) -> BranchProgram:
    reduces = draw(st.booleans())
    group = sorted(k for k, b in BODIES.items() if b.reduces == reduces)
    sizes = tuple(draw(st.lists(st.integers(1, 40), min_size=3, max_size=3, unique=True)))
    kind = draw(st.sampled_from(BRANCHES))
    prog = BranchProgram(draw(st.sampled_from(["FP32", "FP16", "BF16"])), sizes, draw(st.integers(1, 80)),
                         draw(st.integers(1, 12)), kind, draw(st.integers(1, 39)), draw(st.sampled_from(group)),
                         draw(st.sampled_from(group)), (draw(st.integers(1, 16)), draw(st.integers(8, 128))))
    if kind in ("dim", "parity"):  # both outcomes occur among the calls
        assume(len({prog.taken(n, 0) for n in sizes}) == 2)
    return prog


def build_branch_kernel(prog: BranchProgram, backend: str) -> Callable:
    dt = PYPTO_DTYPES[prog.dtype]
    then, other = BODIES[prog.then], BODIES[prog.other]
    T = prog.T

    @pypto.frontend.jit(backend=backend)
    def branch(x: pypto.Tensor([pypto.DYNAMIC, prog.cols], dt),
               y: pypto.Tensor([pypto.DYNAMIC, 1 if then.reduces else prog.cols], dt)):
        pypto.set_vec_tile_shapes(*prog.tile)
        n = x.shape[0]
        if prog.kind == "dim":
            if n > prog.threshold:
                y[:] = then.kernel(x)
            else:
                y[:] = other.kernel(x)
        elif prog.kind == "parity":
            if n % 2 == 0:
                y[:] = then.kernel(x)
            else:
                y[:] = other.kernel(x)
        else:
            for i in pypto.loop(_ceil_div(n, T)):
                v = pypto.view(x, [T, prog.cols], [i * T, 0], valid_shape=[pypto.min(T, n - i * T), prog.cols])
                cond = i % 2 == 0 if prog.kind == "index" else i * T + T > n
                if cond:
                    r = then.kernel(v)
                else:
                    r = other.kernel(v)
                pypto.assemble(r, [i * T, 0], y)

    return branch


@settings(max_examples=5, **FUZZ_SETTINGS)
@given(prog=branch_programs(), seed=st.integers(0, 2 ** 31 - 1))
def test_runtime_branches(prog: BranchProgram, seed: int) -> None:
    """A Python ``if`` on a SymbolicScalar (a DYNAMIC dim or a ``pypto.loop`` index) is a runtime branch:
    one compiled kernel takes the branch each call's sizes select, on both backends."""
    kernels = {b: build_branch_kernel(prog, b) for b in BACKENDS}
    rng = np.random.default_rng(seed)
    p = Prec.of(prog.dtype)
    for n in prog.sizes:
        x = _float_input(rng, (n, prog.cols), prog.dtype)
        xr = _float_ref(x)
        parts = []
        for r in range(0, n, prog.T if prog.kind in ("index", "tail") else n):
            rows = slice(r, min(r + prog.T, n)) if prog.kind in ("index", "tail") else slice(None)
            body = BODIES[prog.then if prog.taken(n, r) else prog.other]
            parts.append(body.ref(Ref(xr.val[rows], xr.err[rows]), p))
        want = Ref(np.concatenate([q.val for q in parts]), np.concatenate([q.err for q in parts]))
        for backend, k in kernels.items():
            y = torch.full(want.val.shape, SENTINEL, dtype=TORCH_DTYPES[prog.dtype])
            k(x, y)
            check_close(y, want, f"{backend} n={n}\n{prog!r}")
    assert all(k.compile_count == 1 for k in kernels.values())


# ----------------------------------------------------------------------------- 3. matmul
EPILOGUES = ("store", "relu_scale_residual", "sum_rows", "amax_cols")


@dataclasses.dataclass(frozen=True)
class MatmulProgram:
    """``m = pypto.matmul(a, b, out, a_trans, b_trans, bias)`` (batched over ``batch`` with ``b``'s batch
    possibly broadcast) followed by ``epilogue``; cube tiles ``cube`` (``(m, k, n)`` pairs) chosen
    independently of M/K/N, so most blocks end in a tail."""
    dtype: str  # operand dtype
    out: str
    batch: Tuple[int, ...]  # () or (B,)
    b_batch: int  # B or 1
    M: int
    K: int
    N: int
    a_trans: bool
    b_trans: bool
    bias: Optional[str]  # None, "row" ([1, N]) or "vec" ([N]); its dtype is ``bias_dtype``
    bias_dtype: str
    epilogue: str
    cube: Tuple[Tuple[int, int], Tuple[int, int], Tuple[int, int]]
    tile: Tuple[int, int]

    @property
    def a_shape(self) -> Tuple[int, ...]:
        return self.batch + ((self.K, self.M) if self.a_trans else (self.M, self.K))

    @property
    def b_shape(self) -> Tuple[int, ...]:
        return (self.b_batch,) * len(self.batch) + ((self.N, self.K) if self.b_trans else (self.K, self.N))

    @property
    def y_shape(self) -> Tuple[int, ...]:
        mn = {"sum_rows": (self.M, 1), "amax_cols": (1, self.N)}.get(self.epilogue, (self.M, self.N))
        return self.batch + mn

    @property
    def y_dtype(self) -> str:
        return "INT64" if self.out == "INT32" and self.epilogue == "sum_rows" else self.out


MATMUL_DTYPES = ("FP16", "BF16", "FP32", "INT8")


@st.composite
def matmul_programs(draw, dtype: str) -> MatmulProgram:
    out = "INT32" if dtype == "INT8" else draw(st.sampled_from(["FP32", dtype]))
    batch = (draw(st.integers(1, 3)),) if draw(st.booleans()) else ()
    L0 = st.sampled_from([16, 32])
    cube = tuple((l0, l0 * draw(st.sampled_from([1, 2]))) for l0 in (draw(L0), 32, draw(L0)))
    return MatmulProgram(
        dtype, out, batch, draw(st.sampled_from([1, batch[0]])) if batch else 1, draw(st.integers(1, 70)),
        draw(st.integers(1, 90)), draw(st.integers(1, 70)), draw(st.booleans()), draw(st.booleans()),
        None if dtype == "INT8" else draw(st.sampled_from([None, "row", "vec"])),
        draw(st.sampled_from(["FP32", dtype])) if dtype != "INT8" else "FP32", draw(st.sampled_from(EPILOGUES)),
        cube, (draw(st.integers(1, 16)), draw(st.integers(8, 64))))


def build_matmul_kernel(prog: MatmulProgram, backend: str) -> Callable:
    out_dt = ALL_PYPTO[prog.out]

    @pypto.frontend.jit(backend=backend)
    def mm(a: pypto.Tensor(), b: pypto.Tensor(), bias: pypto.Tensor(), res: pypto.Tensor(), y: pypto.Tensor()):
        pypto.set_cube_tile_shapes(*(list(c) for c in prog.cube))
        pypto.set_vec_tile_shapes(*((1,) * len(prog.batch) + prog.tile))
        m = pypto.matmul(a, b, out_dt, a_trans=prog.a_trans, b_trans=prog.b_trans,
                         extend_params={"bias_tensor": bias} if prog.bias else None)
        if prog.epilogue == "store":
            y[:] = m
        elif prog.epilogue == "relu_scale_residual":
            y[:] = pypto.relu(m) * 2 + res
        elif prog.epilogue == "sum_rows":
            y[:] = pypto.sum(m, -1, keepdim=True)
        else:
            y[:] = pypto.amax(m, -2, keepdim=True)

    return mm


def matmul_inputs(prog: MatmulProgram, rng: np.random.Generator) -> List[torch.Tensor]:
    """``a``, ``b``, ``bias`` and the residual (a dummy where unused)."""
    if prog.dtype == "INT8":
        a, b = (torch.from_numpy(rng.integers(-128, 128, s).astype(np.int8)) for s in (prog.a_shape, prog.b_shape))
        res = torch.from_numpy(rng.integers(-1000, 1000, prog.y_shape).astype(np.int32))
        return [a, b, torch.zeros(1), res]
    a, b = (_float_input(rng, s, prog.dtype, 1.0) for s in (prog.a_shape, prog.b_shape))
    bias = _float_input(rng, (1, prog.N) if prog.bias == "row" else (prog.N,), prog.bias_dtype)
    return [a, b, bias, _float_input(rng, prog.y_shape, prog.out)]


def matmul_reference(prog: MatmulProgram, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor,
                     res: torch.Tensor) -> Ref:
    """Exact product; the accumulation error bound of docs/performance.md "Numerical contract"
    (``K * 2^-24 * (|bias| + sum_k |a b|)``), one rounding to ``out`` (the fixpipe), then the epilogue
    in ``out``'s precision."""
    a64, b64 = a.double(), b.double()
    if prog.a_trans:
        a64 = a64.transpose(-1, -2)
    if prog.b_trans:
        b64 = b64.transpose(-1, -2)
    val, mag = (a64 @ b64).numpy(), (a64.abs() @ b64.abs()).numpy()
    if prog.bias:
        val, mag = val + bias.double().numpy(), mag + bias.double().abs().numpy()
    p = Prec.of(prog.out)
    m = r_cast(Ref(val, prog.K * U32 * mag), p)
    if prog.epilogue == "relu_scale_residual":
        return r_add(r_mul(r_relu(m, p), r_scalar(m, 2.0), p), _float_ref(res), p)
    if prog.epilogue == "sum_rows":
        return r_reduce("sum", m, -1, True, p)
    if prog.epilogue == "amax_cols":
        return r_reduce("amax", m, -2, True, p)
    return m


def integer_matmul_reference(prog: MatmulProgram, a: torch.Tensor, b: torch.Tensor, res: torch.Tensor) -> torch.Tensor:
    """INT8 x INT8 -> INT32 is exact (no wrapping at these sizes); the epilogue like torch."""
    a64, b64 = a.long(), b.long()
    m = (a64.transpose(-1, -2) if prog.a_trans else a64) @ (b64.transpose(-1, -2) if prog.b_trans else b64)
    m = m.int()
    return {"store": lambda: m, "relu_scale_residual": lambda: torch.relu(m) * 2 + res,
            "sum_rows": lambda: m.sum(-1, keepdim=True), "amax_cols": lambda: m.amax(-2, keepdim=True)}[prog.epilogue]()


@pytest.mark.parametrize("dtype", MATMUL_DTYPES)
@settings(max_examples=2, **FUZZ_SETTINGS)
@given(data=st.data(), seed=st.integers(0, 2 ** 31 - 1))
def test_matmul_programs(dtype: str, data, seed: int) -> None:
    """Matmul with every documented operand option and an epilogue, under cube tiles that leave tails
    in M, K and N, within the documented accumulation bound (exact for INT8) on both backends; each
    operand dtype gets its own examples."""
    run_matmul_program(data.draw(matmul_programs(dtype), label="prog"), seed)


@settings(max_examples=8, **FUZZ_SETTINGS)
@given(data=st.data(), seed=st.integers(0, 2 ** 31 - 1))
def test_matmul_programs_on_the_simulator(data, seed: int) -> None:
    """The cube path's lowering (Mat/Left/Right/Acc tiles, K accumulation, the cube -> vector
    hand-over of the epilogue) on the simulator: correct and free of hazards."""
    dtype = data.draw(st.sampled_from(MATMUL_DTYPES), label="dtype")
    run_matmul_program(data.draw(matmul_programs(dtype), label="prog"), seed, backends=("sim",))


def run_matmul_program(prog, seed: int, backends: Sequence[str] = BACKENDS) -> None:
    """``prog`` on ``backends`` against the reference (exact for INT8, else the accumulation bound)."""
    a, b, bias, res = matmul_inputs(prog, np.random.default_rng(seed))
    kernels = {be: build_matmul_kernel(prog, be) for be in backends}
    for backend, k in kernels.items():
        y = torch.zeros(prog.y_shape, dtype=ALL_TORCH[prog.y_dtype])
        k(a, b, bias, res, y)
        what = f"{backend}\n{prog!r}"
        if prog.dtype == "INT8":
            want = integer_matmul_reference(prog, a, b, res)
            assert torch.equal(y, want.to(y.dtype)), what
        else:
            check_close(y, matmul_reference(prog, a, b, bias, res), what)


# ----------------------------------------------------------------------------- 4. integers and BOOL
# name -> (arity, fn(module, args, scalars)): the same expression records the pypto kernel
# (module = pypto) and computes the torch reference (module = torch); ``d`` (input 2) is the divisor,
# never 0 or -1 (INT_MIN // -1 overflows in C).
INT_OPS: Dict[str, Tuple[int, Callable]] = {
    "add": (2, lambda m, a, s: a[0] + a[1]),
    "sub": (2, lambda m, a, s: a[0] - a[1]),
    "mul": (2, lambda m, a, s: a[0] * a[1]),  # wraps like torch (8-bit computed in INT16, wrapped back)
    "mul_scalar": (1, lambda m, a, s: a[0] * s[0]),
    "neg": (1, lambda m, a, s: -a[0]),
    "floordiv": (1, lambda m, a, s: a[0] // a[-1]),
    "rem": (1, lambda m, a, s: a[0] % a[-1]),
    "floordiv_scalar": (1, lambda m, a, s: a[0] // s[1]),
    "rem_scalar": (1, lambda m, a, s: a[0] % s[1]),
    "maximum": (2, lambda m, a, s: m.maximum(a[0], a[1])),
    "minimum": (2, lambda m, a, s: m.minimum(a[0], a[1])),
    "where": (2, lambda m, a, s: m.where(a[0] > a[1], a[1], a[0] - s[0])),
    "where_ne": (2, lambda m, a, s: m.where(m.logical_and(a[0] != a[1], a[0] >= s[0]), a[0], a[1])),
    "clip": (1, lambda m, a, s: m.clip(a[0], min(s), max(s))),
}
INT_RANGE = {"INT8": (-128, 127), "INT16": (-2 ** 15, 2 ** 15 - 1), "INT32": (-2 ** 31, 2 ** 31 - 1)}
CAST_MODES = ("CAST_NONE", "CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC")


@dataclasses.dataclass(frozen=True)
class IntProgram:
    """An integer DAG ``v`` over ``a``, ``b`` (the divisor ``d`` is the last input) in ``dtype`` plus, in
    the same kernel: ``v > b`` (BOOL), ``cast(v, to_float)``, ``cast(v, to_int)``, ``argmax/argmin(v, dim)``,
    ``cumsum(v, dim)``, ``sum(mask, dim)``, ``prod/cumprod(s, dim)`` of small values ``s``, and
    ``cast(f, dtype, mode, satmode)`` of a float input ``f``."""
    dtype: str
    shape: Tuple[int, int]
    steps: Tuple[Tuple[str, int], ...]  # (op, index of the second operand among a, b and earlier steps)
    scalars: Tuple[int, int]  # (any value, a non-zero divisor)
    dim: int
    to_float: str
    to_int: str
    f_dtype: str
    cast_mode: str
    satmode: bool
    small: bool  # inputs in [-100, 100] (else the dtype's whole range)
    tile: Tuple[int, int]


@st.composite
def int_programs(draw) -> IntProgram:
    dtype = draw(st.sampled_from(sorted(INT_RANGE)))
    steps = []
    for i in range(draw(st.integers(1, 6))):
        steps.append((draw(st.sampled_from(sorted(INT_OPS))), draw(st.integers(0, i + 1))))
    return IntProgram(
        dtype, (draw(st.integers(1, 20)), draw(st.integers(1, 70))), tuple(steps),
        (draw(st.integers(-100, 100)), draw(st.sampled_from([2, 3, 7, -2, -5]))), draw(st.sampled_from([0, -1])),
        draw(st.sampled_from(["FP32", "FP16", "BF16"])), draw(st.sampled_from([d for d in INT_RANGE if d != dtype])),
        draw(st.sampled_from(["FP32", "FP16", "BF16"])), draw(st.sampled_from(CAST_MODES)), draw(st.booleans()),
        dtype == "INT8" or draw(st.booleans()),  # INT8's whole range is small anyway
        (draw(st.integers(1, 16)), draw(st.integers(8, 128))))


def int_dag(prog: IntProgram, m, a, b, d):
    """The DAG's value; ``m`` is ``pypto`` or ``torch``."""
    values = [a, b]
    for name, j in prog.steps:
        arity, fn = INT_OPS[name]
        values.append(fn(m, [values[-1]] + ([values[j]] if arity == 2 else []) + [d], prog.scalars))
    return values[-1]


def int_outputs(prog: IntProgram, m, a, b, d, s, f) -> List:
    """Every output of the kernel, recorded (``m = pypto``) or computed by torch (``m = torch``)."""
    v = int_dag(prog, m, a, b, d)
    mask = v > b
    if m is pypto:
        casts = [pypto.cast(v, ALL_PYPTO[prog.to_float]), pypto.cast(v, ALL_PYPTO[prog.to_int]),
                 pypto.cast(f, ALL_PYPTO[prog.dtype], getattr(pypto.CastMode, prog.cast_mode),
                            pypto.SaturationMode.ON if prog.satmode else pypto.SaturationMode.OFF)]
        args = [pypto.argmax(v, prog.dim), pypto.argmin(v, prog.dim)]
    else:
        casts = [v.to(ALL_TORCH[prog.to_float]), v.to(ALL_TORCH[prog.to_int]), float_to_int(prog, f)]
        # docs/tensor.md "Reduction dtypes": argmax/argmin give INT32 indices (torch: INT64)
        args = [torch.argmax(v, prog.dim).int(), torch.argmin(v, prog.dim).int()]
    # integer and BOOL sums, products and scans give INT64 (torch's rule, docs/tensor.md)
    return [v, mask, *casts, *args, m.cumsum(v, prog.dim), m.sum(mask, prog.dim), m.prod(s, prog.dim),
            m.cumprod(s, prog.dim)]


def float_to_int(prog: IntProgram, f: torch.Tensor) -> torch.Tensor:
    """docs/language.md ``cast``: CAST_NONE = CAST_RINT (nearest even), CAST_ROUND ties away; float -> int
    saturates and maps NaN to 0.  docs/tensor.md: to an integer narrower than INT32 it saturates with
    ``SaturationMode.ON`` and keeps the low bits of the INT32 value with OFF (the default)."""
    x = f.double().numpy()
    rounded = {"CAST_NONE": np.rint, "CAST_RINT": np.rint, "CAST_FLOOR": np.floor, "CAST_CEIL": np.ceil,
               "CAST_TRUNC": np.trunc,
               "CAST_ROUND": lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)}[prog.cast_mode](x)
    lo, hi = INT_RANGE[prog.dtype] if prog.satmode else INT_RANGE["INT32"]
    wide = np.clip(np.nan_to_num(rounded, nan=0.0), lo, hi).astype(np.int64)
    return torch.from_numpy(wide).to(INT_TORCH[prog.dtype])  # wraps: the low bits


def int_inputs(prog: IntProgram, rng: np.random.Generator) -> List[torch.Tensor]:
    """``a``, ``b``, the divisor ``d`` (no 0 or -1), small ``s`` for the products, and the float ``f``
    (small values on and between half-integers, values beyond INT8/INT16/INT32 and NaN)."""
    lo, hi = (-100, 100) if prog.small else INT_RANGE[prog.dtype]
    tdt = INT_TORCH[prog.dtype]
    a, b, d = (torch.from_numpy(rng.integers(lo, hi, prog.shape, endpoint=True)).to(tdt) for _ in range(3))
    d[(d == 0) | (d == -1)] = 3
    s = torch.from_numpy(rng.choice([-1, 1, 1, 2, -2, 0, 3], prog.shape)).to(tdt)
    f = rng.integers(-400, 400, prog.shape) / 4.0
    big = rng.random(prog.shape) < 0.2
    f[big] = rng.choice([3e2, -3e2, 5e4, -5e4, 3e9, -3e9, np.nan], big.sum())
    return [a, b, d, s, torch.from_numpy(f.astype(np.float32)).to(TORCH_DTYPES[prog.f_dtype])]


def build_int_kernel(prog: IntProgram, backend: str) -> Callable:
    """``ints(a, b, d, s, f, *outs)``: the eleven outputs of :func:`int_outputs` in one kernel."""
    @pypto.frontend.jit(backend=backend)
    def ints(a: pypto.Tensor(), b: pypto.Tensor(), d: pypto.Tensor(), s: pypto.Tensor(), f: pypto.Tensor(),
             o0: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor(), o4: pypto.Tensor(),
             o5: pypto.Tensor(), o6: pypto.Tensor(), o7: pypto.Tensor(), o8: pypto.Tensor(), o9: pypto.Tensor(),
             o10: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*prog.tile)
        for o, v in zip((o0, o1, o2, o3, o4, o5, o6, o7, o8, o9, o10), int_outputs(prog, pypto, a, b, d, s, f)):
            o[:] = v

    return ints


@settings(max_examples=6, **FUZZ_SETTINGS)
@given(prog=int_programs(), seed=st.integers(0, 2 ** 31 - 1))
def test_integer_programs(prog: IntProgram, seed: int) -> None:
    """Integer DAGs over the whole dtype range (wrapping like torch), BOOL masks, int <-> float and
    int -> int casts, float -> int casts in every CastMode / SaturationMode, argmax/argmin, prod, cumsum,
    cumprod and mask sums equal torch exactly on both backends (documented decisions followed)."""
    inputs = int_inputs(prog, np.random.default_rng(seed))
    wants = int_outputs(prog, torch, *inputs)
    for backend in BACKENDS:
        outs = [torch.zeros(w.shape, dtype=w.dtype) for w in wants]
        build_int_kernel(prog, backend)(*inputs, *outs)
        for i, (got, want) in enumerate(zip(outs, wants)):
            if not torch.equal(got, want):
                bad = tuple(int(x[0]) for x in torch.nonzero(got != want, as_tuple=True))
                raise AssertionError(f"{backend}: output {i} differs first at {bad}: got {got[bad]}, want "
                                     f"{want[bad]}\n{prog!r}")


# ----------------------------------------------------------------------------- bugs the generators found
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("run_time_step", [False, True], ids=["static_step", "run_time_step"])
def test_is_loop_end_with_a_negative_step(backend: str, run_time_step: bool) -> None:
    """``pypto.loop(4, -1, -1)`` visits 4, 3, 2, 1, 0; ``is_loop_end(i)`` is true only at ``i == 0``,
    the last iteration (docs/tensor.md "Ops": "test first/last iteration of a pypto.loop"), as ``is_loop_begin``
    is only at ``i == 4``.  It used to be ``i + step >= stop``: true on every backward iteration.  A
    step known only at run time (-1 computed from a DYNAMIC dim) is tested as
    ``(i + step - stop) * step >= 0``, right for either sign."""
    @pypto.frontend.jit(backend=backend)
    def last_row(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        n = x.shape[0]
        for i in pypto.loop(n - 1, -1, 0 - n // n if run_time_step else -1):
            v = pypto.view(x, [1, 32], [i, 0])
            if pypto.is_loop_end(i):
                pypto.assemble(v * 3, [i, 0], y)
            else:
                pypto.assemble(v, [i, 0], y)

    x, y = torch.ones(5, 32), torch.zeros(5, 32)
    last_row(x, y)
    assert y[:, 0].tolist() == [3.0, 1.0, 1.0, 1.0, 1.0]

"""Differential fuzzing of the tensor level: hypothesis-generated ``@pypto.frontend.jit`` programs run
on the ``interp`` backend (the meaning of every program) and on the compiled ``cpu`` backend, and both
are compared with a float64 numpy reference computed from the same (dtype-rounded) inputs.

A program is a random DAG of element-wise ops over 1-3 inputs (torch broadcasting, rank 2-3), with
reductions at the end of or inside the chain, stored through ``out[:] =``, a slice assignment,
``pypto.assemble`` or in place, under random vec tile shapes that leave tails, sometimes with a
``pypto.DYNAMIC`` first dim (then called at two sizes without recompiling).  Softmax / rms_norm /
layer_norm get their own generator.

Tolerance: the reference carries, next to each value, a first-order bound on the error of any
evaluation that rounds every op result to the program's dtype (``Ref.err``; ``UNIT_ROUNDOFF`` below
gives the per-dtype rounding), so cancellations and amplifications are accounted for instead of one
loose global tolerance; a result that may have overflowed the dtype is not checked.  Besides, the two
backends must agree bit for bit, ``exp`` and what is built on it included (the interpreter computes
exp by the cpu backend's fp32 sequence, docs/performance.md "Decision: exp").

Bugs the generators found are kept as minimal regression tests at the end of this file.
"""
import dataclasses
import operator
import os
from typing import Callable, Dict, List, Optional, Sequence, Tuple
from unittest import mock

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pypto
from pypto_pro.backends import cpu

pytestmark = pytest.mark.skipif(not cpu.available(), reason="no C++ compiler for the cpu backend")

BACKENDS = ("interp", "cpu")
TORCH_DTYPES = {"FP32": torch.float32, "FP16": torch.float16, "BF16": torch.bfloat16}
PYPTO_DTYPES = {"FP32": pypto.DT_FP32, "FP16": pypto.DT_FP16, "BF16": pypto.DT_BF16}

# Unit roundoff u (half an ulp, relative) of one op whose result is rounded to the dtype; every
# element-wise op result is rounded once to its dtype (docs/performance.md: "fp16/bf16 computed in
# fp32 with one rounding per op"), so each op adds u * |result| to the error bound.
UNIT_ROUNDOFF = {
    "FP32": 2.0 ** -24,  # 24-bit significand, round to nearest even
    "FP16": 2.0 ** -11,  # 11-bit significand: every FP16 op result rounds this much
    "BF16": 2.0 ** -8,   # 8-bit significand: the coarsest, ~0.4% per op
}
# Smallest normal value: an absolute error floor per op for results that underflow (denormals
# flushed to zero or not) -- 6e-5 matters for FP16 only.
SMALLEST_NORMAL = {"FP32": 2.0 ** -126, "FP16": 2.0 ** -14, "BF16": 2.0 ** -126}
LARGEST = {"FP32": float(np.finfo(np.float32).max), "FP16": 65504.0,
           "BF16": float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)}
U32 = UNIT_ROUNDOFF["FP32"]
# exp-based ops are compositions in FP32 (exp is a polynomial <= 1.01 ulp on every backend,
# then add/reciprocal around it): their own error, in units of U32 (half an FP32 ulp).
TRANSCENDENTAL_ULPS = 8
# The bound is first order (products of errors and the order of summation are not modelled).
SAFETY = 2.0

# examples per generator test (each compiles two kernels: ~2 s); raise it for a longer local run
FUZZ_EXAMPLES = int(os.environ.get("PYPTO_TENSOR_FUZZ_EXAMPLES", "12"))


# ----------------------------------------------------------------------------- reference with error bounds
@dataclasses.dataclass(frozen=True)
class Prec:
    """Rounding of op results in one dtype."""
    u: float
    tiny: float
    largest: float

    @staticmethod
    def of(dtype: str) -> "Prec":
        return Prec(UNIT_ROUNDOFF[dtype], SMALLEST_NORMAL[dtype], LARGEST[dtype])


@dataclasses.dataclass
class Ref:
    """Exact (float64) value and a bound on how far a correct evaluation in the program's dtype can be
    from it; ``err`` is inf where nothing is known (the value may have overflowed) and 0 where the
    result is exact (inputs, max/min/abs/neg of exact values, inf and NaN results)."""
    val: np.ndarray
    err: np.ndarray


def _finish(val: np.ndarray, err: np.ndarray, p: Prec, rounded: bool = True, rel: float = 0.0,
            absolute: float = 0.0) -> Ref:
    """``val``/``err`` of an op result plus the op's own rounding (``u`` of the dtype, ``rel`` and
    ``absolute`` more for composite ops).  Non-finite exact values stay exact; finite values that may
    overflow the dtype become unknown."""
    mag = np.abs(val)
    if rounded:
        err = err + (p.u + rel) * mag + p.tiny + absolute
    err = np.where(np.isnan(err), np.inf, err)
    finite = np.isfinite(val)
    err = np.where(finite, np.where(mag + err >= p.largest, np.inf, err), 0.0)
    return Ref(val, err)


def _lipschitz(a: Ref, fn: Callable, slope: float, p: Prec, **kw) -> Ref:
    return _finish(fn(a.val), slope * a.err, p, **kw)


def r_add(a: Ref, b: Ref, p: Prec) -> Ref:
    return _finish(a.val + b.val, a.err + b.err, p)


def r_sub(a: Ref, b: Ref, p: Prec) -> Ref:
    return _finish(a.val - b.val, a.err + b.err, p)


def r_mul(a: Ref, b: Ref, p: Prec) -> Ref:
    return _finish(a.val * b.val, np.abs(b.val) * a.err + np.abs(a.val) * b.err + a.err * b.err, p)


def r_div(a: Ref, b: Ref, p: Prec) -> Ref:
    val = a.val / b.val
    room = np.abs(b.val) - b.err
    err = np.where(room > 0, (a.err + np.abs(val) * b.err) / np.where(room > 0, room, 1.0), np.inf)
    return _finish(val, err, p)


def r_abs(a: Ref) -> Ref:
    return Ref(np.abs(a.val), a.err)


def r_scalar(a: Ref, s: float) -> Ref:
    """A Python scalar operand: exact, broadcast like ``a``."""
    return Ref(np.full_like(a.val, s), np.zeros_like(a.err))


def _extreme(a: Ref, b: Ref, take_a: np.ndarray, p: Prec) -> Ref:
    """max/min (NaN propagates, as in torch): an exact selection; where the order may flip under the
    operands' errors either is possible."""
    val = np.where(take_a | np.isnan(a.val), a.val, b.val)
    close = np.abs(a.val - b.val) <= a.err + b.err
    err = np.where(close, np.maximum(a.err, b.err), np.where(take_a, a.err, b.err))
    return _finish(val, err, p, rounded=False)


def r_maximum(a: Ref, b: Ref, p: Prec) -> Ref:
    return _extreme(a, b, a.val >= b.val, p)


def r_minimum(a: Ref, b: Ref, p: Prec) -> Ref:
    return _extreme(a, b, a.val <= b.val, p)


def r_where(cond_lhs: Ref, cond_rhs: Ref, cmp: str, x: Ref, y: Ref, p: Prec) -> Ref:
    """``where(cond_lhs <cmp> cond_rhs, x, y)``; where the comparison may flip, both branches are allowed."""
    cond = CMP[cmp][0](cond_lhs.val, cond_rhs.val)
    slack = cond_lhs.err + cond_rhs.err
    flip = (np.abs(cond_lhs.val - cond_rhs.val) <= slack) & (slack > 0)
    val = np.where(cond, x.val, y.val)
    err = np.where(flip, np.maximum(x.err, y.err) + np.abs(x.val - y.val), np.where(cond, x.err, y.err))
    return _finish(val, err, p, rounded=False)


def r_exp(a: Ref, p: Prec) -> Ref:
    val = np.exp(a.val)
    return _finish(val, val * np.expm1(a.err), p, rel=TRANSCENDENTAL_ULPS * U32)


def r_sqrt_abs(a: Ref, p: Prec) -> Ref:
    mag = np.abs(a.val)
    val = np.sqrt(mag)
    with np.errstate(divide="ignore"):
        err = np.minimum(np.sqrt(a.err), a.err / (2 * val))
    return _finish(val, err, p)


def r_rsqrt(a: Ref, p: Prec) -> Ref:
    """``1 / sqrt(a)`` (two roundings), for ``a > 0``."""
    val = 1.0 / np.sqrt(a.val)
    room = a.val - a.err
    err = np.where(room > 0, 0.5 * a.err * np.where(room > 0, room, 1.0) ** -1.5, np.inf)
    return _finish(val, err, p, rel=U32)


def r_relu(a: Ref, p: Prec) -> Ref:
    # the tile relu maps NaN to +0 where torch keeps NaN (docs/performance.md): NaN is not checked
    out = _lipschitz(a, lambda v: np.maximum(v, 0.0), 1.0, p, rounded=False)
    return Ref(out.val, np.where(np.isnan(out.val), np.inf, out.err))


def r_sigmoid(a: Ref, p: Prec) -> Ref:
    return _lipschitz(a, lambda v: 1.0 / (1.0 + np.exp(-v)), 0.25, p, absolute=TRANSCENDENTAL_ULPS * U32)


def r_tanh(a: Ref, p: Prec) -> Ref:
    # 2 * sigmoid(2x) - 1 in FP32: an absolute error of a few FP32 ulps of 1 near 0
    return _lipschitz(a, np.tanh, 1.0, p, absolute=2 * TRANSCENDENTAL_ULPS * U32)


def r_reduce(kind: str, a: Ref, dim: int, keepdim: bool, p: Prec) -> Ref:
    """sum / mean accumulate in FP32 (16-bit inputs rounded once at the end); amax / amin are exact."""
    n = a.val.shape[dim]
    if kind in ("amax", "amin"):
        val = (np.max if kind == "amax" else np.min)(a.val, axis=dim, keepdims=keepdim)
        return _finish(val, np.max(a.err, axis=dim, keepdims=keepdim), p, rounded=False)
    err = np.sum(a.err, axis=dim, keepdims=keepdim) + n * U32 * np.sum(np.abs(a.val), axis=dim, keepdims=keepdim)
    val = np.sum(a.val, axis=dim, keepdims=keepdim)
    if kind == "mean":
        val, err = val / n, err / n + U32 * np.abs(val / n)
    return _finish(val, err, p)


def r_cast(a: Ref, p: Prec) -> Ref:
    """The single rounding of an FP32 result to the output dtype."""
    return _finish(a.val, a.err, p)


# ----------------------------------------------------------------------------- the op set
# comparison -> (operator for pypto tensors and numpy arrays alike, its spelling)
CMP: Dict[str, Tuple[Callable, str]] = {"gt": (operator.gt, ">"), "lt": (operator.lt, "<"),
                                        "ge": (operator.ge, ">="), "le": (operator.le, "<=")}
SCALARS = (0.5, -2.0, 1.5, 3.0, -0.25)
REDUCTIONS = ("sum", "mean", "amax", "amin")


def _element(dtype: str, value: float):
    """A scalar operand of ``where``: a Python float with FP32 partners, else ``pypto.Element``."""
    return value if dtype == "FP32" else pypto.Element(PYPTO_DTYPES[dtype], value)


@dataclasses.dataclass(frozen=True)
class Op:
    """One op of the generator: its arity, its pypto spelling (``kernel(args, params, dtype)``), its
    reference (``ref(args, params, prec)``), a source template for reports and whether inf/NaN inputs have
    torch's meaning for it."""
    arity: int
    kernel: Callable
    ref: Callable
    template: str
    specials: bool = False


OPS: Dict[str, Op] = {
    "add": Op(2, lambda a, q, d: a[0] + a[1], lambda a, q, p: r_add(a[0], a[1], p), "{0} + {1}", specials=True),
    "sub": Op(2, lambda a, q, d: a[0] - a[1], lambda a, q, p: r_sub(a[0], a[1], p), "{0} - {1}", specials=True),
    "mul": Op(2, lambda a, q, d: a[0] * a[1], lambda a, q, p: r_mul(a[0], a[1], p), "{0} * {1}"),
    "div": Op(2, lambda a, q, d: a[0] / (pypto.abs(a[1]) + 0.5),  # divisor kept >= 0.5
              lambda a, q, p: r_div(a[0], r_add(r_abs(a[1]), r_scalar(a[1], 0.5), p), p),
              "{0} / (pypto.abs({1}) + 0.5)"),
    "maximum": Op(2, lambda a, q, d: pypto.maximum(a[0], a[1]), lambda a, q, p: r_maximum(a[0], a[1], p),
                  "pypto.maximum({0}, {1})", specials=True),
    "minimum": Op(2, lambda a, q, d: pypto.minimum(a[0], a[1]), lambda a, q, p: r_minimum(a[0], a[1], p),
                  "pypto.minimum({0}, {1})", specials=True),
    "neg": Op(1, lambda a, q, d: -a[0], lambda a, q, p: Ref(-a[0].val, a[0].err), "-{0}", specials=True),  # exact
    "abs": Op(1, lambda a, q, d: pypto.abs(a[0]), lambda a, q, p: r_abs(a[0]),
              "pypto.abs({0})", specials=True),
    "relu": Op(1, lambda a, q, d: pypto.relu(a[0]), lambda a, q, p: r_relu(a[0], p), "pypto.relu({0})"),
    "exp": Op(1, lambda a, q, d: pypto.exp(a[0]), lambda a, q, p: r_exp(a[0], p), "pypto.exp({0})"),
    "sqrt_abs": Op(1, lambda a, q, d: pypto.sqrt(pypto.abs(a[0])), lambda a, q, p: r_sqrt_abs(a[0], p),
                   "pypto.sqrt(pypto.abs({0}))"),
    "sigmoid": Op(1, lambda a, q, d: pypto.sigmoid(a[0]), lambda a, q, p: r_sigmoid(a[0], p),
                  "pypto.sigmoid({0})"),
    "tanh": Op(1, lambda a, q, d: pypto.tanh(a[0]), lambda a, q, p: r_tanh(a[0], p), "pypto.tanh({0})"),
    "affine": Op(1, lambda a, q, d: a[0] * q["s"] + q["c"],
                 lambda a, q, p: r_add(r_mul(a[0], r_scalar(a[0], q["s"]), p), r_scalar(a[0], q["c"]), p),
                 "{0} * {s} + {c}", specials=True),
    "rsub": Op(1, lambda a, q, d: q["c"] - a[0], lambda a, q, p: r_sub(r_scalar(a[0], q["c"]), a[0], p),
               "{c} - {0}"),
    "where": Op(3, lambda a, q, d: pypto.where(CMP[q["cmp"]][0](a[0], a[1]), a[2], a[0]),
                lambda a, q, p: r_where(a[0], a[1], q["cmp"], a[2], a[0], p),
                "pypto.where({0} {op} {1}, {2}, {0})"),
    "where_scalar": Op(2, lambda a, q, d: pypto.where(CMP[q["cmp"]][0](a[0], a[1]), a[0], _element(d, q["c"])),
                       lambda a, q, p: r_where(a[0], a[1], q["cmp"], a[0], r_scalar(a[0], q["c"]), p),
                       "pypto.where({0} {op} {1}, {0}, {c})"),
}
for _kind in REDUCTIONS:
    OPS[_kind] = Op(1, lambda a, q, d, k=_kind: getattr(pypto, k)(a[0], q["dim"], keepdim=q["keepdim"]),
                    lambda a, q, p, k=_kind: r_reduce(k, a[0], q["dim"], q["keepdim"], p),
                    f"pypto.{_kind}({{0}}, {{dim}}, keepdim={{keepdim}})")
ELEMENTWISE = [name for name in OPS if name not in REDUCTIONS]


# ----------------------------------------------------------------------------- programs
Shape = Tuple[object, ...]  # symbolic: 1 or an axis name "N0" / "N1" / "N2" (sizes in Program.sizes)


def _broadcast(a: Shape, b: Shape) -> Optional[Shape]:
    """torch's broadcast of two symbolic shapes (named axes only match themselves), or None."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def _reduced(shape: Shape, dim: int, keepdim: bool) -> Shape:
    d = dim % len(shape)
    return shape[:d] + ((1,) if keepdim else ()) + shape[d + 1:]


@dataclasses.dataclass(frozen=True)
class Step:
    op: str
    args: Tuple[int, ...]  # indices into inputs + earlier steps
    params: Tuple[Tuple[str, object], ...] = ()


@dataclasses.dataclass(frozen=True)
class Program:
    """A generated kernel: inputs ``x0..`` of symbolic shapes, SSA steps, the store of the last value."""
    dtype: str
    sizes: Tuple[Tuple[str, int], ...]
    dynamic: bool  # axis 0 of the full shape ("N0") is pypto.DYNAMIC
    resize: int  # with ``dynamic``: the second call's size of N0 (same compiled kernel)
    inputs: Tuple[Shape, ...]
    steps: Tuple[Step, ...]
    tile: Tuple[int, ...]
    store: str  # full | window | assemble | inplace | columns
    offsets: Tuple[int, ...] = ()  # window / assemble: offset per axis; columns: (c0, c1)
    pads: Tuple[int, ...] = ()  # window / assemble: out is larger than the value by this much
    threads: int = 1  # cpu blocks ($PYPTO_NUM_THREADS); small tensors would otherwise run on one

    def shapes(self) -> List[Shape]:
        shapes = list(self.inputs)
        for s in self.steps:
            q = dict(s.params)
            if s.op in REDUCTIONS:
                shapes.append(_reduced(shapes[s.args[0]], q["dim"], q["keepdim"]))
            else:
                out = shapes[s.args[0]]
                for a in s.args[1:]:
                    out = _broadcast(out, shapes[a])
                shapes.append(out)
        return shapes

    def concrete(self, shape: Shape, n0: Optional[int] = None) -> Tuple[int, ...]:
        sizes = dict(self.sizes, **({"N0": n0} if n0 is not None else {}))
        return tuple(sizes.get(d, d) for d in shape)

    @property
    def specials(self) -> bool:
        return all(OPS[s.op].specials for s in self.steps)

    def source(self) -> str:
        """The kernel body as it is recorded (for reports and hypothesis' falsifying example)."""
        n = len(self.inputs)
        names = [f"x{i}" for i in range(n)] + [f"v{i}" for i in range(len(self.steps))]
        lines = [f"pypto.set_vec_tile_shapes{self.tile}"]
        for i, s in enumerate(self.steps):
            q = dict(s.params)
            if "cmp" in q:
                q["op"] = CMP[q["cmp"]][1]
            text = OPS[s.op].template.format(*(names[a] for a in s.args), **q)
            lines.append(f"v{i} = {text}")
        lines.append(self.store_source(names[-1]))
        return "\n".join(lines)

    def store_source(self, v: str) -> str:
        if self.store == "inplace":
            return f"x0[:] = {v}"
        if self.store == "assemble":
            return f"pypto.assemble({v}, {list(self.offsets)}, out)"
        if self.store == "columns":
            c0, c1 = self.offsets
            return f"out[..., {c0}:{c1}] = {v}[..., {c0}:{c1}]"
        if self.store == "window":
            return f"out[{', '.join(f'{a}:{a}+{v}.shape[{i}]' for i, a in enumerate(self.offsets))}] = {v}"
        return f"out[:] = {v}"

    def __repr__(self) -> str:
        return (f"Program(dtype={self.dtype}, sizes={dict(self.sizes)}, dynamic={self.dynamic}, resize={self.resize}, "
                f"inputs={list(self.inputs)}, store={self.store}, offsets={self.offsets}, pads={self.pads}, "
                f"threads={self.threads})\n"
                + self.source())


def evaluate(prog: Program, inputs: Sequence, op_fn: Callable) -> object:
    """Run the SSA steps over ``inputs`` with ``op_fn(op, args, params)``: the same walk records the
    pypto kernel and computes the reference."""
    values = list(inputs)
    for s in prog.steps:
        values.append(op_fn(OPS[s.op], [values[a] for a in s.args], dict(s.params)))
    return values[-1]


# ----------------------------------------------------------------------------- strategies
@st.composite
def _full_shape(draw) -> Tuple[Tuple[str, ...], Dict[str, int], Tuple[int, ...]]:
    """Full symbolic shape, its sizes and a vec tile shape (rows 1-16, cols 8-128): sizes are drawn
    independently of the tile, so most axes end in a tail."""
    rank = draw(st.sampled_from([2, 2, 3]))
    if rank == 2:
        sizes = {"N0": draw(st.integers(1, 40)), "N1": draw(st.integers(1, 150))}
        tile = (draw(st.integers(1, 16)), draw(st.integers(8, 128)))
    else:
        sizes = {"N0": draw(st.integers(1, 3)), "N1": draw(st.integers(1, 24)), "N2": draw(st.integers(1, 100))}
        tile = (draw(st.integers(1, 3)), draw(st.integers(1, 16)), draw(st.integers(8, 128)))
    return tuple(sizes), sizes, tile


@st.composite
def _broadcast_shape(draw, full: Tuple[str, ...]) -> Shape:
    """``full`` with some axes set to 1 and maybe leading axes dropped ([1,C], [R,1], [C], ...)."""
    shape = tuple(1 if draw(st.booleans()) else d for d in full)
    return shape[draw(st.integers(0, len(full) - 1)):]


@st.composite
def programs(draw, reductions: bool) -> Program:
    """A random DAG of 2-8 ops over 1-3 inputs; with ``reductions`` one or two of them reduce."""
    dtype = draw(st.sampled_from(["FP32", "FP32", "FP16", "BF16"]))
    full, sizes, tile = draw(_full_shape())
    dynamic = draw(st.booleans())
    inputs = [full] + [draw(_broadcast_shape(full)) for _ in range(draw(st.integers(0, 2)))]
    shapes = list(inputs)
    steps: List[Step] = []
    n_steps = draw(st.integers(2, 8))
    reduce_at = set(draw(st.lists(st.integers(0, n_steps - 1), min_size=1, max_size=2))) if reductions else set()
    # a third of the element-wise programs use only ops for which inf/NaN inputs are meaningful
    # (then the inputs hold some, see _inputs)
    specials = not reductions and draw(st.sampled_from([False, False, True]))
    pool = [n for n in ELEMENTWISE if OPS[n].specials] if specials else ELEMENTWISE
    for i in range(n_steps):
        name = draw(st.sampled_from(REDUCTIONS)) if i in reduce_at else draw(st.sampled_from(pool))
        # the first operand is the previous step (so every step reaches the output), the others any
        # broadcast-compatible earlier value: a DAG
        first = len(shapes) - 1 if steps else draw(st.integers(0, len(inputs) - 1))
        args, shape = [first], shapes[first]
        for _ in range(OPS[name].arity - 1):
            fits = [j for j in range(len(shapes)) if _broadcast(shape, shapes[j]) is not None]
            j = draw(st.sampled_from(fits))
            args.append(j)
            shape = _broadcast(shape, shapes[j])
        params: Dict[str, object] = {}
        if name in REDUCTIONS:
            params = {"dim": draw(st.sampled_from([-1, 0] if len(shape) < 3 else [-1, 0, 1])),
                      "keepdim": draw(st.booleans())}
            if len(shape) == 1:  # pypto's full reduction is [1], not 0-d (docs/tensor.md "Decisions")
                params["keepdim"] = True
            shape = _reduced(shape, params["dim"], params["keepdim"])
        if name in ("affine", "rsub", "where_scalar"):
            params["c"] = draw(st.sampled_from(SCALARS))
        if name == "affine":
            params["s"] = draw(st.sampled_from(SCALARS))
        if name.startswith("where"):
            params["cmp"] = draw(st.sampled_from(sorted(CMP)))
        steps.append(Step(name, tuple(args), tuple(sorted(params.items()))))
        shapes.append(shape)
    out = shapes[-1]
    dynamic = dynamic and out[:1] == ("N0",)  # the dynamic axis must reach the output to be exercised
    store = draw(st.sampled_from(["full", "window", "assemble", "columns"]
                                 + (["inplace"] if out == full else [])))
    concrete = tuple(sizes.get(d, d) for d in out)
    offsets: Tuple[int, ...] = ()
    pads: Tuple[int, ...] = ()
    if store in ("window", "assemble"):
        pads = tuple(0 if (dynamic and i == 0) else draw(st.integers(0, 5)) for i in range(len(out)))
        offsets = tuple(draw(st.integers(0, p)) for p in pads)
    if store == "columns":
        c0 = draw(st.integers(0, concrete[-1] - 1))
        offsets = (c0, draw(st.integers(c0 + 1, concrete[-1])))
    resize = draw(st.integers(1, 40).filter(lambda n: n != sizes["N0"]))
    return Program(dtype, tuple(sizes.items()), dynamic, resize, tuple(inputs), tuple(steps), tile, store, offsets,
                   pads, draw(st.integers(1, 3)))


# ----------------------------------------------------------------------------- running
def _annotation(prog: Program, shape: Shape) -> pypto.Tensor:
    dims = [pypto.DYNAMIC if (prog.dynamic and d == "N0") else prog.concrete((d,))[0] for d in shape]
    return pypto.Tensor(dims, PYPTO_DTYPES[prog.dtype])


def _out_shape(prog: Program, value_shape: Tuple[int, ...]) -> Tuple[int, ...]:
    return tuple(n + p for n, p in zip(value_shape, prog.pads)) if prog.pads else value_shape


def build_kernel(prog: Program, backend: str) -> Callable:
    """The generated program as a jit kernel ``k(x0, x1, x2, out)`` (unused inputs get dummies)."""
    shapes = prog.shapes()
    anns = [_annotation(prog, s) for s in prog.inputs] + [pypto.Tensor()] * (3 - len(prog.inputs))
    rank = len(shapes[-1])
    out_ann = (pypto.Tensor([pypto.DYNAMIC] + [pypto.STATIC] * (rank - 1), PYPTO_DTYPES[prog.dtype])
               if prog.dynamic else pypto.Tensor())
    window = tuple(slice(None) if (prog.dynamic and i == 0) else slice(o, o + n)
                   for i, (o, n) in enumerate(zip(prog.offsets, prog.concrete(shapes[-1]))))
    n = len(prog.inputs)

    def op_fn(op: Op, args, params):
        return op.kernel(args, params, prog.dtype)

    @pypto.frontend.jit(backend=backend)
    def fuzz(x0: anns[0], x1: anns[1], x2: anns[2], out: out_ann):
        pypto.set_vec_tile_shapes(*prog.tile)
        v = evaluate(prog, [x0, x1, x2][:n], op_fn)
        if prog.store == "inplace":
            x0[:] = v
        elif prog.store == "assemble":
            pypto.assemble(v, list(prog.offsets), out)
        elif prog.store == "columns":
            c0, c1 = prog.offsets
            out[..., c0:c1] = v[..., c0:c1]
        elif prog.store == "window":
            out[window] = v
        else:
            out[:] = v

    return fuzz


SENTINEL = -7.25  # what the untouched part of a partially written output must still hold


def _inputs(prog: Program, seed: int, n0: Optional[int]) -> List[torch.Tensor]:
    """Values ~ N(0, 1.5^2) rounded to the dtype; with only inf/NaN-safe ops, ~5% inf/-inf/NaN."""
    rng = np.random.default_rng(seed)
    xs = []
    for shape in prog.inputs:
        v = rng.standard_normal(prog.concrete(shape, n0)) * 1.5
        if prog.specials:
            mask = rng.random(v.shape) < 0.05
            v[mask] = rng.choice(np.array([np.inf, -np.inf, np.nan]), mask.sum())
        xs.append(torch.from_numpy(v.astype(np.float32)).to(TORCH_DTYPES[prog.dtype]))
    return xs


def _expected(prog: Program, xs: Sequence[torch.Tensor]) -> Tuple[Ref, Tuple[object, ...]]:
    """The reference of the stored value and the region of ``out`` (or ``x0``) it lands in."""
    p = Prec.of(prog.dtype)
    refs = [Ref(x.double().numpy(), np.zeros(x.shape)) for x in xs]
    with np.errstate(all="ignore"):
        v = evaluate(prog, refs, lambda op, args, params: op.ref(args, params, p))
    if prog.store == "columns":
        c0, c1 = prog.offsets
        return Ref(v.val[..., c0:c1], v.err[..., c0:c1]), (Ellipsis, slice(c0, c1))
    if prog.store in ("window", "assemble"):
        return v, tuple(slice(o, o + n) for o, n in zip(prog.offsets, v.val.shape))
    return v, (Ellipsis,)


def check_close(got: torch.Tensor, want: Ref, what: str) -> None:
    """``got`` within ``SAFETY * want.err`` of ``want.val``; exact (incl. inf and NaN) where err is 0;
    anything where err is inf."""
    g = got.double().numpy()
    known = np.isfinite(want.err)
    nan_want = np.isnan(want.val) & known
    assert np.array_equal(np.isnan(g) & known, nan_want), f"{what}: NaN positions differ"
    m = known & ~nan_want
    with np.errstate(invalid="ignore"):
        bad = m & ~((g == want.val) | (np.abs(g - want.val) <= SAFETY * want.err))
    if bad.any():
        idx = tuple(int(i[0]) for i in np.nonzero(bad))
        raise AssertionError(f"{what}: {bad.sum()} of {m.sum()} checked elements differ; first at {idx}: "
                             f"got {g[idx]!r}, want {want.val[idx]!r} +- {SAFETY * want.err[idx]:.3g}")


def _bits(t: torch.Tensor) -> np.ndarray:
    """Raw bits, NaNs made equal (their payloads may differ between code paths)."""
    a = t.float().numpy().copy()
    a[np.isnan(a)] = np.nan
    return a.view(np.uint32)


def run_and_check(prog: Program, seed: int, backends: Sequence[str] = BACKENDS) -> None:
    """Run ``prog`` on ``backends`` (at two sizes of a DYNAMIC axis without recompiling) and check
    each result against the reference, the untouched part of the output, and the bit-exactness of
    cpu against interp."""
    kernels = {b: build_kernel(prog, b) for b in backends}
    for n0 in [None] + ([prog.resize] if prog.dynamic else []):
        xs = _inputs(prog, seed, n0)
        want, region = _expected(prog, xs)
        out_shape = _out_shape(prog, prog.concrete(prog.shapes()[-1], n0))
        results = {}
        for backend, k in kernels.items():
            args = [x.clone() for x in xs]
            args += [torch.zeros(1, dtype=TORCH_DTYPES[prog.dtype])] * (3 - len(args))
            out = torch.full(out_shape, SENTINEL, dtype=TORCH_DTYPES[prog.dtype])
            with mock.patch.dict(os.environ, PYPTO_NUM_THREADS=str(prog.threads)):
                k(*args, out)
            got = args[0] if prog.store == "inplace" else out
            what = f"{backend} n0={n0}\n{prog!r}"
            check_close(got[region], want, what)
            if prog.store != "inplace":
                untouched = torch.ones(got.shape, dtype=torch.bool)
                untouched[region] = False
                assert torch.all(got[untouched] == SENTINEL), f"{what}: wrote outside the stored region"
            results[backend] = got
        assert all(k.compile_count == 1 for k in kernels.values())
        if {"interp", "cpu"} <= results.keys():
            assert np.array_equal(_bits(results["interp"]), _bits(results["cpu"])), \
                f"cpu and interp differ\n{prog!r}"


FUZZ_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=FUZZ_EXAMPLES, **FUZZ_SETTINGS)
@given(prog=programs(reductions=False), seed=st.integers(0, 2 ** 31 - 1))
def test_elementwise_dags(prog: Program, seed: int) -> None:
    """Random element-wise DAGs with broadcasting, tails, DYNAMIC dims and partial stores agree with
    the float64 reference on both backends (and with each other bit for bit)."""
    run_and_check(prog, seed)


@settings(max_examples=FUZZ_EXAMPLES, **FUZZ_SETTINGS)
@given(prog=programs(reductions=True), seed=st.integers(0, 2 ** 31 - 1))
def test_reduction_chains(prog: Program, seed: int) -> None:
    """DAGs with sum/mean/amax/amin (dim -1 or 0, keepdim or not) at the end or in the middle, under
    tile shapes that do or do not cover the reduced axis (in-tile vs multi-pass reductions)."""
    run_and_check(prog, seed)


@settings(max_examples=40, **FUZZ_SETTINGS)
@given(prog=programs(reductions=True), seed=st.integers(0, 2 ** 31 - 1))
def test_programs_on_the_simulator(prog: Program, seed: int) -> None:
    """The lowered tile programs are correct on the AI-Core simulator too, which also checks them
    for races, uninitialised reads and capacity errors (any hazard fails the launch)."""
    run_and_check(prog, seed, backends=("sim",))


# ----------------------------------------------------------------------------- softmax / rms_norm / layer_norm
NORMS = ("softmax", "rms_norm", "layer_norm")


@dataclasses.dataclass(frozen=True)
class NormProgram:
    """``softmax(x, dim)``, ``rms_norm(x, gamma, eps)`` and ``layer_norm(x, gamma, beta, eps)`` in one
    kernel (one compile), under one vec tile shape."""
    dtype: str
    shape: Tuple[int, ...]
    tile: Tuple[int, ...]
    softmax_dim: int
    dynamic: bool
    eps: float
    threads: int  # cpu blocks ($PYPTO_NUM_THREADS)

    @property
    def covered(self) -> bool:
        """Whether the tile holds the normalised axis (one in-tile pass) or not (multi-pass)."""
        return self.tile[-1] >= self.shape[-1]


@st.composite
def norm_programs(draw) -> NormProgram:
    """Rank 2 or 3, 1-200 columns against tile columns 8-256 (so both in-tile and multi-pass norms)."""
    dtype = draw(st.sampled_from(["FP32", "FP32", "FP16", "BF16"]))
    cols = draw(st.integers(1, 200))
    shape = ((draw(st.integers(1, 3)),) if draw(st.booleans()) else ()) + (draw(st.integers(1, 40)), cols)
    tile = tuple(draw(st.integers(1, 16)) for _ in shape[:-1]) + (draw(st.integers(8, 256)),)
    return NormProgram(dtype, shape, tile, draw(st.sampled_from([-1, -2])), draw(st.booleans()),
                       draw(st.sampled_from([1e-6, 1e-5, 1e-2])), draw(st.integers(1, 3)))


def norm_references(x: Ref, gamma: Ref, beta: Ref, prog: NormProgram) -> List[Ref]:
    """The three ops as the FP32 compositions pypto documents (B4 / docs/tensor.md), rounded once to
    the dtype."""
    f, eps = Prec.of("FP32"), prog.eps

    def mean(v: Ref, dim: int) -> Ref:
        return r_reduce("mean", v, dim, True, f)

    def inv_std(var: Ref) -> Ref:
        return r_rsqrt(r_add(var, r_scalar(var, eps), f), f)

    e = r_exp(r_sub(x, r_reduce("amax", x, prog.softmax_dim, True, f), f), f)
    total = r_reduce("sum", e, prog.softmax_dim, True, f)
    softmax = r_mul(e, r_div(r_scalar(total, 1.0), total, f), f)
    rms = r_mul(r_mul(x, inv_std(mean(r_mul(x, x, f), -1)), f), gamma, f)
    d = r_sub(x, mean(x, -1), f)
    layer = r_add(r_mul(r_mul(d, inv_std(mean(r_mul(d, d, f), -1)), f), gamma, f), beta, f)
    return [r_cast(r, Prec.of(prog.dtype)) for r in (softmax, rms, layer)]


def build_norm_kernel(prog: NormProgram, backend: str) -> Callable:
    """``norms(x, gamma, beta, soft, rms, layer)``: the three ops of ``x`` in one kernel."""
    dims = [pypto.DYNAMIC if prog.dynamic else prog.shape[0]] + list(prog.shape[1:])
    ann = pypto.Tensor(dims, PYPTO_DTYPES[prog.dtype])

    @pypto.frontend.jit(backend=backend)
    def norms(x: ann, gamma: pypto.Tensor(), beta: pypto.Tensor(), soft: ann, rms: ann, layer: ann):
        pypto.set_vec_tile_shapes(*prog.tile)
        soft[:] = pypto.softmax(x, prog.softmax_dim)
        rms[:] = pypto.rms_norm(x, gamma, prog.eps)
        layer[:] = pypto.layer_norm(x, gamma, beta, prog.eps)

    return norms


def run_norms(prog: NormProgram, seed: int, backends: Sequence[str] = BACKENDS) -> None:
    """``backends`` against the reference; on interp and cpu rms_norm and layer_norm (no exp)
    bit-identical too."""
    rng = np.random.default_rng(seed)
    dt = TORCH_DTYPES[prog.dtype]
    # an offset mean makes layer_norm's centring matter
    x = torch.from_numpy((rng.standard_normal(prog.shape) * 2 + rng.uniform(-3, 3)).astype(np.float32)).to(dt)
    gamma = torch.from_numpy(rng.uniform(0.5, 1.5, prog.shape[-1]).astype(np.float32)).to(dt)
    beta = torch.from_numpy(rng.standard_normal(prog.shape[-1]).astype(np.float32)).to(dt)
    wants = norm_references(*(Ref(t.double().numpy(), np.zeros(t.shape)) for t in (x, gamma, beta)), prog)
    results = {}
    for backend in backends:
        outs = [torch.full(prog.shape, SENTINEL, dtype=dt) for _ in range(3)]
        with mock.patch.dict(os.environ, PYPTO_NUM_THREADS=str(prog.threads)):
            build_norm_kernel(prog, backend)(x, gamma, beta, *outs)
        for name, got, want in zip(NORMS, outs, wants):
            check_close(got, want, f"{name} on {backend}\n{prog!r}")
        results[backend] = outs
    if {"interp", "cpu"} <= results.keys():
        for name, a, b in zip(NORMS, results["interp"], results["cpu"]):
            assert np.array_equal(_bits(a), _bits(b)), f"{name}: cpu and interp differ\n{prog!r}"


@settings(max_examples=6, **FUZZ_SETTINGS)
@given(prog=norm_programs(), seed=st.integers(0, 2 ** 31 - 1))
def test_norms(prog: NormProgram, seed: int) -> None:
    """softmax (dim -1 / -2), rms_norm and layer_norm with tiles that do and do not cover the
    normalised axis, FP32/FP16/BF16, static or DYNAMIC first dim."""
    run_norms(prog, seed)


@settings(max_examples=10, **FUZZ_SETTINGS)
@given(prog=norm_programs(), seed=st.integers(0, 2 ** 31 - 1))
def test_norms_on_the_simulator(prog: NormProgram, seed: int) -> None:
    """The norms' multi-pass lowerings (workspaces, grid barriers) are correct and hazard-free on
    the simulator."""
    run_norms(prog, seed, backends=("sim",))


# ----------------------------------------------------------------------------- bugs the generators found
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shapes", [((1, 5), (1, 5), (5,)), ((6, 40), (1, 1), (1,)), ((1, 5), (1, 5), (1,)),
                                    ((2, 1, 5), (1, 5), (5,)), ((1, 1), (1, 1), (1,))],
                         ids=["one_row", "scalar_part", "one_row_scalar", "rank3", "one_by_one"])
def test_1d_operand_under_a_one_row_shape(backend: str, shapes: Tuple[Tuple[int, ...], ...]) -> None:
    """``x + y * z`` with a 1-D ``z`` where ``y * z`` has a size-1 second-to-last dim (``[1, C] * [C]``,
    ``[1, 1] * [1]``) is plain torch broadcasting (rms_norm / layer_norm of one row with a 1-D gamma
    hit it too).  Lowering used to load the 1-D operand into a full (or column) tile, which
    ``pl.load`` rejects: a 1-D tensor only maps onto a [1, C] tile."""
    @pypto.frontend.jit(backend=backend)
    def one_row(x: pypto.Tensor(), y: pypto.Tensor(), z: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = x + y * z

    x, y, z = (torch.randn(s) for s in shapes)
    out = torch.empty(shapes[0])
    one_row(x, y, z, out)
    torch.testing.assert_close(out, x + y * z)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mean_and_var_over_a_dynamic_axis(backend: str) -> None:
    """torch's ``x.mean(0)`` / ``x.var(0)`` over a DYNAMIC axis divide by its run-time size (this used
    to raise KernelTypeError), at two sizes without recompiling."""
    @pypto.frontend.jit(backend=backend)
    def column_stats(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), m: pypto.Tensor([1, 16], pypto.DT_FP32),
                     v: pypto.Tensor([1, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        m[:] = pypto.mean(x, 0, keepdim=True)
        v[:] = pypto.var(x, 0, keepdim=True)

    for rows in (5, 13):
        x, m, v = torch.randn(rows, 16), torch.empty(1, 16), torch.empty(1, 16)
        column_stats(x, m, v)
        torch.testing.assert_close(m, x.mean(0, keepdim=True))
        torch.testing.assert_close(v, x.var(0, keepdim=True))
    assert column_stats.compile_count == 1

"""Vector ops (pipe V, Vec tiles, destination first; docs/language.md "Semantics of ops").

Elementwise ops iterate over the destination's valid window; operands must be Vec tiles of the
same dtype (no broadcasting, no promotion).  16-bit floats are computed in fp32 and rounded once
per op; integers wrap like C.  Row reductions (``dim=0``) are sequential left-to-right sums in the
compute dtype so every backend can reproduce them exactly.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..ir.nodes import DeclRef, SubRef, TileRef
from ..ir.optable import Arg, In, InOut, Out, op
from ..ir.types import MemorySpace, RoundMode, TilePad
from .casting import cast_values, is_low_float
from .fp32math import exp32
from .common import operand, scalar_value, window, write_result

V = MemorySpace.Vec
INTS = (dt.DT_INT8, dt.DT_INT16, dt.DT_INT32, dt.DT_INT64, dt.DT_UINT8, dt.DT_UINT16, dt.DT_UINT32, dt.DT_UINT64)
FLOATS = (dt.DT_FP16, dt.DT_BF16, dt.DT_FP32)
ARITH = INTS + FLOATS
NO_8BIT = tuple(d for d in ARITH if d.bits() > 8)
DIV_TYPES = tuple(d for d in NO_8BIT if d != dt.DT_BF16)
BIT_TYPES = (dt.DT_INT8, dt.DT_INT16, dt.DT_INT32, dt.DT_UINT8, dt.DT_UINT16, dt.DT_UINT32)
#: the shl/shr pages also list the 64-bit integers
SHIFT_TYPES = BIT_TYPES + (dt.DT_INT64, dt.DT_UINT64)
F16_F32 = (dt.DT_FP16, dt.DT_FP32)


def _vec_tiles(c, args, names):
    for n in names:
        v = args[n]
        if isinstance(v, TileRef):
            c.space(n, v, V)


def _c_div(ctx, a, b, dtype):
    if dtype.is_float():
        return a / b
    if np.any(np.asarray(b) == 0):
        raise ctx.error("integer division by zero in pl.div")
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
    return np.where(fix, q + 1, q).astype(np.asarray(a).dtype)


def _shift(left: bool):
    def f(ctx, a, b, dtype):
        b = np.asarray(b)
        if np.any((b < 0) | (b >= dtype.bits())):
            raise ctx.error(f"shift amount outside [0, {dtype.bits()})")
        return np.left_shift(a, b) if left else np.right_shift(a, b)
    return f


_BINARY = {
    # name: (function(ctx, a, b, dtype), dtypes, rhs may be a scalar)
    "add": (lambda ctx, a, b, d: a + b, ARITH, True),
    "sub": (lambda ctx, a, b, d: a - b, ARITH, True),
    "mul": (lambda ctx, a, b, d: a * b, NO_8BIT, True),
    "div": (_c_div, DIV_TYPES, True),
    "and_": (lambda ctx, a, b, d: np.bitwise_and(a, b), BIT_TYPES, True),
    "or_": (lambda ctx, a, b, d: np.bitwise_or(a, b), BIT_TYPES, True),
    "shl": (_shift(True), SHIFT_TYPES, False),
    "shr": (_shift(False), SHIFT_TYPES, False),
}


#: the traits of the binary ops (optable.OpDef): the element function, commutativity, fusability, cost class
_BINARY_TRAITS = {
    "add": dict(elementwise="add", commutative=True, fusable=True),
    "sub": dict(elementwise="sub", fusable=True),
    "mul": dict(elementwise="mul", commutative=True, fusable=True),
    "div": dict(elementwise="div", fusable=True, cost="divide"),
    "and_": dict(elementwise="and", commutative=True),
    "or_": dict(elementwise="or", commutative=True),
    "shl": dict(elementwise="shl"),
    "shr": dict(elementwise="shr"),
}


def binary_values(ctx, name, a, b, dtype):
    fn = _BINARY[name][0] if name in _BINARY else _MINMAX[name]
    with np.errstate(all="ignore"):
        return fn(ctx, a, b, dtype)


def _register_binary(name, fn, dtypes, scalar_ok):
    kind = "tile_or_scalar" if scalar_ok else "tile"

    class Binary:
        __doc__ = (f"pl.{name}(dst, lhs, rhs): dst = lhs {name} rhs over dst's valid window"
                   + (" (rhs: tile or scalar)." if scalar_ok else " (rhs: tile)."))

        @staticmethod
        def check(c, a):
            _vec_tiles(c, a, ("dst", "lhs", "rhs"))
            c.dtype_in("lhs", a["lhs"], dtypes)
            c.same_dtype(dst=a["dst"], lhs=a["lhs"], rhs=a["rhs"])
            c.same_shape(dst=a["dst"], lhs=a["lhs"], rhs=a["rhs"])

        @staticmethod
        def run(ctx, a):
            d = ctx.tile(a["dst"])
            lhs = ctx.tile(a["lhs"])
            rows, cols = window(ctx, d, lhs, *([ctx.tile(a["rhs"])] if isinstance(a["rhs"], TileRef) else []))
            x = lhs.read_compute(rows, cols)
            y = operand(ctx, a["rhs"], d.dtype, rows, cols)
            write_result(d, binary_values(ctx, name, x, y, d.dtype), rows, cols)

    op(name, [Out("dst"), In("lhs"), In("rhs", kind)], "V", **_BINARY_TRAITS[name])(Binary)


for _name, (_fn, _dtypes, _scalar) in _BINARY.items():
    _register_binary(_name, _fn, _dtypes, _scalar)


def _static_bytes(ref: TileRef):
    """[lo, hi) bytes of the one whole declared tile ``ref`` denotes, or None when that is not known
    statically: a tile-group slot chosen by the cursor, a subview, or a tile whose address is not
    assigned yet (the tensor-level lowering declares tiles at address -1 and places them later)."""
    if isinstance(ref, SubRef) or len(ref.decls()) != 1 or ref.decl.addr < 0:
        return None
    return ref.decl.addr, ref.decl.addr + ref.decl.size


def _check_scratch_apart(c, a, scratch: str, others) -> None:
    """docs/language.md: a scratch tile must not overlap the other operands (checked where addresses are static)."""
    mine = _static_bytes(a[scratch])
    for n in others:
        theirs = _static_bytes(a[n]) if isinstance(a[n], TileRef) else None
        if mine is not None and theirs is not None and mine[0] < theirs[1] and theirs[0] < mine[1]:
            c.fail(f"'{scratch}' ({a[scratch]!r}) overlaps '{n}' ({a[n]!r}); the scratch tile must be a separate tile")


@op("xor", [Out("dst"), In("lhs"), In("rhs"), Arg("tmp", "tile")], "V", elementwise="xor", commutative=True)
class Xor:
    """pl.xor(dst, lhs, rhs, tmp): bitwise xor; tmp is a scratch tile of the same type that overlaps no
    other operand."""

    @staticmethod
    def check(c, a):
        _vec_tiles(c, a, ("dst", "lhs", "rhs", "tmp"))
        c.dtype_in("lhs", a["lhs"], BIT_TYPES)
        c.same_dtype(dst=a["dst"], lhs=a["lhs"], rhs=a["rhs"], tmp=a["tmp"])
        c.same_shape(dst=a["dst"], lhs=a["lhs"], rhs=a["rhs"], tmp=a["tmp"])
        _check_scratch_apart(c, a, "tmp", ("dst", "lhs", "rhs"))

    @staticmethod
    def run(ctx, a):
        d = ctx.tile(a["dst"])
        lhs, rhs = ctx.tile(a["lhs"]), ctx.tile(a["rhs"])
        rows, cols = window(ctx, d, lhs, rhs)
        write_result(d, np.bitwise_xor(lhs.read(rows, cols), rhs.read(rows, cols)), rows, cols)


# --------------------------------------------------------------------------- maximum / minimum
def _nan_max(ctx, a, b, d):
    return np.maximum(a, b)


def _nan_min(ctx, a, b, d):
    return np.minimum(a, b)


_MINMAX = {"maximum": _nan_max, "minimum": _nan_min}


SUM_LANES = 8


def _lane_sum(x: np.ndarray, axis: int, acc_dtype) -> np.ndarray:
    """Sum along ``axis`` in the documented order of row sums: element ``c`` goes to lane ``c % 8``,
    each lane accumulates left to right, then the lanes combine pairwise
    ``((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7))`` (lanes that do not exist, in rows shorter than 8, are
    skipped).  This is the order of one 8-wide SIMD accumulator; the cpu backend uses it too."""
    n = x.shape[axis]
    lanes = []
    for lane in range(min(SUM_LANES, n)):
        part = np.take(x, np.arange(lane, n, SUM_LANES), axis=axis)
        lanes.append(np.take(np.cumsum(part, axis=axis, dtype=acc_dtype), [-1], axis=axis))
    while len(lanes) > 1:
        lanes = [(lanes[i] + lanes[i + 1]).astype(acc_dtype, copy=False) if i + 1 < len(lanes) else lanes[i]
                 for i in range(0, len(lanes), 2)]
    return lanes[0]


def _keep_first_nan(x: np.ndarray, axis: int, result: np.ndarray) -> np.ndarray:
    """``result`` with each NaN replaced by the first NaN of its row/column in ``x``: the reduction
    returns that NaN itself, sign and payload included (numpy's max/min give a default NaN)."""
    if x.dtype.kind != "f":
        return result
    nan = np.isnan(result)
    if not nan.any():
        return result
    first = np.expand_dims(np.argmax(np.isnan(x), axis=axis), axis)
    return np.where(nan, np.take_along_axis(x, first, axis=axis), result)


def reduce_values(kind: str, x: np.ndarray, axis: int, dtype) -> np.ndarray:
    """Reduction along ``axis`` with keepdims.  Sums accumulate in the compute dtype: along the last
    axis (row sums) in 8 interleaved lanes (:func:`_lane_sum`), along axis 0 (column sums) top to
    bottom.  max/min/argmax/argmin do not depend on the order (arg*: the first extreme index)."""
    with np.errstate(all="ignore"):
        if kind == "sum":
            acc_dtype = dtype.compute_np_dtype
            if axis == x.ndim - 1 and x.ndim > 1:
                return _lane_sum(x, axis, acc_dtype)
            return np.take(np.cumsum(x, axis=axis, dtype=acc_dtype), [-1], axis=axis)
        if kind in ("max", "min"):
            return _keep_first_nan(x, axis, (np.max if kind == "max" else np.min)(x, axis=axis, keepdims=True))
        if kind == "argmax":
            return np.expand_dims(np.argmax(x, axis=axis), axis)
        if kind == "argmin":
            return np.expand_dims(np.argmin(x, axis=axis), axis)
    raise ValueError(kind)


def _check_reduce(c, a, kind: str, dim: int):
    _vec_tiles(c, a, ("dst", "src", "tmp"))
    src, out = a["src"], a["dst"]
    if kind in ("argmax", "argmin"):
        if out.dtype not in (dt.DT_INT32, dt.DT_UINT32):
            c.fail(f"'dst' of an arg-reduction must be INT32 or UINT32, got {out.dtype.name}")
        c.dtype_in("src", src, ARITH)
    else:
        c.dtype_in("src", src, ARITH if dim != 0 else (dt.DT_INT16, dt.DT_INT32, dt.DT_INT64, dt.DT_UINT64,
                                                        dt.DT_FP16, dt.DT_FP32))
        c.same_dtype(dst=out, src=src)
    if a.get("tmp") is not None and a["tmp"].dtype != src.dtype:
        c.fail(f"'tmp' must have src's dtype {src.dtype.name}, got {a['tmp'].dtype.name}")
    s = src.static_shape
    o = out.static_shape
    if s is not None and o is not None:
        want = (s[0], 1) if dim == 0 else (1, s[1])
        if tuple(o) != want:
            axis = "last axis (per row)" if dim == 0 else "first axis (per column)"
            c.fail(f"dim={dim} reduces the {axis}: 'dst' must be {list(want)} for src {list(s)}, got {list(o)}")


def _run_reduce(ctx, a, kind: str, dim: int):
    d = ctx.tile(a["dst"])
    s = ctx.tile(a["src"])
    rows, cols = s.valid
    x = s.read_compute(rows, cols)
    r = reduce_values(kind, x, 1 if dim == 0 else 0, s.dtype)
    write_result(d, r, r.shape[0], r.shape[1])


def _register_minmax(name: str, kind: str):
    class MinMax:
        __doc__ = (f"pl.{name}(dst, lhs, rhs): element-wise {name} (rhs tile or scalar); "
                   f"pl.{name}(dst, src, tmp, dim=0|1): row (dim=0 -> [R,1]) or column (dim=1 -> [1,C]) reduction.")

        @staticmethod
        def check(c, a):
            if a["dim"] is None:
                _vec_tiles(c, a, ("dst", "lhs", "rhs"))
                c.dtype_in("lhs", a["lhs"], ARITH)
                c.same_dtype(dst=a["dst"], lhs=a["lhs"], rhs=a["rhs"])
                c.same_shape(dst=a["dst"], lhs=a["lhs"], rhs=a["rhs"])
                return
            if not isinstance(a["rhs"], TileRef):
                c.fail("with dim=, the third argument is the tmp tile")
            _check_reduce(c, {"dst": a["dst"], "src": a["lhs"], "tmp": a["rhs"]}, kind, 0 if a["dim"] == 0 else 1)

        @staticmethod
        def run(ctx, a):
            if a["dim"] is not None:
                _run_reduce(ctx, {"dst": a["dst"], "src": a["lhs"]}, kind, 0 if a["dim"] == 0 else 1)
                return
            d = ctx.tile(a["dst"])
            lhs = ctx.tile(a["lhs"])
            rows, cols = window(ctx, d, lhs, *([ctx.tile(a["rhs"])] if isinstance(a["rhs"], TileRef) else []))
            x = lhs.read_compute(rows, cols)
            y = operand(ctx, a["rhs"], d.dtype, rows, cols)
            write_result(d, binary_values(ctx, name, x, y, d.dtype), rows, cols)

    # element-wise without dim (its reduction form, dim=0|1, is not fused: the cpu backend fuses row_max)
    op(name, [Out("dst"), In("lhs"), In("rhs", "tile_or_scalar"), Arg("dim", default=None, kw_only=True)],
       "V", elementwise=kind, commutative=True, fusable=True)(MinMax)


_register_minmax("maximum", "max")
_register_minmax("minimum", "min")


def _register_reduce(name: str, kind: str, fixed_dim=None, tmp_required=True):
    params = [Out("dst"), In("src"), Arg("tmp", "tile", **({} if tmp_required else {"default": None}))]
    if fixed_dim is None:
        params.append(Arg("dim", default=0, kw_only=True))

    class Reduce:
        __doc__ = (f"pl.{name}(dst, src, tmp{', *, dim=0' if fixed_dim is None else ''}): {kind} reduction; dim=0 "
                   f"reduces each row into dst [R,1] (DN), any other dim each column into dst [1,C].")

        @staticmethod
        def check(c, a):
            _check_reduce(c, a, kind, _dim(a))

        @staticmethod
        def run(ctx, a):
            _run_reduce(ctx, a, kind, _dim(a))

    def _dim(a):
        d = a["dim"] if fixed_dim is None else fixed_dim
        return 0 if d == 0 else 1

    op(name, params, "V", reduction=kind, reduce_dim=fixed_dim, cost="reduce")(Reduce)


_register_reduce("sum", "sum")
_register_reduce("argmax", "argmax")
_register_reduce("argmin", "argmin")
for _prefix, _d in (("row", 0), ("col", 1)):
    for _kind in ("sum", "max", "min", "argmax", "argmin"):
        _register_reduce(f"{_prefix}_{_kind}", _kind, fixed_dim=_d, tmp_required=False)


# --------------------------------------------------------------------------- unary
_UNARY = {
    "neg": (lambda x: -x, tuple(d for d in ARITH if d.kind != "uint")),
    "abs": (np.abs, tuple(d for d in ARITH if d.kind != "uint")),
    # the cpu backend's fp32 sequence (ops/fp32math.py): same bits on both, <= 1.01 ulp
    "exp": (lambda x: exp32(x).astype(x.dtype, copy=False), F16_F32),
    # log in float64, rounded once: numpy's fp32 SIMD log is off by an ulp on ~5% of inputs (and
    # differs between hosts); the double result rounds to what the cpu backend computes
    "log": (lambda x: np.log(x.astype(np.float64)).astype(x.dtype), F16_F32),
    "sqrt": (np.sqrt, F16_F32),
    "rsqrt": (lambda x: np.float32(1) / np.sqrt(x), F16_F32),
    "recip": (lambda x: np.float32(1) / x, F16_F32),
    "relu": (lambda x: np.where(x > 0, x, np.zeros_like(x)), (dt.DT_FP16, dt.DT_FP32, dt.DT_INT32)),
    "not_": (np.invert, BIT_TYPES),
}
#: the traits of the unary ops (optable.OpDef); log and not_ are not fusable (the cpu loop has no log / bit ops)
_UNARY_TRAITS = {
    "neg": dict(elementwise="neg", fusable=True),
    "abs": dict(elementwise="abs", fusable=True),
    "exp": dict(elementwise="exp", fusable=True, cost="transcendental"),
    "log": dict(elementwise="log", cost="transcendental"),
    "sqrt": dict(elementwise="sqrt", fusable=True, cost="transcendental"),
    "rsqrt": dict(elementwise="rsqrt", fusable=True, cost="transcendental"),
    "recip": dict(elementwise="recip", fusable=True, cost="reciprocal"),
    "relu": dict(elementwise="relu", fusable=True),
    "not_": dict(elementwise="not"),
}


def unary_values(name, x):
    with np.errstate(all="ignore"):
        return _UNARY[name][0](x)


def _register_unary(name, dtypes):
    class Unary:
        __doc__ = f"pl.{name}(dst, src): element-wise {name} over dst's valid window."

        @staticmethod
        def check(c, a):
            _vec_tiles(c, a, ("dst", "src"))
            c.dtype_in("src", a["src"], dtypes)
            c.same_dtype(dst=a["dst"], src=a["src"])
            c.same_shape(dst=a["dst"], src=a["src"])

        @staticmethod
        def run(ctx, a):
            d = ctx.tile(a["dst"])
            s = ctx.tile(a["src"])
            rows, cols = window(ctx, d, s)
            write_result(d, unary_values(name, s.read_compute(rows, cols)), rows, cols)

    op(name, [Out("dst"), In("src")], "V", **_UNARY_TRAITS[name])(Unary)


for _name, (_fn, _dtypes) in _UNARY.items():
    _register_unary(_name, _dtypes)


@op("expands", [Out("dst"), Arg("scalar", "scalar")], "V", elementwise="splat", fusable=True)
class Expands:
    """pl.expands(dst, scalar): fill dst's valid window with a scalar (Vec or Mat tiles)."""

    @staticmethod
    def check(c, a):
        c.space("dst", a["dst"], V, MemorySpace.Mat)

    @staticmethod
    def run(ctx, a):
        d = ctx.tile(a["dst"])
        write_result(d, np.full(d.valid, scalar_value(ctx, a["scalar"], d.dtype)))


# --------------------------------------------------------------------------- cast
@op("cast", [Out("dst"), In("src"), Arg("mode", default=RoundMode.CAST_ROUND, kw_only=True)], "V")
class Cast:
    """pl.cast(dst, src, *, mode=pl.RoundMode.CAST_ROUND): convert src to dst's dtype with a rounding mode."""

    @staticmethod
    def check(c, a):
        _vec_tiles(c, a, ("dst", "src"))
        c.same_shape(dst=a["dst"], src=a["src"])
        mode = RoundMode(a["mode"])
        if mode == RoundMode.CAST_ODD and not (a["src"].dtype == dt.DT_FP32 and a["dst"].dtype == dt.DT_FP16):
            c.fail("CAST_ODD exists only for FP32 -> FP16")
        for n in ("dst", "src"):
            if a[n].dtype.name in dt.STORAGE_ONLY and not is_low_float(a[n].dtype):
                raise NotImplementedError(f"pl.cast to/from {a[n].dtype.name}")
        a["mode"] = mode

    @staticmethod
    def run(ctx, a):
        d = ctx.tile(a["dst"])
        s = ctx.tile(a["src"])
        rows, cols = window(ctx, d, s)
        d.write(cast_values(s.read(rows, cols), s.dtype, d.dtype, a["mode"]), rows, cols)


# --------------------------------------------------------------------------- compare / select
_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal}


def pack_mask(bits: np.ndarray, mask_cols: int) -> np.ndarray:
    """Bit-pack a boolean [R, C] predicate LSB-first, ceil(C/8) bytes at the start of each mask row."""
    packed = np.packbits(bits.astype(np.uint8), axis=1, bitorder="little")
    out = np.zeros((bits.shape[0], mask_cols), dtype=np.uint8)
    out[:, :packed.shape[1]] = packed
    return out


def unpack_mask(raw: np.ndarray, cols: int) -> np.ndarray:
    return np.unpackbits(raw, axis=1, bitorder="little", count=cols).astype(bool)


def _register_compare(name, fn):
    class Compare:
        __doc__ = (f"pl.{name}(mask, lhs, rhs): mask = lhs {name} rhs, bit-packed into a UINT8 tile declared with "
                   f"lhs's shape (LSB first, ceil(C/8) bytes per row); only pl.select reads it.")

        @staticmethod
        def check(c, a):
            _vec_tiles(c, a, ("mask", "lhs", "rhs"))
            if a["mask"].dtype != dt.DT_UINT8:
                c.fail(f"'mask' must be a UINT8 tile, got {a['mask'].dtype.name}")
            c.dtype_in("lhs", a["lhs"], ARITH)
            c.same_dtype(lhs=a["lhs"], rhs=a["rhs"])
            c.same_shape(mask=a["mask"], lhs=a["lhs"], rhs=a["rhs"])

        @staticmethod
        def run(ctx, a):
            m = ctx.tile(a["mask"])
            lhs = ctx.tile(a["lhs"])
            rows, cols = lhs.valid
            x = lhs.read_compute(rows, cols)
            y = operand(ctx, a["rhs"], lhs.dtype, rows, cols)
            if m.shape[0] < rows or m.shape[1] * 8 < cols:
                raise ctx.error(f"mask tile {m.name} is too small for a {rows}x{cols} predicate")
            raw = pack_mask(fn(x, y), m.shape[1])
            m.write(raw, rows, m.shape[1])

    op(name, [Out("mask"), In("lhs"), In("rhs", "tile_or_scalar")], "V")(Compare)


for _name, _fn in _CMP.items():
    _register_compare(_name, _fn)


@op("select", [Out("dst"), In("mask"), In("lhs"), In("rhs", "tile_or_scalar"), Arg("tmp", "tile", default=None)], "V")
class Select:
    """pl.select(dst, mask, lhs, rhs, tmp): dst = mask ? lhs : rhs (rhs tile or scalar; tmp, a Vec scratch
    tile, is never read).  Decision: tmp may be omitted (the tensor-level lowering emits select without one)."""

    @staticmethod
    def check(c, a):
        _vec_tiles(c, a, ("dst", "mask", "lhs", "rhs", "tmp"))
        if a["mask"].dtype != dt.DT_UINT8:
            c.fail(f"'mask' must be the UINT8 result of a compare, got {a['mask'].dtype.name}")
        c.same_dtype(dst=a["dst"], lhs=a["lhs"], rhs=a["rhs"])
        c.same_shape(dst=a["dst"], lhs=a["lhs"], rhs=a["rhs"])

    @staticmethod
    def run(ctx, a):
        d = ctx.tile(a["dst"])
        m = ctx.tile(a["mask"])
        lhs = ctx.tile(a["lhs"])
        rows, cols = window(ctx, d, lhs)
        bits = unpack_mask(m.read(rows, m.shape[1]), cols)
        y = operand(ctx, a["rhs"], d.dtype, rows, cols)
        write_result(d, np.where(bits, lhs.read_compute(rows, cols), y), rows, cols)


# --------------------------------------------------------------------------- broadcast (expand_*)
_EXPAND = {"expand_max": np.maximum, "expand_min": np.minimum, "expand_mul": np.multiply,
           "expand_sub": np.subtract, "expand_div": np.divide}


def _register_expand(name, fn):
    class Expand:
        __doc__ = (f"pl.{name}(dst, src, v, *, dim=0): dst[i,j] = src[i,j] op v[i,0] (dim=0, v [R,1]) or "
                   f"src[i,j] op v[0,j] (dim=1, v [1,C]).")

        @staticmethod
        def check(c, a):
            _vec_tiles(c, a, ("dst", "src", "v"))
            c.dtype_in("src", a["src"], ARITH)
            c.same_dtype(dst=a["dst"], src=a["src"], v=a["v"])
            c.same_shape(dst=a["dst"], src=a["src"])
            s, v = a["src"].static_shape, a["v"].static_shape
            if s is not None and v is not None:
                want = (s[0], 1) if a["dim"] == 0 else (1, s[1])
                if tuple(v) != want:
                    c.fail(f"with dim={a['dim']} 'v' must be {list(want)} for src {list(s)}, got {list(v)}")

        @staticmethod
        def run(ctx, a):
            d = ctx.tile(a["dst"])
            s = ctx.tile(a["src"])
            rows, cols = window(ctx, d, s)
            x = s.read_compute(rows, cols)
            vt = ctx.tile(a["v"])
            v = vt.read_compute(rows, 1) if a["dim"] == 0 else vt.read_compute(1, cols)
            if name == "expand_div" and not d.dtype.is_float():
                r = np.empty_like(x)
                r[...] = _c_div(ctx, x, np.broadcast_to(v, x.shape), d.dtype)
            else:
                with np.errstate(all="ignore"):
                    r = fn(x, v)
            write_result(d, r, rows, cols)

    # element (r, c) = src[r, c] <fn> v[r, 0] (dim=0) or v[0, c] (dim=1): element-wise with a broadcast operand
    element_fn = name[len("expand_"):]
    op(name, [Out("dst"), In("src"), In("v"), Arg("dim", default=0, kw_only=True)], "V", elementwise=element_fn,
       fusable=True, cost="divide" if element_fn == "div" else "")(Expand)


for _name, _fn in _EXPAND.items():
    _register_expand(_name, _fn)


# --------------------------------------------------------------------------- fused ops
def _fused(name, params, doc, dtypes, compute, scratch_lhs=False, cast=False):
    tile_names = [p.name for p in params if p.kind == "tile"]
    #: the tiles ``compute`` reads: every tile operand except a pure output (an ``Out`` dst is only written,
    #: so reading it would make the simulator report a false uninitialised read)
    read_names = [p.name for p in params if p.kind == "tile" and p.role != "out"]

    class Fused:
        __doc__ = doc

        @staticmethod
        def check(c, a):
            _vec_tiles(c, a, tile_names)
            c.dtype_in(tile_names[1], a[tile_names[1]], dtypes)
            same = {n: a[n] for n in tile_names if not (cast and n == "dst")}
            c.same_dtype(**same)
            c.same_shape(**{n: a[n] for n in tile_names})
            if cast:
                if a["dst"].dtype != a["target_type"]:
                    c.fail(f"'dst' dtype {a['dst'].dtype.name} differs from target_type {a['target_type'].name}")
                a["mode"] = RoundMode(a["mode"])

        @staticmethod
        def run(ctx, a):
            views = {n: ctx.tile(a[n]) for n in tile_names}
            d = views["dst"]
            rows, cols = window(ctx, d, *[v for n, v in views.items() if n != "dst"])
            vals = {n: views[n].read_compute(rows, cols) for n in read_names}
            scalars = {p.name: scalar_value(ctx, a[p.name], views[tile_names[1]].dtype)
                       for p in params if p.kind == "scalar"}
            with np.errstate(all="ignore"):
                inter, result = compute(vals, scalars, views[tile_names[1]].dtype)
            if scratch_lhs:
                write_result(views["lhs"], inter, rows, cols)
            if cast:
                src_dtype = views["lhs"].dtype
                stored = np.asarray(inter).astype(src_dtype.require_numpy())
                d.write(cast_values(stored, src_dtype, d.dtype, a["mode"]), rows, cols)
            else:
                write_result(d, result, rows, cols)

    extra = [Arg("target_type", kw_only=True), Arg("mode", default=RoundMode.CAST_ROUND, kw_only=True)] if cast else []
    op(name, list(params) + extra, "V")(Fused)


def _rnd(x, dtype):
    """Round an intermediate to storage precision (used where the hardware writes it back)."""
    return np.asarray(x).astype(dtype.require_numpy()).astype(dtype.compute_np_dtype)


def _relu(x):
    return np.where(x > 0, x, np.zeros_like(x))


_LR = [Out("dst"), InOut("lhs"), In("rhs")]
_fused("add_relu", _LR, "pl.add_relu(dst, lhs, rhs): dst = relu(lhs + rhs); lhs is overwritten (scratch).", ARITH,
       lambda v, s, d: (v["lhs"] + v["rhs"], _relu(_rnd(v["lhs"] + v["rhs"], d))), scratch_lhs=True)
_fused("sub_relu", _LR, "pl.sub_relu(dst, lhs, rhs): dst = relu(lhs - rhs); lhs is overwritten (scratch).", ARITH,
       lambda v, s, d: (v["lhs"] - v["rhs"], _relu(_rnd(v["lhs"] - v["rhs"], d))), scratch_lhs=True)
_fused("add_relu_cast", _LR, "pl.add_relu_cast(dst, lhs, rhs, *, target_type, mode): dst = cast(relu(lhs+rhs)); "
       "lhs is overwritten.", ARITH, lambda v, s, d: (_relu(_rnd(v["lhs"] + v["rhs"], d)), None),
       scratch_lhs=True, cast=True)
_fused("sub_relu_cast", _LR, "pl.sub_relu_cast(dst, lhs, rhs, *, target_type, mode): dst = cast(relu(lhs-rhs)); "
       "lhs is overwritten.", ARITH, lambda v, s, d: (_relu(_rnd(v["lhs"] - v["rhs"], d)), None),
       scratch_lhs=True, cast=True)
_fused("mul_cast", _LR, "pl.mul_cast(dst, lhs, rhs, *, target_type, mode): dst = cast(lhs*rhs); lhs is overwritten.",
       NO_8BIT, lambda v, s, d: (v["lhs"] * v["rhs"], None), scratch_lhs=True, cast=True)
_fused("addc", [Out("dst"), In("a"), In("b"), In("c")], "pl.addc(dst, a, b, c): dst = a + b + c.", ARITH,
       lambda v, s, d: (None, v["a"] + v["b"] + v["c"]))
_fused("mul_add_dst", [InOut("dst"), In("lhs"), In("rhs")],
       "pl.mul_add_dst(dst, lhs, rhs): dst = lhs*rhs + dst, the product rounded to the dtype first (a mul then "
       "an add, as the official page's measurements show).", NO_8BIT,
       lambda v, s, d: (None, _rnd(v["lhs"] * v["rhs"], d) + v["dst"]))
_fused("fused_mul_add", [InOut("dst"), In("lhs"), In("rhs")],
       "pl.fused_mul_add(dst, lhs, rhs): dst = lhs*dst + rhs.", NO_8BIT,
       lambda v, s, d: (None, v["lhs"] * v["dst"] + v["rhs"]))
_fused("fused_mul_add_relu", [InOut("dst"), In("a"), In("b")],
       "pl.fused_mul_add_relu(dst, a, b): dst = relu(dst*a + b).", NO_8BIT,
       lambda v, s, d: (None, _relu(v["dst"] * v["a"] + v["b"])))


@op("axpy", [InOut("dst"), In("src"), Arg("alpha", "scalar")], "V")
class Axpy:
    """pl.axpy(dst, src, alpha): dst = alpha*src + dst (FP16/FP32; FP16 src into FP32 dst allowed)."""

    @staticmethod
    def check(c, a):
        _vec_tiles(c, a, ("dst", "src"))
        c.dtype_in("src", a["src"], F16_F32)
        ok = a["dst"].dtype == a["src"].dtype or (a["src"].dtype == dt.DT_FP16 and a["dst"].dtype == dt.DT_FP32)
        if not ok:
            c.fail(f"dst {a['dst'].dtype.name} / src {a['src'].dtype.name}: supported FP16/FP16, FP32/FP32, FP16->FP32")
        c.same_shape(dst=a["dst"], src=a["src"])

    @staticmethod
    def run(ctx, a):
        d = ctx.tile(a["dst"])
        s = ctx.tile(a["src"])
        rows, cols = window(ctx, d, s)
        alpha = scalar_value(ctx, a["alpha"], s.dtype)
        with np.errstate(all="ignore"):
            write_result(d, alpha * s.read_compute(rows, cols) + d.read_compute(rows, cols), rows, cols)


# --------------------------------------------------------------------------- part ops
_PART = {"partadd": np.add, "partmax": np.maximum, "partmin": np.minimum, "partmul": np.multiply}


def _clip(valid, rows: int, cols: int):
    """A source's valid window clipped to the destination's ``rows x cols`` window."""
    return min(valid[0], rows), min(valid[1], cols)


def _covering(w0, w1):
    """The windows to write so that exactly the union of the top-left windows ``w0`` and ``w1`` is
    written: the larger one alone when it contains the other, else both."""
    if w0[0] >= w1[0] and w0[1] >= w1[1]:
        return [w0]
    if w1[0] >= w0[0] and w1[1] >= w0[1]:
        return [w1]
    return [w0, w1]


def _part_values(fn, x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """The part-op result over the bounding box of the two source windows ``x0`` and ``x1`` (both
    anchored at [0, 0]): ``fn`` where both exist, a copy of the one that exists elsewhere (elements
    in neither window are 0 here and never written back)."""
    both = (min(x0.shape[0], x1.shape[0]), min(x0.shape[1], x1.shape[1]))
    out = np.zeros((max(x0.shape[0], x1.shape[0]), max(x0.shape[1], x1.shape[1])), dtype=x0.dtype)
    out[:x1.shape[0], :x1.shape[1]] = x1
    out[:x0.shape[0], :x0.shape[1]] = x0
    with np.errstate(all="ignore"):
        out[:both[0], :both[1]] = fn(x0[:both[0], :both[1]], x1[:both[0], :both[1]])
    return out


def _register_part(name, fn):
    class Part:
        __doc__ = (f"pl.{name}(dst, s0, s1): over dst's valid window, {name[4:]} where both inputs are valid, "
                   f"a copy of the valid one where only one is; dst elements in neither window keep their value.")

        @staticmethod
        def check(c, a):
            _vec_tiles(c, a, ("dst", "s0", "s1"))
            c.dtype_in("s0", a["s0"], ARITH)
            c.same_dtype(dst=a["dst"], s0=a["s0"], s1=a["s1"])
            c.same_shape(dst=a["dst"], s0=a["s0"], s1=a["s1"])

        @staticmethod
        def run(ctx, a):
            """Reads each source only inside its valid window and never reads dst: elements outside
            both windows are simply not written (the simulator must not see reads of bytes the
            kernel never wrote)."""
            d, s0, s1 = ctx.tile(a["dst"]), ctx.tile(a["s0"]), ctx.tile(a["s1"])
            rows, cols = window(ctx, d, s0, s1)
            if rows == 0 or cols == 0:
                return
            w0, w1 = _clip(s0.valid, rows, cols), _clip(s1.valid, rows, cols)
            out = _part_values(fn, s0.read_compute(*w0), s1.read_compute(*w1))
            for w in _covering(w0, w1):
                write_result(d, out[:w[0], :w[1]], *w)

    op(name, [Out("dst"), In("s0"), In("s1")], "V")(Part)


for _name, _fn in _PART.items():
    _register_part(_name, _fn)


# --------------------------------------------------------------------------- layout / index
@op("transpose", [Out("dst"), In("src")], "V", cost="permute")
class Transpose:
    """pl.transpose(dst, src): dst = src^T over src's valid window (shapes swapped; not in place)."""

    @staticmethod
    def check(c, a):
        _vec_tiles(c, a, ("dst", "src"))
        c.same_dtype(dst=a["dst"], src=a["src"])
        if a["src"].dtype.bits() == 64:
            c.fail("64-bit dtypes cannot be transposed")
        s, d = a["src"].static_shape, a["dst"].static_shape
        if s is not None and d is not None and tuple(d) != (s[1], s[0]):
            c.fail(f"'dst' must have the swapped shape {[s[1], s[0]]} of src, got {list(d)}")
        c.not_in_place(a["dst"], a["src"])

    @staticmethod
    def run(ctx, a):
        d, s = ctx.tile(a["dst"]), ctx.tile(a["src"])
        rows, cols = s.valid
        d.write(s.read(rows, cols).T, cols, rows)


@op("fill_index", [Out("dst"), Arg("start", "scalar", default=0)], "V")
class FillIndex:
    """pl.fill_index(dst, start): dst[j] = start + j over the row-major linear index of dst's valid window."""

    @staticmethod
    def check(c, a):
        _vec_tiles(c, a, ("dst",))
        c.dtype_in("dst", a["dst"], ARITH)

    @staticmethod
    def run(ctx, a):
        d = ctx.tile(a["dst"])
        rows, cols = d.valid
        start = ctx.scalar(a["start"])
        idx = np.arange(rows)[:, None] * d.shape[1] + np.arange(cols)[None, :]
        write_result(d, (start + idx).astype(d.dtype.compute_np_dtype))


@op("fillpad", [Out("dst"), In("src"), Arg("mode", default=0, kw_only=True)], "V")
class FillPad:
    """pl.fillpad(dst, src, *, mode=pl.FillPadMode.NORMAL): dst = src inside src's valid window, dst's pad value
    (zero / dtype max / dtype min; +-inf for floats) elsewhere; dst becomes fully valid."""

    @staticmethod
    def check(c, a):
        c.space("dst", a["dst"], V, MemorySpace.Mat)
        c.space("src", a["src"], V, MemorySpace.Mat)
        c.same_dtype(dst=a["dst"], src=a["src"])
        if a["dst"].ttype.pad == TilePad.null:
            c.fail("'dst' needs a TileType with pad=pl.TilePad.zero/max/min")
        if a["dst"].dtype.bits() > 32:
            c.fail("fillpad supports 8- to 32-bit dtypes")
        mode = int(a["mode"])
        s, d = a["src"].static_shape, a["dst"].static_shape
        if s is not None and d is not None:
            if mode in (0, 2) and tuple(s) != tuple(d):
                c.fail(f"NORMAL/INPLACE fillpad needs equal shapes, got {list(d)} and {list(s)}")
            if mode == 1 and (d[0] < s[0] or d[1] < s[1]):
                c.fail("EXPAND fillpad needs dst at least as large as src")
        if isinstance(a["dst"], DeclRef) and isinstance(a["src"], DeclRef):  # docs/language.md: the modes fix the addresses
            same = (a["dst"].decl.space, a["dst"].decl.addr) == (a["src"].decl.space, a["src"].decl.addr)
            if mode == 2 and not same:
                c.fail("INPLACE fillpad pads src in place: dst must be src (same address); use NORMAL for a copy")
            if mode != 2 and same:
                c.fail("NORMAL/EXPAND fillpad writes a different tile: dst has src's address; use mode=INPLACE")

    @staticmethod
    def run(ctx, a):
        d, s = ctx.tile(a["dst"]), ctx.tile(a["src"])
        vr, vc = s.valid
        vals = s.read(vr, vc)
        pad = pad_value(a["dst"].ttype.pad, d.dtype)
        full = np.full(d.shape, pad, dtype=d.dtype.require_numpy())
        full[:vr, :vc] = vals
        d.write(full, d.shape[0], d.shape[1])
        decl = ctx.decl_of(a["dst"])
        if decl is not None:
            ctx.set_valid(decl, d.shape[0], d.shape[1])


def pad_value(pad: TilePad, dtype):
    if pad == TilePad.zero:
        return 0
    if dtype.is_float():
        return np.inf if pad == TilePad.max else -np.inf
    info = np.iinfo(dtype.require_numpy())
    return info.max if pad == TilePad.max else info.min


__all__ = ["binary_values", "unary_values", "reduce_values", "pack_mask", "unpack_mask", "pad_value"]

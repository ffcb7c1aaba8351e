"""Scalar-pipe ops: element access, valid shapes, printf/assert (docs/language.md)."""
from __future__ import annotations

import ast
import os
import re

import numpy as np

from .. import dtypes as dt
from ..ir.nodes import (DeclRef, Expr, SubRef, TensorParam, TileGroupDecl, TileRef, Var, describe_value,
                        is_integral)
from ..ir.optable import Arg, In, Out, op
from ..ir.types import MemorySpace


def _py(value, dtype):
    """A numpy element as the Python scalar the interpreter computes with."""
    if dtype.codec is not None:  # HF8: the code's value
        return float(dtype.decode(np.asarray(value)))
    if dtype.is_float():
        return float(np.float32(value))
    if dtype.kind == "bool":
        return bool(value)
    return int(value)


def _element_index(ctx, target, arr_shape, index):
    """Row-major (row, col) / N-D position of ``index`` (linear int or multi-index) in ``arr_shape``."""
    if isinstance(index, (list, tuple)):
        pos = tuple(int(ctx.scalar(i)) for i in index)
        if len(pos) != len(arr_shape):
            raise ctx.error(f"{len(pos)} indices for {target} of rank {len(arr_shape)}")
        lin = int(np.ravel_multi_index(pos, arr_shape)) if all(0 <= p < s for p, s in zip(pos, arr_shape)) else -1
    else:
        lin = int(ctx.scalar(index))
    total = int(np.prod(arr_shape))
    if not 0 <= lin < total:
        raise ctx.error(f"element index {index if not isinstance(index, Expr) else lin} is outside {target} "
                        f"of shape {list(arr_shape)}")
    return np.unravel_index(lin, arr_shape)


def _access_check(c, a, name):
    """The accessed tile is a Vec tile and every element index is an integer (never truncated)."""
    v = a[name]
    if isinstance(v, TileRef):
        c.space(name, v, MemorySpace.Vec)
    index = a["index"]
    for i in index if isinstance(index, (list, tuple)) else [index]:
        if not is_integral(i):
            c.fail(f"element indices must be integers, got {describe_value(i)}")


@op("getval", [In("src", "tile_or_tensor"), Arg("index", "any")], "S", element_of="src")
class GetVal:
    """pl.getval(src, index) / src[i, j]: read one element of a Vec tile or GM tensor (row-major linear index)."""

    @staticmethod
    def check(c, a):
        _access_check(c, a, "src")
        return a["src"].dtype

    @staticmethod
    def run(ctx, a):
        src = a["src"]
        if isinstance(src, TensorParam):
            arr = ctx.tensor(src)
            pos = _element_index(ctx, f"tensor '{src.name}'", arr.shape, a["index"])
            ctx.note_gm(src, pos, write=False)
            return _py(arr[pos], src.dtype)
        view = ctx.tile(src)
        r, col = _element_index(ctx, f"tile {view.name}", view.shape, a["index"])
        return _py(view.read(view.shape[0], view.shape[1])[r, col], view.dtype)


@op("setval", [Out("dst", "tile_or_tensor"), Arg("index", "any"), Arg("value", "scalar")], "S",
    element_of="dst")
class SetVal:
    """pl.setval(dst, index, value) / dst[i, j] = value: write one element of a Vec tile or GM tensor."""

    @staticmethod
    def check(c, a):
        _access_check(c, a, "dst")

    @staticmethod
    def run(ctx, a):
        dst = a["dst"]
        value = ctx.scalar(a["value"])
        if isinstance(dst, TensorParam):
            arr = ctx.tensor(dst)
            pos = _element_index(ctx, f"tensor '{dst.name}'", arr.shape, a["index"])
            ctx.note_gm(dst, pos, write=True)
            arr[pos] = _encoded(dst.dtype, value, arr.dtype)
            return
        view = ctx.tile(dst)
        r, col = _element_index(ctx, f"tile {view.name}", view.shape, a["index"])
        full = view.read(view.shape[0], view.shape[1])
        full[r, col] = _encoded(view.dtype, value, full.dtype)
        view.write(full, view.shape[0], view.shape[1])


def _encoded(dtype, value, storage):
    """A scalar as one stored element of ``dtype``: formats with a codec (HF8) encode the value into their
    code (a uint8 cast would wrap the number itself), the others convert like numpy's astype."""
    with np.errstate(all="ignore"):
        if dtype.codec is not None:
            return dtype.encode(np.asarray(value, dtype=np.float64))
        return np.asarray(value).astype(storage)


@op("set_validshape", [Arg("tile", "tile_or_group"), Arg("shape", "index_list")], "S", descriptor_only=True,
    cost="descriptor")
class SetValidShape:
    """pl.set_validshape(tile_or_group, [rows, cols]): set the valid window (runtime values allowed, 1..shape);
    on a group every slot, on a named subview that subview (whose window lives in variables, see
    ``ir.SubRef.valid``).  Later loads, vector ops, stores and matmuls use it."""

    @staticmethod
    def check(c, a):
        t, shape = a["tile"], a["shape"]
        if len(shape) != 2:
            c.fail("the valid shape is [rows, cols]")
        if isinstance(t, SubRef) and not named_subview(t):
            c.fail("set_validshape of a subview needs the subview bound to a name first (sub = tile[r0:r1, c0:c1])")
        full = t.slots[0].shape if isinstance(t, TileGroupDecl) else t.static_shape
        space = t.slots[0].space if isinstance(t, TileGroupDecl) else t.space
        # a Vec tile on the AIC (or in code both core kinds run) may name a window up to twice its shape
        k = 2 if space == MemorySpace.Vec and c.section != "vector" else 1
        for v, s, axis in zip(shape, full or (None, None), ("rows", "cols")):
            if isinstance(v, int) and (v < 1 or (s is not None and v > k * s)):
                c.fail(f"valid {axis} {v} is outside [1, {k * s if s is not None else s}]")

    @staticmethod
    def run(ctx, a):
        t = a["tile"]
        rows, cols = (int(ctx.scalar(v)) for v in a["shape"])
        if isinstance(t, SubRef):
            view = ctx.tile(t)
            if not (1 <= rows <= view.shape[0] and 1 <= cols <= view.shape[1]):
                raise ctx.error(f"valid shape [{rows}, {cols}] is outside the subview's shape {list(view.shape)}")
            ctx.core.vars[t.valid[0].uid], ctx.core.vars[t.valid[1].uid] = rows, cols
            return
        decls = t.slots if isinstance(t, TileGroupDecl) else [ctx.decl_of(t)]
        if decls == [None]:
            raise ctx.error("set_validshape needs a whole tile or a tile group, not a subview")
        # On the AIC a Vec tile only names the window of an Acc -> Vec move into the block's AIVs, both
        # shares of a dual mode together, so there it may be up to twice the tile on each axis (the move
        # checks that each AIV's share fits the tile).
        for d in decls:
            scale = 2 if ctx.core.kind == "cube" and d.space == MemorySpace.Vec else 1  # an empty window (a share of nothing, e.g. AIV1's of a dual-split tail <= 16) is allowed
            if not (0 <= rows <= scale * d.shape[0] and 0 <= cols <= scale * d.shape[1]):
                what = " (on the AIC a Vec tile's window may be up to twice its shape)" if scale == 2 else ""
                raise ctx.error(f"valid shape [{rows}, {cols}] is outside tile {d.name} of shape {d.shape}{what}")
            ctx.set_valid(d, rows, cols)


def named_subview(ref: SubRef) -> bool:
    """Whether ``ref`` is a subview bound to a name, whose valid window lives in two variables."""
    return ref.valid is not None and all(isinstance(x, Var) for x in ref.valid)


@op("discard", [Arg("tile", "tile")], "S", descriptor_only=True, internal=True, cost="descriptor")
class Discard:
    """discard(tile): the tile's contents become undefined (internal: the tensor-level lowering emits it
    after a tile's last use in a loop iteration).  Backends may then skip producing values nobody reads
    (the cpu backend's fused loops do not store a tile that is discarded before any read).  The
    interpreter refills the tile with the never-written byte pattern (floats read as NaN) and the
    simulator marks its bytes unwritten, so a read of discarded contents shows up as an uninitialised
    read instead of silently giving the old values."""

    @staticmethod
    def check(c, a):
        if not isinstance(a["tile"], DeclRef):
            c.fail("discard needs a whole declared tile")

    @staticmethod
    def run(ctx, a):
        view = ctx.tile(a["tile"])
        view.discard()
        ctx.note_discard(view)


_FMT = re.compile(r"%([-+ #0]*)(\d*)(?:\.(\d+))?([a-zA-Z%])")


def _check_format(c, fmt, args):
    if not isinstance(fmt, str):
        c.fail("the format must be a compile-time string")
    convs = []
    for m in _FMT.finditer(fmt):
        conv = m.group(4)
        if conv not in "diuxfp":
            c.fail(f"conversion %{conv} is not supported (use %d %i %u %x %f %p; no %s %c %% or length modifiers)")
        convs.append(conv)
    if len(convs) != len(args):
        c.fail(f"the format has {len(convs)} conversions but {len(args)} values were passed")
    for conv, v in zip(convs, args):
        d = v.dtype if isinstance(v, Expr) else dt.from_python_scalar(v)
        if conv == "f" and d != dt.DT_FP32:  # docs/language.md: %f is FP32 only (cast 16-bit floats first)
            c.fail(f"%f needs an FP32 value, got {d.name}")
        if conv in "diux" and d.is_float():
            c.fail(f"%{conv} needs an integer value, got {d.name}")


def printf_int_bits(v) -> int:
    """Width of an integer printf argument after C's default promotions: 64 for 64-bit types (INDEX
    included), 32 for everything narrower; %u/%x/%p print the value modulo 2**bits."""
    d = v.dtype if isinstance(v, Expr) else dt.from_python_scalar(v)
    return 64 if d.bits() == 64 else 32


def _c_conversion(flags: str, width: str, prec, conv: str, x) -> str:
    """One printf conversion with C's rules, which differ from Python's ``%`` where it matters here: the
    ``0`` flag is ignored when an integer precision is given, ``.0`` prints nothing for 0, ``#x`` adds no
    ``0x`` to 0, ``+``/space apply to signed conversions only, and ``%p`` prints ``0x...`` (glibc)."""
    if conv == "f":
        return f"%{flags}{width}{'' if prec is None else '.' + prec}f" % x
    value = int(x)
    digits = format(abs(value), "x" if conv in "xp" else "d")
    if prec is not None:
        digits = "" if int(prec) == 0 and value == 0 else digits.zfill(int(prec))
    if conv in "di":
        sign = "-" if value < 0 else "+" if "+" in flags else " " if " " in flags else ""
    else:
        sign = "0x" if conv == "p" or ("#" in flags and value != 0) else ""
    pad = max(0, int(width or 0) - len(sign) - len(digits))
    if "-" in flags:
        return sign + digits + " " * pad
    if "0" in flags and (prec is None or conv == "p"):
        return sign + "0" * pad + digits
    return " " * pad + sign + digits


def _format(ctx, fmt, args, int_bits=None):
    """The text printf prints: each conversion formatted as C's printf does (docs/language.md).  ``int_bits``:
    the arguments' :func:`printf_int_bits`, for callers whose ``args`` are already plain values."""
    int_bits = int_bits or [printf_int_bits(v) for v in args]
    convs = [m.group(4) for m in _FMT.finditer(fmt)]
    values = iter([int(ctx.scalar(v)) % (1 << bits) if conv in "uxp" else ctx.scalar(v)
                   for conv, v, bits in zip(convs, args, int_bits)])
    return _FMT.sub(lambda m: _c_conversion(m.group(1), m.group(2), m.group(3), m.group(4), next(values)), fmt)


def _prefix(ctx, loc):
    return f"[{ctx.stmt.loc.filename}:{ctx.stmt.loc.lineno}] " if loc and ctx.stmt.loc else ""


@op("printf", [Arg("fmt"), Arg("args", "scalars", var=True), Arg("loc", default=False, kw_only=True)], "S",
    cost="debug_io")
class Printf:
    """pl.printf(fmt, *args, loc=False): device printf (%d %i %u %x %f %p with flags/width/precision)."""

    @staticmethod
    def check(c, a):
        _check_format(c, a["fmt"], a["args"])

    @staticmethod
    def run(ctx, a):
        ctx.launch.log(_prefix(ctx, a["loc"]) + _format(ctx, a["fmt"], a["args"]))


def _condition_source(line: str) -> str:
    """The source text of pto_assert's condition (docs/language.md prints it), or the whole line when the call
    does not fit on it."""
    text = line.strip()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and getattr(node.func, "attr",
                                                                getattr(node.func, "id", "")) == "pto_assert":
            return ast.get_source_segment(text, node.args[0]) or text
    return text


@op("pto_assert", [Arg("cond", "scalar"), Arg("fmt", default=None), Arg("args", "scalars", var=True),
                   Arg("loc", default=False, kw_only=True)], "S")
class PtoAssert:
    """pl.pto_assert(cond, fmt=None, *args, loc=False): on failure print "Assertion failed: <cond source>" and the
    message, then continue (official behaviour); with PYPTO_STRICT_ASSERT=1 raise KernelRuntimeError instead."""

    @staticmethod
    def check(c, a):
        cond = a["cond"]
        d = cond.dtype if isinstance(cond, Expr) else dt.from_python_scalar(cond)
        if d != dt.DT_BOOL:
            c.fail(f"the condition must be a BOOL scalar (a comparison), got {d.name}")
        if a["fmt"] is not None:
            _check_format(c, a["fmt"], a["args"])

    @staticmethod
    def run(ctx, a):
        if ctx.scalar(a["cond"]):
            return
        source = _condition_source(ctx.stmt.loc.source_line) if ctx.stmt.loc else "<condition>"
        text = f"{_prefix(ctx, a['loc'])}Assertion failed: {source}"
        if a["fmt"] is not None:
            text += " " + _format(ctx, a["fmt"], a["args"])
        if os.environ.get("PYPTO_STRICT_ASSERT", "0") not in ("", "0"):
            raise ctx.error(text)
        ctx.launch.log(text + "\n")


@op("check_slot", [Arg("index", "scalar"), Arg("group")], "S", check=lambda c, a: None, internal=True)
def _check_slot(ctx, a):
    """check_slot(index, group): emitted before ``g[i]`` with a runtime ``i`` (docs/language.md "Tiles": slot i, cursor
    untouched); an index outside [0, depth) would address past the group's slots on the hardware."""
    i, g = int(ctx.scalar(a["index"])), a["group"]
    if not 0 <= i < g.depth:
        raise ctx.error(f"tile group index {i} is outside [0, {g.depth}) of group {g.name}")


@op("check_index", [Arg("index", "scalar"), Arg("size")], "S", check=lambda c, a: None, internal=True)
def _check_index(ctx, a):
    """check_index(index, size): emitted before ``arr[i]`` of a struct array or array field with a runtime
    ``i``; an index outside [0, size) would address past the array on the hardware."""
    i, n = int(ctx.scalar(a["index"])), a["size"]
    if not 0 <= i < n:
        raise ctx.error(f"index {i} is out of bounds for an array of length {n}")


@op("trap", [], "S", check=lambda c, a: None)
def _trap(ctx, a):
    """pl.trap(): abort the kernel (raises KernelRuntimeError)."""
    raise ctx.error("pl.trap() was executed")


@op("dump_data", [In("data", "tile_or_tensor"), Arg("offsets", "any", default=None),
                  Arg("shapes", "any", default=None), Arg("workspace", "any", default=None, kw_only=True),
                  Arg("loc", default=False, kw_only=True), Arg("flag", default=None, kw_only=True)], "V",
    cost="debug_io")
class DumpData:
    """pl.dump_data(data, offsets=None, shapes=None, *, workspace=None, loc=False, flag=None): print a Vec/Acc tile
    or a GM tensor (or a window of it) to the kernel log."""

    @staticmethod
    def check(c, a):
        d = a["data"]
        if isinstance(d, TileRef) and d.space not in (MemorySpace.Vec, MemorySpace.Acc):
            c.fail(f"{d.space.name} tiles cannot be printed; move them to Vec first")
        if (a["offsets"] is None) != (a["shapes"] is None):
            c.fail("offsets and shapes go together")

    @staticmethod
    def run(ctx, a):
        d = a["data"]
        if isinstance(d, TensorParam):
            values, name = ctx.tensor(d), d.name
        else:
            view = ctx.tile(d)
            values, name = view.read(), view.name
        if a["offsets"] is not None:
            offs = [int(ctx.scalar(o)) for o in a["offsets"]]
            shp = [int(ctx.scalar(s)) for s in a["shapes"]]
            values = values[tuple(slice(o, o + s) for o, s in zip(offs, shp))]
        head = _prefix(ctx, a["loc"]) + (f"{a['flag']}\n" if a["flag"] is not None else "")
        ctx.launch.log(f"{head}{name} =\n{np.array2string(np.asarray(values))}\n")

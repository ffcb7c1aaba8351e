"""Per-row integer quantisation on Vec tiles: ``pl.quant`` and ``pl.dequant`` (pipe V).

Both ops take their parameters per row: row ``r`` of the destination's valid window uses
``scale[r, 0]`` (and ``offset[r, 0]``), so ``scale``/``offset`` are typically ``[rows, 1]`` FP32 tiles
with at least as many rows as that window.

* ``quant(out, src, scale, *, mode=pl.QuantMode.SYM, offset=None)`` -- FP32 ``src``:

  - ``SYM`` (INT8 ``out``): ``out = clamp(rint(src * scale), -128, 127)``;
  - ``ASYM`` (UINT8 ``out``, ``offset`` required): ``out = clamp(rint(rint(src * scale) + offset), 0, 255)``.

  **Decisions** (the official page gives only the formulas): the product and the sum are FP32
  operations, each rounded once to FP32; ``round`` is round-half-to-even (``torch.round``, the
  hardware's default conversion); a NaN becomes 0 and infinities saturate, as ``pl.cast`` does for
  float -> int; ``offset`` is added after rounding and may be fractional (the sum is rounded again).
  ``offset`` passed in ``SYM`` mode is ignored (the official rule).
* ``dequant(out, src, scale, offset)`` -- INT8/INT16 ``src``, FP32 ``out``:
  ``out = (src - offset) * scale``, the subtraction and the product each an FP32 operation.

The cpu backend implements the same arithmetic in ``include/pto/quant.h``.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..ir.optable import Arg, In, Out, op
from ..ir.types import MemorySpace, QuantMode
from .common import window

_QUANT_OUT = {QuantMode.SYM: (dt.DT_INT8, -128, 127), QuantMode.ASYM: (dt.DT_UINT8, 0, 255)}


def _row_params(ctx, ref, rows: int, what: str) -> np.ndarray:
    """Column 0 of the first ``rows`` rows of a per-row parameter tile, as an FP32 column."""
    view = ctx.tile(ref)
    if view.shape[0] < rows or view.shape[1] < 1:
        raise ctx.error(f"{what} {view.name} ({view.shape[0]}x{view.shape[1]}) has fewer rows than the "
                        f"destination's valid window ({rows} rows); it holds one value per row")
    return view.read(rows, 1).astype(np.float32)


def _check_row_param(c, name: str, tile, out) -> None:
    c.space(name, tile, MemorySpace.Vec)
    c.dtype_in(name, tile, (dt.DT_FP32,))
    s, o = tile.static_shape, out.static_shape
    if s is not None and o is not None and s[0] < o[0]:
        c.fail(f"'{name}' has {s[0]} rows but 'out' has {o[0]}; it holds one value per row of out "
               f"(typically shape [{o[0]}, 1])")


def quant_values(x: np.ndarray, scale: np.ndarray, offset, mode: QuantMode) -> np.ndarray:
    """The quantised values of FP32 ``x`` (rows x cols) with per-row FP32 ``scale``/``offset`` columns."""
    target, lo, hi = _QUANT_OUT[mode]
    with np.errstate(all="ignore"):
        q = np.rint((x * scale).astype(np.float32))
        if mode == QuantMode.ASYM:
            q = np.rint((q + offset).astype(np.float32))
        q = np.where(np.isnan(q), 0, np.clip(q, lo, hi))
    return q.astype(target.require_numpy())


@op("quant", [Out("out"), In("src"), In("scale"), Arg("mode", default=QuantMode.SYM, kw_only=True),
              In("offset", default=None, kw_only=True)], "V")
class Quant:
    """pl.quant(out, src, scale, *, mode=pl.QuantMode.SYM, offset=None): per-row quantisation of an FP32
    tile; SYM: out (INT8) = clamp(rint(src*scale), -128, 127); ASYM: out (UINT8) =
    clamp(rint(src*scale) + offset, 0, 255), offset required."""

    @staticmethod
    def check(c, a):
        try:
            mode = QuantMode(a["mode"])
        except ValueError:
            c.fail(f"mode must be pl.QuantMode.SYM or pl.QuantMode.ASYM, got {a['mode']!r}")
        a["mode"] = mode
        out, src = a["out"], a["src"]
        c.space("out", out, MemorySpace.Vec)
        c.space("src", src, MemorySpace.Vec)
        c.dtype_in("src", src, (dt.DT_FP32,))
        want = _QUANT_OUT[mode][0]
        if out.dtype != want:
            c.fail(f"'out' must be {want.name} in {mode.name} mode, got {out.dtype.name}")
        c.same_shape(out=out, src=src)
        _check_row_param(c, "scale", a["scale"], out)
        if mode == QuantMode.ASYM:
            if a["offset"] is None:
                c.fail("mode=pl.QuantMode.ASYM needs the zero-point tile: pass offset=<FP32 tile>")
            _check_row_param(c, "offset", a["offset"], out)
        else:
            a["offset"] = None  # ignored in SYM mode (officially), so not read either

    @staticmethod
    def run(ctx, a):
        d, s = ctx.tile(a["out"]), ctx.tile(a["src"])
        rows, cols = window(ctx, d, s)
        x = s.read(rows, cols).astype(np.float32)
        scale = _row_params(ctx, a["scale"], rows, "scale")
        offset = _row_params(ctx, a["offset"], rows, "offset") if a["mode"] == QuantMode.ASYM else None
        d.write(quant_values(x, scale, offset, a["mode"]), rows, cols)


@op("dequant", [Out("out"), In("src"), In("scale"), In("offset")], "V")
class Dequant:
    """pl.dequant(out, src, scale, offset): out (FP32) = (src - offset) * scale per row, src INT8/INT16."""

    @staticmethod
    def check(c, a):
        out, src = a["out"], a["src"]
        c.space("out", out, MemorySpace.Vec)
        c.space("src", src, MemorySpace.Vec)
        c.dtype_in("out", out, (dt.DT_FP32,))
        c.dtype_in("src", src, (dt.DT_INT8, dt.DT_INT16))
        c.same_shape(out=out, src=src)
        _check_row_param(c, "scale", a["scale"], out)
        _check_row_param(c, "offset", a["offset"], out)

    @staticmethod
    def run(ctx, a):
        d, s = ctx.tile(a["out"]), ctx.tile(a["src"])
        rows, cols = window(ctx, d, s)
        x = s.read(rows, cols).astype(np.float32)
        scale = _row_params(ctx, a["scale"], rows, "scale")
        offset = _row_params(ctx, a["offset"], rows, "offset")
        with np.errstate(all="ignore"):
            d.write(((x - offset).astype(np.float32) * scale).astype(np.float32), rows, cols)

"""C++ emission of the ops the SIMT API adds (:mod:`pypto_pro.ops.simt`).  A SIMT launch is a loop
nest of ordinary statements; its element accesses are emitted exactly like ``getval``/``setval``."""
from __future__ import annotations

from .emit import _getval, _setval
from .registry import register


def _tile_valid_dim(g, s):
    """``tile.valid_shape[axis]``: the view's valid window."""
    if s.result is None:
        return "/* tile.valid_shape: unused */"
    return f"{g.var(s.result)} = (int64_t){g.tile(s.args['tile'])}.{'vr' if s.args['axis'] == 0 else 'vc'};"


register("tile_valid_dim", _tile_valid_dim)
register("simt_getval", _getval)  # a SIMT thread's element access: the same C++ as getval / setval
register("simt_setval", _setval)

"""``pypto_pro.runtime.tilingkey``: the official tiling-key dispatch helpers (``TilingKeyField`` for
``@pl.jit(tiling_key=...)``).  Tiling-key dispatch is not implemented here, so the names exist (an
official kernel file imports them) and raise ``NotImplementedError`` naming the feature when used."""
from __future__ import annotations


class TilingKeyField:
    """Not implemented: constructing one raises ``NotImplementedError`` (see ``@pl.jit(tiling_key=)``)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("pypto_pro.runtime.tilingkey.TilingKeyField: tiling-key dispatch "
                                  "(@pl.jit(tiling_key=...)) is not implemented")

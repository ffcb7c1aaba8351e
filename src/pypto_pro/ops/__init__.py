"""The op table's entries, one module per family.  Importing this package registers every op."""
from . import (comm, cube, cube_mx, gather, mask, movement, quant, random, scalar, simt, sorting, ssbuf,  # noqa: F401
               sync, vector, vf, vf_more)

from ..ir.optable import OPS
from .keywords import apply as _apply_official_keywords

_apply_official_keywords()

__all__ = ["OPS"]

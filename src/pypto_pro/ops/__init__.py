"""The op table's entries, one module per family.  Importing this package registers every op."""
from . import cube, cube_mx, gather, mask, movement, quant, random, scalar, sorting, sync, vector, vf  # noqa: F401

from ..ir.optable import OPS

__all__ = ["OPS"]

"""The op table's entries, one module per family.  Importing this package registers every op."""
from . import cube, cube_mx, gather, mask, movement, random, scalar, simt, sorting, sync, vector, vf, vf_more  # noqa: F401

from ..ir.optable import OPS

__all__ = ["OPS"]

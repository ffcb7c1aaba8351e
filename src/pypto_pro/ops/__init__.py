"""The op table's entries, one module per family.  Importing this package registers every op."""
from . import cube, gather, mask, movement, random, scalar, sorting, ssbuf, sync, vector, vf  # noqa: F401

from ..ir.optable import OPS

__all__ = ["OPS"]

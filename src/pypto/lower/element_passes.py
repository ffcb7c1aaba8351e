"""Stores whose value is an indexing / sorting node lower to element passes (scalar GM reads and
writes) instead of vector passes: node op -> ``pass(lowerer, store)``."""
from __future__ import annotations

from typing import Callable, Dict

from .indexing import gather_pass, index_put_pass, scatter_pass
from .sorting import argsort_pass

ELEMENT_PASSES: Dict[str, Callable[..., None]] = {
    "gather": gather_pass,
    "index_select": gather_pass,
    "scatter": scatter_pass,
    "index_put": index_put_pass,
    "argsort": argsort_pass,
}

__all__ = ["ELEMENT_PASSES"]

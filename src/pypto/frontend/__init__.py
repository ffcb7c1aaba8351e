"""``pypto.frontend``: the jit decorator and record mode."""
from typing import Callable

from ..symbolic import SymbolicScalar
from .jit import JitFunction, jit


def function(fn: Callable) -> Callable:
    """``@pypto.frontend.function``: helpers are inlined because record mode simply executes them."""
    return fn


def dynamic(name: str) -> SymbolicScalar:
    """``N = pypto.frontend.dynamic("N")``: a named dynamic dim.  In parameter annotations
    (``pypto.Tensor((N, 128), ...)``) it marks a DYNAMIC axis; every axis annotated with the same ``N``
    must have the same size at a call (``KernelLaunchError`` otherwise), and ``N`` used in the kernel
    body is that run-time size."""
    return SymbolicScalar(name)


__all__ = ["jit", "JitFunction", "function", "dynamic"]

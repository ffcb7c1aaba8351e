"""``pypto.frontend``: the jit decorator and record mode."""
from typing import Callable

from .jit import JitFunction, jit


def function(fn: Callable) -> Callable:
    """``@pypto.frontend.function``: helpers are inlined because record mode simply executes them."""
    return fn


__all__ = ["jit", "JitFunction", "function"]

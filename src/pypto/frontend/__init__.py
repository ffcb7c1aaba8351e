"""``pypto.frontend``: the jit decorator and record mode."""
from .jit import JitFunction, jit

function = lambda fn: fn  # noqa: E731  (``@pypto.frontend.function`` helpers are inlined by execution)

__all__ = ["jit", "JitFunction", "function"]

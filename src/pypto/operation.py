"""``pypto.operation``: the module the official ops are defined in; programs import ``op_wrapper`` from it.

Officially ``op_wrapper`` turns a function written against the native binding (``pypto.pypto_impl``)
into one taking and returning ``pypto.Tensor``: it unwraps Tensor arguments to their native handles,
records the caller's source location and wraps the results again.  Here ``pypto.pypto_impl``'s
functions take and return ``pypto.Tensor`` themselves, so there is nothing to unwrap: the decorator
keeps the function (and its name and docstring) and only checks that it is applied to a callable.
"""
from __future__ import annotations

import functools
from typing import Callable, TypeVar

from pypto_pro.errors import KernelTypeError

F = TypeVar("F", bound=Callable)


def op_wrapper(func: F) -> F:
    """Decorate a helper built from ``pypto.pypto_impl`` calls so it reads as a ``pypto`` op."""
    if not callable(func):
        raise KernelTypeError(f"pypto.operation.op_wrapper decorates a function, got {type(func).__name__}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]

"""Messages for the natural slips of torch/numpy users inside a ``@pypto.frontend.jit`` kernel.

While recording, a ``pypto.Tensor`` holds no values and a DYNAMIC dim has no size, so calling a
torch or numpy function on them, branching on a tensor with a Python ``if`` or taking
``math.sqrt`` of a dim cannot work.  Each of those reaches one of the hooks below (``Tensor``'s
``__torch_function__`` / ``__array_ufunc__`` / ``__array__`` / ``__bool__``, ``SymbolicScalar``'s
``__float__``), which raises a :class:`~pypto_pro.errors.KernelTypeError` saying what to write
instead; the recorder adds the kernel name and the kernel line.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from pypto_pro.errors import KernelTypeError

#: numpy ufuncs that are Python operators on tensors: ``ndarray + tensor`` keeps working through them
_OPERATOR_UFUNCS = {"add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "div", "divide": "div",
                    "negative": "neg", "absolute": "abs", "power": "pow", "floor_divide": "floor_div",
                    "remainder": "remainder", "less": "lt", "less_equal": "le", "greater": "gt",
                    "greater_equal": "ge", "equal": "eq", "not_equal": "ne"}
#: numpy/torch spellings whose pypto op has another name
_RENAMED = {"absolute": "abs", "true_divide": "div", "divide": "div", "multiply": "mul", "subtract": "sub",
            "negative": "neg", "power": "pow", "arctan": "atan", "arcsin": "asin", "arccos": "acos",
            "greater": "gt", "less": "lt", "greater_equal": "ge", "less_equal": "le", "equal": "eq",
            "not_equal": "ne", "concatenate": "concat", "cat": "concat", "mm": "matmul", "bmm": "matmul"}


def pypto_equivalent(name: str) -> Optional[str]:
    """``pypto.<op>`` spelling of a torch/numpy function name, or None when pypto has no such op."""
    import pypto

    for candidate in (name, _RENAMED.get(name), name.rstrip("_")):
        if candidate and not candidate.startswith("_") and callable(getattr(pypto, candidate, None)):
            return f"pypto.{candidate}"
    return None


def _advice(library: str, name: str) -> str:
    op = pypto_equivalent(name)
    head = (f"{library}.{name}() was called on a pypto.Tensor: inside a @pypto.frontend.jit kernel a tensor is "
            f"recorded, it holds no values, so {library} cannot compute with it")
    if op is not None:
        return f"{head}; use {op}(...) instead"
    return f"{head}, and pypto has no op named '{name}' (docs/tensor.md lists the tensor-level ops)"


def torch_function_error(func: Callable) -> KernelTypeError:
    """A torch function (``torch.tanh``, ``torch.nn.functional.gelu``, ...) applied to a recorded tensor."""
    name = getattr(func, "__name__", str(func))
    return KernelTypeError(_advice("torch", name))


def numpy_ufunc(ufunc: Any, method: str, inputs, kwargs) -> Any:
    """``np.<ufunc>(tensor, ...)``: an operator ufunc (``ndarray + tensor``) records the pypto op;
    every other ufunc raises with the pypto op to use."""
    from . import ops

    name = ufunc.__name__
    if method == "__call__" and not kwargs and name in _OPERATOR_UFUNCS:
        return getattr(ops, _OPERATOR_UFUNCS[name])(*inputs)
    raise KernelTypeError(_advice("numpy", name))


def no_array() -> KernelTypeError:
    """``np.asarray(tensor)`` and the numpy functions that convert their argument first."""
    return KernelTypeError("a pypto.Tensor cannot become a numpy array while recording (it holds no values yet); "
                           "compute with pypto ops (pypto.exp, pypto.sum, ...) instead of numpy functions")


def no_truth_value() -> KernelTypeError:
    """``if tensor:`` / ``if pypto.sum(t) > 0:``: a branch on data the kernel computes."""
    return KernelTypeError("a Python `if` (or and/or/not) on a pypto.Tensor depends on data that exists only when "
                           "the kernel runs, so it cannot be decided while recording; compute both results and "
                           "pick per element with pypto.where(cond, a, b) (a Python `if` may test sizes, loop "
                           "indices and other scalars)")


def no_float() -> KernelTypeError:
    """``math.sqrt(dim)`` / ``float(dim)`` on a DYNAMIC dim or loop index."""
    return KernelTypeError("math functions and float() need a number now, but a DYNAMIC dim or a loop index "
                           "(pypto.SymbolicScalar) has its value only when the kernel runs; compute the value on "
                           "the host and pass it as a scalar argument of the kernel, annotate the dim as a fixed "
                           "int / pypto.STATIC, or apply the pypto op to a tensor (e.g. x * pypto.rsqrt(...))")


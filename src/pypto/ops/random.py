"""``pypto.uniform`` / ``pypto.normal``: counter-based random tensors (Philox4x32-10).

Element ``i`` (row-major flat index) of the result is a pure function of ``(key, counter, i)``, so a
kernel gives the same tensor on every backend, for every tile shape and core count, and the same
values as the official ops (their documented examples are tests):

* ``uniform``: word ``i`` of the stream (:mod:`pypto_pro.ops.random`), its low ``m`` bits scaled by
  ``2**-m`` with ``m`` the dtype's mantissa width (23 for FP32, 10 for FP16, 7 for BF16): exact values
  in ``[0, 1)``.
* ``normal``: Box-Muller on the word pair ``(2j, 2j + 1)`` with ``j = i // 2``: ``u1`` (at least
  ``1e-7``) and ``u2`` as FP32 uniforms, ``r = sqrt(-2 log u1)``, ``theta = 2 pi u2``; an even ``i``
  takes ``r sin(theta)``, an odd one ``r cos(theta)``, in FP32, then rounded once to the dtype.
"""
from __future__ import annotations

import math
from typing import Any, List, Sequence

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelTypeError, KernelValueError

from ..graph import Node
from ..symbolic import SymbolicScalar, is_static
from ..tensor import Tensor
from .bitwise import bitwise_and
from .core import out
from .elementwise import add, cast, eq, log, maximum, mul, sqrt, sub, where
from .math import remainder
from .trig import cos, sin

#: the values of ``alg`` that select Philox (1, and 3 = "auto_select", which picks it)
PHILOX_ALGS = (1, 3)
_MANTISSA_BITS = {dt.DT_FP32: 23, dt.DT_FP16: 10, dt.DT_BF16: 7}
#: Box-Muller's floor on u1 (keeps log finite)
_U1_FLOOR = 1.0e-7
_INT32_LIMIT = 2 ** 31


def uniform(shape: Sequence[Any], key: Sequence[int], counter: Sequence[int], alg: Sequence[int],
            dtype: dt.DataType) -> Tensor:
    """``pypto.uniform(shape, key, counter, alg, dtype)``: a ``shape`` tensor of ``dtype`` (FP32, FP16
    or BF16) uniform in ``[0, 1)`` from Philox with seed ``key[0]`` and counter ``[0, counter[1]]``."""
    dims, seed, ctr = _arguments("uniform", shape, key, counter, alg, dtype)
    return _uniform_of(_words(_flat_index(dims), seed, ctr), dtype)


def normal(shape: Sequence[Any], key: Sequence[int], counter: Sequence[int], alg: Sequence[int],
           dtype: dt.DataType) -> Tensor:
    """``pypto.normal(shape, key, counter, alg, dtype)``: a ``shape`` tensor of ``dtype`` (FP32, FP16 or
    BF16) of standard normal samples (Box-Muller over the Philox stream; see the module docstring)."""
    dims, seed, ctr = _arguments("normal", shape, key, counter, alg, dtype)
    index = _flat_index(dims)
    odd = bitwise_and(index, 1) if index.dtype == dt.DT_INT32 else remainder(index, 2)  # no 64-bit bit ops
    first = sub(index, odd)
    u1 = maximum(_uniform_of(_words(first, seed, ctr), dt.DT_FP32), _U1_FLOOR)
    u2 = _uniform_of(_words(add(first, 1), seed, ctr), dt.DT_FP32)
    radius = sqrt(mul(log(u1), -2.0))
    theta = mul(u2, 2.0 * math.pi)
    z = where(eq(odd, 0), mul(sin(theta), radius), mul(cos(theta), radius))
    return z if dtype == dt.DT_FP32 else cast(z, dtype)


def _arguments(name: str, shape, key, counter, alg, dtype):
    """The checked ``(dims, seed, counter)`` of a call (the official argument rules)."""
    what = f"pypto.{name}"
    dims = list(shape) if isinstance(shape, (list, tuple)) else None
    if dims is None or not 1 <= len(dims) <= 4:
        raise KernelValueError(f"{what}: shape must be a list of 1 to 4 dims, got {shape!r}")
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, SymbolicScalar)) or (is_static(d) and d <= 0):
            raise KernelValueError(f"{what}: dims must be positive ints or symbolic dims, got {shape!r}")
    seed = _int_list(what, "key", key, 1)[0]
    ctr = _int_list(what, "counter", counter, 2)[1]  # counter[0] is fixed at 0, as officially
    algs = _int_list(what, "alg", alg, 1)
    if algs[0] not in PHILOX_ALGS:
        raise KernelValueError(f"{what}: alg {algs[0]} is not supported; use 1 (Philox) or 3 (auto_select)")
    if dtype not in _MANTISSA_BITS:
        raise KernelTypeError(f"{what}: dtype must be DT_FP32, DT_FP16 or DT_BF16, got {dtype!r}")
    return dims, seed % 2 ** 64, ctr % 2 ** 64


def _int_list(what: str, name: str, value, length: int) -> List[int]:
    if (not isinstance(value, (list, tuple)) or len(value) != length
            or any(isinstance(v, bool) or not isinstance(v, int) for v in value)):
        raise KernelValueError(f"{what}: {name} must be a list of {length} int(s), got {value!r}")
    return list(value)


def _flat_index(dims: List[Any]) -> Tensor:
    """The row-major flat index of every element of a ``dims`` tensor: INT32 where the element count
    is fixed and below 2**31, INT64 otherwise (DYNAMIC dims)."""
    total = 1
    for d in dims:
        total = total * d
    dtype = dt.DT_INT32 if is_static(total) and total < _INT32_LIMIT else dt.DT_INT64
    index, stride = None, 1
    for axis in reversed(range(len(dims))):
        along = out(Node("iota", (), tuple(dims), dtype, {"axis": axis}))
        term = along if stride == 1 else mul(along, stride)
        index = term if index is None else add(index, term)
        stride *= dims[axis]
    return index


def _words(index: Tensor, seed: int, ctr: int) -> Tensor:
    """Word ``index`` of the Philox stream of ``(seed, ctr)`` as INT32 bit patterns."""
    n = index.node
    return out(Node("unary", (n,), n.shape, dt.DT_INT32, {"fn": "philox", "key": seed, "counter": ctr}))


def _uniform_of(words: Tensor, dtype: dt.DataType) -> Tensor:
    """``[0, 1)`` values of ``dtype`` from the low mantissa-width bits of ``words`` (exact)."""
    bits = _MANTISSA_BITS[dtype]
    u = mul(cast(bitwise_and(words, (1 << bits) - 1), dt.DT_FP32), 2.0 ** -bits)
    return u if dtype == dt.DT_FP32 else cast(u, dtype)

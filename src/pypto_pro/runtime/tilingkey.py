"""Tiling keys (``@pl.jit(tiling_key=Schema)``): a few compile-time modes of one kernel source, each
concrete key compiled into its own specialised kernel and chosen at launch.

A schema is a plain class whose attributes are :class:`TilingKeyField` s, collected in definition order,
plus an optional ``is_valid(self, key)`` predicate over the tuple of values in that order.  In the kernel
body each field name is a compile-time constant (the parser folds branches on it).  A launch passes the
complete key as a dict after ``stream`` and ``block_dim``: ``kernel[stream, block_dim, {"F": v, ...}](...)``.

Encoding (as the official runtime): a field stores the *index* of its value in ``values``, in ``bits``
bits; fields are packed in definition order, the first at bit 0, into one 64-bit key that names the
compiled variant.
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

from ..errors import KernelLaunchValueError

_KEY_BITS = 64


class TilingKeyField:
    """One field of a tiling-key schema: ``bits`` bits encoding the index of one of ``values`` (distinct
    ints; at most ``2**bits`` of them)."""

    def __init__(self, bits: int, values: List[int]):
        if type(bits) is not int or bits <= 0:
            raise ValueError(f"TilingKeyField: bits must be a positive int, got {bits!r}")
        values = list(values) if isinstance(values, (list, tuple)) else values
        if not isinstance(values, list) or not values:
            raise ValueError(f"TilingKeyField: values must be a non-empty list of ints, got {values!r}")
        if any(type(v) is not int for v in values):
            raise ValueError(f"TilingKeyField: values must be ints (not bools), got {values!r}")
        if len(set(values)) != len(values):
            raise ValueError(f"TilingKeyField: values must be distinct, got {values!r}")
        if len(values) > 1 << bits:
            raise ValueError(f"TilingKeyField: {len(values)} values do not fit {bits} bits (at most {1 << bits})")
        self.bits = bits
        self.values = values
        self.name = ""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"TilingKeyField(bits={self.bits}, values={self.values})"


class TilingKeySchema:
    """A checked tiling-key schema class: its fields in definition order and its ``is_valid``."""

    def __init__(self, cls):
        if not isinstance(cls, type):
            raise TypeError(f"@pl.jit(tiling_key=...) takes a class whose attributes are TilingKeyFields, got {cls!r}")
        self.cls = cls
        self.fields: List[Tuple[str, TilingKeyField]] = [
            (name, v) for name, v in vars(cls).items() if isinstance(v, TilingKeyField)]
        if not self.fields:
            raise TypeError(f"tiling key {cls.__name__}: declares no TilingKeyField")
        total = sum(f.bits for _, f in self.fields)
        if total > _KEY_BITS:
            raise ValueError(f"tiling key {cls.__name__}: its fields take {total} bits, more than {_KEY_BITS}")
        check = getattr(cls, "is_valid", None)
        if check is not None and not callable(check):
            raise TypeError(f"tiling key {cls.__name__}: is_valid must be callable")
        self._has_valid = check is not None

    @property
    def names(self) -> List[str]:
        return [name for name, _ in self.fields]

    def resolve(self, key: Any, kernel: str) -> Tuple[int, Dict[str, int]]:
        """(the packed 64-bit key, the field values) of a launch's key dict; every mismatch (a missing or
        unknown field, a value outside its candidates, a combination ``is_valid`` rejects) raises
        ``KernelLaunchValueError``."""
        name = self.cls.__name__
        if not isinstance(key, dict):
            raise KernelLaunchValueError(f"the tiling key must be a dict of {name}'s fields {self.names}, got "
                                         f"{type(key).__name__}", kernel=kernel)
        missing = [n for n in self.names if n not in key]
        unknown = [k for k in key if k not in self.names]
        if missing or unknown:
            raise KernelLaunchValueError(f"tiling key {name}: the dict must name exactly the fields {self.names}"
                                         + (f"; missing {missing}" if missing else "")
                                         + (f"; unknown {unknown}" if unknown else ""), kernel=kernel)
        packed, shift = 0, 0
        for field_name, f in self.fields:
            value = key[field_name]
            if type(value) is not int or value not in f.values:
                raise KernelLaunchValueError(f"tiling key {name}: {field_name}={value!r} is not one of its values "
                                             f"{f.values}", kernel=kernel)
            packed |= f.values.index(value) << shift
            shift += f.bits
        values = tuple(key[n] for n in self.names)
        if self._has_valid and not self.cls().is_valid(values):
            raise KernelLaunchValueError(f"tiling key {name}: {dict(zip(self.names, values))} is rejected by "
                                         f"{name}.is_valid", kernel=kernel)
        return packed, {n: key[n] for n in self.names}

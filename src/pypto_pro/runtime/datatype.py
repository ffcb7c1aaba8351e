"""Data-type specialisation (``@pl.jit(datatype={param: "var", ...})``): one kernel source for several
element types, each launch naming the types and getting its own compiled variant.

The decorator maps kernel parameters to dtype *variable names*; in the kernel body (and the helpers it
inlines) each variable is a compile-time ``pl.DT_*`` constant usable wherever a dtype is (``pl.TileType``,
``pl.make_tensor(..., dtype=...)``, ``pl.cast``...).  A launch passes a dict ``{param: pl.DT_*}`` after the
tiling key (``kernel[stream, block_dim, key, types]``), or third when the kernel has no tiling key
(``kernel[stream, block_dim, types]``); parameters mapped to one variable must get one type.  The rules
and their wording follow the official runtime: variable names are identifiers that clash with neither a
parameter nor a tiling-key field, the launch dict names exactly the declared parameters.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, Optional, Tuple

from ..dtypes import DataType
from ..errors import KernelLaunchError, KernelLaunchValueError, KernelValueError

#: a resolved launch: (variable name, dtype) pairs sorted by name (hashable: part of the variant key)
DtypeBinding = Tuple[Tuple[str, DataType], ...]


class DatatypeSchema:
    """The checked ``datatype=`` mapping of one kernel: parameter name -> dtype variable name."""

    def __init__(self, mapping: Any, fn: Callable, tiling_key=None):
        kernel = getattr(fn, "__name__", "?")
        if not isinstance(mapping, dict) or not mapping:
            raise KernelValueError("datatype must be a non-empty dict mapping param name to dtype variable name",
                                   kernel=kernel)
        for param, var in mapping.items():
            if not isinstance(param, str) or not param:
                raise KernelValueError(f"datatype param names must be non-empty strings, got {param!r}", kernel=kernel)
            if not isinstance(var, str) or not var.isidentifier():
                raise KernelValueError(f"datatype variable for param '{param}' must be a valid Python identifier, "
                                       f"got {var!r}", kernel=kernel)
        params = set(inspect.signature(fn).parameters)
        missing = sorted(set(mapping) - params)
        if missing:
            raise KernelValueError(f"datatype params {missing} do not match kernel function '{kernel}' parameters",
                                   kernel=kernel)
        variables = set(mapping.values())
        clash = sorted(variables & params)
        if clash:
            raise KernelValueError(f"datatype variable names conflict with kernel params: {clash}", kernel=kernel)
        if tiling_key is not None:
            clash = sorted(variables & set(tiling_key.names))
            if clash:
                raise KernelValueError(f"datatype variable names conflict with tiling_key fields: {clash}",
                                       kernel=kernel)
        self.mapping: Dict[str, str] = dict(mapping)

    def resolve(self, types: Any, kernel: str) -> DtypeBinding:
        """The variables' dtypes for one launch's ``{param: pl.DT_*}`` dict."""
        if not isinstance(types, dict):
            raise KernelLaunchValueError(f"datatype kernel launch requires a dtype dict {{param: pl.DT_*}} for "
                                         f"{sorted(self.mapping)}, got {type(types).__name__}", kernel=kernel)
        if set(types) != set(self.mapping):
            raise KernelLaunchValueError(f"datatype keys {sorted(types)} do not match schema params "
                                         f"{sorted(self.mapping)}", kernel=kernel)
        chosen: Dict[str, DataType] = {}
        for param, var in self.mapping.items():
            dtype = types[param]
            if not isinstance(dtype, DataType):
                raise KernelLaunchError(f"datatype['{param}'] must be a pypto_pro.DataType, got "
                                        f"{type(dtype).__name__}", kernel=kernel)
            if var in chosen and chosen[var] != dtype:
                raise KernelLaunchValueError(f"datatype params mapped to variable '{var}' disagree: "
                                             f"{chosen[var].name} vs {dtype.name}", kernel=kernel)
            chosen[var] = dtype
        return tuple(sorted(chosen.items()))


def split_launch_key(key: tuple, has_tiling_key: bool, has_datatype: bool) -> Tuple[Any, Any, Optional[Any],
                                                                                     Optional[Any]]:
    """(stream, block_dim, tiling key or None, dtype dict or None) of ``kernel[...]``'s 2-4 items: a third
    item is the tiling key when the kernel has one, else the dtype dict when it has a datatype schema."""
    stream, block_dim = key[:2]
    tiling = types = None
    if len(key) == 4:
        tiling, types = key[2], key[3]
    elif len(key) == 3:
        if has_tiling_key or not has_datatype:
            tiling = key[2]
        else:
            types = key[2]
    return stream, block_dim, tiling, types

"""Parameter annotations of tile kernels: ``pl.Tensor[[d0, d1], dtype]``, ``pl.Tile``, ``pl.Ptr``."""
from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..dtypes import DataType
from ..ir.types import Layout


class _DimMarker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"pl.{self.name}"


#: A dimension known only at run time: not part of the cache key, no recompilation.
DYNAMIC = _DimMarker("DYNAMIC")
#: A dimension baked into the compiled kernel: each new value compiles a new variant.
STATIC = _DimMarker("STATIC")


class TensorAnnotation:
    """The value of ``pl.Tensor[[d0, ...], dtype(, layout)]``."""

    def __init__(self, dims: Sequence[Any], dtype: DataType, layout: Layout = Layout.ND):
        self.dims: List[Any] = list(dims)
        self.dtype = dtype
        self.layout = layout

    def __repr__(self) -> str:
        return f"pl.Tensor[{self.dims!r}, {self.dtype!r}]"


class Tensor:
    """GM tensor annotation: ``pl.Tensor[[64, 64], pl.DT_FP16]`` or ``pl.Tensor[[pl.DYNAMIC, 128], pl.DT_FP32, pl.ND]``.

    Dims are positive ints (fixed), ``pl.DYNAMIC``, ``pl.STATIC``, or a trailing ``...`` (the
    remaining dims are STATIC)."""

    def __class_getitem__(cls, item) -> TensorAnnotation:
        if not isinstance(item, tuple) or len(item) not in (2, 3):
            raise TypeError("use pl.Tensor[[d0, d1, ...], pl.DT_xxx] or pl.Tensor[[...], dtype, layout]")
        dims, dtype = item[0], item[1]
        layout = item[2] if len(item) == 3 else Layout.ND
        if not isinstance(dims, (list, tuple)) or not dims:
            raise TypeError(f"pl.Tensor dims must be a non-empty list, got {dims!r}")
        for i, d in enumerate(dims):
            ok = (isinstance(d, int) and not isinstance(d, bool) and d > 0) or d is DYNAMIC or d is STATIC or (
                d is Ellipsis and i == len(dims) - 1)
            if not ok:
                raise TypeError(f"pl.Tensor dim {i} must be a positive int, pl.DYNAMIC, pl.STATIC or a trailing "
                                f"..., got {d!r}")
        if not isinstance(dtype, DataType):
            raise TypeError(f"pl.Tensor dtype must be a pl.DT_* type, got {dtype!r}")
        if not isinstance(layout, Layout) or layout not in (Layout.ND, Layout.NZ, Layout.DN):
            raise TypeError(f"pl.Tensor layout must be pl.ND, pl.NZ or pl.DN, got {layout!r}")
        return TensorAnnotation(dims, dtype, layout)


class TileAnnotation:
    def __init__(self, shape, dtype):
        self.shape = list(shape)
        self.dtype = dtype


class Tile:
    """Annotation for tile-typed locals and helper parameters: ``pl.Tile[[R, C], dtype]``."""

    def __class_getitem__(cls, item) -> TileAnnotation:
        shape, dtype = item
        return TileAnnotation(shape, dtype)


class PtrAnnotation:
    """The value of ``pl.Ptr[dtype]``."""

    def __init__(self, dtype: DataType):
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"pl.Ptr[{self.dtype!r}]"


class Ptr:
    """Raw GM pointer parameter ``pl.Ptr[dtype]``: the launch passes any contiguous tensor or array,
    whose bytes the kernel sees as a flat run of ``dtype`` elements; ``pl.addptr`` moves it,
    ``pl.make_ptr`` retypes it and ``pl.make_tensor`` makes a tensor view of it to load and store."""

    def __class_getitem__(cls, item) -> PtrAnnotation:
        if not isinstance(item, DataType):
            raise TypeError(f"pl.Ptr[dtype] needs a pl.DT_* element type, got {item!r}")
        return PtrAnnotation(item)


class Scalar:
    """Annotation for runtime scalars: ``pl.Scalar[pl.DT_INT32]``."""

    def __class_getitem__(cls, item: DataType) -> DataType:
        return item


def _field_hints(cls) -> Dict[str, Any]:
    """The evaluated field annotations of a dataclass; where one does not evaluate (an official array
    field such as ``shape: int[4]`` under ``from __future__ import annotations``), the others are
    evaluated one by one and that one stays a string (reported by :func:`tiling_fields`)."""
    import sys
    import typing

    try:
        return typing.get_type_hints(cls)
    except TypeError:
        module = sys.modules.get(cls.__module__)
        namespace = dict(vars(module)) if module is not None else {}
        hints = {}
        for f in dataclasses.fields(cls):
            try:
                hints[f.name] = eval(f.type, namespace) if isinstance(f.type, str) else f.type  # noqa: S307
            except Exception:  # noqa: BLE001 - left as the string; tiling_fields names it
                pass
        return hints


#: ``int[N]`` / ``float[N]`` / ``bool[N]``: a TilingData array field (a string annotation, since
#: ``int[4]`` does not evaluate in Python)
_ARRAY_FIELD = re.compile(r"^\s*(int|float|bool)\s*\[\s*([^\]]*?)\s*\]\s*$")
#: the longest array field the official TilingData accepts
MAX_ARRAY_FIELD = 2048


class TilingField(NamedTuple):
    """One field of a TilingData dataclass; ``length`` is N for a ``T[N]`` array field, else None."""

    name: str
    dtype: DataType
    length: Optional[int]


def _array_field(cls, name: str, annotation) -> Optional[Tuple[DataType, int]]:
    """(element dtype, N) of a ``T[N]`` annotation string, None for anything else; a malformed N raises."""
    m = _ARRAY_FIELD.match(annotation) if isinstance(annotation, str) else None
    if m is None:
        return None
    length = m.group(2)
    if not length.isdigit() or not 1 <= int(length) <= MAX_ARRAY_FIELD:
        raise TypeError(f"TilingData field '{cls.__name__}.{name}': the length of {annotation!r} must be an int "
                        f"literal in 1..{MAX_ARRAY_FIELD}")
    return scalar_annotation_dtype({"int": int, "float": float, "bool": bool}[m.group(1)]), int(length)


def tiling_fields(cls) -> List[TilingField]:
    """The fields of a TilingData dataclass: scalars ``int`` -> INT64, ``float`` -> FP32, ``bool``,
    ``pl.DT_*``, and fixed-length arrays ``T[N]`` (T one of int/float/bool, 1 <= N <= 2048)."""
    hints = _field_hints(cls)
    fields = []
    for f in dataclasses.fields(cls):
        annotation = hints.get(f.name, f.type)
        dtype = scalar_annotation_dtype(annotation)
        array = None if dtype is not None else _array_field(cls, f.name, annotation)
        if dtype is None and array is None:
            raise TypeError(f"TilingData field '{cls.__name__}.{f.name}' has type {f.type!r}; fields must be int, "
                            f"float, bool, a pl.DT_* scalar or an array T[N] of int/float/bool")
        fields.append(TilingField(f.name, *(array or (dtype, None))))
    return fields


def tiling_slots(cls) -> List[Tuple[str, DataType, str, Optional[int]]]:
    """The scalar slots a TilingData argument flattens to, in order: (label, dtype, field, element);
    an array field ``shape: int[4]`` gives ``shape[0]`` .. ``shape[3]`` (element 0..3), a scalar
    field one slot (element None).  Slot k is the kernel's scalar parameter at index ``index + k``."""
    slots = []
    for f in tiling_fields(cls):
        if f.length is None:
            slots.append((f.name, f.dtype, f.name, None))
        else:
            slots.extend((f"{f.name}[{j}]", f.dtype, f.name, j) for j in range(f.length))
    return slots


def is_tiling_annotation(annotation) -> bool:
    return isinstance(annotation, type) and dataclasses.is_dataclass(annotation)


def scalar_annotation_dtype(annotation) -> Optional[DataType]:
    """The dtype of a scalar parameter annotation (``int``/``float``/``bool``/``pl.DT_*``), else None."""
    from .. import dtypes as dt

    if annotation is int:
        return dt.DT_INT64
    if annotation is float:
        return dt.DT_FP32
    if annotation is bool:
        return dt.DT_BOOL
    if isinstance(annotation, DataType):
        return annotation
    return None


def closure_vars(fn) -> Dict[str, Any]:
    """The values of ``fn``'s closure cells by name (cells not yet assigned are left out)."""
    if fn.__closure__ is None:
        return {}
    out = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out


def parameter_annotations(fn) -> Dict[str, Any]:
    """The evaluated annotations of ``fn``.  String annotations (``from __future__ import annotations``)
    are evaluated in ``fn``'s globals plus its closure cells, so a kernel made by a factory can write
    ``pl.Tensor[[M, 16], ...]`` with the factory's argument ``M``."""
    try:
        return inspect.get_annotations(fn, eval_str=True, locals=closure_vars(fn))
    except NameError as e:
        raise NameError(f"{e} (with 'from __future__ import annotations', a name of an enclosing function is "
                        f"visible to the annotations only if the kernel body uses it too)") from None

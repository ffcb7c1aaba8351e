"""``pypto.Tensor``: the parameter annotation and the value kernels compute with while recording.

As an annotation: ``pypto.Tensor((1, 4, 1, 64), pypto.DT_FP32)`` (call form),
``pypto.Tensor[[pypto.DYNAMIC, 64], pypto.DT_FP16]`` (subscript form), ``pypto.Tensor()`` /
``pypto.Tensor[...]`` (shape and dtype inferred from the argument).  While recording, every tensor
is a ``Tensor`` wrapping a graph node; operators and methods record ops.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from pypto_pro.dtypes import DataType
from pypto_pro.errors import KernelTypeError
from pypto_pro.ir import nodes as ir
from pypto_pro.language.annotations import DYNAMIC, STATIC

from .graph import ELEMENTWISE, Node, full_leaf
from .symbolic import SymbolicScalar, format_dims, is_static

DYN = DYNAMIC


class TileOpFormat:
    """Tensor storage formats (``pypto.TileOpFormat.TILEOP_ND`` / ``TILEOP_NZ``)."""

    TILEOP_ND = "ND"
    TILEOP_NZ = "NZ"


def is_named_dim(d) -> bool:
    """A named dynamic dim (``pypto.frontend.dynamic("N")``) in an annotation."""
    return isinstance(d, SymbolicScalar) and isinstance(d.expr, ir.Var)


def is_status_shape(dims) -> bool:
    """A shape of ``STATIC``/``DYNAMIC`` markers and ints with at least one marker (officially a "status
    shape": it gives a tensor parameter's minimum rank, not its exact rank)."""
    marks = [d is STATIC or d is DYNAMIC for d in dims]
    return any(marks) and all(m or (isinstance(d, int) and not isinstance(d, bool)) for m, d in zip(marks, dims))


def _check_dims(dims) -> List[Any]:
    if dims is Ellipsis:
        return [Ellipsis]
    if not isinstance(dims, (list, tuple)):
        raise TypeError(f"pypto.Tensor shape must be a list or tuple, got {dims!r}")
    out = [DYNAMIC if type(d) is int and d == -1 else d for d in dims]  # -1: the official spelling of a dynamic dim
    for i, d in enumerate(out):
        ok = (isinstance(d, int) and not isinstance(d, bool) and d > 0) or d is DYNAMIC or d is STATIC or (
            d is Ellipsis and i == len(out) - 1) or is_named_dim(d)
        if not ok:
            raise TypeError(f"pypto.Tensor dim {i} must be a positive int, pypto.DYNAMIC, pypto.STATIC, a named dim "
                            f"(pypto.frontend.dynamic) or a trailing ..., got {d!r}")
    return out


class Tensor:
    """A tensor annotation (``node is None``) or a recorded tensor value."""

    __slots__ = ("node", "name", "ann_dims", "ann_dtype", "ann_format", "data", "data_ptr", "device", "ori_shape",
                 "__weakref__")
    __array_priority__ = 1000

    def __init__(self, shape=None, dtype: Optional[DataType] = None, name: str = "",
                 format: Optional[str] = None, data_ptr: Optional[int] = None, device=None, ori_shape=None,
                 *, _node: Optional[Node] = None):  # noqa: A002
        self.node = _node
        self.name = name
        # the official constructor's last three: stored as given, read by nothing here (data_ptr is the
        # official frontend's own use; device and ori_shape are descriptive)
        self.data_ptr, self.device, self.ori_shape = data_ptr, device, ori_shape
        self.data = None  # the host tensor of pypto.from_torch (pypto/converter.py)
        # an empty shape is the official examples' spelling of "inferred" (pypto.Tensor([], DT_FP32))
        inferred = shape is None or (isinstance(shape, (list, tuple)) and len(shape) == 0)
        self.ann_dims = None if inferred else _check_dims(shape)
        if dtype is not None and not isinstance(dtype, DataType):
            raise TypeError(f"pypto.Tensor dtype must be a pypto.DT_* type, got {dtype!r}")
        if dtype is not None and dtype.name == "DOUBLE":
            raise NotImplementedError("pypto.DT_DOUBLE (FP64) tensors: no tile op computes in FP64 on the portable "
                                      "backends; use DT_FP32")
        self.ann_dtype = dtype
        if format not in (None, TileOpFormat.TILEOP_ND, TileOpFormat.TILEOP_NZ):
            raise TypeError(f"pypto.Tensor format must be a pypto.TileOpFormat, got {format!r}")
        self.ann_format = format  # None: not declared (a parameter then takes its argument's format)
        if _node is None and self.ann_dims is not None and dtype is not None:
            self._bind_workspace()

    def _bind_workspace(self) -> None:
        """``pypto.Tensor(shape, dtype)`` called while a kernel records is a new GM tensor, as
        ``pypto.tensor(shape, dtype)`` (officially one type); elsewhere it stays an annotation."""
        from .frontend.tracer import _local

        rec = getattr(_local, "recorder", None)
        if rec is None or any(d is Ellipsis or not isinstance(d, (int, SymbolicScalar)) or isinstance(d, bool)
                              for d in self.ann_dims):
            return
        self.node = full_leaf(rec.new_temp(list(self.ann_dims), self.ann_dtype, self.name))

    def __class_getitem__(cls, item) -> "Tensor":
        if item == () :
            raise TypeError("pypto.Tensor[] is invalid: use pypto.Tensor[...] to infer shape and dtype")
        if item is Ellipsis:
            return cls()
        items = list(item) if isinstance(item, tuple) else [item]
        dims = items[0]
        dtype = items[1] if len(items) > 1 else None
        name = ""
        more: Dict[str, Any] = {}
        for extra in items[2:]:
            if isinstance(extra, str) and extra not in (TileOpFormat.TILEOP_ND, TileOpFormat.TILEOP_NZ):
                name = extra
            elif isinstance(extra, dict):
                name = extra.get("name", name)
                more = {k: extra[k] for k in ("data_ptr", "device", "ori_shape") if k in extra}
        if dims is Ellipsis:
            return cls(None, dtype, name, **more)
        return cls(dims, dtype, name, **more)

    # ----------------------------------------------------------------- annotation side
    @property
    def is_annotation(self) -> bool:
        return self.node is None

    # ----------------------------------------------------------------- value side
    def _need_node(self) -> Node:
        if self.node is None:
            raise TypeError("this pypto.Tensor is an annotation, not a recorded tensor")
        return self.node

    @property
    def shape(self) -> List[Any]:
        """Dims: ints for fixed/STATIC dims, ``pypto.SymbolicScalar`` for DYNAMIC ones.  A ``pypto.view``
        clipped at a tensor boundary (and an element-wise result of one) reports the requested shape;
        ``valid_shape`` is the region that holds data."""
        if self.node is None:
            return list(self.ann_dims or [])
        return list(reported_shape(self.node))

    @property
    def format(self) -> str:  # noqa: A003 - the official attribute name
        """The storage format (``pypto.TileOpFormat``): the declared one, a parameter's the one its argument
        is in (``torch_npu.npu_format_cast``), ND otherwise.  Values are logical in either format
        (frontend/nz_args.py)."""
        return self.ann_format or TileOpFormat.TILEOP_ND

    @property
    def valid_shape(self) -> List[Any]:
        """The region that holds data, which ops compute on and ``assemble`` writes: ``shape`` except
        where a ``pypto.view`` was clipped at the end of its tensor or given a ``valid_shape``."""
        return list(self._need_node().shape)

    @property
    def id(self) -> int:  # noqa: A003 - the official attribute name
        """A number unique to this tensor value in the process (the official read-only ``id``)."""
        return self._need_node().uid

    @property
    def dtype(self) -> DataType:
        return self.node.dtype if self.node is not None else self.ann_dtype

    @property
    def dim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        if self.node is None:
            return f"pypto.Tensor({self.ann_dims!r}, {self.ann_dtype!r})"
        return f"pypto.Tensor({[getattr(d, 'expr', d) for d in self.shape]}, {self.dtype.name})"

    def __bool__(self):
        from .slips import no_truth_value

        raise no_truth_value()

    # torch / numpy functions on a recorded tensor: say which pypto op to call (pypto/slips.py)
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from .frontend.tracer import recording
        from .slips import torch_function_error

        if not recording() or getattr(func, "__name__", "").startswith("__"):
            return NotImplemented  # torch's own TypeError; a dunder operator falls back to ours (__radd__, ...)
        raise torch_function_error(func)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from .slips import numpy_ufunc

        return numpy_ufunc(ufunc, method, inputs, kwargs)

    def __array__(self, dtype=None, copy=None):
        if self.data is not None:  # pypto.from_torch(t) outside a kernel: its host tensor
            from .converter import host_array

            return host_array(self, "pypto.Tensor")
        from .slips import no_array

        raise no_array()

    # operators ---------------------------------------------------------------
    def __add__(self, o): return _ops().add(self, o)
    def __radd__(self, o): return _ops().add(o, self)
    def __sub__(self, o): return _ops().sub(self, o)
    def __rsub__(self, o): return _ops().sub(o, self)
    def __mul__(self, o): return _ops().mul(self, o)
    def __rmul__(self, o): return _ops().mul(o, self)
    def __truediv__(self, o): return _ops().div(self, o)
    def __rtruediv__(self, o): return _ops().div(o, self)
    def __floordiv__(self, o): return _ops().floor_div(self, o)
    def __rfloordiv__(self, o): return _ops().floor_div(o, self)
    def __mod__(self, o): return _ops().remainder(self, o)
    def __rmod__(self, o): return _ops().remainder(o, self)
    def __pow__(self, o): return _ops().pow(self, o)
    def __rpow__(self, o): return _ops().pow(o, self)
    def __neg__(self): return _ops().neg(self)
    def __pos__(self): return self
    def __abs__(self): return _ops().abs(self)
    def __matmul__(self, o): return _ops().matmul(self, o, None)
    def __lt__(self, o): return _ops().lt(self, o)
    def __le__(self, o): return _ops().le(self, o)
    def __gt__(self, o): return _ops().gt(self, o)
    def __ge__(self, o): return _ops().ge(self, o)
    def __eq__(self, o): return _ops().eq(self, o)  # type: ignore[override]
    def __ne__(self, o): return _ops().ne(self, o)  # type: ignore[override]
    __hash__ = object.__hash__

    # indexing ------------------------------------------------------------------
    def __getitem__(self, key, *, valid_shape=None):
        """``x[key]``; ``x.__getitem__(key, valid_shape=...)`` gives the view a valid region (official)."""
        return _ops().getitem(self, key, valid_shape)

    def __setitem__(self, key, value) -> None:
        if self._bind_unshaped(key, value):
            return
        _ops().setitem(self, key, value)

    def move(self, other) -> None:
        """``t.move(expr)``: ``t`` now holds ``expr``.  On a whole kernel parameter or ``pypto.tensor``
        buffer that is a store (``t[:] = expr``: the official handle's final tensor is what the buffer
        receives).  On any other tensor -- a ``pypto.view`` window, a computed value -- it rebinds the
        handle to ``expr`` as the official ``Tensor.move`` does: the viewed tensor is not written
        (``pypto.assemble`` writes windows)."""
        n = self.node
        if n is None or _is_whole_buffer(n):
            if n is not None and isinstance(other, Tensor):
                other = _squeezed_to(other, n.shape)
            self[:] = other
            return
        if not isinstance(other, Tensor):
            raise KernelTypeError(f"Tensor.move takes a tensor, got {type(other).__name__}")
        self.node = other._need_node()

    def as_variable(self) -> None:
        """Officially a ``SymbolicScalar`` method; a tensor reaches it where the official graph reads a
        tensor element as a run-time scalar (``n = seq_lens[b]`` in a ``pypto.loop``, then a loop bound
        or view offset).  Such value-dependent scalars are not implemented."""
        raise NotImplementedError("value-dependent scalars: a tensor element read as a pypto.SymbolicScalar "
                                  "(tensor[i] used as a loop bound or offset, then .as_variable())")

    def _bind_unshaped(self, key, value) -> bool:
        """``r = pypto.tensor()`` inside a kernel, then ``r.move(expr)`` / ``r[:] = expr``: ``r`` becomes
        ``expr`` (shape, dtype and valid region included); True when this happened."""
        from .frontend.tracer import recording

        if self.node is not None or self.ann_dims is not None or self.ann_dtype is not None or not recording():
            return False
        if not (isinstance(key, slice) and key == slice(None)) or not isinstance(value, Tensor):
            raise KernelTypeError("a pypto.tensor() without shape and dtype takes its value from r.move(tensor) or "
                                  "r[:] = tensor")
        self.node = value._need_node()
        return True

    # method forms ----------------------------------------------------------------
    def where(self, condition, y) -> "Tensor":
        """``x.where(condition, y)`` (torch's method): ``condition ? x : y``.  Not ``pypto.where(x, ...)``,
        which the generic method forwarding below would make of it (so would it ``assemble``'s)."""
        return _ops().where(condition, self, y)

    def assemble(self, input, offsets) -> None:  # noqa: A002 - the official keyword
        """``out.assemble(input, offsets)``: ``pypto.assemble(input, offsets, out)`` (``out`` is the destination)."""
        _ops().assemble(input, offsets, self)

    def set_cache_policy(self, policy, value: bool) -> None:
        """An L2 cache hint (``pypto.CachePolicy``): recorded, no effect on results (pypto/cache_policy.py)."""
        from .cache_policy import set_policy

        set_policy(self, policy, value)

    def get_cache_policy(self, policy) -> bool:
        """Whether the L2 cache hint ``policy`` was set on this tensor."""
        from .cache_policy import get_policy

        return get_policy(self, policy)

    def __getattr__(self, name: str):
        fn = getattr(_ops(), name, None)
        if fn is None or name.startswith("_") or not callable(fn):
            raise AttributeError(f"pypto.Tensor has no attribute {name!r}")
        return lambda *a, **k: fn(self, *a, **k)


def _squeezed_to(value: "Tensor", shape) -> "Tensor":
    """``value`` reshaped to ``shape`` when the two differ only by axes of size 1 (``buf[8].move(x[1, 8])``:
    the same elements, as a keepdim reduction gives them); otherwise ``value`` unchanged."""
    have = value._need_node().shape
    if tuple(have) == tuple(shape):
        return value
    drop = [d for d in have if not (isinstance(d, int) and d == 1)]
    want = [d for d in shape if not (isinstance(d, int) and d == 1)]
    if len(drop) == len(want) and all(isinstance(a, int) and a == b for a, b in zip(drop, want)):
        return _ops().reshape(value, list(shape))
    return value


def _is_whole_buffer(n: Node) -> bool:
    """``n`` reads a whole parameter / workspace buffer (not a window of it)."""
    if n.op != "gm":
        return False
    buf = n.attrs["buf"]
    def same(a, b) -> bool:  # no symbolic comparison here: it would record a runtime branch
        return a is b or (is_static(a) and is_static(b) and int(a) == int(b))

    return (buf.base is None and "view_shape" not in n.attrs and len(n.shape) == len(buf.shape)
            and all(same(a, b) for a, b in zip(n.shape, buf.shape))
            and all(same(o, 0) for o in n.attrs["offsets"])
            and tuple(n.attrs["axes"]) == tuple(range(len(buf.shape))))


def _ops():
    from . import ops

    return ops


# ------------------------------------------------------------------------------ valid regions
# A node's ``shape`` is the region it computes (a view's valid region).  A view whose valid region is
# smaller than the requested shape keeps that shape in ``attrs["view_shape"]``; element-wise results
# report it on the axes where they take the view's region (not where the view broadcasts).


def _merged_shape(n: Node, shapes: Dict[int, Tuple[Any, ...]], check: bool) -> Tuple[Any, ...]:
    """The reported shape of the element-wise node ``n`` from its inputs' (in ``shapes``).  With
    ``check``, an input clipped to a valid region that ``n`` stretches to a fixed size (a clipped view
    meeting a full-size operand) raises ``KernelTypeError``: it would compute beyond the region."""
    from .ops.core import same_dim

    reported = list(n.shape)
    for i in n.inputs:
        padded = shapes[i.uid]
        if padded is i.shape:
            continue
        lead = n.ndim - i.ndim
        for j, (want, valid) in enumerate(zip(padded, i.shape)):
            size = n.shape[lead + j]
            if same_dim(want, valid):
                continue
            if is_static(size) and not same_dim(size, valid) and not (is_static(valid) and size < valid):
                if check:
                    raise KernelTypeError(
                        f"{n.op} {n.attrs.get('fn', '')}: an operand is a view clipped to its valid region "
                        f"{format_dims(i.shape)} (shape {format_dims(padded)}), but the result covers {size} on axis "
                        f"{lead + j}; ops on a view compute on its valid region only, so give the other operand "
                        f"the same region (pypto.view(other, shape, offsets, valid_shape=view.valid_shape))")
                continue
            reported[lead + j] = want
    return tuple(reported) if any(a is not b for a, b in zip(reported, n.shape)) else n.shape


def _reported_shapes(root: Node, check: bool) -> Dict[int, Tuple[Any, ...]]:
    """Node uid -> reported shape for ``root`` and the element-wise nodes below it (every node below it
    with ``check``, which validates each element-wise node on the way); iterative for deep DAGs."""
    shapes: Dict[int, Tuple[Any, ...]] = {}
    stack = [(root, False)]
    while stack:
        n, ready = stack.pop()
        if n.uid in shapes:
            continue
        elementwise = n.op in ELEMENTWISE and bool(n.inputs)
        if not ready and (elementwise or check) and n.inputs:
            stack.append((n, True))
            stack.extend((i, False) for i in n.inputs if i.uid not in shapes)
            continue
        shapes[n.uid] = _merged_shape(n, shapes, check) if elementwise else n.attrs.get("view_shape", n.shape)
    return shapes


def reported_shape(n: Node) -> Tuple[Any, ...]:
    """What ``Tensor.shape`` says for ``n``: its shape, or the requested shape of the clipped view it
    is (or is computed element-wise from)."""
    return _reported_shapes(n, check=False)[n.uid]


def check_valid_regions(n: Node) -> None:
    """Raise ``KernelTypeError`` if an element-wise op in ``n`` stretches a clipped view's valid region
    (called where an expression is stored, so every computed expression is checked once)."""
    _reported_shapes(n, check=True)


def wrap(node: Node) -> Tensor:
    """A computed value: tracked while recording, so a later write into a buffer it reads does not
    change it (frontend/snapshots.py)."""
    t = Tensor(_node=node)
    if node.op != "gm":
        from .frontend.tracer import _local

        rec = getattr(_local, "recorder", None)
        if rec is not None:
            rec.live.track(t, rec)
    return t


__all__ = ["Tensor", "TileOpFormat", "DYNAMIC", "DYN", "STATIC", "wrap"]

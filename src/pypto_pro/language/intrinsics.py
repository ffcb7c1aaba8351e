"""Language functions the parser handles itself (they create declarations or control flow).

Called outside a ``@pl.jit`` kernel they raise :class:`KernelSyntaxError`; inside a kernel the
parser recognises them by their ``__pto_intrinsic__`` attribute.
"""
from __future__ import annotations

import functools

from ..errors import KernelSyntaxError


def _intrinsic(fn):
    """Turn ``fn`` (its signature and docstring are the public ones) into the ``pl`` stub: calling it
    outside a kernel raises; the parser binds kernel calls against the signature (so argument errors
    name ``pl.<name>`` and its signature) and then runs its own ``intrinsic_<name>`` handler."""
    @functools.wraps(fn)
    def stub(*args, **kwargs):
        raise KernelSyntaxError(f"pl.{fn.__name__}() can only be used inside a @pl.jit kernel")

    stub.__pto_intrinsic__ = fn.__name__
    return stub


@_intrinsic
def make_tile(tile_type, *, addr, size=None):
    """make_tile(tile_type, *, addr, size=None): bind a tile at byte `addr` of its memory."""


@_intrinsic
def make_tile_group(*, type, addrs, mutex_ids=None, depth=None, fwd_ids=None, bwd_ids=None):  # noqa: A002
    """make_tile_group(*, type, addrs, mutex_ids=None, depth=None, fwd_ids=None, bwd_ids=None): a ring of tiles
    with a runtime cursor; current()/next()/previous()/[i] select slots."""


@_intrinsic
def range(start, stop=None, step=1):  # noqa: A001
    """range(stop) / range(start, stop, step=1): the runtime loop of tile kernels (a single bound is the
    stop, counting from 0)."""


@_intrinsic
def section_vector():
    """with pl.section_vector(): code that runs only on vector cores (AIV)."""


@_intrinsic
def section_cube():
    """with pl.section_cube(): code that runs only on the cube core (AIC)."""


@_intrinsic
def get_block_idx():
    """Index of the executing logical core (AIV in mix kernels: 2*block+sub)."""


@_intrinsic
def get_block_num():
    """The launched block_dim."""


@_intrinsic
def get_subblock_idx():
    """0/1 for the two AIVs of a mix block, 0 elsewhere."""


@_intrinsic
def get_subblock_num():
    """2 on AIVs of a mix kernel, 1 elsewhere."""


@_intrinsic
def get_spr():
    """get_spr(): the AddrReg special register outside vector functions: the byte count the latest
    ``vf.squeeze(..., gather_mode=STORE_REG)`` kept (0 before any, or after ``vf.clear_spr``)."""


@_intrinsic
def min(lhs, rhs):  # noqa: A001
    """min(lhs, rhs): scalar minimum (builtin min maps here)."""


@_intrinsic
def max(lhs, rhs):  # noqa: A001
    """max(lhs, rhs): scalar maximum (builtin max maps here)."""


@_intrinsic
def const(value, dtype):
    """const(value, dtype): a typed compile-time scalar."""


@_intrinsic
def constexpr(cond):
    """if pl.constexpr(cond): demands a compile-time condition."""


@_intrinsic
def make_tensor(ptr, shape, stride=None, dtype=None):
    """make_tensor(ptr, shape, stride=None, dtype=None): a GM tensor view of ``shape`` over the memory of
    ``ptr`` (a ``pl.Ptr`` value or a GM tensor); element ``[i0, i1, ...]`` is ``sum(ik * stride[k])``
    elements of ``dtype`` (default: ptr's) past ptr; ``stride`` defaults to row-major.  No copy."""


@_intrinsic
def make_ptr(ptr, dtype=None):
    """make_ptr(ptr, dtype=None): the same address as pointer ``ptr``, addressing ``dtype`` elements."""


@_intrinsic
def set_stride(tensor, stride):
    """set_stride(tensor, stride): from here on, GM tensor ``tensor`` (a name) steps ``stride[k]`` elements
    along axis k; its shape stays, but rows past the argument's memory are not addressable."""


@_intrinsic
def addptr(ptr, offset):
    """addptr(ptr, offset): pointer ``ptr`` moved by ``offset`` elements of its dtype."""


@_intrinsic
def struct(type_name, /, **fields):
    """struct("Name", field=init, ...): a record of runtime scalars (an init that is a list makes an array
    field); fields are read and assigned as ``s.field`` / ``s.arr[i]``; bound by reference."""


@_intrinsic
def struct_array(size, type_name, /, **fields):
    """struct_array(size, "Name", field=init, ...): ``size`` structs of one type; ``a[i]`` (i an int or a
    runtime integer) is one of them."""


@_intrinsic
def ssbuf_store(struct_var, offset):
    """ssbuf_store(struct_var, offset): copy struct ``struct_var`` into the block's shared scalar buffer at byte
    ``offset`` (S pipe; pair with set_cross_core / wait_cross_core)."""


@_intrinsic
def ssbuf_load(struct_var, offset):
    """ssbuf_load(struct_var, offset): fill struct ``struct_var`` from the block's shared scalar buffer at byte
    ``offset`` (S pipe)."""


@_intrinsic
def make_tuple(*args, **fields):
    """make_tuple(field=value, ...): an immutable tuple of kernel values, also reachable as ``t.field``."""


def inline(fn):
    """Mark a Python helper to be inlined into the kernels that call it (plain helpers are too)."""
    fn.__pto_inline__ = True
    return fn


function = inline


def _not_implemented(name: str, family: str):
    def stub(*args, **kwargs):
        raise NotImplementedError(f"pl.{name} ({family}) is not implemented yet")

    stub.__name__ = name
    stub.__qualname__ = name
    stub.__doc__ = f"pl.{name}: part of the {family}, not implemented yet (raises NotImplementedError)."
    stub.__pto_intrinsic__ = "not_implemented"
    stub.__pto_feature__ = f"pl.{name} ({family})"
    return stub


#: Official names that exist but are not implemented yet, by family (README "Not implemented yet").
NOT_IMPLEMENTED = {
}
NOT_IMPLEMENTED_STUBS = {name: _not_implemented(name, family)
                         for family, names in NOT_IMPLEMENTED.items() for name in names}

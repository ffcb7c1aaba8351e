"""Parser lowering of ``pl.ssbuf_store(struct, offset)`` / ``pl.ssbuf_load(struct, offset)`` (ops/ssbuf.py).

A struct is a compile-time record of scalar variables, so the copy is lowered here: a store becomes one
``ssbuf_put`` of the field values, a load one ``ssbuf_get`` per field followed by an assignment to the
field's variable (fields past the ``sizeof // 4`` words copied keep their values)."""
from __future__ import annotations

from typing import List

from ...errors import KernelSyntaxError, KernelTypeError
from ...ir import nodes as ir
from ...ops.ssbuf import struct_layout, supported
from .structs import ScalarArray, StructValue


class SsbufMixin:
    """``intrinsic_ssbuf_store`` / ``intrinsic_ssbuf_load`` of the kernel parser."""

    def _ssbuf_fields(self, what: str, struct, offset, node) -> List[ir.Var]:
        if not isinstance(struct, StructValue):
            raise self.err(KernelTypeError, f"{what}: the first argument must be a pl.struct value (a struct array "
                           f"element chosen by a runtime index is not supported), got {type(struct).__name__}",
                           node)
        from . import is_scalar, scalar_dtype
        if not is_scalar(offset) or scalar_dtype(offset).is_float() or isinstance(offset, bool):
            raise self.err(KernelTypeError, f"{what}: the SSBUF offset must be an integer (bytes), got {offset!r}",
                           node)
        fields: List[ir.Var] = []
        for name, f in struct.fields.items():
            for var in f.elements if isinstance(f, ScalarArray) else [f]:
                if not supported(var.dtype):
                    raise self.err(KernelTypeError, f"{what}: field '{name}' of struct {struct.type_name} has dtype "
                                   f"{var.dtype.name}, which cannot be copied through SSBUF", node)
                fields.append(var)
        return fields

    def intrinsic_ssbuf_store(self, node, struct_var, offset):
        fields = self._ssbuf_fields("pl.ssbuf_store", struct_var, offset, node)
        at, nbytes = struct_layout([v.dtype for v in fields])
        layout = tuple((k, v.dtype) for k, v in zip(at, fields))
        self.call_op(self.op_named("ssbuf_put"), [offset, *fields], {"fields": layout, "nbytes": nbytes}, node)

    def intrinsic_ssbuf_load(self, node, struct_var, offset):
        fields = self._ssbuf_fields("pl.ssbuf_load", struct_var, offset, node)
        at, nbytes = struct_layout([v.dtype for v in fields])
        if nbytes == 0:
            raise self.err(KernelSyntaxError, f"pl.ssbuf_load: struct {struct_var.type_name} is smaller than one "
                           f"u32 word; nothing would be copied", node)
        for k, var in zip(at, fields):
            if k + var.dtype.nbytes > nbytes:
                continue
            value = self.call_op(self.op_named("ssbuf_get"), [offset],
                                 {"at": k, "dtype": var.dtype, "nbytes": nbytes}, node)
            self.emit(ir.Assign(self.loc(node), var, value))

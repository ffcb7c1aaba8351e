"""The pipeline pass: serial order between cube and vector sections of a ``pipeline=`` kernel.

A ``@pl.jit(pipeline=...)`` kernel is written without cross-core synchronisation: its sections mean
what they would mean run one after another in program order (runtime/pipeline.py).  Cube and vector
cores run concurrently, so this pass adds the hand-over the official compiler adds.  Every core runs
the kernel's scalar control flow, so each can track which core type ran the latest section: a scalar
``side`` (0 none yet, 1 cube, 2 vector) is set after each section.  Before a section of one type
whose predecessor ran on the other type, the other type drains all its pipes and sets a cross-core
event, and this type waits for it and drains before its section starts.  INTRA_BLOCK events make
that a block-wide hand-over: a cube set reaches both AIVs, a cube wait needs both AIVs' sets.

Kernels with sections of one type only need nothing: each core already runs in program order.
"""
from __future__ import annotations

import dataclasses
from typing import List, Optional

from ..errors import KernelSyntaxError
from ..ir import nodes as ir
from ..ir.optable import OPS
from ..ir.types import CrossCoreSyncMode, PipeType

_SIDE = {"cube": 1, "vector": 2}
_OTHER = {"cube": "vector", "vector": "cube"}


def _free_event(kernel: ir.KernelIR) -> int:
    """The highest INTRA_BLOCK event id the kernel's own cross-core sync does not use."""
    used = set()
    for s in ir.walk(kernel.body):
        if isinstance(s, ir.OpStmt) and s.op.sync == "cross_core" \
                and s.args.get("sync_mode") == CrossCoreSyncMode.INTRA_BLOCK:
            event = s.args["event_id"]
            event = event.value if isinstance(event, ir.Const) else event
            if not isinstance(event, int):
                raise KernelSyntaxError("a pipeline=... kernel synchronises cube and vector sections itself, so its "
                                        "own INTRA_BLOCK cross-core events need compile-time ids (one is reserved "
                                        "for the hand-over)", loc=s.loc, kernel=kernel.name)
            used.add(int(event))
    for event in range(15, -1, -1):
        if event not in used:
            return event
    raise KernelSyntaxError("a pipeline=... kernel needs one INTRA_BLOCK cross-core event id for its cube/vector "
                            "hand-over, but the kernel uses all 16", kernel=kernel.name)


def _op(name: str, loc, **args) -> ir.OpStmt:
    return ir.OpStmt(loc, OPS[name], dict(args))


def _handover(section: ir.Section, side: ir.Var, event: int) -> List[ir.Stmt]:
    """``if side == other: other drains and signals; this side waits and drains`` then ``side = this``."""
    loc, kind = section.loc, section.kind
    other = _OTHER[kind]
    xcore = dict(pipe=PipeType.S, event_id=event, sync_mode=CrossCoreSyncMode.INTRA_BLOCK)
    signal = ir.Section(loc, other, [_op("bar_all", loc), _op("set_cross_core", loc, **xcore)])
    wait = ir.Section(loc, kind, [_op("wait_cross_core", loc, **xcore), _op("bar_all", loc)])
    cond = ir.BinOp("==", side, ir.const(_SIDE[other]), ir.DT_BOOL)
    return [ir.If(loc, cond, [signal, wait], []), section, ir.Assign(loc, side, ir.const(_SIDE[kind]))]


def _rewrite(stmts: List[ir.Stmt], side: ir.Var, event: int) -> List[ir.Stmt]:
    out: List[ir.Stmt] = []
    for s in stmts:
        if isinstance(s, ir.Section):
            out.extend(_handover(s, side, event))
            continue
        changes = {}
        for f in dataclasses.fields(s):
            value = getattr(s, f.name)
            if f.name != "loc" and isinstance(value, list) and all(isinstance(x, ir.Stmt) for x in value):
                changes[f.name] = _rewrite(value, side, event)
        out.append(dataclasses.replace(s, **changes) if changes else s)
    return out


def insert_pipeline_sync(kernel: ir.KernelIR, config: Optional[object]) -> ir.KernelIR:
    """``kernel`` with the cube/vector hand-over of a ``pipeline=`` kernel (itself when not needed)."""
    if config is None or kernel.kind != "mix":
        return kernel
    event = _free_event(kernel)
    side = ir.Var("pipeline_side", ir.DT_INT64)
    body = [ir.Assign(kernel.body[0].loc if kernel.body else None, side, ir.const(0))]
    body += _rewrite(kernel.body, side, event)
    return dataclasses.replace(kernel, body=body)

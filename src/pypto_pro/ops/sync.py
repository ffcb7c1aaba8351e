"""Synchronisation ops (``pl.system.*``; docs/language.md "SPMD, sections, synchronisation").

In the reference interpreter each core runs in program order, so flags, barriers and mutexes
within a core are no-ops (their arguments are still checked); cross-core events and ``sync_all``
really block, because cores of a block run as cooperating tasks.  Flags are counters: an
INTRA_BLOCK set by the cube reaches both AIVs, and a cube wait needs a set from every AIV.  UNICAST_BLOCK
uses the same events, but a cube core's UNICAST_BLOCK wait needs a set from one AIV only (the lowest-numbered
AIV that has set it).
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..ir import nodes as ir
from ..ir.optable import Arg, Wait, op
from ..ir.types import CacheLine, CrossCoreSyncMode, DcciDst, PipeType, SyncAllMode, SyncCoreType


#: the pipes with a pl.system.bar_<pipe>() (besides bar_all)
_BAR_PIPES = ("m", "mte1", "mte2", "mte3", "fix", "v")


def _pipe(c, name, value):
    """A pipe that a flag, mutex or cross-core event names: one pipe (``PipeType.ALL`` is for
    ``bar_all`` only, as the official sync pages say)."""
    if not isinstance(value, PipeType):
        c.fail(f"'{name}' must be a pl.PipeType, got {value!r}")
    if value == PipeType.ALL:
        c.fail(f"'{name}' must name one pipe, not pl.PipeType.ALL (a barrier over every pipe is pl.system.bar_all())")


def _event(c, value, hi=15):
    if isinstance(value, bool):
        c.fail(f"event/mutex id must be an int, got {value!r}")
    if isinstance(value, int) and not 0 <= value <= hi:
        c.fail(f"event/mutex id {value} is outside [0, {hi}]")


def _nop(ctx, a):
    return None


def _flag_check(c, a):
    _pipe(c, "set_pipe", a["set_pipe"])
    _pipe(c, "wait_pipe", a["wait_pipe"])
    if a["set_pipe"] == a["wait_pipe"]:
        name = a["set_pipe"].name.lower()
        within = f"pl.system.bar_{name}()" if name in _BAR_PIPES else "program order"
        c.fail(f"set_pipe and wait_pipe are both {a['set_pipe'].name}: a flag orders two different pipes "
               f"(within one pipe, {within} does)")
    _event(c, a["event_id"])


_FLAG = [Arg("set_pipe", kw_only=True), Arg("wait_pipe", kw_only=True), Arg("event_id", "scalar", kw_only=True)]
op("sync_src", _FLAG, lambda a: a["set_pipe"].value, aliases=("system.sync_src",), check=_flag_check, sync="flag",
   doc="pl.system.sync_src(*, set_pipe, wait_pipe, event_id): set the flag once earlier set_pipe work is done.")(_nop)
op("sync_dst", _FLAG, lambda a: a["wait_pipe"].value, aliases=("system.sync_dst",), check=_flag_check, sync="flag",
   doc="pl.system.sync_dst(*, set_pipe, wait_pipe, event_id): wait_pipe blocks until the flag is set.")(_nop)

for _p in _BAR_PIPES + ("all",):
    op(f"bar_{_p}", [], _p.upper(), aliases=(f"system.bar_{_p}",), check=lambda c, a: None, sync="barrier",
       doc=f"pl.system.bar_{_p}(): later {_p.upper()} work waits for earlier {_p.upper()} work.")(_nop)


def _mutex_check(c, a):
    _pipe(c, "pipe", a["pipe"])
    _event(c, a["mutex_id"], 31)
    if a["mutex_ids"] is not None and not all(isinstance(i, int) and 0 <= i <= 31 for i in a["mutex_ids"]):
        c.fail("mutex_ids must be ints in [0, 31]")


_MUTEX = [Arg("pipe", kw_only=True), Arg("mutex_id", "scalar", kw_only=True), Arg("mode", default=0, kw_only=True),
          Arg("max_mutex_id", default=2, kw_only=True), Arg("mutex_ids", default=None, kw_only=True)]
op("mutex_lock", _MUTEX, lambda a: a["pipe"].value, aliases=("system.mutex_lock", "mutex.mutex_lock"),
   check=_mutex_check, sync="mutex", doc="pl.system.mutex_lock(*, pipe, mutex_id, ...): acquire a mutex for pipe.")(_nop)
op("mutex_unlock", _MUTEX, lambda a: a["pipe"].value, aliases=("system.mutex_unlock", "mutex.mutex_unlock"),
   check=_mutex_check, sync="mutex", doc="pl.system.mutex_unlock(*, pipe, mutex_id, ...): release a mutex held by pipe.")(_nop)


def _xcore_check(c, a):
    _pipe(c, "pipe", a["pipe"])
    _event(c, a["event_id"])
    a["sync_mode"] = CrossCoreSyncMode(a["sync_mode"])


def flag_mode(mode: CrossCoreSyncMode) -> CrossCoreSyncMode:
    """The event family a mode's sets and waits use: UNICAST_BLOCK events are the block's AIC<->AIV
    (INTRA_BLOCK) events; only a cube core's wait differs (any one AIV's set releases it)."""
    return CrossCoreSyncMode.INTRA_BLOCK if mode == CrossCoreSyncMode.UNICAST_BLOCK else mode


def unicast_wait(ctx, mode: CrossCoreSyncMode) -> bool:
    """Whether this wait is released by a set from any one source (a cube core's UNICAST_BLOCK wait)."""
    return mode == CrossCoreSyncMode.UNICAST_BLOCK and ctx.core.kind == "cube"


def _sources(ctx, mode):
    """Cores whose sets the executing core's wait consumes (and, for a set, the cores it reaches)."""
    core = ctx.core
    if mode in (CrossCoreSyncMode.INTRA_BLOCK, CrossCoreSyncMode.UNICAST_BLOCK):
        return ctx.peers("vector" if core.kind == "cube" else "cube")
    if mode == CrossCoreSyncMode.INTER_SUBBLOCK:
        if core.kind != "vector":
            raise ctx.error("INTER_SUBBLOCK events are between the AIVs of a block")
        return ctx.peers("vector")
    return [c for c in ctx.launch.cores if c.kind == core.kind]


def _set_cross_core(ctx, a):
    mode = a["sync_mode"]
    event = int(ctx.scalar(a["event_id"]))
    targets = _sources(ctx, mode)
    if not targets:
        raise ctx.error(f"set_cross_core({mode.name}) has no core to reach in this kernel")
    flags = ctx.launch.flags
    for t in targets:
        key = (id(t), flag_mode(mode), event, id(ctx.core))
        flags[key] = flags.get(key, 0) + 1


def _wait_cross_core(ctx, a):
    mode = a["sync_mode"]
    event = int(ctx.scalar(a["event_id"]))
    sources = _sources(ctx, mode)
    if not sources:
        raise ctx.error(f"wait_cross_core({mode.name}) has no core that could set it in this kernel")
    flags = ctx.launch.flags
    keys = [(id(ctx.core), flag_mode(mode), event, id(s)) for s in sorted(sources, key=lambda c: c.sub)]
    if unicast_wait(ctx, mode):
        def take():  # the set of the lowest-numbered AIV that has one; the source core is recorded
            for k, src in zip(keys, sorted(sources, key=lambda c: c.sub)):
                if flags.get(k, 0) > 0:
                    flags[k] -= 1
                    ctx.launch.unicast_source[id(ctx.core)] = src
                    return None
        return Wait(lambda: any(flags.get(k, 0) > 0 for k in keys), take,
                    f"wait_cross_core(event_id={event}, {mode.name})", loc=ctx.stmt.loc)

    def ready():
        return all(flags.get(k, 0) > 0 for k in keys)

    def done():
        for k in keys:
            flags[k] -= 1

    return Wait(ready, done, f"wait_cross_core(event_id={event}, {mode.name})", loc=ctx.stmt.loc)


_XCORE = [Arg("pipe", kw_only=True), Arg("event_id", "scalar", kw_only=True),
          Arg("sync_mode", default=CrossCoreSyncMode.INTRA_BLOCK, kw_only=True)]
op("set_cross_core", _XCORE, lambda a: a["pipe"].value, aliases=("system.set_cross_core",), check=_xcore_check,
   sync="cross_core",
   doc="pl.system.set_cross_core(*, pipe, event_id, sync_mode=INTRA_BLOCK): signal other cores.")(_set_cross_core)
op("wait_cross_core", _XCORE, lambda a: a["pipe"].value, aliases=("system.wait_cross_core",), check=_xcore_check,
   sync="cross_core",
   doc="pl.system.wait_cross_core(*, pipe, event_id, sync_mode=INTRA_BLOCK): block until signalled.")(
    _wait_cross_core)


def _sync_all_check(c, a):
    a["core_type"] = SyncCoreType(a["core_type"])
    a["mode"] = SyncAllMode(a["mode"])
    used = used_cores_of(a)
    if isinstance(used, int) and used < 1:
        c.fail(f"used_cores must be at least 1, got {used}")


def used_cores_of(args: Dict[str, Any]) -> Optional[Any]:
    """The ``used_cores`` of a sync_all (an int or a runtime scalar): the keyword, or a scalar after
    the workspaces (the official ``[sync_gm, sync_ub, used_cores]``); None means every core of the
    barrier's kind.  Only the first ``used_cores`` such cores (in launch order) take part."""
    if args["used_cores"] is not None:
        return args["used_cores"]
    ws = args["workspaces"]
    if isinstance(ws, (list, tuple)) and ws and isinstance(ws[-1], (int, ir.Expr)) and not isinstance(ws[-1], bool):
        return ws[-1]
    return None


def _sync_all(ctx, a):
    launch = ctx.launch
    core_type = a["core_type"]
    if launch.kernel.kind == "vector" and core_type != SyncCoreType.AIV_ONLY:
        raise ctx.error("sync_all in a vector-only kernel needs core_type=pl.SyncCoreType.AIV_ONLY")
    kinds = {SyncCoreType.AIV_ONLY: ("vector",), SyncCoreType.AIC_ONLY: ("cube",),
             SyncCoreType.MIX: ("vector", "cube")}[core_type]
    if ctx.core.kind not in kinds:
        raise ctx.error(f"a {ctx.core.kind} core cannot join sync_all(core_type={core_type.name})")
    members = [c for c in launch.cores if c.kind in kinds]
    used = used_cores_of(a)
    if used is not None:
        n = int(ctx.scalar(used))
        if n < 1:
            raise ctx.error(f"sync_all(used_cores={n}): used_cores must be at least 1")
        members = members[:n]
        if not any(c is ctx.core for c in members):
            raise ctx.error(f"sync_all(used_cores={n}) waits for the first {n} {core_type.name} cores only; "
                            "this core must not enter it")
    participants = len(members)
    gen_key = ("sync_all_gen", core_type, id(ctx.core))
    gen = launch.barriers.get(gen_key, 0)
    launch.barriers[gen_key] = gen + 1
    key = ("sync_all", core_type, gen)
    launch.barriers[key] = launch.barriers.get(key, 0) + 1
    return Wait(lambda: launch.barriers[key] >= participants, what=f"sync_all #{gen} ({core_type.name})",
                loc=ctx.stmt.loc)


op("sync_all", [Arg("workspaces", "any", default=None), Arg("core_type", default=SyncCoreType.MIX, kw_only=True),
                Arg("mode", default=SyncAllMode.HARD, kw_only=True), Arg("used_cores", "any", default=None,
                                                                          kw_only=True)],
   "ALL", aliases=("system.sync_all",), check=_sync_all_check, sync="grid", writes_args=("workspaces",),
   doc="pl.system.sync_all(workspaces=None, *, core_type=MIX, mode=HARD, used_cores=None): barrier over the "
       "cores of the launch (the first used_cores of them if given, also as the workspaces' last item).")(
    _sync_all)

op("set_mm_layout_transform", [Arg("enabled", kw_only=True)], "M", aliases=("system.set_mm_layout_transform",),
   check=lambda c, a: None, cost="descriptor",
   doc="pl.system.set_mm_layout_transform(*, enabled): hardware layout transform around phased matmuls "
       "(no effect on values).")(_nop)
op("dcci", [Arg("target", "any"), Arg("offset", "any", default=None),
            Arg("cache_line", default=CacheLine.ENTIRE_DATA_CACHE, kw_only=True),
            Arg("dst", default=DcciDst.AUTO, kw_only=True)], "S", aliases=("system.dcci",),
   check=lambda c, a: None, cost="cache",
   doc="pl.system.dcci(target, offset=None, *, cache_line=pl.CacheLine.ENTIRE_DATA_CACHE, dst=pl.DcciDst.AUTO): "
       "cache clean/invalidate (no effect on values: the CPU backends keep no stale copies).")(_nop)

"""Replays the recorded instruction streams on the AI-Core pipe model.

Per core, the scalar unit issues instructions in program order (``scalar_issue`` cycles each) into
per-pipe queues; MTE2, MTE1, M, V, MTE3 and FIX each execute their queue in order, asynchronously
to one another; scalar-pipe ops, ``bar_all`` and ``sync_all`` execute on the scalar unit itself.
Sync ops behave as on hardware: ``sync_src`` sets a flag once earlier work of its pipe is done and
``sync_dst`` blocks its pipe until the flag is set (flags count); mutexes are granted in program
order (lock tickets) and serialise holders across pipes; ``bar_<pipe>`` fences a pipe, ``bar_all``
drains the core; cross-core events and ``sync_all`` join cores.  Blocks beyond the number that
run at once (AIV cores for vector-only kernels, AI cores otherwise) run in waves on the same core.

Timing is a max-plus schedule (an instruction starts when its pipe is free, it has been issued and
what it waits for has happened).  Ordering is tracked with vector clocks over agents (core x pipe),
which the shadow memory uses to find races.  Work that can never proceed is a deadlock.
"""
from __future__ import annotations

from collections import defaultdict, deque
from typing import Callable, Deque, Dict, List, Optional, Tuple

import numpy as np

from .costs import CostParams
from .instr import DMA_PIPES, PIPE_INDEX, PIPES, Hazard, Instr
from .shadow import Shadow

NP = len(PIPES)
S = PIPE_INDEX["S"]
_PIPE_AT = dict(PIPE_INDEX)


class _Mutex:
    __slots__ = ("issued", "released", "held_by", "vc", "time", "last_agent", "last_unlock")

    def __init__(self):
        self.issued = 0          # lock tickets handed out in program order
        self.released = 0        # unlocks executed
        self.held_by: Optional[Instr] = None
        self.vc = None           # vector clock published by the last unlock
        self.time = 0
        self.last_agent = -1
        self.last_unlock: Optional[Instr] = None


class Replay:
    """One replay of a launch's streams; ``run()`` fills timing into the instructions."""

    def __init__(self, streams: List[List[Instr]], cores, params: CostParams, capacity: int,
                 hazards: List[Hazard], describe):
        """``capacity``: how many blocks run at once (simulate.resident_blocks); later ones run in waves."""
        self.streams = streams
        self.cores = cores
        self.params = params
        self.hazards = hazards
        self.describe = describe  # (old_acc, old_ins, new_acc, new_ins, inverted) -> Hazard
        n = len(streams)
        self.n_agents = n * NP
        self.vc = [np.zeros(self.n_agents, np.int64) for _ in range(self.n_agents)]
        self.count = [0] * self.n_agents
        self.free = [0] * self.n_agents
        self.queues: List[Deque[Instr]] = [deque() for _ in range(self.n_agents)]
        self.ptr = [0] * n
        self.t_s = [0] * n
        self.started = [False] * n
        self.finished = [False] * n
        self.finish_time = [0] * n
        self.capacity = capacity
        self.pred = self._predecessors(capacity)
        self.flags: Dict[Tuple, Deque] = {}
        self.xflags: Dict[Tuple, Deque] = {}
        #: (core, mutex id) -> its state, created on first use
        self.mutexes: Dict[Tuple[int, int], _Mutex] = defaultdict(_Mutex)
        #: Acc phase flags (docs/language.md): (core, tile) -> (flag, published clock, time, setting instruction)
        self.phases: Dict[Tuple[int, int], Tuple[int, Optional[np.ndarray], int, Optional[Instr]]] = {}
        self.arrivals: Dict[Tuple, Dict[int, Tuple[int, np.ndarray]]] = {}
        self.waiters: Dict[Tuple, List[int]] = {}
        self.blocked: Dict[int, str] = {}
        self.work: Deque[int] = deque()
        self.queued = [False] * self.n_agents
        #: agents on a DMA pipe: their writes may complete out of order (see shadow.py)
        self.dma = [PIPES[a % NP] in DMA_PIPES for a in range(self.n_agents)]
        self.shadow = Shadow()
        #: per agent: busy cycles, and the start of its first instruction (an agent's starts never decrease)
        #: and the end of its last one; what the report's per-core summary needs, kept while replaying
        self.busy = [0] * self.n_agents
        self.first: List[Optional[int]] = [None] * self.n_agents
        self.last = [0] * self.n_agents
        self._seen_races: set = set()

    # ------------------------------------------------------------------ setup
    def _predecessors(self, capacity: int) -> List[int]:
        """Index of the core that runs before each core on the same physical core (-1: first wave)."""
        where = {(c.block, c.kind, c.sub): i for i, c in enumerate(self.cores)}
        return [where.get((c.block - capacity, c.kind, c.sub), -1) for c in self.cores]

    # ------------------------------------------------------------------ scheduling
    def _wake(self, agent: int) -> None:
        if not self.queued[agent]:
            self.queued[agent] = True
            self.work.append(agent)

    def _park(self, agent: int, key: Tuple, why: str) -> None:
        self.waiters.setdefault(key, []).append(agent)
        self.blocked[agent] = why

    def _notify(self, key: Tuple) -> None:
        if not self.waiters:
            return
        for agent in self.waiters.pop(key, ()):
            self.blocked.pop(agent, None)
            self._wake(agent)

    def run(self) -> None:
        for ci in range(len(self.streams)):
            self._wake(ci * NP + S)
        while self.work:
            agent = self.work.popleft()
            self.queued[agent] = False
            if agent % NP == S:
                self._scalar(agent // NP)
            else:
                self._drain(agent)
        if not all(self.finished):
            self._deadlock()
        self._unreleased()

    # ------------------------------------------------------------------ scalar unit
    def _scalar(self, ci: int) -> None:
        if not self.started[ci]:
            p = self.pred[ci]
            if p >= 0 and not self.finished[p]:
                self._park(ci * NP + S, ("finish", p), f"waits for block {self.cores[p].block} to leave the core")
                return
            self.t_s[ci] = self.finish_time[p] if p >= 0 else 0
            self.started[ci] = True
        stream = self.streams[ci]
        issue = self.params.scalar_issue
        base = ci * NP
        queues, queued, work, mutexes = self.queues, self.queued, self.work, self.mutexes
        ptr, t, n = self.ptr[ci], self.t_s[ci], len(stream)
        while ptr < n:
            ins = stream[ptr]
            pipe = ins.pipe
            if pipe == "S" or pipe == "ALL":
                self.ptr[ci], self.t_s[ci] = ptr, t
                if not self._execute_scalar(ci, ins):
                    return
                t = self.t_s[ci]
            else:
                sync = ins.sync
                if sync is not None and sync[0] == "lock" and ins.ticket < 0:
                    m = mutexes[ci, sync[1]]
                    ins.ticket = m.issued
                    m.issued += 1
                ins.issue = t
                t += issue
                agent = base + _PIPE_AT[pipe]
                queues[agent].append(ins)
                if not queued[agent]:
                    queued[agent] = True
                    work.append(agent)
            ptr += 1
        self.ptr[ci], self.t_s[ci] = ptr, t
        self._check_finished(ci)

    def _ticket(self, ci: int, ins: Instr) -> None:
        m = self.mutexes[ci, ins.sync[1]]
        ins.ticket = m.issued
        m.issued += 1

    def _drained(self, ci: int) -> bool:
        return all(not self.queues[ci * NP + p] for p in range(NP) if p != S)

    def _check_finished(self, ci: int) -> None:
        if self.finished[ci] or not self.started[ci] or self.ptr[ci] < len(self.streams[ci]):
            return
        if not self._drained(ci):
            return
        self.finished[ci] = True
        self.finish_time[ci] = max([self.t_s[ci]] + [self.free[ci * NP + p] for p in range(NP)])
        self._notify(("finish", ci))

    def _execute_scalar(self, ci: int, ins: Instr) -> bool:
        agent = ci * NP + S
        sync = ins.sync
        if sync is not None and sync[0] in ("bar_all", "sync_all"):
            if not self._drained(ci):
                self._park(agent, ("drain", ci), f"{ins.op} waits for the core's pipes to drain")
                return False
            return self._barrier(ci, ins)
        if sync is not None and sync[0] == "lock" and ins.ticket < 0:
            self._ticket(ci, ins)
        ins.issue = self.t_s[ci]
        if not self._execute(agent, ins):
            return False
        self.t_s[ci] = ins.end
        return True

    def _fenced_core_vc(self, ci: int) -> np.ndarray:
        vc = np.zeros(self.n_agents, np.int64)
        for p in range(NP):
            a = ci * NP + p
            self.vc[a][a] = self.count[a]
            np.maximum(vc, self.vc[a], out=vc)
        return vc

    def _barrier(self, ci: int, ins: Instr) -> bool:
        base = ci * NP
        ready = max([self.t_s[ci]] + [self.free[base + p] for p in range(NP)])
        if ins.sync[0] == "bar_all":
            joined, start = self._fenced_core_vc(ci), ready
        else:
            key, members = ins.sync[1], ins.sync[2]
            arrived = self.arrivals.setdefault(key, {})
            if ci not in arrived:
                arrived[ci] = (ready, self._fenced_core_vc(ci))
                self._notify(("sync_all", key))
            if len(arrived) < len(members):
                missing = [self.cores[m].label for m in members if m not in arrived]
                self._park(base + S, ("sync_all", key), f"sync_all waits for {', '.join(missing[:4])}"
                           + (" ..." if len(missing) > 4 else ""))
                return False
            joined = np.zeros(self.n_agents, np.int64)
            for _, vc in arrived.values():
                np.maximum(joined, vc, out=joined)
            start = max(t for t, _ in arrived.values())
        for p in range(NP):
            np.maximum(self.vc[base + p], joined, out=self.vc[base + p])
        ins.issue = self.t_s[ci]
        ins.start, ins.end = start, start + ins.cost
        self.t_s[ci] = ins.end
        self._account(base + S, ins)
        return True

    def _account(self, agent: int, ins: Instr) -> None:
        self.busy[agent] += ins.cost
        if self.first[agent] is None:
            self.first[agent] = ins.start
        self.last[agent] = ins.end

    def core_summary(self, ci: int) -> Tuple[Dict[str, int], int, int]:
        """(busy cycles per pipe, start, end) of core ``ci``'s instructions, as the report lists them."""
        agents = range(ci * NP, ci * NP + NP)
        starts = [self.first[a] for a in agents if self.first[a] is not None]
        return ({p: self.busy[ci * NP + i] for i, p in enumerate(PIPES)}, min(starts, default=0),
                max((self.last[a] for a in agents if self.first[a] is not None), default=0))

    # ------------------------------------------------------------------ pipes
    def _drain(self, agent: int) -> None:
        q = self.queues[agent]
        execute = self._execute
        while q:
            if not execute(agent, q[0]):
                return
            q.popleft()
        ci = agent // NP
        self._notify(("drain", ci))
        self._check_finished(ci)

    def _execute(self, agent: int, ins: Instr) -> bool:
        """Run ``ins`` on ``agent`` if what it waits for has happened; False (and parked) otherwise."""
        sync = ins.sync
        start = ins.issue  # the latest of: issued, pipe free, what it waited for
        free = self.free
        if free[agent] > start:
            start = free[agent]
        publish = None
        if sync is not None:
            acquire, publish = _HANDLERS.get(sync[0], _NO_HANDLERS)
            if acquire is not None:
                dep = acquire(self, agent, ins, sync)
                if dep is None:
                    return False
                if dep > start:
                    start = dep
        cost = ins.cost
        end = free[agent] = self.last[agent] = ins.end = start + cost
        ins.start = start
        self.busy[agent] += cost
        if self.first[agent] is None:
            self.first[agent] = start
        # the agent's own clock component in its vector clock is not advanced here: only the agent itself
        # reads it, where program order decides (other pipes) or only fences count (DMA pipes, see
        # shadow.py); a published snapshot carries the current count (_snapshot)
        count = self.count
        clock = count[agent] = count[agent] + 1
        accesses = ins.accesses
        if accesses:
            access, vc, dma = self.shadow.access, self.vc[agent], self.dma[agent]
            for acc in accesses:
                races = access(acc, ins, agent, clock, vc, dma)
                if races:
                    for old_acc, old_ins, _, inverted in races:
                        self._race(old_acc, old_ins, acc, ins, inverted)
        if publish is not None:
            publish(self, agent, ins, sync, clock, end)
        return True

    # An acquire returns the time what the instruction waited for happened (0: nothing), joining the
    # published vector clock into the agent's, or None after parking the agent.
    def _acquire_flag(self, agent: int, ins: Instr, sync: Tuple) -> Optional[int]:
        ci = agent // NP
        q = self.flags.get((ci, sync[1]))
        if not q:
            set_pipe, wait_pipe, event = sync[1]
            self._park(agent, ("flag", ci, sync[1]), f"waits for flag set_pipe={set_pipe} wait_pipe={wait_pipe} "
                       f"event_id={event}, which no sync_src sets")
            return None
        dep, published, ins.after = q.popleft()
        np.maximum(self.vc[agent], published, out=self.vc[agent])
        return dep

    def _acquire_mutex(self, agent: int, ins: Instr, sync: Tuple) -> Optional[int]:
        ci = agent // NP
        m = self.mutexes[ci, sync[1]]
        if m.released != ins.ticket or m.held_by is not None:
            holder = m.held_by
            why = (f"waits for mutex {sync[1]}, held since {holder.op} at {holder.line} (pipe {holder.pipe})"
                   if holder is not None else f"waits for mutex {sync[1]}, whose earlier lock is not released")
            self._park(agent, ("mutex", ci, sync[1]), why)
            return None
        m.held_by = ins
        if m.vc is not None and m.last_agent != agent:  # a hand-over within one pipe adds nothing
            np.maximum(self.vc[agent], m.vc, out=self.vc[agent])
            ins.after = m.last_unlock
            return m.time
        return 0

    def _acquire_cross_core(self, agent: int, ins: Instr, sync: Tuple) -> Optional[int]:
        for key in sync[1]:
            if not self.xflags.get(key):
                self._park(agent, ("x", key), f"waits for cross-core event {key[2]} from "
                           f"{self.cores[key[3]].label}, which never sets it")
                return None
        dep = 0
        vc = self.vc[agent]
        for key in sync[1]:
            t, published, setter = self.xflags[key].popleft()
            if t >= dep:
                dep, ins.after = t, setter
            np.maximum(vc, published, out=vc)
        return dep

    def _acquire_phase(self, agent: int, ins: Instr, sync: Tuple) -> Optional[int]:
        ci = agent // NP
        want = 0 if sync[0] == "phase_mm" else 1
        state, published, t, setter = self.phases.get((ci, sync[1]), (0, None, 0, None))
        if state != want:
            self._park(agent, ("phase", ci, sync[1]), f"waits for the Acc tile's phase flag to become {want} "
                       f"({'a Final store' if want == 0 else 'a Final matmul'} that never comes)")
            return None
        if published is None:
            return 0
        np.maximum(self.vc[agent], published, out=self.vc[agent])
        ins.after = setter
        return t

    # A publish runs once the instruction has executed.  What a release publishes covers all earlier
    # work of its pipe, but later transfers of the same pipe may still overtake earlier ones (only
    # bar_<pipe> orders them): the agent's own clock component is set in the snapshot only.
    def _snapshot(self, agent: int, clock: int) -> np.ndarray:
        published = self.vc[agent].copy()
        published[agent] = clock
        return published

    def _publish_fence(self, agent: int, ins: Instr, sync: Tuple, clock: int, end: int) -> None:
        self.vc[agent][agent] = clock  # later work of the pipe waits for its earlier work

    def _publish_flag(self, agent: int, ins: Instr, sync: Tuple, clock: int, end: int) -> None:
        key = (agent // NP, sync[1])
        self.flags.setdefault(key, deque()).append((end, self._snapshot(agent, clock), ins))
        self._notify(("flag",) + key)

    def _publish_unlock(self, agent: int, ins: Instr, sync: Tuple, clock: int, end: int) -> None:
        ci = agent // NP
        m = self.mutexes[ci, sync[1]]
        if m.held_by is None or m.held_by.pipe != ins.pipe:
            self._hazard(Hazard("deadlock", f"mutex_unlock of mutex {sync[1]} on pipe {ins.pipe} of "
                                f"{self.cores[ci].label}, which that pipe does not hold\n  at {ins.where()}",
                                [ins.loc] if ins.loc else []))
            return
        m.held_by = None
        m.released += 1
        m.vc, m.time, m.last_agent, m.last_unlock = self._snapshot(agent, clock), end, agent, ins
        self._notify(("mutex", ci, sync[1]))

    def _publish_cross_core(self, agent: int, ins: Instr, sync: Tuple, clock: int, end: int) -> None:
        published = self._snapshot(agent, clock)
        for key in sync[1]:
            self.xflags.setdefault(key, deque()).append((end + self.params.cross_core_latency, published, ins))
            self._notify(("x", key))

    def _publish_phase(self, agent: int, ins: Instr, sync: Tuple, clock: int, end: int) -> None:
        if sync[2]:  # Final: a matmul sets the flag for the fixpipe, a store hands the tile back
            key = (agent // NP, sync[1])
            self.phases[key] = (1 if sync[0] == "phase_mm" else 0, self._snapshot(agent, clock), end, ins)
            self._notify(("phase",) + key)

    # ------------------------------------------------------------------ problems
    def _hazard(self, hazard: Hazard) -> None:
        self.hazards.append(hazard)

    def _race(self, old_acc, old_ins: Instr, acc, ins: Instr, inverted: bool) -> None:
        key = (old_ins.loc, ins.loc, old_acc.write, acc.write, old_ins.pipe, ins.pipe)
        if key in self._seen_races:
            return
        self._seen_races.add(key)
        self._hazard(self.describe(old_acc, old_ins, acc, ins, inverted))

    def _deadlock(self) -> None:
        lines, locs = [], []
        for ci, core in enumerate(self.cores):
            if self.finished[ci] or not self.started[ci]:  # not started: named by _later_wave
                continue
            for p in range(NP):
                agent = ci * NP + p
                why = self.blocked.get(agent)
                if why is None:
                    continue
                if p == S:
                    ins = self.streams[ci][self.ptr[ci]] if self.ptr[ci] < len(self.streams[ci]) else None
                else:
                    ins = self.queues[agent][0] if self.queues[agent] else None
                where = f"pl.{ins.op} at {ins.where()}" if ins is not None else "start"
                lines.append(f"  {core.label} pipe {PIPES[p] if p != S else 'S (scalar)'}: {where}\n    {why}")
                if ins is not None and ins.loc is not None:
                    locs.append(ins.loc)
        if not lines:
            lines = ["  (no pipe can make progress)"]
        self._hazard(Hazard("deadlock", "the launch hangs: " + self._later_wave() + "these pipes wait forever\n"
                            + "\n".join(lines), locs))

    def _later_wave(self) -> str:
        """Why blocks that never started hang the launch ("" if every block started).

        A block beyond the resident capacity starts only when the block before it on its core has
        finished; if that block waits for it (sync_all, a cross-core event), neither ever proceeds,
        which is what hardware does too."""
        waiting = sorted({c.block for ci, c in enumerate(self.cores) if not self.started[ci]})
        if not waiting:
            return ""
        block_dim = max(c.block for c in self.cores) + 1
        unit = "AIV core" if all(c.kind == "vector" for c in self.cores) else "AI core"
        verb = "waits" if len(waiting) == 1 else "wait"
        return (f"block_dim {block_dim} is more than the {self.capacity} blocks that run at once (one per "
                f"{unit}), so {_blocks(waiting)} {verb} in a later wave for a core to be freed, but the blocks "
                f"holding the cores never finish: blocks in a later wave can never arrive at a sync_all or "
                f"cross-core event that earlier blocks wait for. Launch at most {self.capacity} blocks when blocks "
                f"synchronise with each other.\n  ")

    def _unreleased(self) -> None:
        for (ci, mid), m in self.mutexes.items():
            if m.held_by is not None and all(self.finished):
                ins = m.held_by
                self._hazard(Hazard("deadlock", f"mutex {mid} locked on pipe {ins.pipe} of {self.cores[ci].label} "
                                    f"is never released\n  locked by pl.{ins.op} at {ins.where()}",
                                    [ins.loc] if ins.loc else []))

    # ------------------------------------------------------------------ results
    @property
    def total_cycles(self) -> int:
        ends = [self.free[a] for a in range(self.n_agents)] + list(self.t_s) + list(self.finish_time)
        return int(max(ends, default=0))


def _blocks(numbers: List[int]) -> str:
    """ "block 7", "blocks 64..65" or "5 blocks (3, 9, 12, 20, ...)" for sorted block numbers."""
    first, last = numbers[0], numbers[-1]
    if len(numbers) == 1:
        return f"block {first}"
    if last - first + 1 == len(numbers):
        return f"blocks {first}..{last}"
    return f"{len(numbers)} blocks ({', '.join(map(str, numbers[:4]))}{', ...' if len(numbers) > 4 else ''})"


# by sync kind: what an instruction waits for before it runs, and what it publishes after it ran
# (plain functions, so that a Replay holds no references to itself and is freed as soon as it is done)
_ACQUIRE: Dict[str, Callable[[Replay, int, Instr, Tuple], Optional[int]]] = {
    "wait": Replay._acquire_flag, "lock": Replay._acquire_mutex, "xwait": Replay._acquire_cross_core,
    "phase_mm": Replay._acquire_phase, "phase_st": Replay._acquire_phase}
_PUBLISH: Dict[str, Callable[[Replay, int, Instr, Tuple, int, int], None]] = {
    "bar": Replay._publish_fence, "set": Replay._publish_flag, "unlock": Replay._publish_unlock,
    "xset": Replay._publish_cross_core, "phase_mm": Replay._publish_phase, "phase_st": Replay._publish_phase}
#: sync kind -> (acquire, publish), one lookup per instruction
_HANDLERS = {kind: (_ACQUIRE.get(kind), _PUBLISH.get(kind)) for kind in set(_ACQUIRE) | set(_PUBLISH)}
_NO_HANDLERS = (None, None)

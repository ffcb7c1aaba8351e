"""Processes of this machine in one torch.distributed group, for the distributed tests.

:class:`World` starts ``n`` processes once (``spawn``; gloo over a FileStore in a fresh temporary
directory: no ports) and runs test functions in all of them: ``world.run(fn, *args)`` calls
``fn(rank, n, *args)`` in every process and returns the results by rank.  Starting Python with torch
and pypto costs seconds per process, so a test session shares one world; tests that need fewer
ranks make a subgroup (``torch.distributed.new_group``).  Every call has a deadline; the errors of
every failed or hung process are reported together (rank, message, traceback); after a failure the
world is restarted for the next test.
"""
from __future__ import annotations

import datetime
import multiprocessing as mp
import os
import queue as queue_mod
import tempfile
import time
import traceback
from typing import Any, Callable, List, Optional

DEFAULT_ENV = {"PYPTO_SHMEM_TIMEOUT": "20"}


def _serve(rank: int, n: int, store: str, inbox, outbox, env: dict) -> None:
    os.environ.update(env)
    try:
        import torch.distributed as dist

        dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=n,
                                timeout=datetime.timedelta(seconds=60))
        outbox.put((rank, "ok", "ready"))
    except BaseException as e:  # noqa: BLE001
        outbox.put((rank, "error", f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))
        return
    while True:
        job = inbox.get()
        if job is None:
            return
        fn, args = job
        try:
            outbox.put((rank, "ok", fn(rank, n, *args)))
        except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent
            outbox.put((rank, "error", f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))


class World:
    """``n`` processes of one torch.distributed group, reused across calls."""

    def __init__(self, n: int, env: Optional[dict] = None, timeout: float = 120):
        self.n = n
        self.env = {**DEFAULT_ENV, **(env or {})}
        self.procs: List[Any] = []
        self._start(timeout)

    def _start(self, timeout: float) -> None:
        ctx = mp.get_context("spawn")
        self.tmp = tempfile.TemporaryDirectory()
        self.outbox = ctx.Queue()
        self.inboxes = [ctx.Queue() for _ in range(self.n)]
        store = os.path.join(self.tmp.name, "store")
        self.procs = [ctx.Process(target=_serve, args=(r, self.n, store, self.inboxes[r], self.outbox, self.env),
                                  daemon=True) for r in range(self.n)]
        for p in self.procs:
            p.start()
        self._collect(timeout)

    def _collect(self, timeout: float) -> List[Any]:
        records = {}
        deadline = time.monotonic() + timeout
        while len(records) < self.n and time.monotonic() < deadline:
            try:
                rank, status, payload = self.outbox.get(timeout=0.2)
                records[rank] = (status, payload)
            except queue_mod.Empty:
                dead = [r for r, p in enumerate(self.procs) if not p.is_alive() and r not in records]
                for r in dead:
                    records[r] = ("error", f"process exited (code {self.procs[r].exitcode})")
        for r in range(self.n):
            records.setdefault(r, ("error", f"no answer within {timeout:g} s (hung)"))
        failed = [f"rank {r}: {payload}" for r, (status, payload) in sorted(records.items()) if status != "ok"]
        if failed:
            self.close()
            raise AssertionError(f"{len(failed)} of {self.n} processes failed:\n" + "\n".join(failed))
        return [records[r][1] for r in range(self.n)]

    def run(self, fn: Callable, *args: Any, timeout: float = 90) -> List[Any]:
        """``fn(rank, n, *args)`` in every process; results by rank (``AssertionError`` naming every failure)."""
        if not self.procs:
            self._start(timeout)
        for box in self.inboxes:
            box.put((fn, args))
        return self._collect(timeout)

    def close(self) -> None:
        for box in self.inboxes:
            try:
                box.put(None)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + 1.0
        for p in self.procs:
            p.join(timeout=max(0.0, deadline - time.monotonic()))
            if p.is_alive():  # nothing to clean up: the heap segments are unlinked once mapped
                p.kill()
                p.join()
        self.procs = []
        self.tmp.cleanup()

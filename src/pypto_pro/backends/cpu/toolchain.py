"""The system C++ compiler: discovery, flags, identity (for cache keys) and invocation."""
from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

from ...errors import KernelError

INCLUDE_DIR = Path(__file__).parent / "include"
RUNTIME_SOURCE = Path(__file__).parent / "runtime" / "pto_runtime.cpp"

#: Value-affecting flags: no FMA contraction (bit-exact with the interpreter), wrapping integers,
#: no fast-math.  -fno-math-errno only lets sqrt inline (its result is exact either way).
#: -fno-tree-slp-vectorize: g++ 12's SLP vectorizer merges neighbouring ``(double)(float)(x)`` and
#: drops the rounding to fp32 (reproduced with g++ 12.2 at -O2/-O3), which would break the fp32
#: semantics of scalar expressions; loops are still vectorized and hot paths use intrinsics.
COMMON_FLAGS = ("-std=c++17", "-fPIC", "-shared", "-ffp-contract=off", "-fwrapv", "-fno-strict-aliasing",
                "-fno-math-errno", "-fno-tree-slp-vectorize", "-w", "-g0")


#: A file to append one JSON line per compile to (test, source, -O level, PCH, compiler CPU and wall
#: seconds, source bytes): where a test run's compile time goes (tools/compile_costs.py, docs/testing.md).
COMPILE_LOG_ENV = "PYPTO_COMPILE_LOG"


class CompileError(KernelError):
    """The system compiler rejected generated code (a bug in the CPU backend)."""


@dataclass(frozen=True)
class Toolchain:
    """A C++ compiler and the flags every kernel is built with."""

    path: str
    version: str
    flags: tuple

    @property
    def identity(self) -> str:
        """Everything about the toolchain that changes generated machine code."""
        return "\n".join([self.path, self.version, " ".join(self.flags), cpu_features()])


def _arch_flags(cxx: str) -> tuple:
    """-march=native where the compiler accepts it (x86, recent ARM), else the host default."""
    probe = subprocess.run([cxx, "-march=native", "-x", "c++", "-fsyntax-only", "-"], input=b"int x;\n",
                           capture_output=True)
    return ("-march=native",) if probe.returncode == 0 else ()


def _probe_cache_file() -> Path:
    from ...runtime.cache import user_cache_root

    return user_cache_root() / "toolchain_probes.json"


def _probe_key(path: str) -> Optional[str]:
    """Identity of a compiler binary without running it: resolved path, size, mtime, inode."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}|{platform.machine()}"


def _cached_probe(path: str) -> Optional[Toolchain]:
    """The toolchain of ``path`` as probed by an earlier process (saves two compiler runs at start-up)."""
    key = _probe_key(path)
    if key is None:
        return None
    try:
        entry = json.loads(_probe_cache_file().read_text()).get(key)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
        return None
    return Toolchain(path, entry["version"], COMMON_FLAGS + tuple(entry.get("arch_flags", ())))


def _store_probe(tc: Toolchain) -> None:
    key = _probe_key(tc.path)
    if key is None:
        return
    from ...runtime.cache import write_atomic

    f = _probe_cache_file()
    try:
        data = json.loads(f.read_text())
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    data[key] = {"version": tc.version, "arch_flags": list(tc.flags[len(COMMON_FLAGS):])}
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(f, json.dumps(data, indent=1).encode())
    except OSError:
        pass


@functools.lru_cache(maxsize=None)
def _find(cxx_env: Optional[str]) -> Optional[Toolchain]:
    candidates = [cxx_env] if cxx_env else ["g++", "clang++", "c++"]
    for name in candidates:
        path = shutil.which(name) if name else None
        if not path:
            continue
        cached = _cached_probe(path)
        if cached is not None:
            return cached
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode != 0:
            continue
        version = out.stdout.strip().splitlines()[0] if out.stdout.strip() else name
        tc = Toolchain(path, version, COMMON_FLAGS + _arch_flags(path))
        _store_probe(tc)
        return tc
    return None


def find_toolchain() -> Optional[Toolchain]:
    """The compiler named by ``$CXX``, else g++ / clang++ / c++ on PATH; ``None`` if there is none."""
    return _find(os.environ.get("CXX") or None)


@functools.lru_cache(maxsize=None)
def cpu_features() -> str:
    """The host ISA (machine + CPU flags), part of every cache key since we build with -march=native."""
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags = " ".join(sorted(line.split(":", 1)[1].split()))
                    break
    except OSError:
        pass
    return f"{platform.machine()} {flags}"


def compile_shared(tc: Toolchain, source: Path, output: Path, opt: str = "-O3",
                   extra: Sequence[str] = (), include_first: Sequence[Path] = ()) -> None:
    """Compile ``source`` into the shared library ``output``; raises CompileError with the compiler output.

    ``include_first``: directories searched before the tile headers (the precompiled header's)."""
    cmd: List[str] = [tc.path, opt, *tc.flags, *(f"-I{d}" for d in include_first), f"-I{INCLUDE_DIR}",
                      str(source), "-o", str(output), *extra]
    log = os.environ.get(COMPILE_LOG_ENV)
    before = _children_cpu() if log else None
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if before is not None:
        _log_compile(log, source, opt, bool(include_first), before, time.perf_counter() - start)
    if proc.returncode != 0:
        raise CompileError(f"the C++ compiler failed on {source}:\n{proc.stderr.strip()[-4000:]}")


def _children_cpu() -> float:
    import resource  # POSIX; only for the compile log

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _log_compile(log: str, source: Path, opt: str, pch: bool, before: float, wall: float) -> None:
    """One line of ``$PYPTO_COMPILE_LOG``.  The CPU time is this process's children's since the compile
    started (approximate where threads of one process compile at once)."""
    cpu = _children_cpu() - before
    rec = {"test": os.environ.get("PYTEST_CURRENT_TEST", ""), "source": str(source), "opt": opt, "pch": pch,
           "cpu": round(cpu, 3), "wall": round(wall, 3), "bytes": source.stat().st_size}
    with open(log, "a") as f:
        f.write(json.dumps(rec) + "\n")

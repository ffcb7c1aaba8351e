"""The system C++ compiler: discovery, flags, identity (for cache keys) and invocation."""
from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

from ...errors import KernelError

INCLUDE_DIR = Path(__file__).parent / "include"
RUNTIME_SOURCE = Path(__file__).parent / "runtime" / "pto_runtime.cpp"

#: Value-affecting flags: no FMA contraction (bit-exact with the interpreter), wrapping integers,
#: no fast-math.  -fno-math-errno only lets sqrt inline (its result is exact either way).
COMMON_FLAGS = ("-std=c++17", "-fPIC", "-shared", "-ffp-contract=off", "-fwrapv", "-fno-strict-aliasing",
                "-fno-math-errno", "-w", "-g0")


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


@functools.lru_cache(maxsize=None)
def _find(cxx_env: Optional[str]) -> Optional[Toolchain]:
    candidates = [cxx_env] if cxx_env else ["g++", "clang++", "c++"]
    for name in candidates:
        path = shutil.which(name) if name else None
        if not path:
            continue
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode != 0:
            continue
        version = out.stdout.strip().splitlines()[0] if out.stdout.strip() else name
        return Toolchain(path, version, COMMON_FLAGS + _arch_flags(path))
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
                   extra: Sequence[str] = ()) -> None:
    """Compile ``source`` into the shared library ``output``; raises CompileError with the compiler output."""
    cmd: List[str] = [tc.path, opt, *tc.flags, f"-I{INCLUDE_DIR}", str(source), "-o", str(output), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError(f"the C++ compiler failed on {source}:\n{proc.stderr.strip()[-4000:]}")

"""Building, loading and calling compiled kernels (``call_kernel_<hash>.so``) through ctypes.

The runtime library (pool, fibers, events; ``libpto_rt_<hash>.so``) is built once per install and
toolchain (:mod:`.prebuilt`, in the per-user cache) and loaded with RTLD_GLOBAL so every kernel library resolves its ``pto_rt_*`` symbols against it.  A
kernel call passes one int64 array: per tensor its data pointer, shape and element strides, then
the scalars (floats as the bits of a double).
"""
from __future__ import annotations

import ctypes
import logging
import re
import threading
import time
from pathlib import Path
from typing import Any, Dict, Sequence

import numpy as np

from ... import __version__
from ...errors import KernelDeadlockError, KernelRuntimeError
from ...ir import nodes as ir
from ...ir.optable import wait_location
from ...log import logger
from ...runtime import cache
from ...runtime.args import element_strides, pointer_address
from . import prebuilt
from .codegen import Generated, generate
from .toolchain import Toolchain

#: Bump when the generated code or its calling convention changes meaning.
CODEGEN_VERSION = "1"


class PtoError(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("site", ctypes.c_int32), ("message", ctypes.c_char * 1024)]


_runtime_lock = threading.Lock()
_runtime: Dict[str, ctypes.CDLL] = {}
_ops: Dict[str, ctypes.CDLL] = {}


def runtime_library(tc: Toolchain) -> ctypes.CDLL:
    """The process-wide runtime library for this toolchain (built once per install, see :mod:`.prebuilt`)."""
    with _runtime_lock:
        lib = _runtime.get(tc.identity)
        if lib is not None:
            return lib
        start = time.perf_counter()
        cached = None
        if logger.isEnabledFor(logging.INFO):
            entry, _ = prebuilt.runtime_entry(tc)
            cached = entry.valid() is not None
        path = prebuilt.build_runtime(tc)
        if cached is not None:
            logger.info("%s the cpu runtime library %s (%.0f ms, once per process)",
                        "cache hit for" if cached else "built", path, (time.perf_counter() - start) * 1e3)
        lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        _runtime[tc.identity] = lib
        return lib


def load_ops(path: Path) -> None:
    """Load the ops library (RTLD_GLOBAL, after the runtime library it calls) once per process: kernels
    compiled with ``pto/prebuilt_ops.h`` resolve their per-op functions against it."""
    with _runtime_lock:
        if str(path) not in _ops:
            _ops[str(path)] = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)


class CompiledKernel:
    """A loaded ``call_kernel*.so`` for one kernel specialization."""

    def __init__(self, kernel: ir.KernelIR, gen: Generated, path: Path):
        self.kernel = kernel
        self.gen = gen
        self.path = path
        lib = ctypes.CDLL(str(path))
        fn = lib.call_kernel
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
        fn.restype = ctypes.c_int
        self._lib = lib
        self.fn = fn
        self._tensor_params = [p for p in kernel.params if isinstance(p, ir.TensorParam)]
        self._scalar_params = [p for p in kernel.params if isinstance(p, ir.ScalarParam)]
        self._spare = threading.local()
        from .emit_extra import log_sink  # kernel log of printf/pto_assert/dump_data (None: no such op)
        self.log_sink = log_sink(self)

    # ------------------------------------------------------------------ argument packing
    def buffers(self):
        """(int64 args array, its double view, error struct) private to the calling thread."""
        spare = getattr(self._spare, "bufs", None)
        if spare is None:
            args = (ctypes.c_int64 * max(1, self.gen.nslots))()
            spare = (args, (ctypes.c_double * max(1, self.gen.nslots)).from_buffer(args), PtoError())
            self._spare.bufs = spare
        return spare

    def pack(self, tensors: Dict[int, np.ndarray], scalars_by_uid: Dict[int, Any]):
        args, dbl, err = self.buffers()
        for p in self._tensor_params:
            arr = tensors[p.index]
            slot = self.gen.tensor_slots[p.index]
            args[slot] = pointer_address(arr)  # 0 for a None pl.Ptr argument
            strides = element_strides(arr, f"argument '{p.name}'", self.kernel.name)
            for i, (n, st) in enumerate(zip(arr.shape, strides)):
                args[slot + 1 + i] = n
                args[slot + 1 + p.ndim + i] = st
        for p in self._scalar_params:
            slot, kind = self.gen.scalar_slots[p.index]
            value = scalars_by_uid[p.var.uid]
            if kind == "f":
                dbl[slot] = float(value)
            else:
                args[slot] = int(value)
        return args, err

    # ------------------------------------------------------------------ calling
    def call(self, args, err, block_dim: int) -> None:
        rc = self.fn(args, block_dim, ctypes.byref(err))
        if self.log_sink is not None:
            self.log_sink(err)
        if rc != 0:
            self.raise_error(err)

    def raise_error(self, err: PtoError) -> None:
        message = err.message.decode(errors="replace")
        site = self.gen.sites[err.site] if 0 <= err.site < len(self.gen.sites) else None
        loc = site.loc if site else None
        if err.kind != 2:
            raise KernelRuntimeError(message, loc=loc, kernel=self.kernel.name)
        def site_loc(n: int):
            return self.gen.sites[n].loc if n < len(self.gen.sites) else None

        first = re.search(r" @site (\d+)", message)
        message = re.sub(r" @site (\d+)", lambda m: wait_location(site_loc(int(m.group(1)))), message)
        raise KernelDeadlockError(message, loc=site_loc(int(first.group(1))) if first else None,
                                  kernel=self.kernel.name)


def key_of(source: str, tc: Toolchain) -> str:
    """Cache key: the kernel.cpp (it encodes the whole specialized IR, and whether it calls the ops
    library), toolchain, -O level, ISA, versions."""
    return cache.digest(source, tc.identity, prebuilt.kernel_opt(), prebuilt.runtime_digest(), __version__,
                        CODEGEN_VERSION)


def build(kernel: ir.KernelIR, tc: Toolchain) -> CompiledKernel:
    """Generate, compile (or fetch from the disk cache) and load one kernel specialization."""
    # the runtime library (first use per toolchain) compiles concurrently with the kernel
    rt_error: list = []
    rt_thread = None
    if tc.identity not in _runtime and prebuilt.runtime_entry(tc)[0].valid() is None:
        def build_runtime() -> None:
            try:
                runtime_library(tc)
            except BaseException as e:  # noqa: BLE001  (re-raised below on the calling thread)
                rt_error.append(e)

        rt_thread = threading.Thread(target=build_runtime, name="pypto-runtime-build", daemon=True)
        rt_thread.start()
    try:
        start = time.perf_counter()
        gen = generate(kernel)
        logger.debug("generated C++ for kernel %s: %d lines, %d sites (%.1f ms)", kernel.name,
                     gen.source.count("\n"), len(gen.sites), (time.perf_counter() - start) * 1e3)
        # the per-op functions come from the ops library where it is built (once per install)
        ops = prebuilt.ops_library(tc)
        source = prebuilt.with_ops(gen.source) if ops is not None else gen.source
        key = key_of(source, tc)
        entry = cache.entry(kernel.name, kernel.arch.name, key)
        so_name = f"call_kernel_{key[:12]}.so"

        def produce(tmp: Path) -> Dict[str, str]:
            src = tmp / "kernel.cpp"
            src.write_text(source)
            # compile against the final kernel.cpp path so compiler messages name it
            final_src = entry.path("kernel.cpp")
            cache.write_atomic(final_src, source.encode())
            prebuilt.compile_kernel(tc, final_src, tmp / so_name)
            return {"kernel.cpp": "kernel.cpp", so_name: so_name}

        logging_on = logger.isEnabledFor(logging.INFO)
        start = time.perf_counter()
        cached = logging_on and entry.valid() is not None  # (hashing twice only when logging)
        entry.build(produce)
        cache.publish_latest(entry, "kernel.cpp")
        if logging_on:
            logger.info("%s kernel %s: %s (%.0f ms%s)", "disk-cache hit for" if cached else
                        "compiled", kernel.name, entry.path(so_name), (time.perf_counter() - start) * 1e3,
                        ", while the runtime library builds alongside" if rt_thread is not None else "")
    finally:
        if rt_thread is not None:
            rt_thread.join()
    if rt_error:
        raise rt_error[0]
    runtime_library(tc)  # loaded (RTLD_GLOBAL) before the kernel library that links against it
    if ops is not None:
        load_ops(ops)
    return CompiledKernel(kernel, gen, entry.path(so_name))


def run_compiled(ck: CompiledKernel, tensors: Dict[int, np.ndarray], scalars: Dict[int, Any],
                 block_dim: int) -> None:
    args, err = ck.pack(tensors, scalars)
    ck.call(args, err, block_dim)


__all__: Sequence[str] = ["CompiledKernel", "build", "run_compiled", "runtime_library"]

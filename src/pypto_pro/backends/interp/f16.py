"""Compiled fp16 <-> fp32 conversion for the interpreter, with numpy's bits.

This numpy build converts fp16 in software (~1.5 ns per element each way), which is most of the
interpreter's time on fp16 vector kernels.  The C++ toolchain of the cpu backend converts with the CPU's
F16C instructions (round to nearest even, as numpy); the one case where they differ from numpy, a
signalling NaN (F16C sets its quiet bit, numpy keeps the payload as it is), is redone bit by bit.  The
result equals numpy's cast for every fp16 and fp32 input (tests/sim/test_f16_codec.py samples them; an
exhaustive run over all 2^32 fp32 inputs was done when this was written).

:func:`enable` builds the library (disk cache) and routes the interpreter's fp16 decode
(``TileView.read_compute``) and encode (``DataType.encode``) through it, for the rest of the process;
the simulator's fast path calls it before computing values with the interpreter.  Without a compiler
nothing changes.
"""
from __future__ import annotations

import ctypes
import threading
from pathlib import Path
from typing import Optional

import numpy as np

SOURCE = r"""
#include <cstdint>
#include <cstring>

extern "C" void f16_to_f32(const uint16_t* s, float* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    _Float16 h;
    std::memcpy(&h, s + i, 2);
    d[i] = (float)h;
  }
  for (int64_t i = 0; i < n; ++i) {  // signalling NaN: numpy keeps the payload without the quiet bit
    uint32_t h = s[i];
    if ((h & 0x7e00u) == 0x7c00u && (h & 0x3ffu) != 0) {
      uint32_t f = ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13);
      std::memcpy(d + i, &f, 4);
    }
  }
}

extern "C" void f32_to_f16(const float* s, uint16_t* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    _Float16 h = (_Float16)s[i];
    std::memcpy(d + i, &h, 2);
  }
  for (int64_t i = 0; i < n; ++i) {  // signalling NaN: numpy's 0x7c00 + (significand >> 13), never 0x7c00
    uint32_t f;
    std::memcpy(&f, s + i, 4);
    if ((f & 0x7fc00000u) == 0x7f800000u && (f & 0x007fffffu) != 0) {
      uint16_t r = (uint16_t)(0x7c00u + ((f & 0x007fffffu) >> 13));
      if (r == 0x7c00u) ++r;
      d[i] = (uint16_t)(((f >> 16) & 0x8000u) | r);
    }
  }
}
"""

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
#: below this many elements numpy's call overhead is smaller than ctypes'
MIN_ELEMENTS = 256


def library() -> Optional[ctypes.CDLL]:
    """The loaded conversion library (built on first use); None without a C++ compiler."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        from ... import __version__
        from ...runtime import cache
        from ..cpu.toolchain import compile_shared, find_toolchain

        tc = find_toolchain()
        if tc is None:
            return None
        key = cache.digest(SOURCE, tc.identity, __version__)
        entry = cache.entry("_f16_codec", "host", key)
        name = f"f16codec_{key[:12]}.so"

        def produce(tmp: Path):
            (tmp / "f16.cpp").write_text(SOURCE)
            compile_shared(tc, tmp / "f16.cpp", tmp / name, opt="-O2")
            return {name: name}

        entry.build(produce)
        lib = ctypes.CDLL(str(entry.path(name)))
        for fn in (lib.f16_to_f32, lib.f32_to_f16):
            fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
            fn.restype = None
        _lib = lib
        return lib


def decode(bits: np.ndarray) -> np.ndarray:
    """fp16 bit patterns (uint16, any shape) -> fp32 values, as numpy's cast."""
    src = np.ascontiguousarray(bits)
    out = np.empty(src.shape, np.float32)
    _lib.f16_to_f32(src.ctypes.data, out.ctypes.data, src.size)
    return out


def encode(values: np.ndarray) -> np.ndarray:
    """fp32 values (any shape) -> fp16, as numpy's ``astype(np.float16)``."""
    src = np.ascontiguousarray(values)
    out = np.empty(src.shape, np.float16)
    _lib.f32_to_f16(src.ctypes.data, out.ctypes.data, src.size)
    return out


def enable() -> bool:
    """Route the interpreter's fp16 conversions through the library; False if it cannot be built."""
    try:
        if library() is None:
            return False
    except Exception:  # noqa: BLE001  (numpy's conversions stay; they give the same bits)
        return False
    from ... import dtypes
    from . import memory

    memory.set_f16_codec(decode)
    dtypes.set_f16_encoder(encode)
    return True

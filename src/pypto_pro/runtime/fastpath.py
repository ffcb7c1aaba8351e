"""What a frozen per-signature launcher is keyed by: the least per-call work for repeated launches.

The first launch with given argument types, dtypes, shapes (devices, writeability) goes through the full
checks of :mod:`.args`; a backend that prepares kernels then freezes a relauncher for that key
(``frozen_launcher`` of the backend protocol, :mod:`pypto_pro.backends`), which later launches with
the same :func:`arg_key` and :func:`launch_environment` call directly.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Optional, Sequence, Tuple

import numpy as np

_TORCH_TENSOR = None

#: environment variables that decide where and how a launch runs (backend, arch, width): part of every
#: frozen launcher's key, so changing one between calls takes the full path again
_LAUNCH_ENV = ("PYPTO_BACKEND", "PYPTOPRO_JIT_ARCH", "PYPTO_NUM_THREADS")
# os.environ.get encodes the name and decodes the value on every call (~0.7 us); on POSIX the
# byte-keyed mapping behind it is read directly (~0.02 us), and it is kept up to date by os.environ.
_RAW_ENV = getattr(os.environ, "_data", None) if os.name == "posix" else None
_RAW_NAMES = tuple(n.encode() for n in _LAUNCH_ENV)


def launch_environment() -> Tuple:
    """The values of the environment variables a launch depends on."""
    if _RAW_ENV is not None:
        return tuple(_RAW_ENV.get(n) for n in _RAW_NAMES)
    return tuple(os.environ.get(n) for n in _LAUNCH_ENV)


def torch_tensor_type():
    """torch.Tensor once torch has been imported (by anyone), else None; never imports torch."""
    global _TORCH_TENSOR
    if _TORCH_TENSOR is None:
        torch = sys.modules.get("torch")
        if torch is not None:
            _TORCH_TENSOR = torch.Tensor
    return _TORCH_TENSOR


def arg_key(args: Sequence[Any]) -> Optional[Tuple]:
    """A hashable description of the arguments (None where a frozen launcher does not apply)."""
    tt = _TORCH_TENSOR or torch_tensor_type()
    key = []
    append = key.append
    try:
        for a in args:
            t = type(a)
            if t is tt:
                append((a.dtype, a.shape, a.is_cpu))  # is_cpu: cheaper than .device, enough to tell
            elif t is np.ndarray:  # writeable: a read-only array takes the checked path (args.check_writeable)
                append((a.dtype, a.shape, a.flags.writeable))
            elif t is int or t is float or t is bool:
                append(t)
            else:
                return None
    except RuntimeError:  # a tensor without sizes (nested): the checked path says what is wrong
        return None
    return tuple(key)

"""PyPTO Pro, portable: the tile-level PyPTO language, its tile IR and backends that run anywhere.

``import pypto_pro.language as pl`` for the kernel language; errors are importable from here.
"""
from .errors import (KernelDeadlockError, KernelError, KernelLaunchError, KernelLaunchValueError,  # noqa: F401
                     KernelMemoryError,
                     KernelRaceError, KernelRuntimeError, KernelSyntaxError, KernelTypeError, KernelUninitError,
                     KernelValueError, SourceLoc)

__version__ = "0.1.0"

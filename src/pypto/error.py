"""``pypto.error``: the official exception names, as the kernel errors of this implementation.

``FeError`` (front end: annotations, arguments, recording) and ``PyptoError`` are
:class:`~pypto_pro.errors.KernelError` (every error a kernel raises, with its file:line);
``PyptoRtError`` is :class:`~pypto_pro.errors.KernelRuntimeError`.  ``except pypto.error.FeError``
therefore catches a launch with the wrong arguments (``KernelLaunchError``) as officially.
"""
from pypto_pro.errors import KernelError, KernelRuntimeError

PyptoError = KernelError
PyptoGeneralError = KernelError
FeError = KernelError
PyptoRtError = KernelRuntimeError

__all__ = ["PyptoError", "PyptoGeneralError", "FeError", "PyptoRtError"]

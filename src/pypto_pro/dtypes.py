"""Data types of PyPTO (``pl.DT_*``) and their numpy / C++ counterparts.

bf16 and the fp8/fp4 formats come from ml_dtypes.  HF8 and FP4E1M2 have no numpy type: they are
stored as ``uint8`` codes with an exact codec (:mod:`pypto_pro.lowprec`), and :meth:`DataType.decode`
/ :meth:`DataType.encode` convert between storage and compute values for every dtype alike.  HF4
exists as a name only; ops that need its values raise ``NotImplementedError``.
"""
from __future__ import annotations

from typing import Callable, Optional, Tuple

import ml_dtypes
import numpy as np

from . import lowprec

#: fp32 -> fp16 with numpy's bits through compiled code (backends/interp/f16.py), once enabled
_f16_encode: Optional[Callable[[np.ndarray], np.ndarray]] = None


def set_f16_encoder(encode: Optional[Callable[[np.ndarray], np.ndarray]]) -> None:
    """Encode fp32 arrays of at least 256 elements to fp16 with ``encode`` (numpy's bits), None: numpy."""
    global _f16_encode
    _f16_encode = encode


class DataType:
    """A PyPTO element type: name, width in bits, category and storage numpy dtype."""

    __slots__ = ("name", "_bits", "kind", "np_dtype", "c_type", "codec")

    def __init__(self, name: str, bits: int, kind: str, np_dtype: Optional[np.dtype], c_type: str,
                 codec: Optional[Tuple[Callable, Callable]] = None):
        self.name = name
        self._bits = bits
        self.kind = kind  # "float", "int", "uint", "bool", "index"
        self.np_dtype = np.dtype(np_dtype) if np_dtype is not None else None
        self.c_type = c_type
        #: (decode, encode) between uint8 codes and fp32 for formats numpy has no type for
        self.codec = codec

    # --- official accessor spellings -------------------------------------------------
    def get_bit(self) -> int:
        return self._bits

    def bits(self) -> int:
        return self._bits

    def is_float(self) -> bool:
        return self.kind == "float"

    def is_int(self) -> bool:
        return self.kind in ("int", "uint", "index")

    def is_signed_int(self) -> bool:
        return self.kind in ("int", "index")

    def is_unsigned_int(self) -> bool:
        return self.kind == "uint"

    def to_string(self) -> str:
        return self.name

    def to_c_type_string(self) -> str:
        return self.c_type

    # --- helpers used across the project ----------------------------------------------
    @property
    def nbytes(self) -> int:
        """Storage bytes of one element (sub-byte types round up to one byte)."""
        return max(1, (self._bits + 7) // 8)

    @property
    def is_half(self) -> bool:
        """fp16/bf16: stored narrow, computed in fp32, rounded once per op."""
        return self.name in ("FP16", "BF16")

    @property
    def compute_np_dtype(self) -> np.dtype:
        """The numpy dtype arithmetic is done in (fp32 for 16-bit and 8-bit floats)."""
        if self.kind == "float" and self._bits < 32:
            return np.dtype(np.float32)
        if self.kind == "bool":
            return np.dtype(np.bool_)
        return self.require_numpy()

    def decode(self, stored: np.ndarray) -> np.ndarray:
        """Stored elements -> values in :attr:`compute_np_dtype` (exact)."""
        if self.codec is not None:
            return self.codec[0](stored)
        return np.asarray(stored).astype(self.compute_np_dtype, copy=False)

    def encode(self, values: np.ndarray) -> np.ndarray:
        """Computed values -> storage of this dtype, rounding once (RNE for numpy types, the
        format's own rule for coded formats).  Values already in the storage type are returned as they
        are, for coded formats too: a uint8 array is codes, computed values are floats."""
        if self.codec is not None:
            values = np.asarray(values)
            return values if values.dtype == self.np_dtype else self.codec[1](values)
        values = np.asarray(values)
        if _f16_encode is not None and self.name == "FP16" and values.dtype == np.float32 and values.size >= 256:
            return _f16_encode(values)
        return values.astype(self.require_numpy())

    def require_numpy(self) -> np.dtype:
        if self.np_dtype is None:
            raise NotImplementedError(f"values of dtype {self.name} (storage-only format)")
        return self.np_dtype

    def __repr__(self) -> str:
        return f"pl.DT_{self.name}"

    def __reduce__(self):
        return (by_name, (self.name,))


def _mk(name: str, bits: int, kind: str, np_dtype, c_type: str, codec=None) -> DataType:
    return DataType(name, bits, kind, np_dtype, c_type, codec)


DT_BOOL = _mk("BOOL", 8, "bool", np.bool_, "bool")
DT_INT4 = _mk("INT4", 4, "int", ml_dtypes.int4, "int4b_t")
DT_INT8 = _mk("INT8", 8, "int", np.int8, "int8_t")
DT_INT16 = _mk("INT16", 16, "int", np.int16, "int16_t")
DT_INT32 = _mk("INT32", 32, "int", np.int32, "int32_t")
DT_INT64 = _mk("INT64", 64, "int", np.int64, "int64_t")
DT_UINT4 = _mk("UINT4", 4, "uint", ml_dtypes.uint4, "uint4b_t")
DT_UINT8 = _mk("UINT8", 8, "uint", np.uint8, "uint8_t")
DT_UINT16 = _mk("UINT16", 16, "uint", np.uint16, "uint16_t")
DT_UINT32 = _mk("UINT32", 32, "uint", np.uint32, "uint32_t")
DT_UINT64 = _mk("UINT64", 64, "uint", np.uint64, "uint64_t")
DT_FP16 = _mk("FP16", 16, "float", np.float16, "half")
DT_BF16 = _mk("BF16", 16, "float", ml_dtypes.bfloat16, "bfloat16_t")
DT_FP32 = _mk("FP32", 32, "float", np.float32, "float")
DT_FP8E4M3FN = _mk("FP8E4M3FN", 8, "float", ml_dtypes.float8_e4m3fn, "float8_e4m3_t")
DT_FP8E5M2 = _mk("FP8E5M2", 8, "float", ml_dtypes.float8_e5m2, "float8_e5m2_t")
DT_FP8E8M0 = _mk("FP8E8M0", 8, "float", getattr(ml_dtypes, "float8_e8m0fnu", None), "float8_e8m0_t")
DT_FP4E2M1 = _mk("FP4E2M1", 4, "float", getattr(ml_dtypes, "float4_e2m1fn", None), "float4_e2m1x2_t")
DT_FP4E1M2 = _mk("FP4E1M2", 4, "float", np.uint8, "float4_e1m2x2_t", (lowprec.e1m2_decode, lowprec.e1m2_encode))
DT_FP4 = _mk("FP4", 4, "float", getattr(ml_dtypes, "float4_e2m1fn", None), "float4_e2m1x2_t")
DT_FP8 = DT_FP8E4M3FN
DT_HF4 = _mk("HF4", 4, "float", None, "hifloat4x2_t")
DT_HF8 = _mk("HF8", 8, "float", np.uint8, "hifloat8_t", (lowprec.hf8_decode, lowprec.hf8_encode))
#: FP64 (the tensor level's ``pypto.DT_DOUBLE``): a name only -- no tile op computes in it, so a
#: tensor of it is rejected when declared (pypto/tensor.py).
DT_DOUBLE = _mk("DOUBLE", 64, "float", np.float64, "double")
#: Type of loop variables and index arithmetic (not a ``pl.DT_*`` name).
DT_INDEX = _mk("INDEX", 64, "index", np.int64, "int64_t")

ALL_DTYPES = [
    DT_BOOL, DT_INT4, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT4, DT_UINT8, DT_UINT16, DT_UINT32,
    DT_UINT64, DT_FP16, DT_BF16, DT_FP32, DT_FP4, DT_FP8E4M3FN, DT_FP8E5M2, DT_FP8E8M0, DT_FP4E2M1,
    DT_FP4E1M2, DT_HF4, DT_HF8,
]
_BY_NAME = {dt.name: dt for dt in ALL_DTYPES + [DT_INDEX, DT_DOUBLE]}

#: Storage-only formats: no vector arithmetic on them (docs/language.md "Tiles").
STORAGE_ONLY = frozenset(
    ["INT4", "UINT4", "FP4", "FP8E4M3FN", "FP8E5M2", "FP8E8M0", "FP4E2M1", "FP4E1M2", "HF4", "HF8"]
)

FLOAT_VECTOR = (DT_FP16, DT_BF16, DT_FP32)
INT_VECTOR = (DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64)


#: 4-bit float formats whose GM tensors hold two codes per byte (element 2i in the low nibble of byte i):
#: their tensor arguments are ``uint8`` arrays whose last dimension counts bytes (docs/language.md, MX matmul)
PACKED_GM = frozenset(["FP4E2M1", "FP4E1M2", "FP4"])


def is_packed_gm(dtype: "DataType") -> bool:
    """Whether GM tensors of ``dtype`` are packed two elements per byte (:data:`PACKED_GM`)."""
    return dtype.name in PACKED_GM


def gm_np_dtype(dtype: "DataType") -> Optional[np.dtype]:
    """The numpy dtype of a GM tensor argument of ``dtype``: ``uint8`` bytes for packed formats."""
    return np.dtype(np.uint8) if is_packed_gm(dtype) else dtype.np_dtype


def by_name(name: str) -> DataType:
    return _BY_NAME[name]


def from_numpy(dtype: np.dtype) -> Optional[DataType]:
    """The PyPTO dtype whose storage is ``dtype`` (``None`` if there is none)."""
    dtype = np.dtype(dtype)
    for dt in ALL_DTYPES:
        if dt.np_dtype is not None and dt.np_dtype == dtype and dt.name not in ("FP4",) and dt.codec is None:
            return dt
    return None


def from_python_scalar(value) -> DataType:
    """Type of a bare literal in kernel code: bool -> BOOL, int -> INT64, float -> FP32."""
    if isinstance(value, (bool, np.bool_)):
        return DT_BOOL
    if isinstance(value, (int, np.integer)):
        return DT_INT64
    return DT_FP32


def round_to(value: np.ndarray, dtype: DataType) -> np.ndarray:
    """Convert computed values (fp32 / wide ints) to ``dtype`` storage, rounding once."""
    return dtype.encode(value)

"""What a matmul's cube tiles need on chip, and which ``set_cube_tile_shapes`` would fit.

A matmul pass holds, at once: the ``m x k`` and ``k x n`` operand tiles in L1 (Mat), the same two
in L0A (Left) and L0B (Right), the ``m x n`` accumulator in L0C (Acc) and, with a bias, a ``1 x n``
row in Mat and in Bias.  Tiles that overflow are not refused (the official system runs such
programs): :func:`fit_cube_tiles` splits K into smaller L0 steps first (K is stepped by the block
:func:`k_block` of ``set_cube_tile_shapes``'s ``k``, each step's product added to L0C), then m/n,
halving until the pass fits.  :func:`cube_tiles_error` names each space that overflows, which of m/k/n it depends on,
and the largest halving of the requested tiles that fits (for when nothing fits).
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelMemoryError

#: the official names of the cube's buffers, for the message
_HW_NAME = {"Mat": "L1", "Left": "L0A", "Right": "L0B", "Acc": "L0C", "Bias": "BT"}


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


def cube_needs(arch, tm: int, tk: int, tn: int, a: dt.DataType, b: dt.DataType, acc: dt.DataType,
               bias: Optional[dt.DataType]) -> Dict[str, List[Tuple[str, int]]]:
    """Space name -> [(what, bytes)] of the tiles one matmul pass places there."""
    al = arch.addr_align
    need: Dict[str, List[Tuple[str, int]]] = {
        "Mat": [(f"A {tm}x{tk} {a.name}", tm * tk * a.nbytes), (f"B {tk}x{tn} {b.name}", tk * tn * b.nbytes)],
        "Left": [(f"A {tm}x{tk} {a.name}", tm * tk * a.nbytes)],
        "Right": [(f"B {tk}x{tn} {b.name}", tk * tn * b.nbytes)],
        "Acc": [(f"C {tm}x{tn} {acc.name}", tm * tn * acc.nbytes)],
    }
    if bias is not None:
        need["Mat"].append((f"bias 1x{tn} {bias.name}", tn * bias.nbytes))
        need["Bias"] = [(f"bias 1x{tn} FP32", tn * 4)]
    return {s: [(w, _align(n, al.get(s, 32))) for w, n in items] for s, items in need.items()}


def overflows(arch, need) -> Dict[str, int]:
    """Space -> bytes needed, for the spaces whose capacity ``need`` exceeds."""
    out = {}
    for space, items in need.items():
        total = sum(n for _, n in items)
        if total > arch.capacity.get(space, 0):
            out[space] = total
    return out


def fitting_tiles(arch, tm: int, tk: int, tn: int, a, b, acc, bias) -> Optional[Tuple[int, int, int]]:
    """The requested tiles with the largest of m/k/n (among those overflowing) halved until they fit
    (multiples of 16), or None when even 16 x 16 x 16 does not."""
    dims = {"m": tm, "k": tk, "n": tn}
    while overflows(arch, cube_needs(arch, dims["m"], dims["k"], dims["n"], a, b, acc, bias)):
        over = overflows(arch, cube_needs(arch, dims["m"], dims["k"], dims["n"], a, b, acc, bias))
        involved = {d for s in over for d in _DIMS_OF[s]}
        name = max((d for d in "mkn" if d in involved and dims[d] > 16), key=lambda d: dims[d], default=None)
        if name is None:
            return None
        dims[name] = max(16, _align(dims[name] // 2, 16))
    return dims["m"], dims["k"], dims["n"]


def fit_cube_tiles(arch, tm: int, tk: int, tn: int, k_align: int, a, b, acc, bias) -> Optional[Tuple[int, int, int]]:
    """The cube tiles a matmul pass runs on: the requested ones when they fit; else K halved (a multiple
    of ``k_align``) while an operand space (Mat, Left, Right) overflows, then :func:`fitting_tiles`
    (m or n, for L0C / Bias).  None when even the smallest tiles overflow."""
    def over():
        return overflows(arch, cube_needs(arch, tm, tk, tn, a, b, acc, bias))

    while tk > k_align and set(over()) & {"Mat", "Left", "Right"}:
        tk = max(k_align, _align(tk // 2, k_align))
    return fitting_tiles(arch, tm, tk, tn, a, b, acc, bias) if over() else (tm, tk, tn)


#: which tile dims a space's footprint grows with
_DIMS_OF = {"Mat": "mkn", "Left": "mk", "Right": "kn", "Acc": "mn", "Bias": "n"}


def cube_tiles_error(arch, tm: int, tk: int, tn: int, a, b, acc, bias, kernel: str) -> KernelMemoryError:
    """The error for cube tiles that do not fit: per overflowing space its contents, what to shrink,
    and a ``pypto.set_cube_tile_shapes`` call that fits."""
    need = cube_needs(arch, tm, tk, tn, a, b, acc, bias)
    over = overflows(arch, need)
    parts = []
    for space, total in over.items():
        what = " + ".join(f"{w} ({n} B)" for w, n in need[space])
        parts.append(f"{_HW_NAME.get(space, space)} ({space}) needs {total} bytes for {what}, it holds "
                     f"{arch.capacity.get(space, 0)} (shrink {'/'.join(_DIMS_OF[space])})")
    msg = (f"the cube tiles m={tm}, k={tk}, n={tn} (pypto.set_cube_tile_shapes) do not fit the cube buffers of "
           f"arch {arch.name}: " + "; ".join(parts))
    fit = fitting_tiles(arch, tm, tk, tn, a, b, acc, bias)
    if fit is not None:
        m, k, n = fit
        msg += f". These fit: pypto.set_cube_tile_shapes([{m}, {m}], [{k}, {k}], [{n}, {n}])"
    return KernelMemoryError(msg, kernel=kernel)


def k_block(k: Sequence[int]) -> int:
    """The K block a matmul sums on its own before adding it to the accumulator: ``gcd(kAL1, kBL1)`` of
    ``set_cube_tile_shapes``'s ``k = [kL0, kL1]`` (kAL1 = kBL1 = kL1) or ``[kL0, kAL1, kBL1]``, as the
    official reference interpreter does (``calc_cube.cpp``: each block's product added to the
    accumulator in order).  The pass steps K by this block (smaller where it overflows L0:
    ``cube_fit.fit_cube_tiles``), each step a ``matmul`` / ``matmul_acc`` of the cube."""
    return math.gcd(k[1], k[-1])

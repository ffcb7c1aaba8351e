"""C++ emission of the less common tile ops (``include/pto/extra.h``) and the kernel log.

Registered in the cpu registry (:mod:`.registry`): ``fillpad`` (every mode and
pad), ``transpose``, ``fill_index``, ``gather``, ``scatter``, ``gathermask``, ``gatherb``, ``histogram``,
``sort32``, ``mrgsort``, ``mrgsort2`` (``include/pto/sort.h``), ``philox`` (``include/pto/random.h``),
``partadd/partmax/partmin/partmul``, ``add_relu_cast``, ``sub_relu_cast``, ``mul_cast``, ``printf``,
``pto_assert``, ``dump_data`` and ``sync_all`` (every mode, with or without workspaces: the interpreter's
barrier, which ignores both).

Kernel log: printf / pto_assert / dump_data append binary records (site, kind, raw values) to a per-core
buffer in the runtime; after the call the launcher hands the records of the launch (cores in launch
order, each core's records in program order) to :func:`log_sink`, which formats them with the
interpreter's own code (``ops/scalar.py`` formatting, ``np.array2string``) and prints them, so the text
is exactly the interpreter's.  Only kernels that contain such an op pay for it.
"""
from __future__ import annotations

import ctypes
import struct
from types import SimpleNamespace
from typing import Any, Callable, List, Optional

import numpy as np

from ...ir import nodes as ir
from ...ir.types import MemorySpace, RoundMode, TilePad
from ...ops.scalar import _FMT, _condition_source, _format, printf_int_bits
from ...ops.gather import CMP_MODES, PATTERNS, is_compare_form
from ...ops.sync import used_cores_of
from .codegen import KernelCodegen, c_type
from .emit_call import call, flag, literal, number, tile
from .registry import register as _register

M = MemorySpace


def _dtype_name(name: str):
    """The name of tile ``name``'s dtype as a C string literal."""
    return lambda g, a: f'"{a[name].dtype.name}"'


# ------------------------------------------------------------------ vector ops
def _fillpad(g: KernelCodegen, s: ir.OpStmt) -> str:
    a = s.args
    dst = a["dst"]
    pad = int(TilePad(dst.ttype.pad))
    if pad == int(TilePad.null):  # rejected by the check; keep the emitter total
        raise NotImplementedError("pl.fillpad into a tile without a pad value")
    lines = ["{", f"  const auto d_ = {g.tile(dst)};", f"  pto::fillpad(C, d_, {g.tile(a['src'])}, {pad});"]
    if isinstance(dst, ir.DeclRef):
        lines.append(f"  pto::set_valid(C, kTiles, {g.decl_index[dst.tile.uid]}, d_.rows, d_.cols);")
    elif isinstance(dst, ir.SlotRef):
        lines.append(f"  pto::set_valid(C, kTiles, {g.slot_index(dst)}, d_.rows, d_.cols);")
    lines.append("}")
    return "\n".join(lines)


def _fill_index(g: KernelCodegen, s: ir.OpStmt) -> str:
    code, kind = g.expr(s.args["start"])
    start = f"(double)({code})" if kind == "f" else f"(int64_t)({code})"
    return f"pto::fill_index(C, {g.tile(s.args['dst'])}, {start});"


_register("fillpad", _fillpad)
_register("fill_index", _fill_index)
_register("transpose", call("transpose", tile("dst"), tile("src")))
def _gather(g: KernelCodegen, s: ir.OpStmt) -> str:
    a = s.args
    if is_compare_form(a):  # gather(dst, src, k_value, cdst, tmp, cmp_mode=...): include/pto/gather_cmp.h
        gt = "true" if CMP_MODES[a["cmp_mode"]] == "GT" else "false"
        return (f"pto::gather_cmp(C, {g.tile(a['dst'])}, {g.tile(a['src'])}, {g.tile(a['idx'])}, "
                f"{g.tile(a['tmp'])}, {gt}, (int64_t)({g.scalar(a['offset'])}));")
    return (f"pto::gather(C, {g.tile(a['dst'])}, {g.tile(a['src'])}, {g.tile(a['idx'])}, "
            f"(int64_t)({g.scalar(a['offset'])}));")


_register("gather", _gather)
_register("scatter", call("scatter", tile("dst"), tile("src"), tile("idx")))
_register("gathermask", call("gathermask", tile("dst"), tile("src"), lambda g, a: f"{PATTERNS[a['pattern_mode']][0]}",
                             lambda g, a: f"{PATTERNS[a['pattern_mode']][1]}"))
_register("gatherb", call("gatherb", tile("out"), tile("src"), tile("offsets"), _dtype_name("src")))
_register("histogram", call("histogram", tile("dst"), tile("src"), tile("idx"), flag("is_msb")))


# ------------------------------------------------------------------ sorting (include/pto/sort.h)
_register("sort32", call("sort32", tile("dst"), tile("src"), tile("idx"),
                         lambda g, a: "false" if a["tmp"] is None else "true", _dtype_name("src")))
_register("mrgsort", call("mrgsort", tile("dst"), tile("src"), number("block_len")))


def _mrgsort2(g: KernelCodegen, s: ir.OpStmt) -> str:
    a = s.args
    srcs = [a["src0"], a["src1"]] + list(a["extra_srcs"])
    return "\n".join([
        "{",
        f"  const pto::Tile<{c_type(a['dst'].dtype)}> s_[] = {{{', '.join(g.tile(t) for t in srcs)}}};",
        f"  pto::mrgsort2(C, {g.tile(a['dst'])}, s_, {len(srcs)}, {'true' if a['exhausted'] else 'false'}, "
        f"\"{a['dst'].dtype.name}\");",
        "}"])


_register("mrgsort2", _mrgsort2)
_register("philox", call("philox", tile("dst"), tile("src"), lambda g, a: f"UINT64_C({a['key']})",
                         lambda g, a: f"UINT64_C({a['counter']})"))

_PART = {"partadd": "OpAdd", "partmax": "OpMax", "partmin": "OpMin", "partmul": "OpMul"}
for _op, _fn in _PART.items():
    _register(_op, call("part", tile("dst"), tile("s0"), tile("s1"), types=(literal(f"pto::{_fn}"),)))

for _op in ("add_relu_cast", "sub_relu_cast", "mul_cast"):
    _register(_op, call(_op, tile("dst"), tile("lhs"), tile("rhs"), lambda g, a: str(int(RoundMode(a["mode"])))))


# ------------------------------------------------------------------ synchronisation
def _sync_all(g: KernelCodegen, s: ir.OpStmt) -> str:
    # ops/sync.py: SOFT mode and workspaces do not change the barrier's meaning (they select the
    # hardware mechanism), so every mode is the same grid barrier here, over the first used_cores
    # cores of its kind when that is given (-1: all of them).
    used = used_cores_of(s.args)
    return f"pto::sync_all(C, {int(s.args['core_type'])}, {-1 if used is None else g.scalar(used)});"


_register("sync_all", _sync_all)


# ------------------------------------------------------------------ kernel log
def _prefix(s: ir.OpStmt, loc_flag) -> str:
    return f"[{s.loc.filename}:{s.loc.lineno}] " if loc_flag and s.loc else ""


def _values(g: KernelCodegen, fmt: Optional[str], args) -> List[str]:
    """LogVal initialisers of printf-style arguments: doubles for %f, int64 for the other conversions."""
    if fmt is None:
        return []
    convs = [m.group(4) for m in _FMT.finditer(fmt)]
    out = []
    for conv, v in zip(convs, args):
        code, _ = g.expr(v)
        out.append(f"pto::LogVal((double)({code}))" if conv == "f" else f"pto::LogVal((int64_t)({code}))")
    return out


def _with_values(vals: List[str], call: str) -> str:
    if not vals:
        return f"{call}nullptr, 0);"
    return f"{{ const pto::LogVal v_[] = {{{', '.join(vals)}}}; {call}v_, {len(vals)}); }}"


def _printf(g: KernelCodegen, s: ir.OpStmt) -> str:
    a = s.args
    g.sites[-1].log = SimpleNamespace(kind="printf", prefix=_prefix(s, a["loc"]), fmt=a["fmt"],
                                      int_bits=[printf_int_bits(v) for v in a["args"]])
    return _with_values(_values(g, a["fmt"], a["args"]), "pto::printf_(C, ")


def _pto_assert(g: KernelCodegen, s: ir.OpStmt) -> str:
    a = s.args
    source = _condition_source(s.loc.source_line) if s.loc else "<condition>"
    g.sites[-1].log = SimpleNamespace(kind="assert", fmt=a["fmt"], int_bits=[printf_int_bits(v) for v in a["args"]],
                                      head=f"{_prefix(s, a['loc'])}Assertion failed: {source}")
    cond, _ = g.expr(a["cond"])
    return _with_values(_values(g, a["fmt"], a["args"]), f"pto::pto_assert(C, (bool)({cond}), ")


def _name_code(g: KernelCodegen, ref: ir.TileRef) -> str:
    """C++ std::string expression of the interpreter's name of a tile view (subviews: base[r0:r1, c0:c1])."""
    if isinstance(ref, ir.SubRef):
        r0, r1, c0, c1 = (f"std::to_string({g.scalar(x)})" for x in (ref.r0, ref.r1, ref.c0, ref.c1))
        return (f"{_name_code(g, ref.base)} + \"[\" + {r0} + \":\" + {r1} + \", \" + {c0} + \":\" + {c1} + \"]\"")
    return f"std::string({g.tile(ref)}.name)"


def _dump_data(g: KernelCodegen, s: ir.OpStmt) -> str:
    a = s.args
    data = a["data"]
    head = _prefix(s, a["loc"]) + (f"{a['flag']}\n" if a["flag"] is not None else "")
    g.sites[-1].log = SimpleNamespace(kind="dump", head=head, dtype=data.dtype.require_numpy())
    lines = ["{"]
    n = 0
    if a["offsets"] is not None:
        offs, shps = list(a["offsets"]), list(a["shapes"])
        if len(offs) != len(shps):
            raise NotImplementedError("pl.dump_data with offsets and shapes of different lengths")
        n = len(offs)
    if n:
        lines.append(f"  const int64_t o_[] = {{{', '.join(g.scalar(x) for x in offs)}}};")
        lines.append(f"  const int64_t s_[] = {{{', '.join(g.scalar(x) for x in shps)}}};")
    o, sh = ("o_", "s_") if n else ("nullptr", "nullptr")
    if isinstance(data, ir.TensorParam):
        if data.ndim > 16:
            raise NotImplementedError("pl.dump_data of a tensor with more than 16 axes")
        lines.append(f"  pto::dump_data(C, {g.tensor(data)}, {o}, {sh}, {n});")
    else:
        lines.append(f"  const std::string n_ = {_name_code(g, data)};")
        lines.append(f"  pto::dump_data(C, {g.tile(data)}, n_.c_str(), {o}, {sh}, {n});")
    lines.append("}")
    return "\n".join(lines)


_register("printf", _printf)
_register("pto_assert", _pto_assert)
_register("dump_data", _dump_data)


class _Values:
    """Stands in for the interpreter's ExecCtx in ops/scalar._format: arguments are already values."""

    @staticmethod
    def scalar(v):
        return v


def _decode_values(fmt: Optional[str], payload: bytes) -> List[Any]:
    if fmt is None:
        return []
    out = []
    for i, m in enumerate(_FMT.finditer(fmt)):
        (out.append(struct.unpack_from("<d", payload, 8 * i)[0]) if m.group(4) == "f"
         else out.append(struct.unpack_from("<q", payload, 8 * i)[0]))
    return out


def _dump_text(info, payload: bytes) -> str:
    pos = 0

    def i64():
        nonlocal pos
        v = struct.unpack_from("<q", payload, pos)[0]
        pos += 8
        return v

    shape = [i64() for _ in range(i64())]
    n = i64()
    offs = [i64() for _ in range(n)]
    shps = [i64() for _ in range(n)]
    name_len = i64()
    name = payload[pos:pos + name_len].decode(errors="replace")
    pos += name_len
    nbytes = i64()
    values = np.frombuffer(payload[pos:pos + nbytes], dtype=info.dtype).reshape(shape)
    if n:
        values = values[tuple(slice(o, o + s) for o, s in zip(offs, shps))]
    return f"{info.head}{name} =\n{np.array2string(np.asarray(values))}\n"


def log_sink(ck) -> Optional[Callable[[Any], None]]:
    """The function the launcher calls after each launch of ``ck`` (None when the kernel cannot log):
    prints the launch's log like the interpreter and puts a strict pto_assert's text in the error."""
    sites = [getattr(site, "log", None) for site in ck.gen.sites]
    if not any(sites):
        return None
    from .launcher import _runtime

    take = None
    for lib in _runtime.values():
        take = lib.pto_rt_take_log
        break
    if take is None:  # pragma: no cover - build() loads the runtime library first
        take = ctypes.CDLL(None).pto_rt_take_log
    take.argtypes = [ctypes.POINTER(ctypes.c_char_p)]
    take.restype = ctypes.c_int64

    def sink(err) -> None:
        ptr = ctypes.c_char_p()
        n = take(ctypes.byref(ptr))
        if n <= 0:
            return
        buf = ctypes.string_at(ptr, n)
        pos = 0
        text = []
        raised = None
        while pos + 16 <= n:
            site, kind, size = struct.unpack_from("<iiq", buf, pos)
            payload = buf[pos + 16:pos + 16 + size]
            pos += 16 + size
            info = sites[site] if 0 <= site < len(sites) else None
            if info is None:
                continue
            if kind == 3:
                text.append(_dump_text(info, payload))
                continue
            msg = _format(_Values, info.fmt, _decode_values(info.fmt, payload), info.int_bits) if info.fmt is not None else None
            if kind == 0:
                text.append(info.prefix + msg)
                continue
            line = info.head + (" " + msg if msg is not None else "")
            if kind == 1:
                text.append(line + "\n")
            else:
                raised = line
        if text:
            print("".join(text), end="")
        if raised is not None:
            message = err.message.decode(errors="replace")
            if message.startswith("\x01"):
                err.message = (raised + message[1:]).encode()[:1023]

    return sink


__all__ = ["log_sink"]

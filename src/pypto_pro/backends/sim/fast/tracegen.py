"""The trace program of a covered kernel: its control flow and scalars in C++, one record per tile op.

It is the cpu backend's code generator (expressions, loops, ifs, sections, slot arithmetic: the same
semantics as the interpreter, which the cpu backend is tested against) with every op statement replaced by
``simfast::push()`` of the statement id and its runtime values, and a driver that runs the blocks in order
(core ``b`` is block ``b``, as on the interpreter) and then the replay of ``simfast.h``.  Built with the
cpu backend's toolchain and disk cache; one library per kernel specialization.
"""
from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Dict

from .... import __version__
from ....ir import nodes as ir
from ....runtime import cache
from ...cpu.codegen import KIND_CODES, KernelCodegen
from ...cpu.toolchain import compile_shared
from .plan import KernelPlan

HEADER = Path(__file__).parent / "simfast.h"

_DRIVER = r"""
// A failing scalar op (division by zero) ends the trace; Python reruns the launch on the interpreter.
struct SimfastFailed {};
extern "C" [[noreturn]] void pto_rt_fail(pto::Core*, const char*) { throw SimfastFailed{}; }

extern "C" __attribute__((visibility("default"))) int64_t simfast_trace(const int64_t* args, int64_t block_dim,
                                                                         int64_t per_block, int64_t first_vector,
                                                                         int64_t limit) {
  // the cores in the interpreter's order: per block its cube core (if any), then its vector cores
  simfast::Trace& T = simfast::trace();
  T.rec.clear();
  T.core_start.clear();
  const int64_t nvec = per_block - first_vector;
  for (int64_t b = 0; b < block_dim; ++b)
    for (int64_t j = 0; j < per_block; ++j) {
      T.core_start.push_back((int64_t)(T.rec.size() / simfast::W));
      const bool vec = j >= first_vector;
      const bool mix = per_block > 1;
      pto::Core C{};
      std::vector<int32_t> valid(std::begin(kInitValid), std::end(kInitValid));  // set_validshape's windows
      C.valid = valid.data();
      C.kind = vec ? 0 : 1; C.block = (int32_t)b; C.sub = vec ? (int32_t)(j - first_vector) : 0;
      C.block_idx = mix && vec ? b * nvec + C.sub : b;
      C.block_num = block_dim;
      C.subblock_idx = mix && vec ? C.sub : 0;
      C.subblock_num = mix && vec ? nvec : 1;
      C.args = args; C.site = -1;
      try {
        core_main(C);
      } catch (...) {
        return -1;
      }
      if ((int64_t)(T.rec.size() / simfast::W) > limit) return -2;
    }
  T.core_start.push_back((int64_t)(T.rec.size() / simfast::W));
  return (int64_t)(T.rec.size() / simfast::W);
}

// The last trace's records (W int64 each).
extern "C" __attribute__((visibility("default"))) const int64_t* simfast_records() {
  return simfast::trace().rec.data();
}

// Replays the last trace (costs: per record, or null for the statement table's).
// out: per record (issue, start, end, after, ticket, record values...);
// cores: per core busy[7], first start, last end, first record; misc: total cycles, status, detail.
extern "C" __attribute__((visibility("default"))) void simfast_replay(
    const int64_t* tab, const int64_t* decls, const int64_t* params, const int64_t* topology, int64_t capacity,
    int64_t issue, const int64_t* costs,
    int64_t chip_bytes, int64_t* out, int64_t* cores, int64_t* misc) {
  simfast::Trace& T = simfast::trace();
  static thread_local simfast::Replay R;  // reused: its buffers stay mapped between launches
  R.reset();
  R.tab = tab; R.decls = decls; R.params = params;
  R.per_block = topology[0]; R.first_vector = topology[1]; R.xlatency = topology[2];
  R.ncores = (int64_t)T.core_start.size() - 1;
  R.capacity = capacity; R.issue_cycles = issue; R.chip_bytes = chip_bytes;
  R.core_start = T.core_start;
  int64_t n = T.core_start.back();
  R.ins.resize((size_t)n);
  for (int64_t c = 0; c < R.ncores; ++c)
    for (int64_t k = T.core_start[c]; k < T.core_start[c + 1]; ++k) {
      simfast::Ins& I = R.ins[k];
      I.core = (int32_t)c; I.seq = (int32_t)(k - T.core_start[c]);
      I.v = T.rec.data() + k * simfast::W;
      I.stmt = (int32_t)I.v[0];
      const int64_t* row = tab + I.v[0] * simfast::TAB;
      I.pipe = (int32_t)row[simfast::C_PIPE]; I.kind = row[simfast::C_KIND];
      I.cost = costs != nullptr ? costs[k] : row[simfast::C_COST];
    }
  R.precheck();
  if (R.status == simfast::CLEAN) R.run();
  misc[0] = R.status == simfast::CLEAN ? R.total_cycles() : 0;
  misc[1] = R.status;
  misc[2] = R.detail;
  if (R.status != simfast::CLEAN) return;
  for (int64_t k = 0; k < n; ++k) {
    const simfast::Ins& I = R.ins[k];
    int64_t* o = out + k * (5 + simfast::W);
    o[0] = I.issue; o[1] = I.start; o[2] = I.end; o[3] = I.after; o[4] = I.ticket;
    std::memcpy(o + 5, I.v, sizeof(int64_t) * simfast::W);
  }
  for (int64_t c = 0; c < R.ncores; ++c) {
    int64_t* o = cores + c * (simfast::NP + 3);
    int64_t lo = -1, hi = 0;
    for (int p = 0; p < simfast::NP; ++p) {
      int64_t a = c * simfast::NP + p;
      o[p] = R.busy[a];
      if (R.first[a] >= 0) {
        lo = lo < 0 ? R.first[a] : std::min(lo, R.first[a]);
        hi = std::max(hi, R.last[a]);
      }
    }
    o[simfast::NP] = lo < 0 ? 0 : lo;
    o[simfast::NP + 1] = hi;
    o[simfast::NP + 2] = T.core_start[c];
  }
}
"""


class TraceCodegen(KernelCodegen):
    """KernelCodegen whose op statements append a trace record instead of computing."""

    def __init__(self, kernel: ir.KernelIR, plan: KernelPlan):
        super().__init__(kernel)
        self.plan = plan
        self.fuse = False

    def _stmt(self, s: ir.Stmt) -> None:
        if type(s) is not ir.OpStmt:
            super()._stmt(s)
            return
        p = self.plan.by_stmt[id(s)]
        if p.execute:
            super()._stmt(s)
        parts = [f"r_[0] = {p.index};"]
        for k, (kind, ref) in enumerate(p.refs):
            if kind in ("tile", "vrows", "vcols"):
                code = (f"INT64_C({self.decl_index[ref.tile.uid]})" if isinstance(ref, ir.DeclRef)
                        else f"(int64_t)({self.slot_index(ref)})")
                if kind != "tile":  # the tile's valid window now
                    code = f"(int64_t)C.valid[2 * ({code}){' + 1' if kind == 'vcols' else ''}]"
            else:
                code = f"(int64_t)({self.scalar(ref)})"
            parts.append(f"r_[{k + 1}] = {code};")
        line = f"  // line {s.loc.lineno}: pl.{s.op.name}" if s.loc else ""
        self.emit("{ int64_t* r_ = simfast::push(); " + " ".join(parts) + " }" + line)


def trace_source(kernel: ir.KernelIR, plan: KernelPlan) -> str:
    gen = TraceCodegen(kernel, plan).generate()
    if gen.mode > 1 or gen.extra:  # (mode 1, cores waiting on their block's cores, needs no fibers here)
        raise NotImplementedError("cross-block execution")
    body = gen.source[:gen.source.index('extern "C"')]
    driver = _DRIVER.replace("@KIND@", str(KIND_CODES[kernel.kind]))
    return body.replace('#include "pto/pto.h"', '#include "pto/pto.h"\n#include "simfast.h"', 1) + driver


class TraceLibrary:
    """A loaded trace program."""

    def __init__(self, path: Path):
        lib = ctypes.CDLL(str(path))
        self.trace = lib.simfast_trace
        self.trace.argtypes = [ctypes.c_void_p] + [ctypes.c_int64] * 4
        self.trace.restype = ctypes.c_int64
        self.replay = lib.simfast_replay
        self.replay.argtypes = ([ctypes.c_void_p] * 4 + [ctypes.c_int64] * 2 + [ctypes.c_void_p, ctypes.c_int64]
                                + [ctypes.c_void_p] * 3)
        self.records = lib.simfast_records
        self.records.argtypes = []
        self.records.restype = ctypes.c_void_p
        self.replay.restype = None
        self._lib = lib


def build(kernel: ir.KernelIR, plan: KernelPlan, tc) -> TraceLibrary:
    """Generate, compile (or fetch from the disk cache) and load the trace program of ``kernel``."""
    source = trace_source(kernel, plan)
    header = HEADER.read_text()
    key = cache.digest(source, header, tc.identity, __version__, "simfast-2")
    entry = cache.entry(kernel.name + "_simtrace", kernel.arch.name, key)
    so_name = f"simtrace_{key[:12]}.so"

    def produce(tmp: Path) -> Dict[str, str]:
        (tmp / "trace.cpp").write_text(source)
        final_src = entry.path("trace.cpp")  # compiled at its final path so that messages name it
        cache.write_atomic(final_src, source.encode())
        compile_shared(tc, final_src, tmp / so_name, opt="-O2", extra=(f"-I{HEADER.parent}", "-Wl,-Bsymbolic"))
        return {"trace.cpp": "trace.cpp", so_name: so_name}

    entry.build(produce)
    return TraceLibrary(entry.path(so_name))

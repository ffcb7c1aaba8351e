"""The trace program of a covered kernel: its control flow and scalars in C++, one record per tile op.

It is the cpu backend's code generator (expressions, loops, ifs, sections, slot arithmetic: the same
semantics as the interpreter, which the cpu backend is tested against) with every op statement replaced by
``simfast::push()`` of the statement id and its runtime values, and a driver that runs the blocks in order
(core ``b`` is block ``b``, as on the interpreter), whose records the replay library (fast/replaylib.py,
compiled once per install) then checks.  Built with the cpu backend's toolchain, precompiled tile header and
disk cache; one library per kernel specialization.
"""
from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Dict

from .... import __version__
from ....ir import nodes as ir
from ....runtime import cache
from ...cpu.codegen import KIND_CODES, KernelCodegen
from ...cpu.prebuilt import compile_kernel, kernel_opt
from .plan import KernelPlan
from .replaylib import replay_function

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

// Each core's first record and the total (ncores + 1 values), for the replay library (fast/replay.cpp);
// returns the number of cores.
extern "C" __attribute__((visibility("default"))) int64_t simfast_cores(const int64_t** core_start) {
  simfast::Trace& T = simfast::trace();
  *core_start = T.core_start.data();
  return (int64_t)T.core_start.size() - 1;
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
    """A loaded trace program, and the replay (fast/replaylib.py) of the records it leaves."""

    def __init__(self, path: Path, replay):
        lib = ctypes.CDLL(str(path))
        self.trace = lib.simfast_trace
        self.trace.argtypes = [ctypes.c_void_p] + [ctypes.c_int64] * 4
        self.trace.restype = ctypes.c_int64
        self.records = lib.simfast_records
        self.records.argtypes = []
        self.records.restype = ctypes.c_void_p
        self._cores = lib.simfast_cores
        self._cores.argtypes = [ctypes.c_void_p]
        self._cores.restype = ctypes.c_int64
        self._replay = replay
        self._lib = lib

    def replay(self, *args) -> None:
        """Replay this thread's last trace: ``simfast_replay(tab, decls, params, topology, capacity, issue,
        costs, chip_bytes, out, cores, misc)`` of replay.cpp over the trace program's records."""
        core_start = ctypes.c_void_p()
        ncores = self._cores(ctypes.byref(core_start))
        self._replay(self.records(), core_start, ncores, *args)


def build(kernel: ir.KernelIR, plan: KernelPlan, tc) -> TraceLibrary:
    """Generate, compile (or fetch from the disk cache) and load the trace program of ``kernel``."""
    source = trace_source(kernel, plan)
    header = HEADER.read_text()
    key = cache.digest(source, header, tc.identity, kernel_opt(), __version__, "simfast-3")
    entry = cache.entry(kernel.name + "_simtrace", kernel.arch.name, key)
    so_name = f"simtrace_{key[:12]}.so"

    def produce(tmp: Path) -> Dict[str, str]:
        (tmp / "trace.cpp").write_text(source)
        final_src = entry.path("trace.cpp")  # compiled at its final path so that messages name it
        cache.write_atomic(final_src, source.encode())
        compile_kernel(tc, final_src, tmp / so_name, extra=(f"-I{HEADER.parent}", "-Wl,-Bsymbolic"))
        return {"trace.cpp": "trace.cpp", so_name: so_name}

    entry.build(produce)
    return TraceLibrary(entry.path(so_name), replay_function(tc))

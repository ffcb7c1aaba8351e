// The replay of the simulator's compiled fast path (simfast.h), as a library of its own: it does not depend
// on the kernel (the statement table, declarations and records are its arguments), so it is compiled once
// per install (fast/replaylib.py) instead of into every kernel's trace program, whose compile it tripled.
#include "simfast.h"

// Replays a trace (``rec``: W values per record, ``core_start``: each core's first record and the total;
// costs: per record, or null for the statement table's).
// out: per record (issue, start, end, after, ticket, record values...);
// cores: per core busy[7], first start, last end, first record; misc: total cycles, status, detail.
extern "C" __attribute__((visibility("default"))) void simfast_replay(
    const int64_t* rec, const int64_t* core_start, int64_t ncores, const int64_t* tab, const int64_t* decls, const int64_t* params, const int64_t* topology, int64_t capacity,
    int64_t issue, const int64_t* costs,
    int64_t chip_bytes, int64_t* out, int64_t* cores, int64_t* misc) {
  static thread_local simfast::Replay R;  // reused: its buffers stay mapped between launches
  R.reset();
  R.tab = tab; R.decls = decls; R.params = params;
  R.per_block = topology[0]; R.first_vector = topology[1]; R.xlatency = topology[2];
  R.ncores = ncores;
  R.capacity = capacity; R.issue_cycles = issue; R.chip_bytes = chip_bytes;
  R.core_start.assign(core_start, core_start + ncores + 1);
  int64_t n = core_start[ncores];
  R.ins.resize((size_t)n);
  for (int64_t c = 0; c < R.ncores; ++c)
    for (int64_t k = core_start[c]; k < core_start[c + 1]; ++k) {
      simfast::Ins& I = R.ins[k];
      I.core = (int32_t)c; I.seq = (int32_t)(k - core_start[c]);
      I.v = rec + k * simfast::W;
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
    o[simfast::NP + 2] = core_start[c];
  }
}

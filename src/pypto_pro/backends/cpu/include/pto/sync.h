// PyPTO CPU backend: cross-core events and grid barriers (ops/sync.py).  Flags, pipe barriers and
// mutexes inside one core are no-ops (each core runs in program order); cross-core waits block the
// core's fiber until another core's set arrives.
#pragma once
#include "core.h"

namespace pto {

enum CrossMode { INTER_BLOCK = 0, INTER_SUBBLOCK = 1, INTRA_BLOCK = 2 };
enum SyncCore { AIV_ONLY = 0, AIC_ONLY = 1, MIX = 2 };

inline void set_cross_core(Core& C, int mode, int64_t event) { pto_rt_set_cross(&C, mode, event); }
inline void wait_cross_core(Core& C, int mode, int64_t event) { pto_rt_wait_cross(&C, mode, event); }
// used_cores < 0: every core of the kind takes part; else the first used_cores of them (launch order).
inline void sync_all(Core& C, int core_type, int64_t used_cores) { pto_rt_sync_all(&C, core_type, used_cores); }

}  // namespace pto

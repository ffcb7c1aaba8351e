// PyPTO CPU backend runtime (libpto_rt.so): one per process, shared by every compiled kernel.
//
// * A persistent pool of worker threads ($PYPTO_NUM_THREADS, default: the machine's cores; the
//   launching thread is one of them) runs the blocks of a launch.
// * Kernels without cross-core waits run each block's cores in order (cube, AIV0, AIV1), like the
//   interpreter.  Kernels with intra-block waits run a block's cores as fibers on one thread,
//   round-robin, switching only when a core waits; a round in which no core progresses is a
//   deadlock.  Kernels with sync_all or INTER_BLOCK events run every core of the grid as a fiber
//   from one shared queue, so block_dim may exceed the worker count.
// * Errors unwind the failing core (C++ exception), abort the launch and are returned to Python.
#if !defined(__x86_64__)
#include <ucontext.h>
#endif
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pto/core.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

using namespace pto;

namespace {

struct Abort {};

constexpr int NEVENTS = 16;
constexpr size_t FIBER_STACK = 512 * 1024;

struct LaunchRT;

// ------------------------------------------------------------------ fiber contexts
// A suspended fiber is a saved stack pointer.  On x86-64 the switch saves what a call must preserve
// (callee-saved registers, MXCSR, the x87 control word) on the old stack and restores it from the
// new one; swapcontext would also save and restore the signal mask, a system call on every switch,
// which made grid launches (every sync_all and cross-core wait yields) slower on two threads than
// on one.  (endbr64: landing pads where indirect-branch tracking is enforced; a no-op elsewhere.)
// Other targets use ucontext.
#if defined(__x86_64__)
struct FiberCtx {
  void* sp = nullptr;
};
extern "C" void pto_fiber_switch(void** save_sp, void* load_sp);
extern "C" void pto_fiber_start();
asm(R"(
.text
.p2align 4
.type pto_fiber_switch,@function
pto_fiber_switch:
  endbr64
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
.size pto_fiber_switch,.-pto_fiber_switch
.p2align 4
.type pto_fiber_start,@function
pto_fiber_start:
  endbr64
  movq %r12, %rdi
  callq *%r13
  ud2
.size pto_fiber_start,.-pto_fiber_start
)");

// A fresh context whose first switch-in calls fn(arg) on the given stack (fn must never return).
void fiber_ctx_make(FiberCtx& c, void* stack, size_t size, void (*fn)(void*), void* arg) {
  uintptr_t* sp = (uintptr_t*)(((uintptr_t)stack + size) & ~(uintptr_t)15) - 8;
  uint32_t mxcsr = __builtin_ia32_stmxcsr();
  uint16_t fpucw;
  asm volatile("fnstcw %0" : "=m"(fpucw));
  sp[0] = (uintptr_t)mxcsr | ((uintptr_t)fpucw << 32);
  sp[1] = sp[2] = 0;                            // r15, r14
  sp[3] = (uintptr_t)fn;                        // r13
  sp[4] = (uintptr_t)arg;                       // r12
  sp[5] = sp[6] = 0;                            // rbx, rbp
  sp[7] = (uintptr_t)&pto_fiber_start;          // returned to by the first switch
  c.sp = sp;
}
inline void fiber_ctx_switch(FiberCtx& save, FiberCtx& load) { pto_fiber_switch(&save.sp, load.sp); }
#else
struct FiberCtx {
  ucontext_t uc;
};
void fiber_ctx_trampoline(unsigned fn_lo, unsigned fn_hi, unsigned arg_lo, unsigned arg_hi) {
  auto fn = (void (*)(void*))(((uintptr_t)fn_hi << 32) | fn_lo);
  fn((void*)(((uintptr_t)arg_hi << 32) | arg_lo));
}
void fiber_ctx_make(FiberCtx& c, void* stack, size_t size, void (*fn)(void*), void* arg) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = nullptr;
  const uintptr_t f = (uintptr_t)fn, a = (uintptr_t)arg;
  makecontext(&c.uc, (void (*)())fiber_ctx_trampoline, 4, (unsigned)(f & 0xFFFFFFFFu), (unsigned)(f >> 32),
              (unsigned)(a & 0xFFFFFFFFu), (unsigned)(a >> 32));
}
inline void fiber_ctx_switch(FiberCtx& save, FiberCtx& load) { swapcontext(&save.uc, &load.uc); }
#endif

// Runtime-private state of one core.
struct CoreRT {
  Core core;
  FiberCtx ctx;
  void* stack = nullptr;
  bool done = false;
  bool progressed = false;  // reported when yielding
  int64_t seen_epoch = -1;  // the launch's epoch read before the failed wait check that made it yield
  int64_t gid = 0;
  int64_t sync_gen[3] = {0, 0, 0};
  char waiting[160] = {0};
};

struct BlockRT {
  Block blk;
  CoreRT cores[4];
  std::atomic<int64_t> sets[3][NEVENTS][4];
  std::atomic<int64_t> waits[3][NEVENTS][4];
  std::atomic<int64_t> taken[NEVENTS][4];  // INTRA_BLOCK sets of each AIV that the cube's waits consumed
  // the cores' on-chip memories, 64-byte aligned: each space starts on a cache line, so a tile row of
  // 64-byte multiples never splits a 64-byte vector load or store across two lines (a std::vector's
  // 16-byte alignment made every AVX-512 access of a fused loop touch two lines)
  std::vector<uint8_t> mem_raw;
  uint8_t* mem = nullptr;
  int64_t mem_size = 0;
  std::vector<int32_t> valid;
  std::vector<int64_t> sv;
};

// Thread-local scheduler context for fibers.
struct FiberHost {
  FiberCtx sched;
  CoreRT* current = nullptr;
};
thread_local FiberHost* t_host = nullptr;
// Fibers of grid launches may resume on another thread: always re-read the thread's host.
__attribute__((noipa)) FiberHost* current_host() { return t_host; }

struct LaunchRT {
  const KernelDesc* d;
  const int64_t* args;
  int64_t nblocks;
  int32_t ncores;  // per block
  PtoError* err;
  std::atomic<int64_t> next{0};
  std::atomic<int> active{0};
  std::atomic<bool> aborted{false};
  std::atomic<int64_t> epoch{0};
  std::mutex emu;
  // grid mode
  std::vector<BlockRT*> blocks;
  std::vector<std::atomic<int64_t>> gsets;   // NEVENTS x total cores
  std::vector<std::atomic<int64_t>> gwaits;  // NEVENTS x total cores
  std::atomic<int64_t> arrivals[3];
  std::mutex logmu;
  std::map<int64_t, std::string> logs;  // kernel log (printf, pto_assert, dump_data) per core gid
  std::mutex qmu;
  std::condition_variable qcv;
  std::deque<CoreRT*> queue;
  int64_t live = 0, running = 0, idle_polls = 0;

  void error(int kind, int site, const char* msg) {
    std::lock_guard<std::mutex> g(emu);
    if (err->kind == 0) {
      err->kind = kind;
      err->site = site;
      std::snprintf(err->message, sizeof err->message, "%s", msg);
    }
    aborted.store(true);
  }
};

LaunchRT* launch_of(Core* c) { return reinterpret_cast<LaunchRT*>(c->launch); }
CoreRT* rt_of(Core* c) { return (CoreRT*)c->fiber; }

// ------------------------------------------------------------------ block setup
int core_count(const KernelDesc* d) { return d->kind == 2 ? 1 + d->vector_per_block : 1; }

void init_block(LaunchRT* L, BlockRT* B, int64_t b) {
  const KernelDesc* d = L->d;
  const int n = L->ncores;
  int64_t per_core = 0;
  for (int s = 0; s < NSPACES; ++s) per_core += (d->extent[s] + 63) / 64 * 64;
  if (B->mem_size < per_core * n) {
    B->mem_raw.assign((size_t)(per_core * n + 64), 0);
    const uintptr_t raw = (uintptr_t)B->mem_raw.data();
    B->mem = B->mem_raw.data() + ((64 - raw % 64) % 64);
    B->mem_size = per_core * n;
  }
  if (per_core * n) std::memset(B->mem, 0xFF, (size_t)(per_core * n));
  if (B->valid.size() < (size_t)(2 * d->ntiles * n + 2)) B->valid.resize((size_t)(2 * d->ntiles * n + 2));
  if (B->sv.size() < (size_t)(d->nshared * n + 1)) B->sv.resize((size_t)(d->nshared * n + 1));
  B->blk.ncores = n;
  std::memset(B->blk.ssbuf, 0xFF, sizeof B->blk.ssbuf);
  if (d->mode != 0)  // event counters exist only where cores can wait
    for (int m = 0; m < 3; ++m)
      for (int e = 0; e < NEVENTS; ++e)
        for (int k = 0; k < 4; ++k) {
          B->sets[m][e][k].store(0, std::memory_order_relaxed);
          B->waits[m][e][k].store(0, std::memory_order_relaxed);
          if (m == 0) B->taken[e][k].store(0, std::memory_order_relaxed);
        }
  for (int i = 0; i < n; ++i) {
    CoreRT& R = B->cores[i];
    Core& C = R.core;
    const bool cube = d->kind == 1 || (d->kind == 2 && i == 0);
    C.kind = cube ? 1 : 0;
    C.block = (int32_t)b;
    C.sub = d->kind == 2 && !cube ? i - 1 : 0;
    if (d->kind == 2 && !cube) {
      C.block_idx = b * d->vector_per_block + C.sub;
      C.subblock_idx = C.sub;
      C.subblock_num = d->vector_per_block;
    } else {
      C.block_idx = b;
      C.subblock_idx = 0;
      C.subblock_num = 1;
    }
    C.block_num = L->nblocks;
    uint8_t* base = B->mem + per_core * i;
    for (int s = 0; s < NSPACES; ++s) {
      C.mem[s] = d->extent[s] ? base : nullptr;
      base += (d->extent[s] + 63) / 64 * 64;
    }
    C.valid = B->valid.data() + 2 * d->ntiles * i;
    std::memcpy(C.valid, d->init_valid, sizeof(int32_t) * 2 * (size_t)d->ntiles);
    C.sv = B->sv.data() + d->nshared * i;
    C.site = -1;
    C.args = L->args;
    C.blk = &B->blk;
    C.launch = reinterpret_cast<pto::Launch*>(L);
    C.local = i;
    C.fiber = &R;
    B->blk.cores[i] = &C;
    R.done = false;
    R.progressed = false;
    R.seen_epoch = -1;
    R.gid = b * n + i;
    R.sync_gen[0] = R.sync_gen[1] = R.sync_gen[2] = 0;
    R.waiting[0] = 0;
  }
}

// Run one core's program; false if it failed (the launch is then aborted).
bool run_core(LaunchRT* L, Core& C) {
  try {
    L->d->core_main(C);
    return true;
  } catch (const Abort&) {
    return false;
  } catch (const std::exception& e) {
    L->error(1, C.site, e.what());
    return false;
  }
}

// ------------------------------------------------------------------ fibers
inline void cpu_relax() {  // a spin-wait hint: frees the core's shared resources for a few cycles
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void fiber_main(void* arg) {
  CoreRT* R = (CoreRT*)arg;
  run_core(launch_of(&R->core), R->core);
  R->done = true;
  R->progressed = true;
  fiber_ctx_switch(R->ctx, current_host()->sched);  // never resumed
  std::abort();
}

void fiber_make(CoreRT* R) {
  if (!R->stack) {
    R->stack = mmap(nullptr, FIBER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (R->stack == MAP_FAILED) { R->stack = nullptr; throw std::bad_alloc(); }
  }
  fiber_ctx_make(R->ctx, R->stack, FIBER_STACK, fiber_main, R);
}

void fiber_free(CoreRT* R) {
  if (R->stack) munmap(R->stack, FIBER_STACK);
  R->stack = nullptr;
}

// Resume R on this thread until it waits or finishes.
void fiber_resume(CoreRT* R) {
  FiberHost host;
  FiberHost* prev = t_host;
  t_host = &host;
  host.current = R;
  fiber_ctx_switch(host.sched, R->ctx);
  t_host = prev;
}

// Called by a waiting core: hand control back to the scheduler.  `seen_epoch` is the launch's
// epoch, read before the core found its wait unsatisfied: until the epoch moves, nothing the core
// waits for has changed and the grid scheduler does not switch back into it.
void fiber_yield(Core* C, bool progressed, int64_t seen_epoch) {
  CoreRT* R = rt_of(C);
  FiberHost* h = current_host();
  if (!h || h->current != R) {
    // should not happen: the code generator picks fiber mode for every kernel that can wait
    launch_of(C)->error(1, C->site, "internal error: a core waited outside a fiber");
    throw Abort{};
  }
  R->progressed = progressed;
  R->seen_epoch = seen_epoch;
  fiber_ctx_switch(R->ctx, h->sched);
}

std::string deadlock_report(LaunchRT* L, const std::vector<CoreRT*>& cores) {
  std::string s = "every remaining core is blocked:";
  int shown = 0;
  for (CoreRT* R : cores) {
    if (R->done) continue;
    if (++shown > 16) { s += "\n  ..."; break; }
    char lab[64];
    const Core& C = R->core;
    if (C.kind == 1) std::snprintf(lab, sizeof lab, "block %d AIC", C.block);
    else std::snprintf(lab, sizeof lab, "block %d AIV%d", C.block, C.sub);
    s += "\n  ";
    s += lab;
    s += " waits for ";
    s += R->waiting;
    // the launcher replaces "@site N" by the kernel source position of op site N
    if (C.site >= 0 && C.site < L->d->nsites) s += " @site " + std::to_string(C.site);
  }
  return s;
}

// ------------------------------------------------------------------ running blocks
void run_block_inline(LaunchRT* L, BlockRT* B, int64_t b) {
  init_block(L, B, b);
  for (int i = 0; i < L->ncores && !L->aborted.load(std::memory_order_relaxed); ++i) run_core(L, B->cores[i].core);
}

void run_block_fibers(LaunchRT* L, BlockRT* B, int64_t b) {
  init_block(L, B, b);
  std::vector<CoreRT*> pending;
  for (int i = 0; i < L->ncores; ++i) {
    fiber_make(&B->cores[i]);
    pending.push_back(&B->cores[i]);
  }
  while (!pending.empty() && !L->aborted.load()) {
    bool progressed = false;
    std::vector<CoreRT*> still;
    for (CoreRT* R : pending) {
      fiber_resume(R);
      progressed |= R->progressed;
      if (!R->done) still.push_back(R);
      if (L->aborted.load()) break;
    }
    if (L->aborted.load()) break;
    if (!still.empty() && !progressed) {
      std::string msg = deadlock_report(L, still);
      L->error(2, still[0]->core.site, msg.c_str());
      break;
    }
    pending.swap(still);
  }
  // abandoned fibers hold no resources besides their stacks (kept for reuse)
}

thread_local BlockRT* t_block = nullptr;

void help_blocks(LaunchRT* L) {
  if (!t_block) t_block = new BlockRT();
  while (!L->aborted.load(std::memory_order_relaxed)) {
    int64_t b = L->next.fetch_add(1);
    if (b >= L->nblocks) break;
    if (L->d->mode == 1) run_block_fibers(L, t_block, b);
    else run_block_inline(L, t_block, b);
  }
}

void help_grid(LaunchRT* L) {
  std::unique_lock<std::mutex> lk(L->qmu);
  while (true) {
    if (L->live == 0 || L->aborted.load()) break;
    if (L->queue.empty()) {
      L->qcv.wait_for(lk, std::chrono::milliseconds(1));
      continue;
    }
    CoreRT* R = L->queue.front();
    L->queue.pop_front();
    const bool unchanged = !R->progressed && R->seen_epoch == L->epoch.load();
    if (!unchanged) {  // switch into it: it may get past its wait
      ++L->running;
      lk.unlock();
      fiber_resume(R);
      lk.lock();
      --L->running;
    }
    if (R->done) {
      --L->live;
      L->idle_polls = 0;
      L->qcv.notify_all();
      continue;
    }
    L->idle_polls = R->progressed ? 0 : L->idle_polls + 1;
    L->queue.push_back(R);
    if (L->idle_polls > L->live) {  // a whole round of cores without progress
      if (L->running == 0) {
        // The round may have overlapped a core that ran while the others were polled: the
        // epoch it saw is then older than the arrivals it missed.  Only a queue of cores that
        // all saw the current epoch, with nothing running to move it, is a deadlock.
        const int64_t now = L->epoch.load();
        if (std::any_of(L->queue.begin(), L->queue.end(),
                        [now](const CoreRT* Q) { return Q->progressed || Q->seen_epoch != now; })) {
          L->idle_polls = 0;
          continue;
        }
        std::vector<CoreRT*> all(L->queue.begin(), L->queue.end());
        std::string msg = deadlock_report(L, all);
        lk.unlock();
        L->error(2, R->core.site, msg.c_str());
        lk.lock();
        L->qcv.notify_all();
        break;
      }
      lk.unlock();  // every queued core waits on a running one
      cpu_relax();
      lk.lock();
    }
  }
}

// The blocks of grid launches are kept for the next one, with their memory and fiber stacks: fresh
// ones would pay the allocation and the stacks' page faults again on every launch.
std::mutex g_grid_blocks_mu;
std::vector<BlockRT*> g_grid_blocks;
constexpr size_t kKeptGridBlocks = 64;

BlockRT* grid_block_take() {
  {
    std::lock_guard<std::mutex> g(g_grid_blocks_mu);
    if (!g_grid_blocks.empty()) {
      BlockRT* B = g_grid_blocks.back();
      g_grid_blocks.pop_back();
      return B;
    }
  }
  return new BlockRT();
}

void grid_block_give(BlockRT* B) {
  {
    std::lock_guard<std::mutex> g(g_grid_blocks_mu);
    if (g_grid_blocks.size() < kKeptGridBlocks) {
      g_grid_blocks.push_back(B);
      return;
    }
  }
  for (CoreRT& R : B->cores) fiber_free(&R);
  delete B;
}

void setup_grid(LaunchRT* L) {
  const int64_t total = L->nblocks * L->ncores;
  L->gsets = std::vector<std::atomic<int64_t>>((size_t)(NEVENTS * total));
  L->gwaits = std::vector<std::atomic<int64_t>>((size_t)(NEVENTS * total));
  for (auto& x : L->gsets) x.store(0);
  for (auto& x : L->gwaits) x.store(0);
  for (auto& a : L->arrivals) a.store(0);
  L->blocks.resize((size_t)L->nblocks);
  for (int64_t b = 0; b < L->nblocks; ++b) {
    BlockRT* B = grid_block_take();
    init_block(L, B, b);
    for (int i = 0; i < L->ncores; ++i) {
      fiber_make(&B->cores[i]);
      L->queue.push_back(&B->cores[i]);
    }
    L->blocks[(size_t)b] = B;
  }
  L->live = total;
}

void teardown_grid(LaunchRT* L) {
  for (BlockRT* B : L->blocks) grid_block_give(B);
  L->blocks.clear();
}

void help(LaunchRT* L) {
  if (L->d->mode == 2) help_grid(L);
  else help_blocks(L);
}

// ------------------------------------------------------------------ the pool
struct Pool {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<LaunchRT*> jobs;
  std::vector<std::thread> threads;
  int size = 0;
  // launches submitted and not yet retired: an idle worker spins on it briefly before sleeping
  std::atomic<int> queued{0};
  // ~50 us of pause instructions: back-to-back launches (a Python loop of kernel calls) then find
  // their helper awake instead of paying a futex wake-up, which costs tens of us on a VM
  static constexpr int kSpin = 1 << 11;

  Pool() {
    const char* env = std::getenv("PYPTO_NUM_THREADS");
    int n = env ? std::atoi(env) : 0;
    if (n <= 0) {
      cpu_set_t set;
      n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)std::thread::hardware_concurrency();
    }
    size = n > 0 ? n : 1;
    for (int i = 1; i < size; ++i) {
      threads.emplace_back([this] { loop(); });
      threads.back().detach();
    }
  }

  void loop() {
    std::unique_lock<std::mutex> lk(mu);
    while (true) {
      if (jobs.empty()) {
        lk.unlock();
        for (int i = 0; i < kSpin && queued.load(std::memory_order_acquire) == 0; ++i) cpu_relax();
        lk.lock();
      }
      cv.wait(lk, [this] { return !jobs.empty(); });
      LaunchRT* L = jobs.front();
      L->active.fetch_add(1);
      lk.unlock();
      help(L);
      L->active.fetch_sub(1);
      lk.lock();
      for (auto it = jobs.begin(); it != jobs.end(); ++it)
        if (*it == L) { jobs.erase(it); break; }  // nothing left to claim
    }
  }

  void submit(LaunchRT* L, int helpers) {
    {
      std::lock_guard<std::mutex> g(mu);
      jobs.push_back(L);
    }
    queued.fetch_add(1, std::memory_order_release);
    for (int i = 0; i < helpers; ++i) cv.notify_one();
  }

  void retire(LaunchRT* L) {
    {
      std::lock_guard<std::mutex> g(mu);
      for (auto it = jobs.begin(); it != jobs.end(); ++it)
        if (*it == L) { jobs.erase(it); break; }
    }
    queued.fetch_sub(1, std::memory_order_release);
    while (L->active.load() != 0) std::this_thread::yield();
  }
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: workers outlive interpreter shutdown
  return *p;
}

std::mutex g_atomic_locks[64];
std::mutex& atomic_lock_for(const void* addr) { return g_atomic_locks[((uintptr_t)addr >> 6) % 64]; }

// The kernel log of the latest launch on this thread (cores in launch order), until pto_rt_take_log.
thread_local std::string t_log, t_log_taken;
void log_finish(LaunchRT* L) {
  t_log.clear();
  for (auto& kv : L->logs) t_log += kv.second;
}

}  // namespace

// ------------------------------------------------------------------ C ABI
extern "C" int pto_rt_launch(const KernelDesc* d, const int64_t* args, int64_t block_dim, PtoError* err) {
  err->kind = 0;
  err->site = -1;
  err->message[0] = 0;
  LaunchRT L;
  L.d = d;
  L.args = args;
  L.nblocks = block_dim;
  L.ncores = core_count(d);
  L.err = err;
  try {
    if (d->mode == 2) setup_grid(&L);
    const int workers = pool().size;
    const int64_t want = d->mode == 2 ? (int64_t)workers : (block_dim < workers ? block_dim : workers);
    if (want > 1) pool().submit(&L, (int)(want - 1));
    help(&L);
    if (want > 1) pool().retire(&L);
    if (d->mode == 2) teardown_grid(&L);
  } catch (const std::bad_alloc&) {
    L.error(1, -1, "out of memory while setting up the launch");
  }
  if (!L.logs.empty()) log_finish(&L);
  return err->kind;
}

extern "C" [[noreturn]] void pto_rt_fail(Core* core, const char* message) {
  char buf[1000];
  const Core& C = *core;
  if (C.kind == 1) std::snprintf(buf, sizeof buf, "%s (on block %d AIC)", message, C.block);
  else std::snprintf(buf, sizeof buf, "%s (on block %d AIV%d)", message, C.block, C.sub);
  launch_of(core)->error(1, core->site, buf);
  throw Abort{};
}

namespace {

const char* mode_name(int mode) {
  return mode == 0 ? "INTER_BLOCK" : mode == 1 ? "INTER_SUBBLOCK" : mode == 2 ? "INTRA_BLOCK" : "UNICAST_BLOCK";
}

// The cores whose sets a wait by `C` consumes (ops/sync.py _sources).
void sources(Core* C, int mode, std::vector<int64_t>& out, bool& grid) {
  LaunchRT* L = launch_of(C);
  out.clear();
  grid = mode == 0;
  if (mode == 2 || mode == 3) {
    for (int i = 0; i < C->blk->ncores; ++i)
      if (C->blk->cores[i]->kind != C->kind) out.push_back(i);
  } else if (mode == 1) {
    if (C->kind != 0) pto_rt_fail(C, "INTER_SUBBLOCK events are between the AIVs of a block");
    for (int i = 0; i < C->blk->ncores; ++i)
      if (C->blk->cores[i]->kind == 0) out.push_back(i);
  } else {
    for (int64_t b = 0; b < L->nblocks; ++b)
      for (int i = 0; i < L->ncores; ++i) {
        const bool cube = L->d->kind == 1 || (L->d->kind == 2 && i == 0);
        if ((cube ? 1 : 0) == C->kind) out.push_back(b * L->ncores + i);
      }
  }
}

}  // namespace

extern "C" void pto_rt_set_cross(Core* C, int32_t mode, int64_t event) {
  LaunchRT* L = launch_of(C);
  if (event < 0 || event >= NEVENTS) pto_rt_fail(C, "cross-core event id outside [0, 15]");
  std::vector<int64_t> src;
  bool grid;
  sources(C, mode, src, grid);  // the cores a set reaches are the cores a wait listens to
  if (src.empty()) {
    char m[128];
    std::snprintf(m, sizeof m, "set_cross_core(%s) has no core to reach in this kernel", mode_name(mode));
    pto_rt_fail(C, m);
  }
  if (grid) L->gsets[(size_t)(event * L->nblocks * L->ncores + rt_of(C)->gid)].fetch_add(1);
  else ((BlockRT*)C->blk)->sets[mode == 3 ? 2 : mode][event][C->local].fetch_add(1);  // UNICAST: INTRA events
  L->epoch.fetch_add(1);
}

extern "C" void pto_rt_wait_cross(Core* C, int32_t mode, int64_t event) {
  LaunchRT* L = launch_of(C);
  if (event < 0 || event >= NEVENTS) pto_rt_fail(C, "cross-core event id outside [0, 15]");
  std::vector<int64_t> src;
  bool grid;
  sources(C, mode, src, grid);
  if (src.empty()) {
    char m[128];
    std::snprintf(m, sizeof m, "wait_cross_core(%s) has no core that could set it in this kernel", mode_name(mode));
    pto_rt_fail(C, m);
  }
  BlockRT* B = (BlockRT*)C->blk;
  const int64_t total = L->nblocks * L->ncores;
  const bool unicast = mode == 3 && C->kind == 1;  // any one AIV's set releases it (ops/sync.py)
  if (mode == 3) mode = 2;
  if (!grid && mode == 2 && C->kind == 1) {  // the cube counts what it took from each AIV
    auto pick = [&]() -> int64_t {  // unicast: the lowest AIV with an untaken set; else -1 unless all have one
      int64_t first = -1;
      for (int64_t s : src) {
        const bool has = B->sets[2][event][s].load() - B->taken[event][s].load() > 0;
        if (unicast && has) return s;
        if (!unicast && !has) return -1;
        if (first < 0) first = s;
      }
      return unicast ? -1 : first;
    };
    int64_t got;
    for (bool first = true;; first = false) {
      const int64_t seen = L->epoch.load();
      if ((got = pick()) >= 0) break;
      if (L->aborted.load()) throw Abort{};
      if (first)
        std::snprintf(rt_of(C)->waiting, sizeof rt_of(C)->waiting, "wait_cross_core(event_id=%lld, %s)",
                      (long long)event, unicast ? "UNICAST_BLOCK" : "INTRA_BLOCK");
      fiber_yield(C, first, seen);
    }
    if (unicast) B->taken[event][got].fetch_add(1);
    else
      for (int64_t s : src) B->taken[event][s].fetch_add(1);
    return;
  }
  auto ready = [&] {
    const int64_t done = grid ? L->gwaits[(size_t)(event * total + rt_of(C)->gid)].load()
                              : B->waits[mode][event][C->local].load();
    for (int64_t s : src) {
      const int64_t sets = grid ? L->gsets[(size_t)(event * total + s)].load() : B->sets[mode][event][s].load();
      if (sets - done <= 0) return false;
    }
    return true;
  };
  for (bool first = true;; first = false) {
    const int64_t seen = L->epoch.load();  // before the check: a set after it moves the epoch
    if (ready()) break;
    if (L->aborted.load()) throw Abort{};
    if (first)  // the label a deadlock report shows
      std::snprintf(rt_of(C)->waiting, sizeof rt_of(C)->waiting, "wait_cross_core(event_id=%lld, %s)",
                    (long long)event, mode_name(mode));
    fiber_yield(C, first, seen);
  }
  if (grid) L->gwaits[(size_t)(event * total + rt_of(C)->gid)].fetch_add(1);
  else B->waits[mode][event][C->local].fetch_add(1);
}

extern "C" void pto_rt_sync_all(Core* C, int32_t core_type, int64_t used_cores) {
  LaunchRT* L = launch_of(C);
  if (L->d->kind == 0 && core_type != 0)
    pto_rt_fail(C, "sync_all in a vector-only kernel needs core_type=pl.SyncCoreType.AIV_ONLY");
  const bool vec_ok = core_type == 0 || core_type == 2, cube_ok = core_type == 1 || core_type == 2;
  if (!(C->kind == 0 ? vec_ok : cube_ok)) {
    const char* names[] = {"AIV_ONLY", "AIC_ONLY", "MIX"};
    char m[128];
    std::snprintf(m, sizeof m, "a %s core cannot join sync_all(core_type=%s)", C->kind ? "cube" : "vector",
                  names[core_type]);
    pto_rt_fail(C, m);
  }
  int64_t per_block = 0, rank_in_block = 0;  // participating cores per block, and before C in its block
  for (int i = 0; i < L->ncores; ++i) {
    const bool cube = L->d->kind == 1 || (L->d->kind == 2 && i == 0);
    per_block += cube ? cube_ok : vec_ok;
    if (i < C->local) rank_in_block += cube ? cube_ok : vec_ok;
  }
  int64_t participants = per_block * L->nblocks;
  if (used_cores >= 0) {  // the first used_cores of them (ops/sync.py used_cores_of)
    char m[160];
    if (used_cores < 1) {
      std::snprintf(m, sizeof m, "sync_all(used_cores=%lld): used_cores must be at least 1", (long long)used_cores);
      pto_rt_fail(C, m);
    }
    const char* names[] = {"AIV_ONLY", "AIC_ONLY", "MIX"};
    if (C->block_idx * per_block + rank_in_block >= used_cores) {
      std::snprintf(m, sizeof m, "sync_all(used_cores=%lld) waits for the first %lld %s cores only; "
                    "this core must not enter it", (long long)used_cores, (long long)used_cores, names[core_type]);
      pto_rt_fail(C, m);
    }
    participants = std::min(participants, used_cores);
  }
  CoreRT* R = rt_of(C);
  const int64_t gen = R->sync_gen[core_type]++;
  L->arrivals[core_type].fetch_add(1);
  L->epoch.fetch_add(1);
  for (bool first = true;; first = false) {
    const int64_t seen = L->epoch.load();  // before the check: an arrival after it moves the epoch
    if (L->arrivals[core_type].load() >= (gen + 1) * participants) break;
    if (L->aborted.load()) throw Abort{};
    const char* names[] = {"AIV_ONLY", "AIC_ONLY", "MIX"};
    if (first)  // the label a deadlock report shows
      std::snprintf(R->waiting, sizeof R->waiting, "sync_all #%lld (%s)", (long long)gen, names[core_type]);
    fiber_yield(C, first, seen);
  }
}

extern "C" void pto_rt_atomic_lock(const void* addr) { atomic_lock_for(addr).lock(); }
extern "C" void pto_rt_atomic_unlock(const void* addr) { atomic_lock_for(addr).unlock(); }

// ------------------------------------------------------------------ kernel log (include/pto/extra.h)
extern "C" void pto_rt_log(Core* C, const void* data, int64_t n) {
  LaunchRT* L = launch_of(C);
  std::lock_guard<std::mutex> g(L->logmu);
  L->logs[rt_of(C)->gid].append((const char*)data, (size_t)n);
}

// The log records of this thread's latest launch (valid until the next call); empties it.
extern "C" int64_t pto_rt_take_log(const char** data) {
  t_log_taken.swap(t_log);
  t_log.clear();
  *data = t_log_taken.data();
  return (int64_t)t_log_taken.size();
}

// ------------------------------------------------------------------ GEMM in fp64: C += A @ B (row-major)
// fp16/bf16/fp32 products are exact in fp64, so this matches the interpreter's float64 matmul up to
// the order of the fp64 additions (the result is then rounded once to fp32 by the caller).
extern "C" void pto_rt_dgemm(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
#if defined(__AVX2__) && defined(__FMA__)
  constexpr int MR = 6, NR = 8;
  double* bp = (double*)std::aligned_alloc(64, sizeof(double) * (size_t)(k * NR + 8));
  for (int64_t j0 = 0; j0 < n; j0 += NR) {
    const int64_t nr = n - j0 < NR ? n - j0 : NR;
    for (int64_t q = 0; q < k; ++q) {
      const double* br = b + q * n + j0;
      double* dst = bp + q * NR;
      for (int64_t t = 0; t < NR; ++t) dst[t] = t < nr ? br[t] : 0.0;
    }
    for (int64_t i0 = 0; i0 < m; i0 += MR) {
      const int64_t mr = m - i0 < MR ? m - i0 : MR;
      __m256d acc[MR][2];
      for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_pd();
      const double* ar[MR];
      for (int r = 0; r < MR; ++r) ar[r] = a + (i0 + (r < mr ? r : 0)) * k;
      for (int64_t q = 0; q < k; ++q) {
        const __m256d b0 = _mm256_load_pd(bp + q * NR), b1 = _mm256_load_pd(bp + q * NR + 4);
        for (int r = 0; r < MR; ++r) {
          const __m256d av = _mm256_broadcast_sd(ar[r] + q);
          acc[r][0] = _mm256_fmadd_pd(av, b0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_pd(av, b1, acc[r][1]);
        }
      }
      for (int r = 0; r < mr; ++r) {
        double out[NR];
        _mm256_storeu_pd(out, acc[r][0]);
        _mm256_storeu_pd(out + 4, acc[r][1]);
        double* cr = c + (i0 + r) * n + j0;
        for (int64_t t = 0; t < nr; ++t) cr[t] += out[t];
      }
    }
  }
  std::free(bp);
#else
  for (int64_t i = 0; i < m; ++i)
    for (int64_t q = 0; q < k; ++q) {
      const double av = a[i * k + q];
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += av * b[q * n + j];
    }
#endif
}

// ------------------------------------------------------------------ GEMM in fp32 (tile matmul)
// Register block 6 x 16 (12 AVX accumulators).  Every C element is one FMA chain over q = 0..k-1
// from 0, then (add) added to C's value with one rounding, so the result does not depend on the
// blocking; the scalar fallback uses fmaf and gives the same bits.
namespace {

constexpr int SG_MR = 6, SG_NR = 16;

// One 6 x 16 block of C over the whole k: A rows a[0..5] (broadcast), B panel bp (16 per step).
inline void sgemm_micro(int64_t k, const float* const* a, const float* bp, float* const* cr, bool add) {
#if defined(__AVX2__) && defined(__FMA__)
  // 12 named accumulators so they stay in registers at -O2
  const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
#define PTO_ROW(i) __m256 c##i##0 = _mm256_setzero_ps(), c##i##1 = _mm256_setzero_ps();
  PTO_ROW(0) PTO_ROW(1) PTO_ROW(2) PTO_ROW(3) PTO_ROW(4) PTO_ROW(5)
#undef PTO_ROW
  for (int64_t q = 0; q < k; ++q) {
    const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
    __m256 av;
#define PTO_ROW(i) av = _mm256_broadcast_ss(a##i + q); \
                   c##i##0 = _mm256_fmadd_ps(av, b0, c##i##0); \
                   c##i##1 = _mm256_fmadd_ps(av, b1, c##i##1);
    PTO_ROW(0) PTO_ROW(1) PTO_ROW(2) PTO_ROW(3) PTO_ROW(4) PTO_ROW(5)
#undef PTO_ROW
    bp += SG_NR;
  }
#define PTO_ROW(i) if (add) { c##i##0 = _mm256_add_ps(_mm256_loadu_ps(cr[i]), c##i##0); \
                              c##i##1 = _mm256_add_ps(_mm256_loadu_ps(cr[i] + 8), c##i##1); } \
                   _mm256_storeu_ps(cr[i], c##i##0); _mm256_storeu_ps(cr[i] + 8, c##i##1);
  PTO_ROW(0) PTO_ROW(1) PTO_ROW(2) PTO_ROW(3) PTO_ROW(4) PTO_ROW(5)
#undef PTO_ROW
#else
  float c[SG_MR][SG_NR];
  for (int i = 0; i < SG_MR; ++i)
    for (int j = 0; j < SG_NR; ++j) c[i][j] = 0.f;
  for (int64_t q = 0; q < k; ++q, bp += SG_NR)
    for (int i = 0; i < SG_MR; ++i)
      for (int j = 0; j < SG_NR; ++j) c[i][j] = std::fmaf(a[i][q], bp[j], c[i][j]);
  for (int i = 0; i < SG_MR; ++i)
    for (int j = 0; j < SG_NR; ++j) cr[i][j] = add ? cr[i][j] + c[i][j] : c[i][j];
#endif
}

#if defined(__AVX512F__)
// Two neighbouring 16-column panels at once (6 x 32 of C in 12 AVX-512 accumulators): the same FMA
// chain per element as sgemm_micro (q ascending from 0, then added to C's value), so the same bits.
inline void sgemm_micro2(int64_t k, const float* const* a, const float* bp0, const float* bp1, float* const* cr0,
                         float* const* cr1, bool add) {
  const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
#define PTO_ROW(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = _mm512_setzero_ps();
  PTO_ROW(0) PTO_ROW(1) PTO_ROW(2) PTO_ROW(3) PTO_ROW(4) PTO_ROW(5)
#undef PTO_ROW
  for (int64_t q = 0; q < k; ++q) {
    const __m512 b0 = _mm512_loadu_ps(bp0 + q * SG_NR), b1 = _mm512_loadu_ps(bp1 + q * SG_NR);
    __m512 av;
#define PTO_ROW(i) av = _mm512_set1_ps(a##i[q]); \
                   c##i##0 = _mm512_fmadd_ps(av, b0, c##i##0); \
                   c##i##1 = _mm512_fmadd_ps(av, b1, c##i##1);
    PTO_ROW(0) PTO_ROW(1) PTO_ROW(2) PTO_ROW(3) PTO_ROW(4) PTO_ROW(5)
#undef PTO_ROW
  }
#define PTO_ROW(i) if (add) { c##i##0 = _mm512_add_ps(_mm512_loadu_ps(cr0[i]), c##i##0); \
                              c##i##1 = _mm512_add_ps(_mm512_loadu_ps(cr1[i]), c##i##1); } \
                   _mm512_storeu_ps(cr0[i], c##i##0); _mm512_storeu_ps(cr1[i], c##i##1);
  PTO_ROW(0) PTO_ROW(1) PTO_ROW(2) PTO_ROW(3) PTO_ROW(4) PTO_ROW(5)
#undef PTO_ROW
}
#endif

// Row block ip (6 rows) of one panel of width w: in place, or through a padded copy at the edges.
inline void sgemm_block(int64_t m, int64_t k, const float* a, int64_t lda, const float* bpanel, float* c,
                        const int64_t* rowoff, int64_t coloff, int64_t ip, int64_t w, int load_c) {
  const int64_t h = m - ip * SG_MR < SG_MR ? m - ip * SG_MR : SG_MR;
  const float* arow[SG_MR];  // rows past m repeat the last one; their results are dropped
  for (int i = 0; i < SG_MR; ++i) arow[i] = a + (ip * SG_MR + (i < h ? i : h - 1)) * lda;
  float* cr[SG_MR];
  if (h == SG_MR && w == SG_NR) {
    for (int i = 0; i < SG_MR; ++i) cr[i] = c + rowoff[ip * SG_MR + i] + coloff;
    sgemm_micro(k, arow, bpanel, cr, load_c != 0);
    return;
  }
  alignas(32) float buf[SG_MR][SG_NR] = {};
  for (int i = 0; i < SG_MR; ++i) cr[i] = buf[i];
  for (int64_t i = 0; i < h && load_c; ++i)
    std::memcpy(buf[i], c + rowoff[ip * SG_MR + i] + coloff, sizeof(float) * (size_t)w);
  sgemm_micro(k, arow, bpanel, cr, load_c != 0);
  for (int64_t i = 0; i < h; ++i)
    std::memcpy(c + rowoff[ip * SG_MR + i] + coloff, buf[i], sizeof(float) * (size_t)w);
}

}  // namespace

extern "C" void pto_rt_sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* bp, float* c,
                             const int64_t* rowoff, const int64_t* coloff, int load_c) {
  for (int64_t p = 0; p * SG_NR < n; ++p) {
    const int64_t w = n - p * SG_NR < SG_NR ? n - p * SG_NR : SG_NR;
    const float* bpanel = bp + p * k * SG_NR;
#if defined(__AVX512F__)
    if ((p + 2) * SG_NR <= n && m >= SG_MR) {  // two full panels: 6 x 32 blocks, then the row edge
      const float* bpanel1 = bpanel + k * SG_NR;
      int64_t ip = 0;
      for (; (ip + 1) * SG_MR <= m; ++ip) {
        const float* arow[SG_MR];
        float *cr0[SG_MR], *cr1[SG_MR];
        for (int i = 0; i < SG_MR; ++i) {
          arow[i] = a + (ip * SG_MR + i) * lda;
          cr0[i] = c + rowoff[ip * SG_MR + i] + coloff[p];
          cr1[i] = c + rowoff[ip * SG_MR + i] + coloff[p + 1];
        }
        sgemm_micro2(k, arow, bpanel, bpanel1, cr0, cr1, load_c != 0);
      }
      if (ip * SG_MR < m) {
        for (int64_t pp = p; pp < p + 2; ++pp) sgemm_block(m, k, a, lda, bp + pp * k * SG_NR, c, rowoff, coloff[pp], ip, SG_NR, load_c);
      }
      ++p;
      continue;
    }
#endif
    for (int64_t ip = 0; ip * SG_MR < m; ++ip) sgemm_block(m, k, a, lda, bpanel, c, rowoff, coloff[p], ip, w, load_c);
  }
}

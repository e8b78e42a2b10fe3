// fakecuda: a strict emulation of the subset of the CUDA driver API that
// godevarrow uses, for machines without a GPU (see docs/cuda.md, "Fidelity").
// Every behaviour below copies the CUDA Driver API reference (cited by
// section and function); where hardware is lenient in practice the fake is
// still as strict as the documentation.
//
// Strictness:
//  * Device memory lives in a region mapped PROT_NONE: any host load or store
//    of a device address crashes. The driver reaches the bytes through a
//    second, read-write mapping of the same memfd (the "shadow").
//  * Contexts: each thread has a stack of current contexts (CUDA Driver API,
//    "Context Management": cuCtxPushCurrent, cuCtxPopCurrent; cuCtxSetCurrent
//    replaces the top). Calls that need a context fail with
//    CUDA_ERROR_INVALID_CONTEXT when none is current, cuPointerGetAttribute
//    included (its documented return codes list CUDA_ERROR_INVALID_CONTEXT).
//    A primary context must be retained (cuDevicePrimaryCtxRetain) before it
//    can be made current, and retaining can fail per device
//    (FAKECUDA_UNAVAILABLE_DEVICES=1,3 answers CUDA_ERROR_DEVICE_UNAVAILABLE,
//    as for CU_COMPUTEMODE_EXCLUSIVE_PROCESS or _PROHIBITED devices).
//  * Asynchrony is real: async copies, memsets and event records are queued
//    per stream and run only at a synchronization point:
//      cuStreamSynchronize(s)   runs s's queue;
//      cuEventSynchronize(e)    runs the queue of e's stream up to e's record;
//      a WAIT op queued by cuStreamWaitEvent(s, e) runs e's stream up to e's
//                               record when s reaches it;
//      cuCtxSynchronize and cuMemFree run all queues.
//    The legacy default stream (NULL or CU_STREAM_LEGACY) of each context and
//    the per-thread default stream (CU_STREAM_PER_THREAD) are queues like any
//    other (CUDA Driver API, "Stream synchronization behavior"): the legacy
//    one synchronizes with the *blocking* streams of its context, streams
//    created with CU_STREAM_NON_BLOCKING are not waited for. Synchronous
//    copies run on the legacy stream of the current context.
//    cuStreamDestroy does not complete pending work (CUDA Driver API,
//    cuStreamDestroy: "the function will return immediately and the resources
//    ... will be released automatically once the device has completed all
//    work"): the work runs at a later synchronization point.
//    cuEventQuery never runs work: it says CUDA_ERROR_NOT_READY while the
//    record is pending. A reader that forgets to wait sees stale bytes.
//    A host-to-device "async" copy from pageable memory reads its source in
//    the call (CUDA Driver API, "API synchronization behavior": the driver
//    copies it to a staging buffer immediately), so the caller may free it;
//    the device memory still changes only at a synchronization point.
//  * Events and streams belong to the context current when they were made;
//    cuEventRecord of an event on a stream of another context fails with
//    CUDA_ERROR_INVALID_HANDLE (CUDA Driver API, cuEventRecord: "hStream and
//    hEvent must be from the same context"), cuStreamWaitEvent accepts an
//    event of any context (cuStreamWaitEvent: "hEvent may be from a different
//    context or device than hStream").
//  * Sticky errors: a 700-class fault (CUDA_ERROR_ILLEGAL_ADDRESS,
//    _LAUNCH_FAILED, ...; CUDA Driver API, "Error Handling": "the process is
//    left in an inconsistent state and any further CUDA work will return the
//    same error") poisons the context that was current: every later call
//    that needs it returns the same error until cuDevicePrimaryCtxReset_v2.
//  * Memory kinds: managed memory answers CU_POINTER_ATTRIBUTE_IS_MANAGED
//    (its MEMORY_TYPE is DEVICE, as the driver reports); pinned memory keeps
//    the cuMemHostAlloc flags (PORTABLE, DEVICEMAP) and with unified
//    addressing is mapped at the same address. FAKECUDA_REUSE_ADDRESSES=1
//    hands freed device addresses out again, as a real allocator does, so a
//    stale pointer aliases new data instead of failing.
//  * Several devices (FAKECUDA_DEVICES, default 2), counters and fault
//    injection through the fakecuda_* functions.
//
// Costs (FAKECUDA_COSTS=h200; unset, every call is free). The fake charges
// what an NVIDIA H200 charges, from the table in docs/cuda.md ("What a GPU
// charges"); every figure lives in the "costs" section below. Rules:
//  * A call costs its table figure less CTYPES_NS (the table was measured
//    through ctypes, which adds about that much to each call), charged by a
//    busy-wait on CLOCK_MONOTONIC after the lock is released, so profilers
//    see the time in the driver call and other threads are not serialized.
//    The fake's own work inside the call counts against the charge. A pair
//    measured together (create + destroy, push + pop, alloc + free, retain
//    + release) is split evenly between its two calls. Calls the table does
//    not list cost nothing, except those said to cost "as" a listed one.
//  * Each stream has a timeline: busy_until, when its queued work would have
//    finished on the GPU. The data still moves only at synchronization points,
//    as above (the costs never make the fake more lenient); the timeline only
//    decides how long a synchronization waits.
//  * Copies to or from pinned memory (cuMemHostAlloc, cuMemAllocHost,
//    cuMemHostRegister) and device-to-device copies are asynchronous: the call
//    costs the issue time; the copy completes a latency after its issue, or
//    after the stream's earlier work if that ends later, plus its bytes at
//    the link's bandwidth (latencies overlap, transfers queue).
//  * A "async" copy to or from pageable memory is synchronous: the call waits
//    for the stream's earlier work, then costs a latency plus bytes at the
//    pageable bandwidth (device to pageable 15.4 GB/s, pageable to device
//    9.2 GB/s). The pages' first touch is not charged: it really happens in
//    the fake's own memmove. Except a pageable host-to-device copy of at most
//    8 KB, which the driver stages in the call and returns (measured on the
//    H200: one after another on a stream, each issued and an event recorded
//    after it in 3.85-6.04 µs; waited for, 8.20-10.16): the call costs the
//    dearest of those issues and waits for nothing, and the copy completes
//    on the stream's timeline as a pinned one does, a latency after the
//    call such that issue + completion + sync is the table's 8-byte
//    pageable copy + sync.
//  * Synchronous copies wait for the legacy stream (and what it waits for),
//    then cost the synchronous latency plus bytes at the bandwidth of the
//    host side (pinned 55.2 GB/s, pageable as above).
//  * Synchronizations (cuStreamSynchronize, cuEventSynchronize,
//    cuCtxSynchronize, cuMemFree, cuMemFreeHost) wait until the work they
//    wait for is done on its timeline, then cost their idle figure.
//  * Allocations cost by size, interpolated linearly between the table's
//    sizes and extrapolated from the nearest two beyond them.
//  * The fake's memmove is real work on this host: a large copy cannot run
//    faster than this host's memcpy, however fast the modelled link.
#define _GNU_SOURCE
#include "fakecuda.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
  OK = 0,
  E_INVALID_VALUE = 1,
  E_OUT_OF_MEMORY = 2,
  E_NOT_INITIALIZED = 3,
  E_DEVICE_UNAVAILABLE = 46,
  E_INVALID_DEVICE = 101,
  E_INVALID_CONTEXT = 201,
  E_INVALID_HANDLE = 400,
  E_NOT_READY = 600,
  E_ILLEGAL_ADDRESS = 700,
  E_LAUNCH_FAILED = 719,
};

#define MAX_DEVICES 8
#define REGION_PER_DEVICE (2ULL << 30)  // 2 GiB of address space per device

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int initialized, n_devices;
static char* region;  // PROT_NONE: what the host sees
static char* shadow;  // read-write: what the driver uses
static uint64_t bump[MAX_DEVICES];
// FAKECUDA_REUSE_ADDRESSES=1: freed device ranges are handed out again
// (first fit), as the driver's allocator does.
static int reuse_addresses;
typedef struct {
  char* addr;
  size_t size;
} free_range;
static free_range* freed;
static size_t n_freed, cap_freed;

typedef struct stream stream;
typedef struct {
  int device;
  long long retains;     // cuDevicePrimaryCtxRetain calls minus releases
  long long retain_calls;  // every cuDevicePrimaryCtxRetain, for tests
  int unavailable;       // retaining fails (exclusive-process / prohibited mode)
  CUresult sticky;       // a 700-class error that poisoned the context
  stream* legacy;        // the legacy default stream
  uint64_t blocking_busy;  // costs: when the work of its blocking streams ends
} context;
static context contexts[MAX_DEVICES];

// The calling thread's context stack; its top is the current context.
#define CTX_STACK_MAX 64
static __thread context* ctx_stack[CTX_STACK_MAX];
static __thread int ctx_depth;
#define current (ctx_depth ? ctx_stack[ctx_depth - 1] : (context*)NULL)

static int valid_context(const void* ctx) {
  return ctx >= (void*)&contexts[0] && ctx < (void*)&contexts[n_devices] && ((context*)ctx)->retains > 0;
}

// The errors the CUDA Driver API documents as leaving the context unusable.
static int is_sticky(CUresult r) {
  return r == E_ILLEGAL_ADDRESS || r == 702 /* LAUNCH_TIMEOUT */ || (r >= 714 && r <= 719);
}

// ---------------------------------------------------------------- allocations
enum { MEM_DEVICE = 2, MEM_HOST = 1, MEM_MANAGED = 4 };
typedef struct {
  char* addr;
  size_t size;
  int device, kind;
  unsigned flags;  // cuMemHostAlloc / cuMemHostRegister flags of pinned memory
  int registered;  // host memory pinned by cuMemHostRegister (not ours to free)
} allocation;
// The live allocations, sorted by address (they never overlap: sizes are
// never 0), so a lookup is a binary search however many a program makes.
static allocation* allocs;
static size_t n_allocs, cap_allocs;

// The index of the first allocation that starts after p.
static size_t first_after(const char* p) {
  size_t lo = 0, hi = n_allocs;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (allocs[mid].addr <= p)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// The live allocation holding [p, p+n), or NULL.
static allocation* find_alloc(const void* p, size_t n) {
  const char* c = p;
  size_t i = first_after(c);
  if (i == 0) return NULL;
  allocation* a = &allocs[i - 1];
  return c + n <= a->addr + a->size && c < a->addr + a->size ? a : NULL;
}

static void add_alloc(char* addr, size_t size, int device, int kind) {
  if (n_allocs == cap_allocs) {
    cap_allocs = cap_allocs ? cap_allocs * 2 : 256;
    allocs = realloc(allocs, cap_allocs * sizeof(allocation));
  }
  size_t i = first_after(addr);
  memmove(&allocs[i + 1], &allocs[i], (n_allocs - i) * sizeof(allocation));
  allocs[i] = (allocation){addr, size, device, kind, 0, 0};
  n_allocs++;
}

// Forgets a (found by find_alloc); the pointer is invalid afterwards.
static void remove_alloc(allocation* a) {
  size_t i = (size_t)(a - allocs);
  memmove(&allocs[i], &allocs[i + 1], (n_allocs - i - 1) * sizeof(allocation));
  n_allocs--;
}

static int in_region(const void* p) {
  const char* c = p;
  return region && c >= region && c < region + (size_t)n_devices * REGION_PER_DEVICE;
}

// ------------------------------------------------------------------ counters
static long long live_bytes, bytes_copied[5], copy_calls[5], syncs;
static long long live_events;

typedef struct {
  char name[64];
  long long calls;
  long long fail_at;  // call number that fails (0: none)
  int error;
  long long cost_ns;  // what the call costs when costs are on (see "costs")
} call_stat;
static long long base_cost(const char* fn);
static call_stat stats[128];
static int n_stats;

static call_stat* stat_for(const char* fn) {
  for (int i = 0; i < n_stats; i++)
    if (!strcmp(stats[i].name, fn)) return &stats[i];
  if (n_stats == 128) return NULL;
  call_stat* s = &stats[n_stats++];
  memset(s, 0, sizeof(*s));
  snprintf(s->name, sizeof(s->name), "%s", fn);
  s->cost_ns = base_cost(fn);
  return s;
}

// Every API entry point starts with ENTER: it takes the lock, counts the
// call and applies an injected fault. Each entry point finds its counter
// once (counters are never removed).
// With costs on it also starts the call's clock and sets its base cost;
// RETURN unlocks and charges (see "costs").
#define ENTER(fn)                                    \
  if (costs_on) call_t0 = now_ns(), call_after = 0;  \
  pthread_mutex_lock(&mu);                           \
  do {                                               \
    static call_stat* st_;                           \
    if (!st_) st_ = stat_for(fn);                    \
    call_cost = st_ ? st_->cost_ns : 0;              \
    if (st_) {                                       \
      st_->calls++;                                  \
      if (st_->fail_at && st_->calls == st_->fail_at) { \
        st_->fail_at = 0;                            \
        if (is_sticky(st_->error) && current)        \
          current->sticky = st_->error;              \
        pthread_mutex_unlock(&mu);                   \
        return st_->error;                           \
      }                                              \
    }                                                \
  } while (0)
#define RETURN(v)              \
  do {                         \
    CUresult r_ = (v);         \
    pthread_mutex_unlock(&mu); \
    if (costs_on) charge();    \
    return r_;                 \
  } while (0)
#define NEED_INIT() \
  if (!initialized) RETURN(E_NOT_INITIALIZED)
#define NEED_CONTEXT()                  \
  NEED_INIT();                          \
  if (!current) RETURN(E_INVALID_CONTEXT); \
  if (current->sticky) RETURN(current->sticky)

// ----------------------------------------------------------- streams, events
enum { OP_COPY, OP_MEMSET, OP_RECORD, OP_WAIT };
typedef struct event event;
typedef struct {
  int kind;
  char *dst, *src;  // driver-side (shadow) addresses
  size_t n;
  int dir;
  unsigned char value;
  event* ev;
  unsigned long long seq;  // of a RECORD: the event's generation; of a WAIT: the awaited generation
  char* staged;            // of a COPY from pageable memory: the snapshot it copies (freed when run)
} op;

struct stream {
  int device, live, non_blocking;
  int special;  // a default stream (legacy or per-thread): never destroyed
  op* ops;
  size_t n_ops, cap_ops, done;  // ops[done..n_ops) are pending
  uint64_t busy_until;          // costs: when its queued work ends on the GPU
};

struct event {
  int device, live;
  stream* recorded_on;
  unsigned long long generation, completed;  // recorded and completed record generations
  uint64_t done_at;                          // costs: when its latest record completes
};

#define STREAM_LEGACY ((void*)0x1)
#define STREAM_PER_THREAD ((void*)0x2)
static int is_default_handle(const void* s) { return s == NULL || s == STREAM_LEGACY || s == STREAM_PER_THREAD; }

// Every stream and event ever created: they are never freed (a destroyed
// one stays, dead, so a stale handle is rejected and never reused), and a
// set of their addresses answers "is this a handle?" in constant time
// however many a program has made.
typedef struct {
  void** slots;
  size_t n, cap;  // cap: 0 or a power of two
} handle_set;

static size_t slot_of(const handle_set* h, const void* p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  size_t i = (size_t)x & (h->cap - 1);
  while (h->slots[i] && h->slots[i] != p) i = (i + 1) & (h->cap - 1);
  return i;
}

static int set_has(const handle_set* h, const void* p) { return h->cap && p && h->slots[slot_of(h, p)] == p; }

static void set_add(handle_set* h, void* p) {
  if (2 * (h->n + 1) > h->cap) {
    size_t cap = h->cap ? 2 * h->cap : 64;
    handle_set bigger = {calloc(cap, sizeof(void*)), 0, cap};
    for (size_t i = 0; i < h->cap; i++)
      if (h->slots[i]) set_add(&bigger, h->slots[i]);
    free(h->slots);
    *h = bigger;
  }
  h->slots[slot_of(h, p)] = p;
  h->n++;
}

static handle_set all_streams, all_events;
// Every stream that may hold work, in creation order: live ones, default
// ones, and destroyed ones whose work has not run yet.
static stream** streams;
static size_t n_streams, cap_streams;
static long long live_streams;
static __thread stream* per_thread_streams[MAX_DEVICES];

static stream* new_stream(int device, int non_blocking, int special) {
  stream* s = calloc(1, sizeof(stream));
  s->device = device;
  s->live = 1;
  s->non_blocking = non_blocking;
  s->special = special;
  if (n_streams == cap_streams) {
    cap_streams = cap_streams ? cap_streams * 2 : 16;
    streams = realloc(streams, cap_streams * sizeof(stream*));
  }
  streams[n_streams++] = s;
  return s;
}

// The stream a handle names, or NULL when it names none. NULL and
// CU_STREAM_LEGACY are the current context's legacy default stream,
// CU_STREAM_PER_THREAD this thread's default stream of the current context
// (CUDA Driver API, "Stream synchronization behavior"); both need a context.
static stream* stream_of(void* h) {
  if (h == NULL || h == STREAM_LEGACY) return current ? current->legacy : NULL;
  if (h == STREAM_PER_THREAD) {
    if (!current) return NULL;
    stream** pt = &per_thread_streams[current->device];
    // "The per-thread default stream is not a non-blocking stream and will
    // synchronize with the legacy default stream"
    if (!*pt) *pt = new_stream(current->device, 0, 1);
    return *pt;
  }
  stream* s = h;
  return set_has(&all_streams, s) && s->live ? s : NULL;
}
static int valid_event(event* e) { return set_has(&all_events, e) && e->live; }

static void run_until(stream* s, size_t end);
// Set when the current call did host work of the fake's own that the model
// does not charge: it moved bytes, or gave a device allocation's pages back
// (costs: see fakecuda_overrun_ns).
static __thread int call_own_work;
static long long overrun_ns;
static uint64_t overrun_until;  // the end of the last overrun counted

static void run_op(op* o) {
  switch (o->kind) {
    case OP_COPY:
      memmove(o->dst, o->src, o->n);
      free(o->staged);
      o->staged = NULL;
      call_own_work = 1;
      bytes_copied[o->dir] += (long long)o->n;
      break;
    case OP_MEMSET:
      memset(o->dst, o->value, o->n);
      break;
    case OP_RECORD:
      if (o->ev->completed < o->seq) o->ev->completed = o->seq;
      break;
    case OP_WAIT: {
      event* e = o->ev;
      if (e->live && e->recorded_on && e->completed < o->seq) {
        stream* es = e->recorded_on;
        for (size_t i = es->done; i < es->n_ops; i++) {
          if (es->ops[i].kind == OP_RECORD && es->ops[i].ev == e && es->ops[i].seq == o->seq) {
            run_until(es, i + 1);
            break;
          }
        }
      }
      break;
    }
  }
}

static void sync_stream(stream* s);

// Runs s's pending ops up to (not including) index end. Work on a legacy
// default stream first waits for the blocking streams of its context.
static void run_until(stream* s, size_t end) {
  if (s->done < end && s->done < s->n_ops && s == contexts[s->device].legacy) {
    for (size_t i = 0; i < n_streams; i++)
      if (streams[i]->device == s->device && !streams[i]->non_blocking && streams[i] != s)
        run_until(streams[i], streams[i]->n_ops);
  }
  while (s->done < end && s->done < s->n_ops) {
    op o = s->ops[s->done++];
    run_op(&o);
  }
  if (s->done == s->n_ops) s->done = s->n_ops = 0;
}

static void run_all(void) {
  for (size_t i = 0; i < n_streams; i++) run_until(streams[i], streams[i]->n_ops);
}

// Synchronizes s the way the driver orders it: the legacy default stream
// first waits for every blocking stream of its context, and a blocking stream
// for the work queued on the legacy stream before (conservatively: all of it).
static void sync_stream(stream* s) {
  stream* legacy = contexts[s->device].legacy;
  if (s != legacy && !s->non_blocking) {
    run_until(legacy, legacy->n_ops);
  }
  run_until(s, s->n_ops);
}

// Queues op on s; it runs at a synchronization point.
static void submit(stream* s, op o) {
  if (s->n_ops == s->cap_ops) {
    s->cap_ops = s->cap_ops ? s->cap_ops * 2 : 16;
    s->ops = realloc(s->ops, s->cap_ops * sizeof(op));
  }
  s->ops[s->n_ops++] = o;
}

// -------------------------------------------------------------------- costs
// Everything FAKECUDA_COSTS=h200 charges; the rules are at the top of the
// file. Figures are nanoseconds as the table in docs/cuda.md ("What a GPU
// charges") gives them, ctypes overhead included; bandwidths are GB/s, which
// are bytes per nanosecond.
static int costs_on;
// What ctypes adds to a call: the table's calls, with costs off (the fake's
// own work is a few tens of ns), measured 0.11 us (one argument) to 0.17 us
// (three or four) through tests_py/cuda/fakecuda_costs.py on the machine this was
// written on; the table's figures include about 0.25 us of it on the H200's
// host. The fake charges the figure less this, so the same ctypes
// measurement here reproduces the table.
#define CTYPES_NS 150

// Driver calls (docs/cuda.md, "Driver calls").
#define T_POINTER_ATTRIBUTE 840  // cuPointerGetAttribute (0.83 for DEVICE_ORDINAL)
#define T_ADDRESS_RANGE 930      // cuMemGetAddressRange
#define T_CTX_GET_CURRENT 320
#define T_CTX_PUSH_POP 610       // push + pop
#define T_STREAM_CREATE_DESTROY 4590
#define T_EVENT_CREATE_DESTROY 950
#define T_EVENT_RECORD 520
#define T_STREAM_WAIT_EVENT 540
#define T_EVENT_SYNC 520         // on a completed event
#define T_STREAM_SYNC 950        // on an idle stream
#define T_STREAM_QUERY 840       // on an idle stream
#define T_CTX_GET_DEVICE 550
#define T_CTX_SET_CURRENT 540
#define T_PRIMARY_RETAIN_RELEASE 1070
#define T_MEM_GET_INFO 7330
// Copies of 8 bytes (docs/cuda.md, "Driver calls").
#define T_DTOH_SYNC 9460               // cuMemcpyDtoH into pageable memory
#define T_HTOD_SYNC 6060               // cuMemcpyHtoD from pageable memory
#define T_PINNED_ASYNC_AND_SYNC 7540   // cuMemcpyDtoHAsync into pinned memory + cuStreamSynchronize
#define T_PINNED_68_AND_SYNC 186000    // 68 of them, then one cuStreamSynchronize
#define T_PAGEABLE_68_AND_SYNC 555000  // 68 cuMemcpyDtoHAsync into pageable memory, then one sync
#define T_HTOD_ASYNC_AND_SYNC 8410     // cuMemcpyHtoDAsync from pageable memory + sync
// cuMemcpyHtoDAsync of 8 KB from pageable memory + cuEventRecord, not waited
// for: the dearest run of the GPU kit (docs/cuda.md, "Driver calls")
#define T_PAGEABLE_HTOD_8K_ASYNC_AND_RECORD 6040
#define PAGEABLE_HTOD_STAGED_MAX 8192  // the largest pageable upload measured as staged
#define T_DTOD_ASYNC_AND_SYNC 11980    // cuMemcpyDtoDAsync + sync
// Pinned host-to-device copies of more than 8 bytes (docs/cuda.md, "Driver
// calls": the GPU kit's driver_costs.py on an H200): 8 KB from pinned memory
// + sync cost 10.04 us where 8 bytes cost 6.69, so a small staged upload is
// charged the 8 KB figure (between the two sizes nothing was measured; the
// dearer one is the one that cannot flatter).
#define T_PINNED_HTOD_8K_ASYNC_AND_SYNC 10040
// Bandwidths (docs/cuda.md, "Bandwidth").
#define BW_PINNED 55.2        // either way, pinned or registered host memory
#define BW_DTOH_PAGEABLE 15.4  // into pageable memory allocated (touched) beforehand
#define BW_HTOD_PAGEABLE 9.2
#define BW_DTOD 2000.0         // not measured: an assumption, far above the link
// Allocation sizes and costs (docs/cuda.md, "Driver calls" and "Host memory").
static const double alloc_sizes[] = {256, 1 << 20, 64 << 20};
static const double alloc_free_ns[] = {90000, 88000, 152000};  // cuMemAlloc + cuMemFree
static const double host_sizes[] = {1 << 20, 64 << 20, 1 << 30};
static const double host_alloc_figures[] = {0.98e6, 26.5e6, 428e6};  // cuMemHostAlloc
static const double host_free_figures[] = {0.44e6, 6.6e6, 120e6};    // cuMemFreeHost
#define T_REGISTER_PER_GIB 44e6    // cuMemHostRegister of touched memory, per GiB
#define T_UNREGISTER_PER_GIB 19e6  // cuMemHostUnregister, per GiB

// Derived. The table's one-copy and 68-copy rows give the issue time of an
// asynchronous copy (the difference of the two is 67 issues) and the time the
// GPU takes to complete it after the issue: a measured pair issue + sync
// spans issue + latency + sync, less one CTYPES_NS (the sync starts before
// the latency has run out).
#define T_ASYNC_ISSUE ((T_PINNED_68_AND_SYNC - T_PINNED_ASYNC_AND_SYNC) / 67)
#define LATENCY_PINNED (T_PINNED_ASYNC_AND_SYNC - T_ASYNC_ISSUE - T_STREAM_SYNC + CTYPES_NS)
#define LATENCY_DTOD (T_DTOD_ASYNC_AND_SYNC - T_ASYNC_ISSUE - T_STREAM_SYNC + CTYPES_NS)
#define LATENCY_PINNED_HTOD \
  (T_PINNED_HTOD_8K_ASYNC_AND_SYNC - T_ASYNC_ISSUE - T_STREAM_SYNC + CTYPES_NS - (long long)(8192 / BW_PINNED))
// A pageable "async" copy is the whole copy, in the call.
#define T_PAGEABLE_DTOH_ASYNC ((T_PAGEABLE_68_AND_SYNC - T_STREAM_SYNC) / 68)
#define T_PAGEABLE_HTOD_ASYNC (T_HTOD_ASYNC_AND_SYNC - T_STREAM_SYNC)
// A staged pageable upload (up to PAGEABLE_HTOD_STAGED_MAX): its issue, and
// when it completes after the call.
#define T_PAGEABLE_HTOD_STAGED (T_PAGEABLE_HTOD_8K_ASYNC_AND_RECORD - T_EVENT_RECORD)
#define LATENCY_PAGEABLE_HTOD_STAGED (T_HTOD_ASYNC_AND_SYNC - T_PAGEABLE_HTOD_STAGED - T_STREAM_SYNC + CTYPES_NS)

static long long call_ns(long long figure) { return figure > CTYPES_NS ? figure - CTYPES_NS : 0; }
static long long half_pair_ns(long long figure) { return call_ns(figure - CTYPES_NS) / 2; }

static const struct {
  const char* fn;
  long long figure;  // ns, ctypes included
  int pair;          // the figure is of a pair, half of it is this call's
} cost_table[] = {
    {"cuPointerGetAttribute", T_POINTER_ATTRIBUTE, 0},
    {"cuMemGetAddressRange_v2", T_ADDRESS_RANGE, 0},
    // no figure of its own: charged as the costlier single-pointer query
    {"cuPointerGetAttributes", T_ADDRESS_RANGE, 0},
    {"cuCtxGetCurrent", T_CTX_GET_CURRENT, 0},
    {"cuStreamGetCtx", T_CTX_GET_CURRENT, 0},  // as cuCtxGetCurrent
    {"cuCtxPushCurrent_v2", T_CTX_PUSH_POP, 1},
    {"cuCtxPopCurrent_v2", T_CTX_PUSH_POP, 1},
    {"cuStreamCreate", T_STREAM_CREATE_DESTROY, 1},
    {"cuStreamDestroy_v2", T_STREAM_CREATE_DESTROY, 1},
    {"cuEventCreate", T_EVENT_CREATE_DESTROY, 1},
    {"cuEventDestroy_v2", T_EVENT_CREATE_DESTROY, 1},
    {"cuEventRecord", T_EVENT_RECORD, 0},
    {"cuStreamWaitEvent", T_STREAM_WAIT_EVENT, 0},
    {"cuEventSynchronize", T_EVENT_SYNC, 0},
    {"cuStreamSynchronize", T_STREAM_SYNC, 0},
    {"cuCtxSynchronize", T_STREAM_SYNC, 0},  // as cuStreamSynchronize
    {"cuStreamQuery", T_STREAM_QUERY, 0},
    {"cuEventQuery", T_STREAM_QUERY, 0},  // as cuStreamQuery
    {"cuCtxGetDevice", T_CTX_GET_DEVICE, 0},
    {"cuCtxSetCurrent", T_CTX_SET_CURRENT, 0},
    {"cuDevicePrimaryCtxRetain", T_PRIMARY_RETAIN_RELEASE, 1},
    {"cuDevicePrimaryCtxRelease_v2", T_PRIMARY_RETAIN_RELEASE, 1},
    {"cuMemGetInfo_v2", T_MEM_GET_INFO, 0},
    // copies, memsets, allocations and frees are charged by size, in the call
};

static long long base_cost(const char* fn) {
  for (size_t i = 0; i < sizeof(cost_table) / sizeof(cost_table[0]); i++)
    if (!strcmp(cost_table[i].fn, fn)) return cost_table[i].pair ? half_pair_ns(cost_table[i].figure) : call_ns(cost_table[i].figure);
  return 0;
}

// Linear through the points (xs ascending), extrapolated from the nearest
// two beyond them, never below zero.
static double interpolate(const double* xs, const double* ys, int n, double x) {
  int i = 1;
  while (i < n - 1 && x > xs[i]) i++;
  double y = ys[i - 1] + (ys[i] - ys[i - 1]) * (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
  return y > 0 ? y : 0;
}

static long long device_alloc_ns(size_t n) {  // cuMemAlloc or cuMemFree: half the pair
  double x = (double)n < alloc_sizes[0] ? alloc_sizes[0] : (double)n;
  return half_pair_ns((long long)interpolate(alloc_sizes, alloc_free_ns, 3, x));
}
static long long host_alloc_ns(size_t n) { return call_ns((long long)interpolate(host_sizes, host_alloc_figures, 3, (double)n)); }
static long long host_free_ns(size_t n) { return call_ns((long long)interpolate(host_sizes, host_free_figures, 3, (double)n)); }
static long long register_ns(size_t n, double per_gib) { return call_ns((long long)(per_gib * (double)n / (double)(1 << 30))); }

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

// The current call: when it started, what it costs, and the time it must wait
// for before its cost starts (work it synchronizes with); set by ENTER.
static __thread uint64_t call_t0, call_after;
static __thread long long call_cost;
static uint64_t all_busy;  // when the work of every stream ends
// Modelled transfer time of the copies so far (fakecuda_modelled_copy_ns):
// the bandwidth part of the model, which a wall clock cannot check where this
// host's memmove is slower than the modelled link.
static long long modelled_copy_ns;
// The model's time of every costed call so far (fakecuda_charged_ns): from
// the call's start to its modelled end, what its busy-wait waits for. No
// clock reading of the caller's enters it, so a loaded host cannot move it;
// a wait on a stream's timeline is shorter by whatever time the caller spent
// since the work was queued.
static long long charged_ns;

// Time by which calls that moved bytes (or freed the shadow's pages) ran past
// their modelled end (fakecuda_overrun_ns): this host's memmove where it is
// slower than the modelled link, and the kernel's work of giving a freed
// allocation's pages back. A wall clock less this is the model's time for
// the calls.
static void charge(void) {
  uint64_t end = max64(call_t0, call_after) + (uint64_t)call_cost;
  __atomic_fetch_add(&charged_ns, (long long)(end - call_t0), __ATOMIC_RELAXED);
  uint64_t t = now_ns();
  if (call_own_work && t > end) {
    // calls on several threads at once overrun together: the wall clock
    // counts their overlap once, so only the part of [end, t] that no
    // counted overrun covers is added
    pthread_mutex_lock(&mu);
    uint64_t from = max64(end, overrun_until);
    if (t > from) overrun_ns += (long long)(t - from);
    overrun_until = max64(overrun_until, t);
    pthread_mutex_unlock(&mu);
  }
  call_own_work = 0;
  while (now_ns() < end) {
  }
}

// When work queued on s at time t can start on its timeline: after s's
// earlier work and, by the legacy stream's rules, after the blocking streams'
// (for the legacy stream) or the legacy stream's (for a blocking stream).
static uint64_t start_on(stream* s, uint64_t t) {
  context* c = &contexts[s->device];
  uint64_t start = max64(t, s->busy_until);
  if (s == c->legacy)
    start = max64(start, c->blocking_busy);
  else if (!s->non_blocking)
    start = max64(start, c->legacy->busy_until);
  return start;
}

static void occupy(stream* s, uint64_t until) {
  context* c = &contexts[s->device];
  s->busy_until = max64(s->busy_until, until);
  if (s != c->legacy && !s->non_blocking) c->blocking_busy = max64(c->blocking_busy, until);
  all_busy = max64(all_busy, until);
}

// Is host memory [p, p+n) pinned (or managed: the driver reaches it directly)?
static allocation* find_alloc(const void* p, size_t n);
static int pinned_host(const void* p, size_t n) {
  allocation* a = find_alloc(p, n);
  return a && a->kind != MEM_DEVICE;
}

enum { HTOD = 1, DTOH = 2, DTOD = 3, HTOH = 4 };

// Charges a copy of n bytes in direction dir on stream s, from the host side's
// kind (pinned when pinned is set); sync: a synchronous copy.
static void charge_copy(stream* s, size_t n, int dir, int pinned, int sync) {
  double bw = dir == DTOD ? BW_DTOD : pinned ? BW_PINNED : dir == HTOD ? BW_HTOD_PAGEABLE : BW_DTOH_PAGEABLE;
  long long bytes_ns = (long long)((double)n / bw);
  modelled_copy_ns += bytes_ns;
  if (sync) {
    long long latency = dir == HTOD ? T_HTOD_SYNC : dir == DTOD ? T_DTOD_ASYNC_AND_SYNC : T_DTOH_SYNC;
    call_after = start_on(s, call_t0);
    call_cost = call_ns(latency) + bytes_ns;
    occupy(s, call_after + (uint64_t)call_cost);
  } else if (dir == DTOD || pinned) {
    // the latency overlaps the stream's earlier work (copies pipeline), the
    // bytes do not (the link is shared)
    call_cost = call_ns(T_ASYNC_ISSUE);
    long long latency = dir == DTOD ? LATENCY_DTOD : dir == HTOD && n > 8 ? LATENCY_PINNED_HTOD : LATENCY_PINNED;
    uint64_t ready = call_t0 + (uint64_t)call_cost + (uint64_t)latency;
    occupy(s, start_on(s, ready) + (uint64_t)bytes_ns);
  } else if (dir == HTOD && n <= PAGEABLE_HTOD_STAGED_MAX) {
    // staged in the call, then as a pinned copy from the staging buffer
    call_cost = call_ns(T_PAGEABLE_HTOD_STAGED);
    uint64_t ready = call_t0 + (uint64_t)call_cost + LATENCY_PAGEABLE_HTOD_STAGED;
    occupy(s, start_on(s, ready) + (uint64_t)bytes_ns);
  } else {  // pageable: synchronous, in the call
    call_after = start_on(s, call_t0);
    call_cost = call_ns(dir == HTOD ? T_PAGEABLE_HTOD_ASYNC : T_PAGEABLE_DTOH_ASYNC) + bytes_ns;
    occupy(s, call_after + (uint64_t)call_cost);
  }
}

// FAKECUDA_COSTS: unset, empty or "0" is free; "h200" charges the table; any
// other value is a mistake worth stopping for (a typo would measure nothing).
__attribute__((constructor)) static void read_costs(void) {
  const char* env = getenv("FAKECUDA_COSTS");
  if (!env || !*env || !strcmp(env, "0")) return;
  if (strcmp(env, "h200") != 0) {
    fprintf(stderr, "fakecuda: FAKECUDA_COSTS=%s is not a known cost table (known: h200)\n", env);
    abort();
  }
  costs_on = 1;
}

// ---------------------------------------------------------------- translate
// Resolves an address for the driver: device addresses must lie in one live
// allocation and map to the shadow; host pointers are used as they are.
static int resolve(const void* p, size_t n, int want_device, char** out, int* device) {
  if (in_region(p)) {
    allocation* a = find_alloc(p, n);
    if (!a || a->kind != MEM_DEVICE) return E_INVALID_VALUE;
    *out = shadow + ((const char*)p - region);
    if (device) *device = a->device;
    return OK;
  }
  if (want_device > 0) {  // a device address was required
    allocation* a = find_alloc(p, n);
    if (!a || a->kind == MEM_HOST) return E_INVALID_VALUE;
    *out = (char*)p;  // managed memory is host-accessible
    if (device) *device = a->device;
    return OK;
  }
  if (!p && n) return E_INVALID_VALUE;
  *out = (char*)p;
  if (device) *device = -1;
  return OK;
}

// ----------------------------------------------------------------- API: init
CUresult cuInit(unsigned int flags) {
  ENTER("cuInit");
  if (flags != 0) RETURN(E_INVALID_VALUE);
  if (!initialized) {
    const char* env = getenv("FAKECUDA_DEVICES");
    n_devices = env ? atoi(env) : 2;
    if (n_devices < 0) n_devices = 0;
    if (n_devices > MAX_DEVICES) n_devices = MAX_DEVICES;
    size_t size = (size_t)(n_devices ? n_devices : 1) * REGION_PER_DEVICE;
    int fd = memfd_create("fakecuda", 0);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) RETURN(E_OUT_OF_MEMORY);
    region = mmap(NULL, size, PROT_NONE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    shadow = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    close(fd);
    if (region == MAP_FAILED || shadow == MAP_FAILED) RETURN(E_OUT_OF_MEMORY);
    const char* unavailable = getenv("FAKECUDA_UNAVAILABLE_DEVICES");
    const char* reuse = getenv("FAKECUDA_REUSE_ADDRESSES");
    reuse_addresses = reuse && *reuse == '1';
    for (int i = 0; i < n_devices; i++) {
      contexts[i].device = i;
      contexts[i].legacy = new_stream(i, 0, 1);
      bump[i] = 256;  // never hand out the region's first bytes (no device pointer equals a device base)
    }
    for (const char* c = unavailable; c && *c; c++)
      if (*c >= '0' && *c <= '9' && *c - '0' < n_devices) contexts[*c - '0'].unavailable = 1;
    initialized = 1;
  }
  RETURN(OK);
}

CUresult cuDriverGetVersion(int* v) {
  ENTER("cuDriverGetVersion");
  if (!v) RETURN(E_INVALID_VALUE);
  *v = 12040;
  RETURN(OK);
}

CUresult cuDeviceGetCount(int* n) {
  ENTER("cuDeviceGetCount");
  NEED_INIT();
  if (!n) RETURN(E_INVALID_VALUE);
  *n = n_devices;
  RETURN(OK);
}

CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  ENTER("cuDeviceGet");
  NEED_INIT();
  if (!d) RETURN(E_INVALID_VALUE);
  if (ordinal < 0 || ordinal >= n_devices) RETURN(E_INVALID_DEVICE);
  *d = ordinal;
  RETURN(OK);
}

CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
  ENTER("cuDeviceGetName");
  NEED_INIT();
  if (!name || len <= 0) RETURN(E_INVALID_VALUE);
  if (d < 0 || d >= n_devices) RETURN(E_INVALID_DEVICE);
  snprintf(name, (size_t)len, "fakecuda device %d", d);
  RETURN(OK);
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice d) {
  ENTER("cuDeviceTotalMem_v2");
  NEED_INIT();
  if (!bytes) RETURN(E_INVALID_VALUE);
  if (d < 0 || d >= n_devices) RETURN(E_INVALID_DEVICE);
  *bytes = REGION_PER_DEVICE;
  RETURN(OK);
}

CUresult cuDevicePrimaryCtxRetain(void** ctx, CUdevice d) {
  ENTER("cuDevicePrimaryCtxRetain");
  NEED_INIT();
  if (!ctx) RETURN(E_INVALID_VALUE);
  if (d < 0 || d >= n_devices) RETURN(E_INVALID_DEVICE);
  contexts[d].retain_calls++;
  // CUDA_ERROR_DEVICE_UNAVAILABLE: "requested CUDA device is unavailable at
  // the current time ... CU_COMPUTEMODE_EXCLUSIVE_PROCESS or
  // CU_COMPUTEMODE_PROHIBITED" (CUDA Driver API, CUresult)
  if (contexts[d].unavailable) RETURN(E_DEVICE_UNAVAILABLE);
  contexts[d].retains++;
  *ctx = &contexts[d];
  RETURN(OK);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  ENTER("cuDevicePrimaryCtxRelease_v2");
  NEED_INIT();
  if (d < 0 || d >= n_devices) RETURN(E_INVALID_DEVICE);
  if (contexts[d].retains <= 0) RETURN(E_INVALID_CONTEXT);
  contexts[d].retains--;
  RETURN(OK);
}

// Clears a sticky error, the only way out of one short of a new process
// (CUDA Driver API, cuDevicePrimaryCtxReset: "destroy all allocations and
// reset all state on the primary context"; the fake keeps the allocations).
CUresult cuDevicePrimaryCtxReset_v2(CUdevice d) {
  ENTER("cuDevicePrimaryCtxReset_v2");
  NEED_INIT();
  if (d < 0 || d >= n_devices) RETURN(E_INVALID_DEVICE);
  contexts[d].sticky = OK;
  RETURN(OK);
}

// "If there exists a CUDA context stack on the calling CPU thread, this will
// replace the top of that stack with ctx. If ctx is NULL then this will be
// equivalent to popping the top" (CUDA Driver API, cuCtxSetCurrent)
CUresult cuCtxSetCurrent(void* ctx) {
  ENTER("cuCtxSetCurrent");
  NEED_INIT();
  if (!ctx) {
    if (ctx_depth) ctx_depth--;
    RETURN(OK);
  }
  if (!valid_context(ctx)) RETURN(E_INVALID_CONTEXT);
  if (ctx_depth == 0) ctx_depth = 1;
  ctx_stack[ctx_depth - 1] = ctx;
  RETURN(OK);
}

CUresult cuCtxPushCurrent_v2(void* ctx) {
  ENTER("cuCtxPushCurrent_v2");
  NEED_INIT();
  if (!valid_context(ctx)) RETURN(E_INVALID_CONTEXT);
  if (ctx_depth == CTX_STACK_MAX) RETURN(E_OUT_OF_MEMORY);
  ctx_stack[ctx_depth++] = ctx;
  RETURN(OK);
}

// "Pops the current CUDA context from the CPU thread and passes back the old
// context handle in *pctx"; an empty stack is CUDA_ERROR_INVALID_CONTEXT
// (CUDA Driver API, cuCtxPopCurrent)
CUresult cuCtxPopCurrent_v2(void** pctx) {
  ENTER("cuCtxPopCurrent_v2");
  NEED_INIT();
  if (!ctx_depth) RETURN(E_INVALID_CONTEXT);
  context* top = ctx_stack[--ctx_depth];
  if (pctx) *pctx = top;
  RETURN(OK);
}

CUresult cuCtxGetCurrent(void** ctx) {
  ENTER("cuCtxGetCurrent");
  NEED_INIT();
  if (!ctx) RETURN(E_INVALID_VALUE);
  *ctx = current;
  RETURN(OK);
}

CUresult cuCtxGetDevice(CUdevice* d) {
  ENTER("cuCtxGetDevice");
  NEED_CONTEXT();
  if (!d) RETURN(E_INVALID_VALUE);
  *d = current->device;
  RETURN(OK);
}

CUresult cuCtxSynchronize(void) {
  ENTER("cuCtxSynchronize");
  NEED_CONTEXT();
  run_all();
  syncs++;
  if (costs_on) call_after = all_busy;
  RETURN(OK);
}

// --------------------------------------------------------------- API: memory
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  ENTER("cuMemAlloc_v2");
  NEED_CONTEXT();
  if (!p || n == 0) RETURN(E_INVALID_VALUE);
  int d = current->device;
  size_t rounded = (n + 255) & ~(size_t)255;
  char* addr = NULL;
  for (size_t i = 0; reuse_addresses && i < n_freed; i++) {
    if (freed[i].size >= rounded && in_region(freed[i].addr) &&
        (size_t)(freed[i].addr - region) / REGION_PER_DEVICE == (size_t)d) {
      addr = freed[i].addr;
      freed[i].addr += rounded;
      freed[i].size -= rounded;
      break;
    }
  }
  if (!addr) {
    if (bump[d] + rounded > REGION_PER_DEVICE) RETURN(E_OUT_OF_MEMORY);
    addr = region + (size_t)d * REGION_PER_DEVICE + bump[d];
    bump[d] += rounded;  // without reuse, a stale pointer stays invalid
  }
  add_alloc(addr, n, d, MEM_DEVICE);
  live_bytes += (long long)n;
  if (costs_on) call_cost = device_alloc_ns(n);
  *p = (CUdeviceptr)(uintptr_t)addr;
  RETURN(OK);
}

static CUresult free_host(void* p, int kind);

CUresult cuMemFree_v2(CUdeviceptr p) {
  ENTER("cuMemFree_v2");
  NEED_CONTEXT();
  allocation* a = find_alloc((void*)(uintptr_t)p, 0);
  // managed memory is freed with cuMemFree too, as on a real driver
  if (a && a->kind == MEM_MANAGED) RETURN(free_host((void*)(uintptr_t)p, MEM_MANAGED));
  if (!a || a->kind != MEM_DEVICE || a->addr != (char*)(uintptr_t)p) RETURN(E_INVALID_VALUE);
  run_all();  // cuMemFree synchronizes
  if (costs_on) call_after = all_busy, call_cost = device_alloc_ns(a->size);
  live_bytes -= (long long)a->size;
  // give the pages back (the address range stays reserved and invalid)
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char* s = shadow + (a->addr - region);
  uintptr_t start = ((uintptr_t)s + page - 1) & ~(page - 1), end = ((uintptr_t)s + a->size) & ~(page - 1);
  if (end > start) {
    madvise((void*)start, end - start, MADV_REMOVE);
    call_own_work = 1;  // the shadow's pages: the fake's bookkeeping, not the driver's cost
  }
  if (reuse_addresses) {
    if (n_freed == cap_freed) {
      cap_freed = cap_freed ? 2 * cap_freed : 64;
      freed = realloc(freed, cap_freed * sizeof(free_range));
    }
    freed[n_freed++] = (free_range){a->addr, (a->size + 255) & ~(size_t)255};
  }
  remove_alloc(a);
  RETURN(OK);
}

static CUresult host_alloc(void** p, size_t n, const char* fn, int kind) {
  (void)fn;
  if (!p || n == 0) return E_INVALID_VALUE;
  void* m = calloc(1, n);
  if (!m) return E_OUT_OF_MEMORY;
  add_alloc(m, n, current ? current->device : 0, kind);
  if (costs_on) call_cost = kind == MEM_MANAGED ? device_alloc_ns(n) : host_alloc_ns(n);
  *p = m;
  return OK;
}

CUresult cuMemAllocHost_v2(void** p, size_t n) {
  ENTER("cuMemAllocHost_v2");
  NEED_CONTEXT();
  RETURN(host_alloc(p, n, "cuMemAllocHost_v2", MEM_HOST));
}

CUresult cuMemHostAlloc(void** p, size_t n, unsigned int flags) {
  ENTER("cuMemHostAlloc");
  NEED_CONTEXT();
  // CU_MEMHOSTALLOC_PORTABLE (1), _DEVICEMAP (2), _WRITECOMBINED (4). With
  // unified addressing "all host memory allocated ... using cuMemAllocHost()
  // and cuMemHostAlloc() is always directly accessible from all contexts on
  // all devices ... regardless of whether or not the flags
  // CU_MEMHOSTALLOC_PORTABLE and CU_MEMHOSTALLOC_DEVICEMAP are specified"
  // (CUDA Driver API, "Unified Addressing"): the flags are kept and answered
  // (fakecuda_host_flags), the memory is mapped at its host address either way.
  if (flags & ~7u) RETURN(E_INVALID_VALUE);
  CUresult r = host_alloc(p, n, "cuMemHostAlloc", MEM_HOST);
  if (r == OK) find_alloc(*p, 0)->flags = flags;
  RETURN(r);
}

CUresult cuMemAllocManaged(CUdeviceptr* p, size_t n, unsigned int flags) {
  ENTER("cuMemAllocManaged");
  NEED_CONTEXT();
  (void)flags;
  void* m;
  CUresult r = host_alloc(&m, n, "cuMemAllocManaged", MEM_MANAGED);
  if (r == OK) *p = (CUdeviceptr)(uintptr_t)m;
  RETURN(r);
}

static CUresult free_host(void* p, int kind) {
  allocation* a = find_alloc(p, 0);
  if (!a || a->kind != kind || a->addr != p || a->registered) return E_INVALID_VALUE;
  run_all();
  if (costs_on) call_after = all_busy, call_cost = kind == MEM_MANAGED ? device_alloc_ns(a->size) : host_free_ns(a->size);
  remove_alloc(a);
  free(p);
  return OK;
}

CUresult cuMemFreeHost(void* p) {
  ENTER("cuMemFreeHost");
  NEED_CONTEXT();
  RETURN(free_host(p, MEM_HOST));
}

enum { E_NOT_FOUND = 500, E_HOST_MEMORY_ALREADY_REGISTERED = 712, E_HOST_MEMORY_NOT_REGISTERED = 713 };

// Page-locks host memory the caller owns (CUDA Driver API, cuMemHostRegister):
// flags PORTABLE (1), DEVICEMAP (2), IOMEMORY (4), READ_ONLY (8); a range that
// overlaps memory already registered (or allocated pinned) is
// CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED.
CUresult cuMemHostRegister_v2(void* p, size_t n, unsigned int flags) {
  ENTER("cuMemHostRegister_v2");
  NEED_CONTEXT();
  if (!p || n == 0 || (flags & ~15u) || in_region(p)) RETURN(E_INVALID_VALUE);
  size_t i = first_after((const char*)p + n - 1);
  if (i > 0 && allocs[i - 1].addr + allocs[i - 1].size > (char*)p) RETURN(E_HOST_MEMORY_ALREADY_REGISTERED);
  add_alloc(p, n, current->device, MEM_HOST);
  allocation* a = find_alloc(p, 0);
  a->flags = flags;
  a->registered = 1;
  if (costs_on) call_cost = register_ns(n, T_REGISTER_PER_GIB);
  RETURN(OK);
}

// "Unmaps the memory range whose base address is specified by p" (CUDA Driver
// API, cuMemHostUnregister): p must be the base of a registration.
CUresult cuMemHostUnregister(void* p) {
  ENTER("cuMemHostUnregister");
  NEED_CONTEXT();
  allocation* a = find_alloc(p, 0);
  if (!a || !a->registered || a->addr != p) RETURN(E_HOST_MEMORY_NOT_REGISTERED);
  run_all();  // copies queued on the memory land before it is unpinned
  if (costs_on) call_after = all_busy, call_cost = register_ns(a->size, T_UNREGISTER_PER_GIB);
  remove_alloc(a);
  RETURN(OK);
}

// Free and total memory of the current context's device: free is the address
// space cuMemAlloc has not handed out yet.
CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  ENTER("cuMemGetInfo_v2");
  NEED_CONTEXT();
  if (!free_bytes || !total) RETURN(E_INVALID_VALUE);
  *free_bytes = REGION_PER_DEVICE - bump[current->device];
  *total = REGION_PER_DEVICE;
  RETURN(OK);
}

// The allocation holding p (CUDA Driver API, cuMemGetAddressRange: "Both
// parameters pbase and psize are optional"); a pointer no allocation holds is
// CUDA_ERROR_NOT_FOUND.
CUresult cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* size, CUdeviceptr p) {
  ENTER("cuMemGetAddressRange_v2");
  NEED_CONTEXT();
  allocation* a = find_alloc((void*)(uintptr_t)p, 0);
  if (!a || a->kind == MEM_HOST) RETURN(E_NOT_FOUND);
  if (base) *base = (CUdeviceptr)(uintptr_t)a->addr;
  if (size) *size = a->size;
  RETURN(OK);
}

// --------------------------------------------------------------- API: copies

static CUresult copy(void* dst, const void* src, size_t n, int dst_dev, int src_dev, void* sh, int sync) {
  stream* s = stream_of(sync ? NULL : sh);
  if (!s) return E_INVALID_HANDLE;
  if (n == 0) return OK;
  char *d, *sr;
  int dd, sd;
  CUresult r = resolve(dst, n, dst_dev, &d, &dd);
  if (r == OK) r = resolve(src, n, src_dev, &sr, &sd);
  if (r != OK) return r;
  int dir = in_region(dst) ? (in_region(src) ? DTOD : HTOD) : (in_region(src) ? DTOH : HTOH);
  copy_calls[dir]++;
  int pinned = pinned_host(dir == HTOD ? src : dst, n);
  if (costs_on) charge_copy(s, n, dir, pinned, sync);
  char* staged = NULL;
  if (!sync && dir == HTOD && !pinned) {
    // CUDA Driver API, "API synchronization behavior", Memcpy, Asynchronous:
    // "For transfers from pageable host memory to device memory, host memory
    // is copied to a staging buffer immediately (no device synchronization
    // is performed)": the caller may reuse or free the source once the call
    // returns, while the device memory changes only in stream order
    if (!(staged = malloc(n))) return E_OUT_OF_MEMORY;
    memcpy(staged, sr, n);
    sr = staged;
  }
  op o = {.kind = OP_COPY, .dst = d, .src = sr, .n = n, .dir = dir, .staged = staged};
  submit(s, o);
  if (sync) {  // synchronous copies are ordered on the legacy stream and wait for it
    sync_stream(s);
    syncs++;
  }
  return OK;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  ENTER("cuMemcpyHtoD_v2");
  NEED_CONTEXT();
  RETURN(copy((void*)(uintptr_t)dst, src, n, 1, 0, NULL, 1));
}
CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  ENTER("cuMemcpyDtoH_v2");
  NEED_CONTEXT();
  RETURN(copy(dst, (void*)(uintptr_t)src, n, 0, 1, NULL, 1));
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  ENTER("cuMemcpyDtoD_v2");
  NEED_CONTEXT();
  RETURN(copy((void*)(uintptr_t)dst, (void*)(uintptr_t)src, n, 1, 1, NULL, 1));
}
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  ENTER("cuMemcpy");
  NEED_CONTEXT();
  RETURN(copy((void*)(uintptr_t)dst, (void*)(uintptr_t)src, n, 0, 0, NULL, 1));
}
CUresult cuMemcpyPeer(CUdeviceptr dst, void* dctx, CUdeviceptr src, void* sctx, size_t n) {
  ENTER("cuMemcpyPeer");
  NEED_CONTEXT();
  if (!dctx || !sctx) RETURN(E_INVALID_CONTEXT);
  RETURN(copy((void*)(uintptr_t)dst, (void*)(uintptr_t)src, n, 1, 1, NULL, 1));
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, void* s) {
  ENTER("cuMemcpyHtoDAsync_v2");
  NEED_CONTEXT();
  RETURN(copy((void*)(uintptr_t)dst, src, n, 1, 0, s, 0));
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, void* s) {
  ENTER("cuMemcpyDtoHAsync_v2");
  NEED_CONTEXT();
  RETURN(copy(dst, (void*)(uintptr_t)src, n, 0, 1, s, 0));
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void* s) {
  ENTER("cuMemcpyDtoDAsync_v2");
  NEED_CONTEXT();
  RETURN(copy((void*)(uintptr_t)dst, (void*)(uintptr_t)src, n, 1, 1, s, 0));
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, void* s) {
  ENTER("cuMemcpyAsync");
  NEED_CONTEXT();
  RETURN(copy((void*)(uintptr_t)dst, (void*)(uintptr_t)src, n, 0, 0, s, 0));
}
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, void* dctx, CUdeviceptr src, void* sctx, size_t n, void* s) {
  ENTER("cuMemcpyPeerAsync");
  NEED_CONTEXT();
  if (!dctx || !sctx) RETURN(E_INVALID_CONTEXT);
  RETURN(copy((void*)(uintptr_t)dst, (void*)(uintptr_t)src, n, 1, 1, s, 0));
}

static CUresult memset8(CUdeviceptr dst, unsigned char v, size_t n, void* sh, int sync) {
  stream* s = stream_of(sync ? NULL : sh);
  if (!s) return E_INVALID_HANDLE;
  char* d;
  CUresult r = resolve((void*)(uintptr_t)dst, n, 1, &d, NULL);
  if (r != OK) return r;
  if (costs_on) charge_copy(s, n, DTOD, 0, sync);  // a memset costs as a device-to-device copy
  op o = {.kind = OP_MEMSET, .dst = d, .n = n, .value = v};
  submit(s, o);
  if (sync) sync_stream(s);
  return OK;
}
CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n) {
  ENTER("cuMemsetD8_v2");
  NEED_CONTEXT();
  RETURN(memset8(dst, v, n, NULL, 1));
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, void* s) {
  ENTER("cuMemsetD8Async");
  NEED_CONTEXT();
  RETURN(memset8(dst, v, n, s, 0));
}

// -------------------------------------------------------------- API: streams
CUresult cuStreamCreate(void** out, unsigned int flags) {
  ENTER("cuStreamCreate");
  NEED_CONTEXT();
  if (!out) RETURN(E_INVALID_VALUE);
  stream* s = new_stream(current->device, (flags & 1) != 0 /* CU_STREAM_NON_BLOCKING */, 0);
  set_add(&all_streams, s);
  live_streams++;
  *out = s;
  RETURN(OK);
}

CUresult cuStreamDestroy_v2(void* sp) {
  ENTER("cuStreamDestroy_v2");
  NEED_CONTEXT();
  if (is_default_handle(sp)) RETURN(E_INVALID_HANDLE);
  stream* s = stream_of(sp);
  if (!s) RETURN(E_INVALID_HANDLE);
  // pending work is not completed here: it stays queued and runs at a later
  // synchronization point (CUDA Driver API, cuStreamDestroy)
  s->live = 0;
  live_streams--;
  RETURN(OK);
}

CUresult cuStreamSynchronize(void* sp) {
  ENTER("cuStreamSynchronize");
  NEED_CONTEXT();
  stream* s = stream_of(sp);
  if (!s) RETURN(E_INVALID_HANDLE);
  sync_stream(s);
  syncs++;
  if (costs_on) call_after = start_on(s, 0);
  RETURN(OK);
}

CUresult cuStreamQuery(void* sp) {
  ENTER("cuStreamQuery");
  NEED_CONTEXT();
  stream* s = stream_of(sp);
  if (!s) RETURN(E_INVALID_HANDLE);
  RETURN(s->done == s->n_ops ? OK : E_NOT_READY);
}

CUresult cuStreamGetCtx(void* sp, void** ctx) {
  ENTER("cuStreamGetCtx");
  NEED_CONTEXT();
  stream* s = stream_of(sp);
  if (!s || !ctx) RETURN(s ? E_INVALID_VALUE : E_INVALID_HANDLE);
  *ctx = &contexts[s->device];
  RETURN(OK);
}

CUresult cuStreamWaitEvent(void* sp, void* ep, unsigned int flags) {
  ENTER("cuStreamWaitEvent");
  NEED_CONTEXT();
  (void)flags;
  stream* s = stream_of(sp);
  event* e = ep;
  if (!s || !valid_event(e)) RETURN(E_INVALID_HANDLE);
  op o = {.kind = OP_WAIT, .ev = e, .seq = e->generation};
  submit(s, o);
  if (costs_on && e->generation) occupy(s, e->done_at);
  RETURN(OK);
}

// --------------------------------------------------------------- API: events
CUresult cuEventCreate(void** out, unsigned int flags) {
  ENTER("cuEventCreate");
  NEED_CONTEXT();
  (void)flags;
  if (!out) RETURN(E_INVALID_VALUE);
  event* e = calloc(1, sizeof(event));
  e->device = current->device;
  e->live = 1;
  set_add(&all_events, e);
  live_events++;
  *out = e;
  RETURN(OK);
}

CUresult cuEventRecord(void* ep, void* sp) {
  ENTER("cuEventRecord");
  NEED_CONTEXT();
  event* e = ep;
  stream* s = stream_of(sp);
  if (!valid_event(e) || !s) RETURN(E_INVALID_HANDLE);
  // "hStream and hEvent must be from the same context" (CUDA Driver API,
  // cuEventRecord); a default-stream handle means the current context's
  if (s->device != e->device) RETURN(E_INVALID_HANDLE);
  e->generation++;
  e->recorded_on = s;
  op o = {.kind = OP_RECORD, .ev = e, .seq = e->generation};
  submit(s, o);
  if (costs_on) e->done_at = start_on(s, call_t0 + (uint64_t)call_cost);
  RETURN(OK);
}

CUresult cuEventQuery(void* ep) {
  ENTER("cuEventQuery");
  NEED_CONTEXT();
  event* e = ep;
  if (!valid_event(e)) RETURN(E_INVALID_HANDLE);
  RETURN(e->completed >= e->generation ? OK : E_NOT_READY);
}

CUresult cuEventSynchronize(void* ep) {
  ENTER("cuEventSynchronize");
  NEED_CONTEXT();
  event* e = ep;
  if (!valid_event(e)) RETURN(E_INVALID_HANDLE);
  op wait = {.kind = OP_WAIT, .ev = e, .seq = e->generation};
  run_op(&wait);
  syncs++;
  if (costs_on && e->generation) call_after = e->done_at;
  RETURN(OK);
}

CUresult cuEventDestroy_v2(void* ep) {
  ENTER("cuEventDestroy_v2");
  NEED_CONTEXT();
  event* e = ep;
  if (!valid_event(e)) RETURN(E_INVALID_HANDLE);
  e->live = 0;
  live_events--;
  RETURN(OK);
}

// ------------------------------------------------------ API: pointer queries
enum {
  ATTR_CONTEXT = 1,
  ATTR_MEMORY_TYPE = 2,
  ATTR_DEVICE_POINTER = 3,
  ATTR_HOST_POINTER = 4,
  ATTR_IS_MANAGED = 8,
  ATTR_DEVICE_ORDINAL = 9,
  ATTR_RANGE_START = 11,
  ATTR_RANGE_SIZE = 12,
  ATTR_MAPPED = 13,
};

CUresult cuPointerGetAttribute(void* data, int attribute, CUdeviceptr p) {
  ENTER("cuPointerGetAttribute");
  NEED_CONTEXT();
  if (!data) RETURN(E_INVALID_VALUE);
  allocation* a = find_alloc((void*)(uintptr_t)p, 0);
  if (!a) RETURN(E_INVALID_VALUE);
  switch (attribute) {
    case ATTR_CONTEXT:
      *(void**)data = &contexts[a->device];
      break;
    case ATTR_MEMORY_TYPE:
      *(unsigned int*)data = (unsigned int)(a->kind == MEM_MANAGED ? MEM_DEVICE : a->kind);
      break;
    case ATTR_DEVICE_POINTER:
      *(CUdeviceptr*)data = p;
      break;
    case ATTR_HOST_POINTER:
      if (a->kind == MEM_DEVICE) RETURN(E_INVALID_VALUE);
      *(void**)data = (void*)(uintptr_t)p;
      break;
    case ATTR_IS_MANAGED:
      *(int*)data = a->kind == MEM_MANAGED;
      break;
    case ATTR_DEVICE_ORDINAL:
      *(int*)data = a->device;
      break;
    case ATTR_RANGE_START:
      *(CUdeviceptr*)data = (CUdeviceptr)(uintptr_t)a->addr;
      break;
    case ATTR_RANGE_SIZE:
      *(size_t*)data = a->size;
      break;
    case ATTR_MAPPED:
      *(int*)data = 1;
      break;
    default:
      RETURN(E_INVALID_VALUE);
  }
  RETURN(OK);
}

// Several attributes of one pointer in one call (CUDA Driver API,
// cuPointerGetAttributes): unlike cuPointerGetAttribute it "will not return
// an error when the ptr encountered is not a valid CUDA pointer. Instead, the
// attributes are assigned default NULL values and CUDA_SUCCESS is returned";
// the attributes it does not know, or a NULL list, are CUDA_ERROR_INVALID_VALUE.
CUresult cuPointerGetAttributes(unsigned int n, int* attributes, void** data, CUdeviceptr p) {
  ENTER("cuPointerGetAttributes");
  NEED_CONTEXT();
  if (!attributes || !data) RETURN(E_INVALID_VALUE);
  allocation* a = find_alloc((void*)(uintptr_t)p, 0);
  for (unsigned int i = 0; i < n; i++) {
    if (!data[i]) RETURN(E_INVALID_VALUE);
    switch (attributes[i]) {
      case ATTR_MEMORY_TYPE:
        *(unsigned int*)data[i] = !a ? 0u : (unsigned int)(a->kind == MEM_MANAGED ? MEM_DEVICE : a->kind);
        break;
      case ATTR_IS_MANAGED:
        *(int*)data[i] = a && a->kind == MEM_MANAGED;
        break;
      case ATTR_DEVICE_ORDINAL:
        *(int*)data[i] = a ? a->device : 0;
        break;
      case ATTR_RANGE_START:
        *(CUdeviceptr*)data[i] = a ? (CUdeviceptr)(uintptr_t)a->addr : 0;
        break;
      case ATTR_RANGE_SIZE:
        *(size_t*)data[i] = a ? a->size : 0;
        break;
      default:
        RETURN(E_INVALID_VALUE);
    }
  }
  RETURN(OK);
}

// ------------------------------------------------------------- API: errors
static const struct {
  int code;
  const char *name, *text;
} error_names[] = {
    {OK, "CUDA_SUCCESS", "no error"},
    {E_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {E_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {E_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {E_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {E_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {E_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {E_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {E_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {E_HOST_MEMORY_ALREADY_REGISTERED, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
     "part or all of the requested memory range is already mapped"},
    {E_HOST_MEMORY_NOT_REGISTERED, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region"},
    {E_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {E_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};

CUresult cuGetErrorName(CUresult r, const char** s) {
  for (size_t i = 0; i < sizeof(error_names) / sizeof(error_names[0]); i++) {
    if (error_names[i].code == r) {
      *s = error_names[i].name;
      return OK;
    }
  }
  *s = NULL;
  return E_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult r, const char** s) {
  for (size_t i = 0; i < sizeof(error_names) / sizeof(error_names[0]); i++) {
    if (error_names[i].code == r) {
      *s = error_names[i].text;
      return OK;
    }
  }
  *s = NULL;
  return E_INVALID_VALUE;
}

// -------------------------------------------------- counters, fault injection
#define LOCKED(expr)            \
  pthread_mutex_lock(&mu);      \
  long long v_ = (expr);        \
  pthread_mutex_unlock(&mu);    \
  return v_

static long long count_live(int kind) {
  long long n = 0;
  for (size_t i = 0; i < n_allocs; i++) n += allocs[i].kind == kind;
  return n;
}

long long fakecuda_live_allocations(void) { LOCKED(count_live(MEM_DEVICE)); }
long long fakecuda_live_host_allocations(void) { LOCKED(count_live(MEM_HOST) + count_live(MEM_MANAGED)); }
long long fakecuda_live_bytes(void) { LOCKED(live_bytes); }
long long fakecuda_live_events(void) { LOCKED(live_events); }
long long fakecuda_live_streams(void) { LOCKED(live_streams); }
long long fakecuda_bytes_copied(int direction) { LOCKED(direction >= 1 && direction <= 4 ? bytes_copied[direction] : -1); }
long long fakecuda_copy_calls(int direction) { LOCKED(direction >= 1 && direction <= 4 ? copy_calls[direction] : -1); }
long long fakecuda_sync_count(void) { LOCKED(syncs); }
int fakecuda_device_count(void) { LOCKED(n_devices); }

long long fakecuda_call_count(const char* fn) {
  pthread_mutex_lock(&mu);
  call_stat* s = stat_for(fn);
  long long n = s ? s->calls : -1;
  pthread_mutex_unlock(&mu);
  return n;
}

void fakecuda_reset_counters(void) {
  pthread_mutex_lock(&mu);
  memset(bytes_copied, 0, sizeof(bytes_copied));
  memset(copy_calls, 0, sizeof(copy_calls));
  syncs = 0;
  modelled_copy_ns = 0;
  overrun_ns = 0;
  __atomic_store_n(&charged_ns, 0, __ATOMIC_RELAXED);
  for (int i = 0; i < n_stats; i++) stats[i].calls = 0, stats[i].fail_at = 0;
  pthread_mutex_unlock(&mu);
}

void fakecuda_fail_nth(const char* fn, int n, int error) {
  pthread_mutex_lock(&mu);
  call_stat* s = stat_for(fn);
  if (s) {
    s->fail_at = s->calls + n;
    s->error = error;
  }
  pthread_mutex_unlock(&mu);
}

void fakecuda_clear_faults(void) {
  pthread_mutex_lock(&mu);
  for (int i = 0; i < n_stats; i++) stats[i].fail_at = 0;
  pthread_mutex_unlock(&mu);
}

long long fakecuda_primary_ctx_retains(int device) {
  LOCKED(device >= 0 && device < n_devices ? contexts[device].retain_calls : -1);
}
int fakecuda_context_depth(void) { return ctx_depth; }
int fakecuda_sticky_error(int device) { LOCKED(device >= 0 && device < n_devices ? contexts[device].sticky : -1); }
long long fakecuda_host_flags(void* p) {
  pthread_mutex_lock(&mu);
  allocation* a = find_alloc(p, 0);
  long long f = a && a->kind == MEM_HOST ? (long long)a->flags : -1;
  pthread_mutex_unlock(&mu);
  return f;
}

int fakecuda_device_of(unsigned long long p) {
  pthread_mutex_lock(&mu);
  allocation* a = find_alloc((void*)(uintptr_t)p, 0);
  int d = a ? a->device : -1;
  pthread_mutex_unlock(&mu);
  return d;
}

int fakecuda_costs_enabled(void) { return costs_on; }
long long fakecuda_modelled_copy_ns(void) { LOCKED(modelled_copy_ns); }
long long fakecuda_overrun_ns(void) { LOCKED(overrun_ns); }
long long fakecuda_charged_ns(void) { return __atomic_load_n(&charged_ns, __ATOMIC_RELAXED); }

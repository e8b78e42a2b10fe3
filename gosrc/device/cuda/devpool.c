// Device memory that godevarrow allocates (copies to a device) comes from a
// pool of blocks per device. A cuMemAlloc + cuMemFree pair costs about 90 µs
// on a GPU whatever the size below a few MiB (docs/cuda.md, "Driver calls"),
// ten times a small copy, so a small array copied to the device and released
// paid mostly for its allocation.
//
// The rules:
//   - Allocations of up to DEVPOOL_MAX_BLOCK bytes are made in size classes
//     (powers of two from DEVPOOL_MIN_BLOCK), so a freed block fits any later
//     request of its class; larger ones are allocated and freed exactly, as
//     before (their copy costs far more than their allocation).
//   - A freed block is kept while the device's idle blocks stay within
//     DEVPOOL_MAX_IDLE bytes; beyond that it is freed.
//   - cuMemFree waits for the device's work before it frees (work queued
//     before the free may still read the memory); the pool keeps that
//     promise lazily: a block freed after the last synchronization of the
//     device's context is reused only after a cuCtxSynchronize, made by the
//     allocation that reuses it (one synchronization makes every block freed
//     before it reusable). Work queued after the free is the releaser's
//     mistake, as it is with cuMemFree.
//   - An allocation that the driver refuses for lack of memory frees the
//     device's idle blocks and tries once more.
//   - gda_cuda_devpool_release frees every idle block (device.ReleasePools:
//     leak checks, and programs that want the memory back, or that are about
//     to reset a device's primary context, which would invalidate them).
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "cuda.h"
#include "cuda_internal.h"

enum {
  DEVPOOL_MIN_SHIFT = 9,   // 512 B: the smallest class
  DEVPOOL_MAX_SHIFT = 22,  // 4 MiB: the largest
  DEVPOOL_CLASSES = DEVPOOL_MAX_SHIFT - DEVPOOL_MIN_SHIFT + 1,
};
#define DEVPOOL_MAX_BLOCK ((size_t)1 << DEVPOOL_MAX_SHIFT)
#define DEVPOOL_MAX_IDLE ((size_t)64 << 20)  // idle bytes kept per device
#define CUDA_ERROR_OUT_OF_MEMORY 2

typedef struct devblock {
  struct devblock* next;
  CUdeviceptr p;
  int dev;
  uint64_t freed_after;  // the device's synchronizations started before it was freed
} devblock;

typedef struct {
  devblock* idle[DEVPOOL_CLASSES];  // newest first
  size_t idle_bytes;
  uint64_t syncs_started, syncs_done;  // cuCtxSynchronize calls of this pool
} devpool;

static devpool* pools;  // per device, made on first use
static int n_pools;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic long long idle_blocks, idle_bytes;

// The class of n bytes (-1: too large to pool).
static int class_of(size_t n) {
  if (n > DEVPOOL_MAX_BLOCK) return -1;
  int c = 0;
  while (((size_t)1 << (c + DEVPOOL_MIN_SHIFT)) < n) c++;
  return c;
}
static size_t class_size(int c) { return (size_t)1 << (c + DEVPOOL_MIN_SHIFT); }

// dev's pool (mu held), NULL when there is none (out of memory, bad device).
static devpool* pool_of(int dev) {
  if (!pools) {
    int n = 0;
    const char* call;
    if (gda_cuda_device_count(&n, &call) != GDA_CUDA_SUCCESS || n <= 0) return NULL;
    if (!(pools = calloc((size_t)n, sizeof(devpool)))) return NULL;
    n_pools = n;
  }
  return dev >= 0 && dev < n_pools ? &pools[dev] : NULL;
}

// An idle block of class c of dev, reusable now: one freed before the last
// synchronization, else the newest after one more. 0 when there is none.
static CUresult take(int dev, int c, CUdeviceptr* out, const char** call) {
  pthread_mutex_lock(&mu);
  devpool* pool = pool_of(dev);
  devblock *b = pool ? pool->idle[c] : NULL, **at = pool ? &pool->idle[c] : NULL;
  for (devblock** q = at; q && *q; q = &(*q)->next) {
    if ((*q)->freed_after < pool->syncs_done) {  // clean: take it
      b = *q;
      at = q;
      break;
    }
  }
  if (!b) {
    pthread_mutex_unlock(&mu);
    *out = 0;
    return GDA_CUDA_SUCCESS;
  }
  *at = b->next;
  pool->idle_bytes -= class_size(c);
  idle_blocks--;
  idle_bytes -= (long long)class_size(c);
  int dirty = b->freed_after >= pool->syncs_done;
  uint64_t sync = dirty ? ++pool->syncs_started : 0;
  pthread_mutex_unlock(&mu);
  CUresult r = GDA_CUDA_SUCCESS;
  if (dirty) {
    r = gda_cuda_ctx_sync(dev, call);
    pthread_mutex_lock(&mu);
    if (r == GDA_CUDA_SUCCESS && sync > pool->syncs_done) pool->syncs_done = sync;
    pthread_mutex_unlock(&mu);
  }
  if (r != GDA_CUDA_SUCCESS) {
    // the synchronization's error is the one to report; the block, whose
    // earlier work is in doubt, goes back to the driver
    const char* ignored;
    gda_cuda_mem_free(dev, b->p, &ignored);
    free(b);
    *out = 0;
    return r;
  }
  *out = b->p;
  free(b);
  return GDA_CUDA_SUCCESS;
}

// Keeps p (a block of class c) when the pool has room: 1 when kept.
static int keep(int dev, int c, CUdeviceptr p) {
  devblock* b = malloc(sizeof(*b));
  if (!b) return 0;
  pthread_mutex_lock(&mu);
  devpool* pool = pool_of(dev);
  int room = pool && pool->idle_bytes + class_size(c) <= DEVPOOL_MAX_IDLE;
  if (room) {
    *b = (devblock){pool->idle[c], p, dev, pool->syncs_started};
    pool->idle[c] = b;
    pool->idle_bytes += class_size(c);
    idle_blocks++;
    idle_bytes += (long long)class_size(c);
  }
  pthread_mutex_unlock(&mu);
  if (!room) free(b);
  return room;
}

// Frees the idle blocks of dev (every device when dev < 0).
static void release(int dev) {
  devblock* out = NULL;
  pthread_mutex_lock(&mu);
  for (int d = 0; pools && d < n_pools; d++) {
    if (dev >= 0 && d != dev) continue;
    for (int c = 0; c < DEVPOOL_CLASSES; c++) {
      while (pools[d].idle[c]) {
        devblock* b = pools[d].idle[c];
        pools[d].idle[c] = b->next;
        b->next = out;
        out = b;
        idle_blocks--;
        idle_bytes -= (long long)class_size(c);
      }
    }
    pools[d].idle_bytes = 0;
  }
  pthread_mutex_unlock(&mu);
  while (out) {
    devblock* b = out;
    out = b->next;
    const char* call;
    gda_cuda_mem_free(b->dev, b->p, &call);  // a failure leaves nothing to do
    free(b);
  }
}

void gda_cuda_devpool_release(void) { release(-1); }

void gda_cuda_devpool_idle(long long* blocks, long long* bytes) {
  *blocks = idle_blocks;
  *bytes = idle_bytes;
}

CUresult gda_cuda_alloc(int dev, size_t n, CUdeviceptr* out, const char** call) {
  if (n == 0) n = 1;
  int c = class_of(n);
  CUresult r;
  if (c >= 0) {
    if ((r = take(dev, c, out, call)) != GDA_CUDA_SUCCESS) return r;
    if (*out) {
      gda_cuda_own_set(*out, n, dev);
      return GDA_CUDA_SUCCESS;
    }
  }
  size_t size = c >= 0 ? class_size(c) : n;
  r = gda_cuda_mem_alloc(dev, size, out, call);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    release(dev);
    r = gda_cuda_mem_alloc(dev, size, out, call);
  }
  if (r == GDA_CUDA_SUCCESS) gda_cuda_own_set(*out, n, dev);
  return r;
}

CUresult gda_cuda_free(int dev, CUdeviceptr p, const char** call) {
  // forgotten first: the address may be handed out again
  size_t n = gda_cuda_own_forget(p);
  int c = n ? class_of(n) : -1;
  if (c >= 0 && keep(dev, c, p)) return GDA_CUDA_SUCCESS;
  return gda_cuda_mem_free(dev, p, call);
}

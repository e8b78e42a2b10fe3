#define _DEFAULT_SOURCE  // pthread_rwlock_t under -std=c11
#include "cuda.h"
#include "cuda_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

// The bound driver entry points.
static struct {
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxPushCurrent_v2)(CUcontext);
  CUresult (*cuCtxPopCurrent_v2)(CUcontext*);
  CUresult (*cuCtxGetDevice)(CUdevice*);
  CUresult (*cuCtxGetCurrent)(CUcontext*);
  CUresult (*cuStreamGetCtx)(CUstream, CUcontext*);
  CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuMemAllocHost_v2)(void**, size_t);
  CUresult (*cuMemFreeHost)(void*);
  CUresult (*cuMemHostRegister_v2)(void*, size_t, unsigned int);
  CUresult (*cuMemHostUnregister)(void*);
  CUresult (*cuMemcpyHtoDAsync_v2)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync_v2)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync_v2)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
  CUresult (*cuStreamCreate)(CUstream*, unsigned int);
  CUresult (*cuStreamDestroy_v2)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned int);
  CUresult (*cuEventCreate)(CUevent*, unsigned int);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventDestroy_v2)(CUevent);
  CUresult (*cuPointerGetAttribute)(void*, int, CUdeviceptr);
  CUresult (*cuPointerGetAttributes)(unsigned int, int*, void**, CUdeviceptr);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
} cu;

static pthread_once_t open_once = PTHREAD_ONCE_INIT;
static const char* open_error;
static const char* library_name;
static int device_count;
// The primary context of each device, retained on the device's first use
// and kept for the process lifetime: a device nobody uses gets no context,
// and one that refuses (exclusive-process or prohibited compute mode) makes
// only itself unavailable.
static CUcontext* contexts;
static pthread_mutex_t retain_mu = PTHREAD_MUTEX_INITIALIZER;

static void open_driver(void) {
  const char* name = getenv("GODEVARROW_LIBCUDA");
  if (!name || !*name) name = "libcuda.so.1";
  library_name = name;
  void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    static char msg[512];
    const char* why = dlerror();
    snprintf(msg, sizeof(msg), "the driver library could not be loaded (%s)", why ? why : "dlopen failed");
    open_error = msg;
    return;
  }
#define BIND(fn)                                                   \
  if (!(*(void**)(&cu.fn) = dlsym(lib, #fn))) {                    \
    open_error = "the CUDA driver library lacks the function " #fn; \
    return;                                                        \
  }
  BIND(cuInit) BIND(cuDriverGetVersion) BIND(cuDeviceGetCount) BIND(cuDeviceGet) BIND(cuDeviceGetName)
  BIND(cuDevicePrimaryCtxRetain) BIND(cuCtxPushCurrent_v2) BIND(cuCtxPopCurrent_v2) BIND(cuCtxGetCurrent)
  BIND(cuCtxGetDevice) BIND(cuStreamGetCtx) BIND(cuMemAlloc_v2) BIND(cuMemFree_v2) BIND(cuCtxSynchronize)
  BIND(cuMemAllocHost_v2) BIND(cuMemFreeHost) BIND(cuMemHostRegister_v2) BIND(cuMemHostUnregister)
  BIND(cuMemcpyHtoDAsync_v2) BIND(cuMemcpyDtoHAsync_v2)
  BIND(cuMemcpyDtoDAsync_v2) BIND(cuMemcpyPeerAsync) BIND(cuStreamCreate) BIND(cuStreamDestroy_v2)
  BIND(cuStreamSynchronize) BIND(cuStreamWaitEvent) BIND(cuEventCreate) BIND(cuEventRecord)
  BIND(cuEventSynchronize) BIND(cuEventDestroy_v2) BIND(cuPointerGetAttribute) BIND(cuPointerGetAttributes)
  BIND(cuGetErrorName)
  BIND(cuGetErrorString)
#undef BIND
  if (cu.cuInit(0) != GDA_CUDA_SUCCESS) {
    open_error = "cuInit failed: the driver is present but no usable CUDA device or driver was found";
    return;
  }
  if (cu.cuDeviceGetCount(&device_count) != GDA_CUDA_SUCCESS || device_count < 0) device_count = 0;
  contexts = calloc((size_t)(device_count ? device_count : 1), sizeof(CUcontext));
  if (!contexts) {
    open_error = "out of memory";
    return;
  }
}

int gda_cuda_open(const char** err) {
  pthread_once(&open_once, open_driver);
  if (open_error) {
    *err = open_error;
    return -1;
  }
  return 0;
}

const char* gda_cuda_library(void) { return library_name; }

// The primary context of device dev, retained on first use.
static CUresult primary_context(int dev, CUcontext* out, const char** call) {
  if (dev < 0 || dev >= device_count) {
    *call = "cuDeviceGet";
    return 101;  // CUDA_ERROR_INVALID_DEVICE
  }
  CUcontext c = __atomic_load_n(&contexts[dev], __ATOMIC_ACQUIRE);
  if (c) {
    *out = c;
    return GDA_CUDA_SUCCESS;
  }
  pthread_mutex_lock(&retain_mu);
  CUresult r = GDA_CUDA_SUCCESS;
  if (!(c = contexts[dev])) {
    CUdevice d;
    *call = "cuDeviceGet";
    r = cu.cuDeviceGet(&d, dev);
    if (r == GDA_CUDA_SUCCESS) {
      *call = "cuDevicePrimaryCtxRetain";
      r = cu.cuDevicePrimaryCtxRetain(&c, d);
    }
    if (r == GDA_CUDA_SUCCESS) __atomic_store_n(&contexts[dev], c, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&retain_mu);
  *out = c;
  return r;
}

// Every operation runs with the device's primary context pushed onto the
// calling thread's context stack and pops it before returning, so the
// caller's current context (CuPy's device, PyCUDA's pushed contexts) is as it
// was (CUDA Driver API, cuCtxPushCurrent / cuCtxPopCurrent). Goroutines move
// between threads, so the push and pop happen within one C call.
static CUresult push_context(int dev, const char** call) {
  CUcontext c;
  CUresult r = primary_context(dev, &c, call);
  if (r != GDA_CUDA_SUCCESS) return r;
  *call = "cuCtxPushCurrent_v2";
  return cu.cuCtxPushCurrent_v2(c);
}

static CUresult pop_context(CUresult r, const char** call) {
  CUresult p = cu.cuCtxPopCurrent_v2(NULL);
  if (r != GDA_CUDA_SUCCESS) return r;  // the first error is the one to report
  if (p != GDA_CUDA_SUCCESS) *call = "cuCtxPopCurrent_v2";
  return p;
}

// CALL0: a driver call that needs no context. Inside BEGIN(dev) ... END,
// CALL runs a driver call with dev's context current and jumps to END on error.
#define CALL0(fn, ...)                      \
  do {                                      \
    *call = #fn;                            \
    CUresult r_ = cu.fn(__VA_ARGS__);       \
    if (r_ != GDA_CUDA_SUCCESS) return r_;  \
  } while (0)
#define BEGIN(dev)                                  \
  CUresult r_ = push_context((dev), call);          \
  if (r_ != GDA_CUDA_SUCCESS) return r_
#define CALL(fn, ...)                       \
  do {                                      \
    *call = #fn;                            \
    r_ = cu.fn(__VA_ARGS__);                \
    if (r_ != GDA_CUDA_SUCCESS) goto end_;  \
  } while (0)
#define END    \
  goto end_;   \
  end_:        \
  return pop_context(r_, call)

CUresult gda_cuda_device_count(int* n, const char** call) {
  (void)call;
  *n = device_count;
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_driver_version(int* v, const char** call) {
  CALL0(cuDriverGetVersion, v);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_device_name(int dev, char* name, int len, const char** call) {
  CUdevice d;
  CALL0(cuDeviceGet, &d, dev);
  CALL0(cuDeviceGetName, name, len, d);
  return GDA_CUDA_SUCCESS;
}

// The device allocations godevarrow made and has not freed, sorted by
// address: while one is live its addresses belong to its device and to
// nothing else, so a pointer inside it needs no driver query (an import of
// memory godevarrow exported, the round trip of every exchange).
typedef struct {
  CUdeviceptr start;
  size_t size;
  int dev;
} own_range;
// Grows the range table (NULL, table kept, when out of memory).
static void* realloc_ranges(void* t, size_t* cap) {
  size_t c = *cap ? 2 * *cap : 64;
  void* g = realloc(t, c * sizeof(own_range));
  if (g) *cap = c;
  return g;
}
static own_range* own;
static size_t own_n, own_cap;
static pthread_rwlock_t own_mu = PTHREAD_RWLOCK_INITIALIZER;

// The index of the first range starting after p.
static size_t own_after(CUdeviceptr p) {
  size_t lo = 0, hi = own_n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (own[mid].start <= p) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The index of the range that holds p, or -1 (own_mu held).
static ptrdiff_t own_containing(CUdeviceptr p) {
  size_t at = own_after(p);
  return at > 0 && p - own[at - 1].start < own[at - 1].size ? (ptrdiff_t)at - 1 : -1;
}

// An allocation that cannot be recorded is only queried the driver's way.
void gda_cuda_own_set(CUdeviceptr p, size_t size, int dev) {
  own_range* grown = NULL;
  pthread_rwlock_wrlock(&own_mu);
  size_t i = own_after(p);
  if (own_n < own_cap || (grown = realloc_ranges(own, &own_cap))) {
    if (grown) own = grown;
    memmove(own + i + 1, own + i, (own_n - i) * sizeof(*own));
    own[i] = (own_range){p, size, dev};
    own_n++;
  }
  pthread_rwlock_unlock(&own_mu);
}

size_t gda_cuda_own_forget(CUdeviceptr p) {
  pthread_rwlock_wrlock(&own_mu);
  size_t i = own_after(p), size = 0;
  if (i > 0 && own[i - 1].start == p) {
    size = own[i - 1].size;
    memmove(own + i - 1, own + i, (own_n - i) * sizeof(*own));
    own_n--;
  }
  pthread_rwlock_unlock(&own_mu);
  return size;
}

CUresult gda_cuda_mem_alloc(int dev, size_t n, CUdeviceptr* out, const char** call) {
  BEGIN(dev);
  CALL(cuMemAlloc_v2, out, n);
  END;
}

CUresult gda_cuda_mem_free(int dev, CUdeviceptr p, const char** call) {
  BEGIN(dev);
  CALL(cuMemFree_v2, p);
  END;
}

CUresult gda_cuda_ctx_sync(int dev, const char** call) {
  BEGIN(dev);
  CALL(cuCtxSynchronize);
  END;
}

CUresult gda_cuda_alloc_host(int dev, size_t n, void** out, const char** call) {
  BEGIN(dev);
  CALL(cuMemAllocHost_v2, out, n ? n : 1);
  END;
}

CUresult gda_cuda_free_host(int dev, void* p, const char** call) {
  BEGIN(dev);
  CALL(cuMemFreeHost, p);
  END;
}

// Pins (and unpins) host memory the caller owns, for all contexts
// (CU_MEMHOSTREGISTER_PORTABLE: "considered as pinned memory by all CUDA
// contexts", CUDA Driver API, cuMemHostRegister), registered from the primary
// context of the first device that can be retained: primary contexts live as
// long as the process.
static CUresult push_first_primary(const char** call) {
  CUresult r = 101;  // CUDA_ERROR_INVALID_DEVICE: no device
  for (int i = 0; i < device_count; i++)
    if ((r = push_context(i, call)) == GDA_CUDA_SUCCESS) break;
  return r;
}

CUresult gda_cuda_host_register(void* p, size_t n, const char** call) {
  CUresult r_ = push_first_primary(call);
  if (r_ != GDA_CUDA_SUCCESS) return r_;
  CALL(cuMemHostRegister_v2, p, n, 1 /* CU_MEMHOSTREGISTER_PORTABLE */);
  END;
}

CUresult gda_cuda_host_unregister(void* p, const char** call) {
  CUresult r_ = push_first_primary(call);
  if (r_ != GDA_CUDA_SUCCESS) return r_;
  CALL(cuMemHostUnregister, p);
  END;
}

CUresult gda_cuda_stream_create(int dev, gda_stream* out, const char** call) {
  BEGIN(dev);
  CUstream s = NULL;
  CALL(cuStreamCreate, &s, 1 /* CU_STREAM_NON_BLOCKING */);
  *out = (gda_stream)s;
  END;
}

CUresult gda_cuda_stream_destroy(int dev, gda_stream s, const char** call) {
  BEGIN(dev);
  CALL(cuStreamDestroy_v2, (CUstream)s);
  END;
}

CUresult gda_cuda_stream_sync(int dev, gda_stream s, const char** call) {
  BEGIN(dev);
  CALL(cuStreamSynchronize, (CUstream)s);
  END;
}

CUresult gda_cuda_stream_wait_event(int dev, gda_stream s, CUevent e, const char** call) {
  BEGIN(dev);
  CALL(cuStreamWaitEvent, (CUstream)s, e, 0);
  END;
}

CUresult gda_cuda_event_create(int dev, CUevent* out, const char** call) {
  BEGIN(dev);
  CALL(cuEventCreate, out, 2 /* CU_EVENT_DISABLE_TIMING */);
  END;
}

CUresult gda_cuda_event_record(int dev, CUevent e, gda_stream s, const char** call) {
  BEGIN(dev);
  CALL(cuEventRecord, e, (CUstream)s);
  END;
}

CUresult gda_cuda_event_sync(int dev, CUevent e, const char** call) {
  BEGIN(dev);
  CALL(cuEventSynchronize, e);
  END;
}

CUresult gda_cuda_event_destroy(int dev, CUevent e, const char** call) {
  BEGIN(dev);
  CALL(cuEventDestroy_v2, e);
  END;
}

CUresult gda_cuda_copy_async(int dev, int kind, void* dst, const void* src, size_t n, int src_dev, gda_stream stream,
                             const char** call) {
  CUstream s = (CUstream)stream;
  if (n == 0) return GDA_CUDA_SUCCESS;
  BEGIN(dev);
  switch (kind) {
    case 1:
      CALL(cuMemcpyHtoDAsync_v2, (CUdeviceptr)(uintptr_t)dst, src, n, s);
      break;
    case 2:
      CALL(cuMemcpyDtoHAsync_v2, dst, (CUdeviceptr)(uintptr_t)src, n, s);
      break;
    case 3:
      CALL(cuMemcpyDtoDAsync_v2, (CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, n, s);
      break;
    default: {
      CUcontext src_ctx;
      if ((r_ = primary_context(src_dev, &src_ctx, call)) != GDA_CUDA_SUCCESS) goto end_;
      CALL(cuMemcpyPeerAsync, (CUdeviceptr)(uintptr_t)dst, contexts[dev], (CUdeviceptr)(uintptr_t)src, src_ctx, n,
           s);
    }
  }
  END;
}

// Pinned staging memory of gathers, per device. A device-to-host copy into
// pageable memory is synchronous whatever its name says (CUDA Runtime API,
// "API synchronization behavior": for transfers from device memory to
// pageable host memory the function returns only once the copy completes),
// so a gather of many small values paid one synchronous copy each; into
// pinned memory they are asynchronous, and one synchronization ends them
// all. Pinned allocation is slow, so blocks are kept (a free list per
// device, bounded by the number of concurrent gathers).
typedef struct staging {
  struct staging* next;
  size_t cap;  // bytes after the header
} staging;
static staging** staging_free;  // per device, allocated on first use
static pthread_mutex_t staging_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic long long staging_pooled;

long long gda_cuda_pooled_host(void) { return staging_pooled; }

// A block of dev of at least n bytes (NULL with r set when it cannot be made);
// called with dev's context current.
static staging* staging_take(int dev, size_t n, CUresult* r, const char** call) {
  pthread_mutex_lock(&staging_mu);
  if (!staging_free) staging_free = calloc((size_t)(device_count ? device_count : 1), sizeof(staging*));
  staging* b = NULL;
  for (staging** at = staging_free ? &staging_free[dev] : NULL; at && *at; at = &(*at)->next)
    if ((*at)->cap >= n) {
      b = *at;
      *at = b->next;
      staging_pooled--;
      break;
    }
  pthread_mutex_unlock(&staging_mu);
  if (b) return b;
  size_t cap = n < 4096 - sizeof(staging) ? 4096 - sizeof(staging) : n;
  void* p = NULL;
  *call = "cuMemAllocHost_v2";
  if ((*r = cu.cuMemAllocHost_v2(&p, sizeof(staging) + cap)) != GDA_CUDA_SUCCESS) return NULL;
  b = p;
  b->cap = cap;
  return b;
}

static void staging_give(int dev, staging* b) {
  pthread_mutex_lock(&staging_mu);
  if (staging_free) {
    b->next = staging_free[dev];
    staging_free[dev] = b;
    staging_pooled++;
    b = NULL;
  }
  pthread_mutex_unlock(&staging_mu);
  if (b) cu.cuMemFreeHost(b);
}

// A gather fetches pieces that lie close together in one allocation as one
// copy of their span: issuing a copy costs about as much as moving 140 KB
// over the link (2.7 µs per asynchronous copy into pinned memory, 55 GB/s:
// docs/cuda.md), so the gaps between pieces up to GATHER_GAP are fetched
// with them, in spans of at most GATHER_SPAN. Only pieces of one allocation
// share a span (the bytes between allocations are no one's): godevarrow's
// own allocations are in the own table; a foreign piece's allocation is
// asked of the driver (cuPointerGetAttributes, its range), at most
// GATHER_QUERIES times a gather, so that pieces of a pool allocator's few
// large allocations (RMM's, CuPy's) are fetched together while pieces of as
// many allocations cost no query each. The staging memory a gather takes
// stays within its pieces' own bytes, or GATHER_SPAN when that is more.
enum { GATHER_GAP = 64 << 10, GATHER_SPAN = 4 << 20, GATHER_QUERIES = 4 };

typedef struct {
  CUdeviceptr src;
  size_t n;
  void* dst;
  CUdeviceptr alloc;  // the allocation's start, 0 when unknown
  size_t span;        // the span (index) the piece is fetched with
} gather_piece;

static int by_source(const void* a, const void* b) {
  CUdeviceptr x = ((const gather_piece*)a)->src, y = ((const gather_piece*)b)->src;
  return x < y ? -1 : x > y;
}

// The start of the allocation of each piece that the own table or up to
// GATHER_QUERIES driver queries place (dev's context is current).
static void gather_allocations(gather_piece* p, int count) {
  own_range known[GATHER_QUERIES];
  int n_known = 0, queries = 0;
  pthread_rwlock_rdlock(&own_mu);
  for (int i = 0; i < count; i++) {
    ptrdiff_t at = own_containing(p[i].src);
    if (at >= 0) p[i].alloc = own[at].start;
  }
  pthread_rwlock_unlock(&own_mu);
  for (int i = 0; i < count; i++) {
    for (int k = 0; !p[i].alloc && k < n_known; k++)
      if (p[i].src - known[k].start < known[k].size) p[i].alloc = known[k].start;
    if (p[i].alloc || queries == GATHER_QUERIES) continue;
    queries++;
    own_range got = {0, 0, -1};
    int attrs[] = {11 /* RANGE_START_ADDR */, 12 /* RANGE_SIZE */};
    void* data[] = {&got.start, &got.size};
    if (cu.cuPointerGetAttributes(2, attrs, data, p[i].src) == GDA_CUDA_SUCCESS && got.size &&
        p[i].src - got.start < got.size) {
      p[i].alloc = got.start;
      known[n_known++] = got;
    }
  }
}

CUresult gda_cuda_gather(int dev, gda_stream stream, int count, void* const* dst, const CUdeviceptr* src,
                         const size_t* n, const char** call) {
  CUstream s = (CUstream)stream;
  gather_piece* p = malloc((size_t)(count > 0 ? count : 1) * sizeof(*p));
  size_t* span_at = malloc((size_t)(count > 0 ? count : 1) * 2 * sizeof(size_t));  // start offset, length
  if (!p || !span_at) {
    free(p);
    free(span_at);
    *call = "malloc";
    return 2;  // CUDA_ERROR_OUT_OF_MEMORY
  }
  size_t own = 0;  // the pieces' own bytes, each rounded up to 8 as they are laid out
  for (int i = 0; i < count; i++) {
    p[i] = (gather_piece){src[i], n[i], dst[i], 0, 0};
    own += n[i] + 8;
  }
  size_t budget = own > GATHER_SPAN ? own : GATHER_SPAN;  // the staging memory a gather may take
  BEGIN(dev);
  gather_allocations(p, count);
  qsort(p, (size_t)count, sizeof(*p), by_source);
  // spans: [first piece's source, end) in the staging block at span_at[2k]
  size_t spans = 0, total = 0;
  CUdeviceptr span_start = 0, span_end = 0;
  for (int i = 0; i < count; i++) {
    CUdeviceptr end = p[i].src + p[i].n, joined = (end > span_end ? end : span_end) - span_start;
    int joins = spans > 0 && p[i].alloc && p[i].alloc == p[i - 1].alloc && p[i].src <= span_end + GATHER_GAP &&
                joined <= GATHER_SPAN && total + joined <= budget;
    if (!joins) {
      if (spans > 0) {
        span_at[2 * spans - 1] = span_end - span_start;
        total += (span_end - span_start + 7) & ~(size_t)7;
      }
      span_at[2 * spans] = total;
      spans++;
      span_start = p[i].src;
      span_end = end;
    } else if (end > span_end) {
      span_end = end;
    }
    p[i].span = spans - 1;
  }
  if (spans > 0) {
    span_at[2 * spans - 1] = span_end - span_start;
    total += span_end - span_start;
  }
  staging* b = staging_take(dev, total, &r_, call);
  if (!b) goto done;
  unsigned char* base = (unsigned char*)(b + 1);
  for (int i = 0; i < count; i++) {
    if (i > 0 && p[i].span == p[i - 1].span) continue;  // the span's first piece issues its copy
    size_t k = p[i].span;
    r_ = cu.cuMemcpyDtoHAsync_v2(base + span_at[2 * k], p[i].src, span_at[2 * k + 1], s);
    if (r_ != GDA_CUDA_SUCCESS) {
      *call = "cuMemcpyDtoHAsync_v2";
      goto drain;
    }
  }
  *call = "cuStreamSynchronize";
  if ((r_ = cu.cuStreamSynchronize(s)) != GDA_CUDA_SUCCESS) goto drain;
  for (int i = 0, first = 0; i < count; i++) {
    if (i == 0 || p[i].span != p[i - 1].span) first = i;
    memcpy(p[i].dst, base + span_at[2 * p[i].span] + (p[i].src - p[first].src), p[i].n);
  }
  staging_give(dev, b);
  goto done;
drain:
  // copies already queued write into the block: it is reused only once they
  // are done (tried twice, as Stream.Drain does), else leaked
  if (cu.cuStreamSynchronize(s) == GDA_CUDA_SUCCESS || cu.cuStreamSynchronize(s) == GDA_CUDA_SUCCESS)
    staging_give(dev, b);
done:
  free(p);
  free(span_at);
  END;
}

// cuPointerGetAttribute needs a current context (it documents
// CUDA_ERROR_INVALID_CONTEXT): the caller's if it has one, else the primary
// context of the first device that can be retained.
static CUresult push_any_context(const char** call) {
  CUcontext c = NULL;
  *call = "cuCtxGetCurrent";
  CUresult r = cu.cuCtxGetCurrent(&c);
  if (r != GDA_CUDA_SUCCESS) return r;
  if (c) {
    *call = "cuCtxPushCurrent_v2";
    return cu.cuCtxPushCurrent_v2(c);
  }
  for (int i = 0; i < device_count; i++)
    if ((r = push_context(i, call)) == GDA_CUDA_SUCCESS || i == device_count - 1) return r;
  return 101;
}

CUresult gda_cuda_pointer_kind(CUdeviceptr p, int* dev, int* kind, const char** call) {
  CUresult r_ = push_any_context(call);
  if (r_ != GDA_CUDA_SUCCESS) return r_;
  unsigned int mt = 0;
  int ordinal = -1, managed = 0;
  // one call for the three attributes; MEMORY_TYPE answers DEVICE for
  // managed memory, IS_MANAGED tells
  int attrs[] = {2 /* MEMORY_TYPE */, 8 /* IS_MANAGED */, 9 /* DEVICE_ORDINAL */};
  void* data[] = {&mt, &managed, &ordinal};
  CALL(cuPointerGetAttributes, 3, attrs, data, p);
  // memory no context allocated, mapped or registered gets "default NULL
  // values" (CUDA Driver API, cuPointerGetAttributes): plain host memory
  *dev = mt ? ordinal : -1;
  *kind = !mt ? 0 : managed ? 4 : (int)mt;
  END;
}

// One driver query per allocation, not per buffer: a pointer inside
// godevarrow's own live allocations is known, and one query of any other
// gives its allocation's range (CUDA Driver API, cuPointerGetAttributes with
// CU_POINTER_ATTRIBUTE_RANGE_START_ADDR and _RANGE_SIZE), which covers the
// other buffers carved from it (an RMM or CuPy pool, a cuDF column).
CUresult gda_cuda_pointers_on_device(int dev, int count, const uintptr_t* ptrs, int* bad, int* bad_dev,
                                     const char** call) {
  *bad = -1;
  enum { RECENT = 16 };
  own_range recent[RECENT];  // the ranges known so far, newest at next - 1
  int n_recent = 0, next = 0, pushed = 0;
  size_t hint = 0;
  CUresult r = GDA_CUDA_SUCCESS;
  // one read lock for the whole check (the table changes only when
  // godevarrow allocates or frees); dev's context is pushed only when the
  // driver must be asked
  pthread_rwlock_rdlock(&own_mu);
  for (int i = 0; i < count && r == GDA_CUDA_SUCCESS; i++) {
    CUdeviceptr p = (CUdeviceptr)ptrs[i];
    int ordinal = -1;
    // godevarrow's own allocations first: a batch it copied has its buffers
    // in consecutive allocations, so the entry after the last hit is tried
    // before a binary search
    for (size_t h = hint; ordinal < 0 && h < hint + 2 && h < own_n; h++)
      if (p - own[h].start < own[h].size) ordinal = own[hint = h].dev;
    if (ordinal < 0) {
      ptrdiff_t at = own_containing(p);
      if (at >= 0) ordinal = own[hint = (size_t)at].dev;
    }
    for (int k = 0; ordinal < 0 && k < n_recent; k++) {
      const own_range* q = &recent[(next - 1 - k + RECENT) % RECENT];
      if (p - q->start < q->size) ordinal = q->dev;
    }
    own_range got = {0, 0, -1};
    if (ordinal < 0) {
      unsigned int type = 0;
      int attrs[] = {2 /* MEMORY_TYPE */, 9 /* DEVICE_ORDINAL */, 11 /* RANGE_START_ADDR */, 12 /* RANGE_SIZE */};
      void* data[] = {&type, &got.dev, &got.start, &got.size};
      if (!pushed && (r = push_context(dev, call)) != GDA_CUDA_SUCCESS) break;
      pushed = 1;
      *call = "cuPointerGetAttributes";
      if ((r = cu.cuPointerGetAttributes(4, attrs, data, p)) != GDA_CUDA_SUCCESS) break;
      if (type == 0) {  // "default NULL values": memory the driver does not know
        *bad = i;
        *bad_dev = -1;
        r = 1;  // CUDA_ERROR_INVALID_VALUE, cuPointerGetAttribute's answer for it
        break;
      }
      ordinal = got.dev;
      recent[next] = got;
      next = (next + 1) % RECENT;
      n_recent += n_recent < RECENT;
    }
    if (ordinal != dev) {
      *bad = i;
      *bad_dev = ordinal;
      break;
    }
  }
  pthread_rwlock_unlock(&own_mu);
  return pushed ? pop_context(r, call) : r;
}

int gda_cuda_caller_context_is(int dev) {
  CUcontext c = NULL, primary = NULL;
  const char* call;
  if (dev < 0 || dev >= device_count || cu.cuCtxGetCurrent(&c) != GDA_CUDA_SUCCESS || c == NULL) return 0;
  // retained here if no operation did yet: a caller's first import may come
  // before godevarrow's first use of the device
  return primary_context(dev, &primary, &call) == GDA_CUDA_SUCCESS && c == primary;
}

CUresult gda_cuda_stream_device(int dev, gda_stream stream, int* out, const char** call) {
  CUstream s = (CUstream)stream;
  *out = dev;
  if ((uintptr_t)s == 1 || (uintptr_t)s == 2) {
    // the default streams of the caller's current context, when it has one
    CUcontext c = NULL;
    CALL0(cuCtxGetCurrent, &c);
    for (int i = 0; c && i < device_count; i++)
      if (__atomic_load_n(&contexts[i], __ATOMIC_ACQUIRE) == c) *out = i;
    return GDA_CUDA_SUCCESS;
  }
  // the stream's context may be one we never retained (a producer's stream
  // on another device): its device is asked of the driver with it current
  // (CUDA Driver API, cuStreamGetCtx and cuCtxGetDevice)
  BEGIN(dev);
  CUcontext c = NULL, popped = NULL;
  CUdevice d = 0;
  CALL(cuStreamGetCtx, s, &c);
  CALL(cuCtxPushCurrent_v2, c);
  *call = "cuCtxGetDevice";
  r_ = cu.cuCtxGetDevice(&d);
  cu.cuCtxPopCurrent_v2(&popped);
  if (r_ == GDA_CUDA_SUCCESS) *out = (int)d;
  END;
}

const char* gda_cuda_error_name(CUresult r) {
  const char* s = NULL;
  if (cu.cuGetErrorName && cu.cuGetErrorName(r, &s) == GDA_CUDA_SUCCESS && s) return s;
  return "CUDA_ERROR_UNKNOWN";
}

const char* gda_cuda_error_string(CUresult r) {
  const char* s = NULL;
  if (cu.cuGetErrorString && cu.cuGetErrorString(r, &s) == GDA_CUDA_SUCCESS && s) return s;
  return "";
}

// ------------------------------------------------ the C vtable (backend.h)
_Static_assert(sizeof(CUdeviceptr) == sizeof(uintptr_t), "device addresses are pointer-sized");

// The legacy default stream (CU_STREAM_LEGACY, 1) when the caller's context
// is dev's primary one (CallerDefaultStream in backend.go, the same rule).
static uintptr_t caller_default_stream(int dev) { return gda_cuda_caller_context_is(dev) ? 1 : 0; }

static const struct gda_device_backend cuda_vtable = {
    .name = "cuda",
    .open = gda_cuda_open,
    .pointers_on_device = gda_cuda_pointers_on_device,
    .caller_default_stream = caller_default_stream,
};

const struct gda_device_backend* gda_cuda_vtable(void) { return &cuda_vtable; }

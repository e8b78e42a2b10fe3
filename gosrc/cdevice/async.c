#include "async.h"

#include <stdlib.h>
#include <string.h>

// Go side (async.go)
extern void godevarrowAsyncRequest(uintptr_t handle, int64_t n);
extern void godevarrowAsyncCancel(uintptr_t handle);
extern int godevarrowAsyncExtract(uintptr_t handle, struct ArrowDeviceArray* out);
extern int godevarrowAsyncOnSchema(uintptr_t handle, struct ArrowAsyncProducer* p, struct ArrowSchema* s);
extern int godevarrowAsyncOnNextTask(uintptr_t handle, struct ArrowAsyncTask* t, const char* md);
extern void godevarrowAsyncOnError(uintptr_t handle, int code, const char* msg, const char* md);
extern void godevarrowAsyncRelease(uintptr_t handle);

// private_data of our structs is a C cell holding a cgo.Handle value
typedef struct {
  uintptr_t handle;
} cell;

static uintptr_t handle_of(void* private_data) { return ((cell*)private_data)->handle; }

// A released producer's handle is 0: request and cancel are then no-ops.
static void producer_request(struct ArrowAsyncProducer* p, int64_t n) {
  uintptr_t h = __atomic_load_n(&((cell*)p->private_data)->handle, __ATOMIC_ACQUIRE);
  if (h) godevarrowAsyncRequest(h, n);
}
static void producer_cancel(struct ArrowAsyncProducer* p) {
  uintptr_t h = __atomic_load_n(&((cell*)p->private_data)->handle, __ATOMIC_ACQUIRE);
  if (h) godevarrowAsyncCancel(h);
}

struct ArrowAsyncProducer* gda_async_producer_new(int32_t device_type, const char* additional_metadata,
                                                  uintptr_t handle) {
  struct ArrowAsyncProducer* p = calloc(1, sizeof(*p));
  cell* c = malloc(sizeof(cell));
  c->handle = handle;
  p->device_type = (ArrowDeviceType)device_type;
  p->request = producer_request;
  p->cancel = producer_cancel;
  p->additional_metadata = additional_metadata;
  p->private_data = c;
  return p;
}

// The spec lets a producer free its ArrowAsyncProducer right after release,
// but some consumers (Arrow Go v18's, whose reading goroutine calls request
// after each task) still call it a moment later. A released producer
// therefore becomes a tombstone whose calls do nothing, and is freed only
// once TOMBSTONES newer ones exist.
#define TOMBSTONES 1024
static struct ArrowAsyncProducer* tombstones[TOMBSTONES];
static unsigned next_tombstone;
static int tombstone_lock;

static void producer_destroy(struct ArrowAsyncProducer* p) {
  free(p->private_data);
  free((void*)p->additional_metadata);
  free(p);
}

void gda_async_producer_free(struct ArrowAsyncProducer* p) {
  __atomic_store_n(&((cell*)p->private_data)->handle, 0, __ATOMIC_RELEASE);
  while (__atomic_exchange_n(&tombstone_lock, 1, __ATOMIC_ACQUIRE)) {
  }
  struct ArrowAsyncProducer* old = tombstones[next_tombstone];
  tombstones[next_tombstone] = p;
  next_tombstone = (next_tombstone + 1) % TOMBSTONES;
  __atomic_store_n(&tombstone_lock, 0, __ATOMIC_RELEASE);
  if (old) producer_destroy(old);
}

static int task_extract(struct ArrowAsyncTask* t, struct ArrowDeviceArray* out) {
  cell* c = t->private_data;
  uintptr_t h = c->handle;
  free(c);
  t->private_data = NULL;
  return godevarrowAsyncExtract(h, out);
}

struct ArrowAsyncTask* gda_async_task_new(uintptr_t handle) {
  struct ArrowAsyncTask* t = calloc(1, sizeof(*t));
  cell* c = malloc(sizeof(cell));
  c->handle = handle;
  t->extract_data = task_extract;
  t->private_data = c;
  return t;
}

int gda_async_call_on_schema(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowSchema* s) { return h->on_schema(h, s); }
int gda_async_call_on_next_task(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowAsyncTask* t, const char* md) {
  return h->on_next_task(h, t, md);
}
void gda_async_call_on_error(struct ArrowAsyncDeviceStreamHandler* h, int code, const char* msg, const char* md) {
  h->on_error(h, code, msg, md);
}
void gda_async_call_release(struct ArrowAsyncDeviceStreamHandler* h) { h->release(h); }

static int handler_on_schema(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowSchema* s) {
  return godevarrowAsyncOnSchema(handle_of(h->private_data), h->producer, s);
}
static int handler_on_next_task(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowAsyncTask* t, const char* md) {
  return godevarrowAsyncOnNextTask(handle_of(h->private_data), t, md);
}
static void handler_on_error(struct ArrowAsyncDeviceStreamHandler* h, int code, const char* msg, const char* md) {
  godevarrowAsyncOnError(handle_of(h->private_data), code, msg, md);
}
static void handler_release(struct ArrowAsyncDeviceStreamHandler* h) {
  uintptr_t handle = handle_of(h->private_data);
  free(h->private_data);
  h->private_data = NULL;
  h->release = NULL;
  godevarrowAsyncRelease(handle);
  free(h);  // ours (gda_async_handler_new); nobody may touch it after release
}

struct ArrowAsyncDeviceStreamHandler* gda_async_handler_new(uintptr_t handle) {
  struct ArrowAsyncDeviceStreamHandler* h = calloc(1, sizeof(*h));
  cell* c = malloc(sizeof(cell));
  c->handle = handle;
  h->on_schema = handler_on_schema;
  h->on_next_task = handler_on_next_task;
  h->on_error = handler_on_error;
  h->release = handler_release;
  h->private_data = c;
  return h;
}

void gda_async_call_request(struct ArrowAsyncProducer* p, int64_t n) { p->request(p, n); }
void gda_async_call_cancel(struct ArrowAsyncProducer* p) { p->cancel(p); }
int gda_async_call_extract(struct ArrowAsyncTask* t, struct ArrowDeviceArray* out) { return t->extract_data(t, out); }

#include "async.h"

#include <stdlib.h>
#include <string.h>

// Go side (async.go)
extern void gdaAsyncRequest(uintptr_t handle, int64_t n);
extern void gdaAsyncCancel(uintptr_t handle);
extern int gdaAsyncExtract(uintptr_t handle, struct ArrowDeviceArray* out);
extern int gdaAsyncOnSchema(uintptr_t handle, struct ArrowAsyncProducer* p, struct ArrowSchema* s);
extern int gdaAsyncOnNextTask(uintptr_t handle, struct ArrowAsyncTask* t, const char* md);
extern void gdaAsyncOnError(uintptr_t handle, int code, const char* msg, const char* md);
extern void gdaAsyncRelease(uintptr_t handle);

// ---------------------------------------------------------------- memory

static int64_t fail_countdown;  // test hook: the allocation that brings it to 0 fails
static int64_t live_allocations;

void gda_async_fail_allocation(int64_t n) { __atomic_store_n(&fail_countdown, n, __ATOMIC_SEQ_CST); }
int64_t gda_async_live_allocations(void) { return __atomic_load_n(&live_allocations, __ATOMIC_SEQ_CST); }

static int injected_failure(void) {
  int64_t n = __atomic_load_n(&fail_countdown, __ATOMIC_SEQ_CST);
  while (n > 0) {
    if (__atomic_compare_exchange_n(&fail_countdown, &n, n - 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return n == 1;
  }
  return 0;
}

void* gda_async_calloc(size_t size) {
  if (injected_failure()) return NULL;
  void* p = calloc(1, size);
  if (p) __atomic_add_fetch(&live_allocations, 1, __ATOMIC_SEQ_CST);
  return p;
}

void gda_async_free(void* p) {
  if (!p) return;
  __atomic_sub_fetch(&live_allocations, 1, __ATOMIC_SEQ_CST);
  free(p);
}

// private_data of our tasks and handlers is a C cell holding a handle.Table
// handle (the Go side's tables check its generation)
typedef struct {
  uintptr_t handle;
} cell;

static uintptr_t handle_of(void* private_data) { return ((cell*)private_data)->handle; }

// ---------------------------------------------------------------- producer
//
// The spec lets a producer free its ArrowAsyncProducer once it has called
// the handler's release, but consumers call request and cancel from threads
// of their own and some do so after release: Arrow Go v18's reading
// goroutine calls request(1) before extracting each queued task, and cancel
// when its context ends, however late that is. Freeing the struct at any
// point would make such a call a use after free, and no count of later
// streams bounds when it comes.
//
// So producer structs live in slots that are never returned to malloc:
// whatever a consumer calls through a pointer it was once given reads a
// valid ArrowAsyncProducer. A slot's handle is 0 while it is idle, so a late
// call then does nothing; a call that read the handle before the producer
// retired finds it stale in the Go table (its generation is gone), so it
// does nothing either, even once the slot serves a newer stream. The Go side
// retires a producer only when no call can still be owed to its stream:
// after the handler's release and after every task it handed out was
// extracted (the v18 consumer's late requests each precede an extract). A
// retired slot joins the back of a FIFO, so it is reused as late as possible.

typedef struct slot {
  struct ArrowAsyncProducer producer;  // first member: &slot->producer == slot
  uintptr_t handle;                    // atomic; 0 while the slot is idle
  struct slot* next_idle;
} slot;

static slot* idle_head;
static slot* idle_tail;
static int idle_lock;

static void lock_idle(void) {
  while (__atomic_exchange_n(&idle_lock, 1, __ATOMIC_ACQUIRE)) {
  }
}
static void unlock_idle(void) { __atomic_store_n(&idle_lock, 0, __ATOMIC_RELEASE); }

static void producer_request(struct ArrowAsyncProducer* p, int64_t n) {
  uintptr_t h = __atomic_load_n(&((slot*)p)->handle, __ATOMIC_ACQUIRE);
  if (h) gdaAsyncRequest(h, n);
}
static void producer_cancel(struct ArrowAsyncProducer* p) {
  uintptr_t h = __atomic_load_n(&((slot*)p)->handle, __ATOMIC_ACQUIRE);
  if (h) gdaAsyncCancel(h);
}

struct ArrowAsyncProducer* gda_async_producer_acquire(int32_t device_type, const char* additional_metadata,
                                                      uintptr_t handle) {
  lock_idle();
  slot* s = idle_head;
  if (s) {
    idle_head = s->next_idle;
    if (!idle_head) idle_tail = NULL;
  }
  unlock_idle();
  if (!s) {
    s = gda_async_calloc(sizeof(slot));
    if (!s) return NULL;
    __atomic_sub_fetch(&live_allocations, 1, __ATOMIC_SEQ_CST);  // never freed: not a leak
  }
  s->next_idle = NULL;
  s->producer.device_type = (ArrowDeviceType)device_type;
  s->producer.request = producer_request;
  s->producer.cancel = producer_cancel;
  s->producer.additional_metadata = additional_metadata;
  s->producer.private_data = s;
  __atomic_store_n(&s->handle, handle, __ATOMIC_RELEASE);
  return &s->producer;
}

void gda_async_producer_retire(struct ArrowAsyncProducer* p) {
  slot* s = (slot*)p;
  __atomic_store_n(&s->handle, 0, __ATOMIC_RELEASE);
  gda_async_free((void*)p->additional_metadata);
  p->additional_metadata = NULL;
  lock_idle();
  if (idle_tail) {
    idle_tail->next_idle = s;
  } else {
    idle_head = s;
  }
  idle_tail = s;
  unlock_idle();
}

static int task_extract(struct ArrowAsyncTask* t, struct ArrowDeviceArray* out) {
  cell* c = t->private_data;
  uintptr_t h = c->handle;
  gda_async_free(c);
  t->private_data = NULL;
  return gdaAsyncExtract(h, out);
}

struct ArrowAsyncTask* gda_async_task_new(uintptr_t handle) {
  struct ArrowAsyncTask* t = gda_async_calloc(sizeof(*t));
  cell* c = gda_async_calloc(sizeof(cell));
  if (!t || !c) {
    gda_async_free(t);
    gda_async_free(c);
    return NULL;
  }
  c->handle = handle;
  t->extract_data = task_extract;
  t->private_data = c;
  return t;
}

void gda_async_task_free(struct ArrowAsyncTask* t) { gda_async_free(t); }

int gda_async_call_on_schema(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowSchema* s) { return h->on_schema(h, s); }
int gda_async_call_on_next_task(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowAsyncTask* t, const char* md) {
  return h->on_next_task(h, t, md);
}
void gda_async_call_on_error(struct ArrowAsyncDeviceStreamHandler* h, int code, const char* msg, const char* md) {
  h->on_error(h, code, msg, md);
}
void gda_async_call_release(struct ArrowAsyncDeviceStreamHandler* h) { h->release(h); }

// ---------------------------------------------------------------- handler

static int handler_on_schema(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowSchema* s) {
  return gdaAsyncOnSchema(handle_of(h->private_data), h->producer, s);
}
static int handler_on_next_task(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowAsyncTask* t, const char* md) {
  return gdaAsyncOnNextTask(handle_of(h->private_data), t, md);
}
static void handler_on_error(struct ArrowAsyncDeviceStreamHandler* h, int code, const char* msg, const char* md) {
  gdaAsyncOnError(handle_of(h->private_data), code, msg, md);
}
static void handler_release(struct ArrowAsyncDeviceStreamHandler* h) {
  uintptr_t handle = handle_of(h->private_data);
  gda_async_free(h->private_data);
  h->private_data = NULL;
  h->release = NULL;
  gdaAsyncRelease(handle);
  gda_async_free(h);  // ours (gda_async_handler_new); nobody may touch it after release
}

struct ArrowAsyncDeviceStreamHandler* gda_async_handler_new(uintptr_t handle) {
  struct ArrowAsyncDeviceStreamHandler* h = gda_async_calloc(sizeof(*h));
  cell* c = gda_async_calloc(sizeof(cell));
  if (!h || !c) {
    gda_async_free(h);
    gda_async_free(c);
    return NULL;
  }
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

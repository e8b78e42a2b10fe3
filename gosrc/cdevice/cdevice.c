#include "gda.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "_cgo_export.h"

// ----------------------------------------------------------------- arrays

struct gda_shared {
  _Atomic int64_t refs;
  uintptr_t handle;
  void (*release)(uintptr_t handle);  // called once, when the last node is released
};

static _Atomic int64_t live_nodes;

int64_t gda_live_exported_nodes(void) { return atomic_load(&live_nodes); }

static void release_go_export(uintptr_t handle) { godevarrowReleaseExport(handle); }

gda_shared* gda_shared_new_with(uintptr_t handle, void (*release)(uintptr_t)) {
  gda_shared* s = malloc(sizeof(gda_shared));
  if (!s) return NULL;
  atomic_init(&s->refs, 0);
  s->handle = handle;
  s->release = release;
  return s;
}

gda_shared* gda_shared_new(uintptr_t handle) { return gda_shared_new_with(handle, release_go_export); }

static void gda_shared_unref(gda_shared* s) {
  if (atomic_fetch_sub(&s->refs, 1) == 1) {
    uintptr_t h = s->handle;
    void (*release)(uintptr_t) = s->release;
    free(s);
    release(h);
  }
}

typedef struct {
  gda_shared* shared;
  int64_t n_children;
  int has_dictionary;
  // followed by: const void* buffers[n_buffers]; struct ArrowArray* children[n_children];
  //              struct ArrowArray child_structs[n_children (+1 for the dictionary)];
} gda_node;

static void gda_array_release(struct ArrowArray* a) {
  if (!a || !a->release) return;
  gda_node* node = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++) {
    struct ArrowArray* c = a->children[i];
    if (c->release) c->release(c);
  }
  if (a->dictionary && a->dictionary->release) a->dictionary->release(a->dictionary);
  gda_shared* shared = node->shared;
  free(node);
  a->release = NULL;
  atomic_fetch_sub(&live_nodes, 1);
  gda_shared_unref(shared);
}

const void** gda_array_node_init(struct ArrowArray* a, gda_shared* shared, int64_t n_buffers,
                                 int64_t n_children, int has_dictionary) {
  size_t n_structs = (size_t)n_children + (has_dictionary ? 1 : 0);
  size_t size = sizeof(gda_node) + (size_t)n_buffers * sizeof(void*) +
                (size_t)n_children * sizeof(struct ArrowArray*) + n_structs * sizeof(struct ArrowArray);
  gda_node* node = calloc(1, size);
  if (!node) return NULL;
  node->shared = shared;
  node->n_children = n_children;
  node->has_dictionary = has_dictionary;
  const void** buffers = (const void**)(node + 1);
  struct ArrowArray** children = (struct ArrowArray**)(buffers + n_buffers);
  struct ArrowArray* structs = (struct ArrowArray*)(children + n_children);
  for (int64_t i = 0; i < n_children; i++) children[i] = &structs[i];
  memset(a, 0, sizeof(*a));
  a->n_buffers = n_buffers;
  a->n_children = n_children;
  a->buffers = n_buffers ? buffers : NULL;
  a->children = n_children ? children : NULL;
  a->dictionary = has_dictionary ? &structs[n_children] : NULL;
  a->private_data = node;
  a->release = gda_array_release;
  atomic_fetch_add(&shared->refs, 1);
  atomic_fetch_add(&live_nodes, 1);
  return buffers;
}

static const uint64_t zero_block[GDA_ZERO_BLOCK_SIZE / 8];
const void* gda_zero_block(void) { return zero_block; }

// ---------------------------------------------------------------- streams

typedef struct {
  uintptr_t handle;
} gda_stream_private;

static int gda_stream_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
  return godevarrowStreamGetSchema(((gda_stream_private*)s->private_data)->handle, out);
}
static int gda_stream_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
  return godevarrowStreamGetNext(((gda_stream_private*)s->private_data)->handle, out, NULL);
}
static const char* gda_stream_get_last_error(struct ArrowArrayStream* s) {
  return godevarrowStreamGetLastError(((gda_stream_private*)s->private_data)->handle);
}
static void gda_stream_release(struct ArrowArrayStream* s) {
  if (!s || !s->release) return;
  gda_stream_private* p = s->private_data;
  uintptr_t h = p->handle;
  free(p);
  s->release = NULL;
  godevarrowStreamRelease(h);
}

int gda_stream_init(struct ArrowArrayStream* s, uintptr_t handle) {
  gda_stream_private* p = malloc(sizeof(gda_stream_private));
  if (!p) return ENOMEM;
  p->handle = handle;
  s->get_schema = gda_stream_get_schema;
  s->get_next = gda_stream_get_next;
  s->get_last_error = gda_stream_get_last_error;
  s->release = gda_stream_release;
  s->private_data = p;
  return 0;
}

static int gda_device_stream_get_schema(struct ArrowDeviceArrayStream* s, struct ArrowSchema* out) {
  return godevarrowStreamGetSchema(((gda_stream_private*)s->private_data)->handle, out);
}
static int gda_device_stream_get_next(struct ArrowDeviceArrayStream* s, struct ArrowDeviceArray* out) {
  return godevarrowStreamGetNext(((gda_stream_private*)s->private_data)->handle, NULL, out);
}
static const char* gda_device_stream_get_last_error(struct ArrowDeviceArrayStream* s) {
  return godevarrowStreamGetLastError(((gda_stream_private*)s->private_data)->handle);
}
static void gda_device_stream_release(struct ArrowDeviceArrayStream* s) {
  if (!s || !s->release) return;
  gda_stream_private* p = s->private_data;
  uintptr_t h = p->handle;
  free(p);
  s->release = NULL;
  godevarrowStreamRelease(h);
}

int gda_device_stream_init(struct ArrowDeviceArrayStream* s, uintptr_t handle, ArrowDeviceType device_type) {
  gda_stream_private* p = malloc(sizeof(gda_stream_private));
  if (!p) return ENOMEM;
  p->handle = handle;
  s->device_type = device_type;
  s->get_schema = gda_device_stream_get_schema;
  s->get_next = gda_device_stream_get_next;
  s->get_last_error = gda_device_stream_get_last_error;
  s->release = gda_device_stream_release;
  s->private_data = p;
  return 0;
}

// ------------------------------------------- a plain view of a device stream

typedef struct {
  struct ArrowDeviceArrayStream dev;
  const char* error;  // our own get_next error, or NULL: ask the producer
} gda_plain_over_device;

static int plain_over_device_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
  gda_plain_over_device* p = s->private_data;
  p->error = NULL;
  return p->dev.get_schema(&p->dev, out);
}

static int plain_over_device_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
  gda_plain_over_device* p = s->private_data;
  p->error = NULL;
  struct ArrowDeviceArray a;
  memset(&a, 0, sizeof(a));
  int rc = p->dev.get_next(&p->dev, &a);
  if (rc != 0) return rc;
  if (a.array.release && (a.device_type != ARROW_DEVICE_CPU || a.sync_event != NULL)) {
    a.array.release(&a.array);
    p->error = a.device_type != ARROW_DEVICE_CPU
                   ? "the producer's CPU device stream returned an array on another device"
                   : "the producer's CPU device stream returned an array with a sync event";
    return EINVAL;
  }
  *out = a.array;  // moved; a released (end-of-stream) array stays released
  return 0;
}

static const char* plain_over_device_get_last_error(struct ArrowArrayStream* s) {
  gda_plain_over_device* p = s->private_data;
  return p->error ? p->error : p->dev.get_last_error(&p->dev);
}

static void plain_over_device_release(struct ArrowArrayStream* s) {
  if (!s || !s->release) return;
  gda_plain_over_device* p = s->private_data;
  if (p->dev.release) p->dev.release(&p->dev);
  free(p);
  s->release = NULL;
}

int gda_plain_stream_over_device_stream(struct ArrowDeviceArrayStream* dev, struct ArrowArrayStream* out) {
  gda_plain_over_device* p = malloc(sizeof(*p));
  if (!p) return ENOMEM;
  p->dev = *dev;
  p->error = NULL;
  dev->release = NULL;
  out->get_schema = plain_over_device_get_schema;
  out->get_next = plain_over_device_get_next;
  out->get_last_error = plain_over_device_get_last_error;
  out->release = plain_over_device_release;
  out->private_data = p;
  return 0;
}


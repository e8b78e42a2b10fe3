// Exported streams: the C callbacks of ExportArrayStream and
// ExportDeviceArrayStream (cstream.go), and the plain view of a CPU device stream.
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "gda.h"
#include "_cgo_export.h"

// ---------------------------------------------------------------- streams

typedef struct {
  uintptr_t handle;
} gda_stream_private;

static int gda_stream_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
  return gdaStreamGetSchema(((gda_stream_private*)s->private_data)->handle, out);
}
static int gda_stream_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
  return gdaStreamGetNext(((gda_stream_private*)s->private_data)->handle, out, NULL);
}
static const char* gda_stream_get_last_error(struct ArrowArrayStream* s) {
  return gdaStreamGetLastError(((gda_stream_private*)s->private_data)->handle);
}
// Frees the private block of a released export and releases its Go stream.
static void release_private(gda_stream_private* p) {
  uintptr_t h = p->handle;
  free(p);
  gdaStreamRelease(h);
}

static gda_stream_private* new_private(uintptr_t handle) {
  gda_stream_private* p = malloc(sizeof(gda_stream_private));
  if (p) p->handle = handle;
  return p;
}

static void gda_stream_release(struct ArrowArrayStream* s) {
  if (!s || !s->release) return;
  s->release = NULL;
  release_private(s->private_data);
}

int gda_stream_init(struct ArrowArrayStream* s, uintptr_t handle) {
  gda_stream_private* p = new_private(handle);
  if (!p) return ENOMEM;
  s->get_schema = gda_stream_get_schema;
  s->get_next = gda_stream_get_next;
  s->get_last_error = gda_stream_get_last_error;
  s->release = gda_stream_release;
  s->private_data = p;
  return 0;
}

static int gda_device_stream_get_schema(struct ArrowDeviceArrayStream* s, struct ArrowSchema* out) {
  return gdaStreamGetSchema(((gda_stream_private*)s->private_data)->handle, out);
}
static int gda_device_stream_get_next(struct ArrowDeviceArrayStream* s, struct ArrowDeviceArray* out) {
  return gdaStreamGetNext(((gda_stream_private*)s->private_data)->handle, NULL, out);
}
static const char* gda_device_stream_get_last_error(struct ArrowDeviceArrayStream* s) {
  return gdaStreamGetLastError(((gda_stream_private*)s->private_data)->handle);
}
static void gda_device_stream_release(struct ArrowDeviceArrayStream* s) {
  if (!s || !s->release) return;
  s->release = NULL;
  release_private(s->private_data);
}

int gda_device_stream_init(struct ArrowDeviceArrayStream* s, uintptr_t handle, ArrowDeviceType device_type) {
  gda_stream_private* p = new_private(handle);
  if (!p) return ENOMEM;
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


// DLPack tensors made in C (gosrc/include/dlpack_c.h).
#include <stdlib.h>

#include "../device/backend.h"
#include "_cgo_export.h"
#include "dlpack.h"
#include "dlpack_c.h"

typedef struct {
  struct DLManagedTensorVersioned versioned;
  DLManagedTensor legacy;
  int64_t shape[1];
  int64_t strides[1];
  uintptr_t handle;
  // set: what keeps the array alive, released by keeper_release(keeper)
  // instead of the handle (no call into Go)
  void (*keeper_release)(void*);
  void* keeper;
} gda_dlpack_export;

static _Atomic long long kept_exports, template_exports;

long long gda_dlpack_kept(void) { return kept_exports; }
long long gda_dlpack_template_exports(void) { return template_exports; }

static void export_free(gda_dlpack_export* e) {
  uintptr_t h = e->handle;
  void (*release)(void*) = e->keeper_release;
  void* keeper = e->keeper;
  free(e);
  if (release) {
    kept_exports--;
    release(keeper);
  } else {
    gdaDLPackRelease(h);
  }
}

static void deleter_versioned(struct DLManagedTensorVersioned* t) { export_free(t->manager_ctx); }
static void deleter_legacy(DLManagedTensor* t) { export_free(t->manager_ctx); }

void* gda_dlpack_from_template(const gda_dlpack_template* t, int versioned, int copied, uintptr_t handle,
                               void (*keeper_release)(void*), void* keeper) {
  gda_dlpack_export* e = calloc(1, sizeof(gda_dlpack_export));
  if (!e) return NULL;
  e->handle = handle;
  e->keeper_release = keeper_release;
  e->keeper = keeper;
  if (keeper_release) kept_exports++;
  DLTensor* d = &e->legacy.dl_tensor;
  // data is the buffer's start and byte_offset the slice: the convention
  // CUDA consumers expect (data stays allocation-aligned)
  d->data = t->data;
  d->byte_offset = t->data ? t->byte_offset : 0;
  d->device.device_type = (DLDeviceType)t->device_type;
  d->device.device_id = t->device_id;
  d->ndim = 1;
  d->dtype.code = t->code;
  d->dtype.bits = t->bits;
  d->dtype.lanes = 1;
  e->shape[0] = t->length;
  e->strides[0] = 1;
  d->shape = e->shape;
  d->strides = e->strides;
  e->legacy.manager_ctx = e;
  e->legacy.deleter = deleter_legacy;
  if (!versioned) return &e->legacy;
  e->versioned.version.major = DLPACK_MAJOR_VERSION;
  e->versioned.version.minor = DLPACK_MINOR_VERSION;
  e->versioned.manager_ctx = e;
  e->versioned.deleter = deleter_versioned;
  e->versioned.dl_tensor = *d;
  // a copy made for this export is the consumer's alone, so writable
  // (numpy's from_dlpack(copy=True) promises a writable array)
  e->versioned.flags = copied ? DLPACK_FLAG_BITMASK_IS_COPIED : DLPACK_FLAG_BITMASK_READ_ONLY;
  return &e->versioned;
}

int gda_dlpack_template_fits(const gda_dlpack_template* t, int64_t stream, int given) {
  if (t->reuse == GDA_DLPACK_REUSE_NEVER || t->stream != stream || t->stream_given != given) return 0;
  if (t->reuse != GDA_DLPACK_REUSE_ALWAYS &&
      (!t->queue || gda_caller_default_stream(t->device_type, t->device_id) != t->queue))
    return 0;
  template_exports++;
  return 1;
}

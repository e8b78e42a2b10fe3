// Held imports of DLPack tensors (dlpack_c.h): the checks of dlpack.Import,
// in C, for the tensors it takes without a copy; the rest decline to it.
#include <stdlib.h>

#include "../device/backend.h"
#include "dlpack.h"
#include "dlpack_c.h"
#include "gda.h"

// The Arrow format of a DLPack dtype (Go's formatToDtype), and its index in
// held_entries; NULL when Import has none without a copy.
static const char* format_of(uint8_t code, uint8_t bits, int* index) {
  static const char* ints[] = {"c", "s", "i", "l"};
  static const char* uints[] = {"C", "S", "I", "L"};
  static const char* floats[] = {"e", "f", "g"};
  int k = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : bits == 64 ? 3 : -1;
  switch (code) {
    case kDLInt:
      if (k < 0) return NULL;
      *index = k;
      return ints[k];
    case kDLUInt:
      if (k < 0) return NULL;
      *index = 4 + k;
      return uints[k];
    case kDLFloat:
      if (k < 1) return NULL;
      *index = 8 + k - 1;
      return floats[k - 1];
  }
  return NULL;
}

// The held-schema entry of each dtype's schema (the nullable, unnamed field
// dlpack.Import gives an imported tensor), found once and kept for good by
// its reference.
static _Atomic(gda_held_schema*) held_entries[11];

static void no_release(struct ArrowSchema* s) { (void)s; }

static gda_held_schema* entry_of(int index, const char* format) {
  gda_held_schema* e = held_entries[index];
  if (e) return e;
  struct ArrowSchema s = {.format = format, .name = "", .flags = ARROW_FLAG_NULLABLE, .release = no_release};
  uint64_t hash;
  if (!(e = gda_held_schema_find(&s, &hash))) return NULL;
  gda_held_schema* none = NULL;
  if (!atomic_compare_exchange_strong(&held_entries[index], &none, e)) {
    gda_held_schema_unref(e);  // another thread's is kept
    return none;
  }
  return e;
}

// The ArrowArray's private data: its buffers, and the tensor whose deleter
// its release calls.
typedef struct {
  const void* buffers[2];
  void* tensor;
  int versioned;
} held_tensor;

static void release_tensor(struct ArrowArray* a) {
  held_tensor* t = a->private_data;
  if (t->versioned) {
    struct DLManagedTensorVersioned* v = t->tensor;
    if (v->deleter) v->deleter(v);
  } else {
    DLManagedTensor* m = t->tensor;
    if (m->deleter) m->deleter(m);
  }
  free(t);
  a->release = NULL;
}

int gda_dlpack_hold(void* tensor, int versioned, uintptr_t put_off_on, gda_held** out) {
  if (!tensor) return 0;
  DLTensor* t;
  if (versioned) {
    struct DLManagedTensorVersioned* v = tensor;
    if (v->version.major != DLPACK_MAJOR_VERSION) return 0;
    t = &v->dl_tensor;
  } else {
    t = &((DLManagedTensor*)tensor)->dl_tensor;
  }
  if (t->ndim != 1 || t->dtype.lanes != 1 || !t->shape) return 0;
  int64_t n = t->shape[0];
  if (n < 0 || (t->strides && n > 1 && t->strides[0] != 1)) return 0;
  int cpu = t->device.device_type == kDLCPU;
  // the CPU, or CUDA (pinned and managed memory, read on the host, take Go's import)
  if (cpu ? put_off_on != 0 : t->device.device_type != kDLCUDA || !gda_backend_for(kDLCUDA) || t->device.device_id < 0)
    return 0;
  int index;
  const char* format = format_of(t->dtype.code, t->dtype.bits, &index);
  if (!format) return 0;
  int64_t width = t->dtype.bits / 8;
  if (n > INT64_MAX / width || (n > 0 && !t->data)) return 0;
  gda_held_schema* e = entry_of(index, format);
  if (!e) return 0;
  held_tensor* ht = malloc(sizeof(*ht));
  if (!ht) return 0;
  ht->buffers[0] = NULL;
  ht->buffers[1] = n > 0 ? (const char*)t->data + t->byte_offset : NULL;
  ht->tensor = tensor;
  ht->versioned = versioned;
  struct ArrowDeviceArray d = {
      .array = {.length = n, .n_buffers = 2, .buffers = ht->buffers, .release = release_tensor, .private_data = ht},
      .device_id = cpu ? -1 : t->device.device_id,
      .device_type = cpu ? ARROW_DEVICE_CPU : t->device.device_type,
  };
  if (gda_held_import_entry(e, &d, out) != 1) {
    free(ht);  // the tensor is still the caller's
    return 0;
  }
  if (put_off_on) gda_held_put_off_on(*out, put_off_on);
  return 1;
}

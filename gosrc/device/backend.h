// The C side of the device backend seam (backend.go): the operations the C
// fast paths need from a device, as a table of function pointers that a
// backend registers for a device type. C code asks gda_backend_for(type)
// and includes no driver header. Every operation returns 0 on success or
// the driver's result code, with the failing driver call's name in *call
// (Backend.CallFailure turns both into the Go error).
#pragma once
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct gda_device_backend {
  // The backend's name, for messages ("cuda").
  const char* name;
  // Loads the driver once: 0, or -1 with a message in *err (static storage).
  int (*open)(const char** err);
  // Whether every pointer belongs to device dev, in one call: *bad is the
  // index of the first that does not (-1 if all do), with its device in
  // *bad_dev (-1 when the driver does not know it, and then an error).
  int (*pointers_on_device)(int dev, int count, const uintptr_t* ptrs, int* bad, int* bad_dev, const char** call);
  // The handle of the default stream of the calling thread's current
  // context when that context is device dev's own (the one the backend
  // runs dev's work in), else 0: Backend.CallerDefaultStream's answer, for
  // a DLPack consumer that names it to a producer without a call into Go.
  uintptr_t (*caller_default_stream)(int dev);
};

// Installs b (static storage) for device type t; Register (backend.go) calls
// it from the backend package's init(), before any import runs.
void gda_backend_register(int32_t t, const struct gda_device_backend* b);

// The vtables by device type (backend.c); the specification's types are
// all below GDA_BACKEND_TYPES.
#define GDA_BACKEND_TYPES 32
extern _Atomic(const struct gda_device_backend*) gda_backend_vtables[GDA_BACKEND_TYPES];

// The vtable of device type t, or NULL when t has none (no backend, or one
// without C fast paths). Inline, one load: cheap enough for every import.
static inline const struct gda_device_backend* gda_backend_for(int32_t t) {
  // acquire: the table is filled during Go's init, before any import, but a
  // C caller on another thread must still see the whole vtable
  return t >= 0 && t < GDA_BACKEND_TYPES ? atomic_load_explicit(&gda_backend_vtables[t], memory_order_acquire) : NULL;
}

// The handle of the calling thread's default stream when its current
// context is device dev's own (the vtable's caller_default_stream), or 0
// when it is not, or device type t has no such fast path. The C fast paths
// that name, or trust, the caller's default stream all ask it here.
static inline uintptr_t gda_caller_default_stream(int32_t t, int dev) {
  const struct gda_device_backend* b = gda_backend_for(t);
  return b && b->caller_default_stream ? b->caller_default_stream(dev) : 0;
}

// gilprod: a C producer of Arrow device arrays whose release behaves like
// pylibcudf's. pylibcudf keeps a Python object in private_data and its
// release does Py_DECREF without taking the GIL (the inline C++ of
// pylibcudf/libcudf/interop.pxd, cuDF 25.08 to 26.08: to_arrow_device_raw
// stores the Table or Column as the owner, PylibcudfArrowDeviceArrayRelease
// drops it), so a consumer that releases without holding the GIL
// corrupts the interpreter. This release aborts instead, loudly, when the GIL
// is not held. ctypes producers cannot show this: ctypes callbacks always
// take the GIL.
#include <Python.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow-c-abi.h"

typedef struct {
  struct ArrowDeviceArray inner;  // the wrapped array, moved here
  PyObject* owner;                // kept alive until release, like pylibcudf's table
} holder;

static long long releases;

static void release_array(struct ArrowArray* a) {
  if (!PyGILState_Check()) {
    fprintf(stderr, "gilprod: release called without the GIL\n");
    abort();
  }
  holder* h = a->private_data;
  if (h->inner.array.release) h->inner.array.release(&h->inner.array);
  Py_DECREF(h->owner);
  free(h);
  a->release = NULL;
  releases++;
}

static void capsule_destructor(PyObject* capsule) {
  struct ArrowDeviceArray* d = PyCapsule_GetPointer(capsule, "arrow_device_array");
  if (d && d->array.release) d->array.release(&d->array);
  free(d);
}

// gilprod_wrap(capsule, owner): a new "arrow_device_array" capsule whose
// array is the one in capsule (moved out of it) and whose release needs the
// GIL and drops a reference to owner. Called through ctypes.PyDLL (with the GIL).
PyObject* gilprod_wrap(PyObject* capsule, PyObject* owner) {
  struct ArrowDeviceArray* src = PyCapsule_GetPointer(capsule, "arrow_device_array");
  if (!src) return NULL;
  if (!src->array.release) {
    PyErr_SetString(PyExc_ValueError, "gilprod_wrap: the array was already released or moved");
    return NULL;
  }
  holder* h = calloc(1, sizeof(holder));
  struct ArrowDeviceArray* dst = calloc(1, sizeof(struct ArrowDeviceArray));
  if (!h || !dst) {
    free(h);
    free(dst);
    return PyErr_NoMemory();
  }
  h->inner = *src;
  src->array.release = NULL;  // moved
  Py_INCREF(owner);
  h->owner = owner;
  *dst = h->inner;
  dst->array.private_data = h;
  dst->array.release = release_array;
  PyObject* out = PyCapsule_New(dst, "arrow_device_array", capsule_destructor);
  if (!out) {
    release_array(&dst->array);
    free(dst);
  }
  return out;
}

long long gilprod_releases(void) { return releases; }

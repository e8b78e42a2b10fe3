// Handle capsules (a Go object owned by Python; handles.go holds the Go
// objects) and the unpacking of the methods' arguments.
#include "binding.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"

// A handle is a Go object owned by Python: a capsule whose pointer is the
// handle and whose destructor releases it (synchronously, with the GIL).

static void handle_destructor(PyObject* cap) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  uintptr_t h = (uintptr_t)PyCapsule_GetPointer(cap, HANDLE_NAME);
  if (h) HOLDING_GIL(gdaHandleRelease(h));
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
}

// A stream is settled without the GIL (its read-ahead may need it), then
// released with the GIL (docs/design.md, "A stream's life").
static void stream_handle_destructor(PyObject* cap) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  uintptr_t h = (uintptr_t)PyCapsule_GetPointer(cap, STREAM_HANDLE_NAME);
  if (h) {
    void* c = stream_c_read_of(cap);
    stream_settle_holding_gil(c, h, 1 << 30);
    HOLDING_GIL(gdaHandleRelease(h));
    stream_c_read_free(c);
  }
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
}

static PyObject* wrap_named_handle(uintptr_t h, const char* name, PyCapsule_Destructor destructor) {
  PyObject* cap = PyCapsule_New((void*)h, name, destructor);
  if (!cap) gdaHandleRelease(h);
  return cap;
}
PyObject* wrap_handle(uintptr_t h) { return wrap_named_handle(h, HANDLE_NAME, handle_destructor); }
PyObject* wrap_stream_handle_bare(uintptr_t h) {
  return wrap_named_handle(h, STREAM_HANDLE_NAME, stream_handle_destructor);
}
PyObject* wrap_stream_handle(uintptr_t h) {
  PyObject* cap = wrap_stream_handle_bare(h);
  if (cap && stream_c_read_attach(cap, h) < 0) Py_CLEAR(cap);
  return cap;
}

int get_handle(PyObject* o, uintptr_t* h) {
  if (PyObject_TypeCheck(o, ArrayBase_Type)) return array_base_handle(o, h);
  const char* name = PyCapsule_CheckExact(o) ? PyCapsule_GetName(o) : NULL;
  if (name && (strcmp(name, HANDLE_NAME) == 0 || strcmp(name, STREAM_HANDLE_NAME) == 0)) {
    *h = (uintptr_t)PyCapsule_GetPointer(o, name);
    return 0;
  }
  PyErr_SetString(GodevarrowTypeError, "expected a godevarrow handle");
  return -1;
}

int get_optional_handle(PyObject* o, uintptr_t* h) {
  if (o == Py_None) {
    *h = 0;
    return 0;
  }
  return get_handle(o, h);
}

int get_bool(PyObject* o, int* out) {
  *out = PyObject_IsTrue(o);
  return *out < 0 ? -1 : 0;
}

int get_int64(PyObject* o, int64_t* out) {
  long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) return -1;
  *out = v;
  return 0;
}

// The handles of a sequence of handle holders, in a calloc'd array the
// caller frees (*n of them): 0, or -1 with the Python error set.
int get_handles(PyObject* seq_obj, uintptr_t** hs, Py_ssize_t* n) {
  PyObject* seq = PySequence_Tuple(seq_obj);
  if (!seq) return -1;
  *n = PyTuple_Size(seq);
  *hs = calloc((size_t)(*n ? *n : 1), sizeof(uintptr_t));
  int rc = *hs ? 0 : (PyErr_NoMemory(), -1);
  for (Py_ssize_t i = 0; rc == 0 && i < *n; i++) rc = get_handle(PyTuple_GetItem(seq, i), &(*hs)[i]);
  Py_DECREF(seq);
  if (rc) {
    free(*hs);
    *hs = NULL;
  }
  return rc;
}

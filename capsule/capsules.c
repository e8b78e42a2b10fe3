// Handle capsules (a Go object owned by Python) and the five Arrow capsules,
// with one destructor for all of these.
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
    Py_BEGIN_ALLOW_THREADS stream_settle(c, h, 1 << 30);
    Py_END_ALLOW_THREADS HOLDING_GIL(gdaHandleRelease(h));
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

int array_base_handle(PyObject* o, uintptr_t* h);

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

// ---------------------------------------------------------- Arrow capsules
// One destructor for the five Arrow capsules: the capsule's context says
// where its struct keeps the release callback. It releases only what nobody
// consumed, and frees our allocation; the consumer may have renamed the
// capsule, so it asks the capsule for its name.

static void destroy_arrow_capsule(PyObject* cap, const arrow_kind* k) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  void* p = PyCapsule_GetPointer(cap, PyCapsule_GetName(cap));
  if (p) {
    HOLDING_GIL(release_kind(p, k));
    free(p);
  }
  PyErr_Clear();
  PyErr_Restore(et, ev, etb);
}

// Each kind: its name, size, where its release is, and a destructor that
// hands the kind to destroy_arrow_capsule (a capsule has no other place for it).
#define GDA_ARROW_KIND_DEF(id, name, type, release_member)                                      \
  static void destroy_##id(PyObject* cap) { destroy_arrow_capsule(cap, &id); }                  \
  const arrow_kind id = {name, sizeof(type), offsetof(type, release_member), destroy_##id};
GDA_ARROW_KINDS(GDA_ARROW_KIND_DEF)

void* capsule_pointer(PyObject* cap, const char* name) {
  if (!PyCapsule_CheckExact(cap)) {
    PyObject* got = type_name_of(cap);
    if (got) PyErr_Format(GodevarrowTypeError, "expected a PyCapsule named '%s', got an object of type %U", name, got);
    Py_XDECREF(got);
    return NULL;
  }
  const char* got = PyCapsule_GetName(cap);
  if (!got || strcmp(got, name) != 0) {
    PyErr_Format(ArrowInvalid, "expected a PyCapsule named '%s', got one named '%s'", name, got ? got : "(NULL)");
    return NULL;
  }
  void* p = PyCapsule_GetPointer(cap, name);
  if (!p) {
    PyErr_Clear();
    PyErr_Format(ArrowInvalid, "PyCapsule '%s' holds a NULL pointer", name);
  }
  return p;
}

void* take_struct(void* p, const arrow_kind* k) {
  void* cell = malloc(k->size);
  if (!cell) return PyErr_NoMemory();
  memcpy(cell, p, k->size);
  void (*none)(void*) = NULL;
  memcpy((char*)p + k->release_offset, &none, sizeof(none));
  return cell;
}


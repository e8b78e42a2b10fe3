// The five Arrow capsules, whose kinds binding.h declares.
#include "binding.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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


// import_from: an array from any object that speaks the Arrow PyCapsule
// array protocols. This is the one place their order is decided: the device
// protocol first, then the plain one (unless pyarrow.c knows better for
// pyarrow's own objects), each asked with the consumer's requested schema.
// A pair the held-schema table and its gate accept is held in C (held.h);
// anything else goes to the Go import, which also words every error.
#include "binding.h"
#include "_cgo_export.h"

PyObject* str_device_array;
PyObject* str_array;

// Looks up an optional attribute: 1 and a new reference, 0 when absent, -1 on
// error. Most objects lack most protocols: PyObject_HasAttr answers a miss
// without making an AttributeError (CPython's _PyObject_LookupAttr), which
// PyObject_GetAttr makes and formats, for a tenth of a DLPack import's time.
static int optional_attr(PyObject* obj, PyObject* name, PyObject** out) {
  *out = NULL;
  if (!PyObject_HasAttr(obj, name)) return 0;
  *out = PyObject_GetAttr(obj, name);
  if (*out) return 1;
  if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
  PyErr_Clear();
  return 0;
}

// Calls obj's protocol method `name` (or the method itself, name NULL)
// with the requested schema, if any. A producer that refuses requests
// (pylibcudf raises ValueError for any, nanoarrow NotImplementedError) is
// asked again without one: the Python layer casts on our side, as the
// PyCapsule interface expects of a consumer.
static PyObject* call_protocol(PyObject* method_or_obj, PyObject* name, PyObject* requested) {
  PyObject* r;
  if (requested) {
    r = name ? PyObject_CallMethodObjArgs(method_or_obj, name, requested, NULL)
             : PyObject_CallFunctionObjArgs(method_or_obj, requested, NULL);
    if (r || !(PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_NotImplementedError)))
      return r;
    PyErr_Clear();
  }
  return name ? PyObject_CallMethodObjArgs(method_or_obj, name, NULL) : PyObject_CallNoArgs(method_or_obj);
}

// The (schema, array) pair a protocol method returned: NULL with TypeError
// when it is not a tuple of two.
static int check_pair(PyObject* pair, int device) {
  if (PyTuple_Check(pair) && PyTuple_Size(pair) == 2) return 0;
  const char* what = device ? "__arrow_c_device_array__" : "__arrow_c_array__";
  if (PyTuple_Check(pair)) {
    PyErr_Format(GodevarrowTypeError,
                 "%s() must return a (schema capsule, array capsule) tuple, got tuple of length %zd", what,
                 PyTuple_Size(pair));
  } else {
    PyObject* got = type_name_of(pair);
    if (got) PyErr_Format(GodevarrowTypeError, "%s() must return a (schema capsule, array capsule) tuple, got %U", what, got);
    Py_XDECREF(got);
  }
  return -1;
}

// The import of a pair whose array is on a device other than the CPU may wait
// on that device (the producer's sync_event for pinned or managed memory, a
// device-resident part of the layout), so it runs without the GIL, on structs
// first moved out of the capsules, which other threads may reach. Go consumes
// both (cdevice.ImportDevicePair).
static PyObject* import_off_cpu(void* sp, void* ap, PyTypeObject* cls, gda_held** held_out) {
  struct ArrowSchema* s = take_struct(sp, &ARROW_SCHEMA);
  struct ArrowDeviceArray* a = s ? take_struct(ap, &ARROW_DEVICE_ARRAY) : NULL;
  if (!a) {
    if (s) release_kind(s, &ARROW_SCHEMA);
    free(s);
    return NULL;
  }
  void* held = NULL;
  uintptr_t h = 0;
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaImportDevicePair(s, a, &held, &h, &e);
  Py_END_ALLOW_THREADS free(s);
  free(a);
  if (rc) return raise_error(&e);
  if (held && held_out) *held_out = held;
  return array_base_owning(cls, h, held);
}

PyObject* import_by_protocol(PyObject* obj, PyTypeObject* cls, PyObject* requested, int plain_first,
                             gda_held** held_out) {
  PyObject* pair = NULL;
  int device = 1;
  if (plain_first) {
    pair = call_protocol(obj, str_array, requested);
    if (pair) {
      device = 0;
    } else if (PyErr_ExceptionMatches(PyExc_NotImplementedError)) {
      PyErr_Clear();  // not on the CPU: the device protocol says where
    } else {
      return NULL;
    }
  }
  if (!pair) {
    PyObject* method;
    int found = optional_attr(obj, str_device_array, &method);
    if (found == 0) {
      device = 0;
      found = optional_attr(obj, str_array, &method);
    }
    if (found < 0) return NULL;
    if (found == 0) Py_RETURN_NOTIMPLEMENTED;
    pair = call_protocol(method, NULL, requested);
    Py_DECREF(method);
    if (!pair) return NULL;
  }
  if (check_pair(pair, device)) {
    Py_DECREF(pair);
    return NULL;
  }
  void* sp = capsule_pointer(PyTuple_GetItem(pair, 0), "arrow_schema");
  void* ap = sp ? capsule_pointer(PyTuple_GetItem(pair, 1), device ? "arrow_device_array" : "arrow_array") : NULL;
  if (!ap) {
    Py_DECREF(pair);
    return NULL;
  }
  if (device && ((struct ArrowDeviceArray*)ap)->device_type != ARROW_DEVICE_CPU) {
    // the gate of device memory reads nothing from the device and waits for
    // nothing (held.c): it runs with the GIL held, as the CPU's does; what
    // it declines takes the Go import, which may wait, without the GIL
    gda_held* held;
    if (gda_held_import(sp, ap, 1, &held) == 1) {
      Py_DECREF(pair);  // the capsules' structs were moved and released
      if (held_out) *held_out = held;
      return array_base_owning(cls, 0, held);
    }
    PyObject* r = import_off_cpu(sp, ap, cls, held_out);
    Py_DECREF(pair);  // the moved-out capsules only free their structs
    return r;
  }
  gda_held* held;
  int taken = gda_held_import(sp, ap, device, &held);
  if (taken == 0) {
    // a schema seen for the first time: Go reads it into the held-schema
    // table, then the fast path is tried again
    gda_error e = {0};
    if (gdaCacheSchema(sp, &e)) {
      Py_DECREF(pair);
      return raise_error(&e);
    }
    taken = gda_held_import(sp, ap, device, &held);
  }
  if (taken == 1) {
    Py_DECREF(pair);  // the moved-out capsules only free their structs
    if (held_out) *held_out = held;
    return array_base_owning(cls, 0, held);
  }
  uintptr_t h = 0;
  gda_error e = {0};
  int rc = gdaImportArray(sp, ap, device, &h, &e);
  Py_DECREF(pair);
  if (rc) return raise_error(&e);
  return array_base_owning(cls, h, NULL);
}

PyObject* import_known_array(gda_held_schema* e, struct ArrowDeviceArray* d, PyTypeObject* cls) {
  gda_held* held;
  if (gda_held_import_known(e, d, &held) == 1) return array_base_owning(cls, 0, held);
  // declined (device data, a sync event, or something the Go import words)
  struct ArrowSchema s;
  if (gda_held_schema_export(e, &s) != 0) {
    if (d->array.release) d->array.release(&d->array);
    return PyErr_NoMemory();
  }
  uintptr_t h = 0;
  gda_error err = {0};
  int rc = gdaImportArray(&s, d, 1, &h, &err);
  if (s.release) s.release(&s);
  if (d->array.release) d->array.release(&d->array);
  if (rc) return raise_error(&err);
  return array_base_owning(cls, h, NULL);
}

PyObject* m_import_array(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "import_array");
  int device;
  if (get_bool(args[2], &device)) return NULL;
  void* sp = capsule_pointer(args[0], "arrow_schema");
  void* ap = sp ? capsule_pointer(args[1], device ? "arrow_device_array" : "arrow_array") : NULL;
  if (!ap) return NULL;
  RETURN_HANDLE(gdaImportArray(sp, ap, device, &out_, &e_));
}

// import_from(obj, cls, requested_schema_capsule): an instance of cls (an
// ArrayBase subclass) imported through obj's array protocols (or, with no
// requested schema, through DLPack), or NotImplemented when obj has none
// (the Python layer then tries the CUDA Array Interface) or is one of ours.
PyObject* m_import_from(PyObject* module, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "import_from");
  PyObject* obj = args[0];
  if (!PyType_Check(args[1]) || !PyType_IsSubtype((PyTypeObject*)args[1], ArrayBase_Type)) {
    PyErr_SetString(GodevarrowTypeError, "import_from() needs a subclass of ArrayBase");
    return NULL;
  }
  PyTypeObject* cls = (PyTypeObject*)args[1];
  PyObject* requested = args[2] == Py_None ? NULL : args[2];
  if (PyObject_TypeCheck(obj, ArrayBase_Type)) Py_RETURN_NOTIMPLEMENTED;
  PyObject* out;
  if (!requested && pyarrow_import(obj, cls, &out)) return out;
  out = import_by_protocol(obj, cls, requested, 0, NULL);
  if (out != Py_NotImplemented || requested) return out;
  // no Arrow protocol: DLPack, whose exchange is made here in one C call
  // (the Python layer then tries the CUDA Array Interface)
  Py_DECREF(out);
  return dlpack_import_from(obj, cls);
}

int import_init(void) {
  return (str_device_array = PyUnicode_InternFromString("__arrow_c_device_array__")) &&
                 (str_array = PyUnicode_InternFromString("__arrow_c_array__"))
             ? 0
             : -1;
}

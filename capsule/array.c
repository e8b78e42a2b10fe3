// ArrayBase, the C base class of godevarrow.Array. The exchange protocols of
// an array are called once per exchange, so they live here in C: one call
// each, with no Python frames around it (docs/performance.md, "The fixed
// cost of an exchange").
//
// An ArrayBase owns its data in one of three ways (docs/design.md, "Who owns
// an ArrayBase's data"):
//   - a held import (held != NULL, h == 0 until Go code needs the array):
//     the producer's struct kept in C (held.h); exports are made in C;
//   - a Go handle it releases itself (h != 0, owner == NULL);
//   - a Go handle owned by another object (owner != NULL): the handle
//     capsule or ArrayBase it was made from, kept alive as long as this one.
#include "binding.h"

#include <stdlib.h>
#include "_cgo_export.h"

#define GDA_FIELD_INDEX(type, name, conv) ARRAY_INFO_##name,
enum { GDA_ARRAY_INFO(GDA_FIELD_INDEX) };

typedef struct {
  PyObject_HEAD uintptr_t h;  // the Go handle of a cdevice.Array; 0 until needed when held is set
  PyObject* owner;            // what releases h: the handle capsule or ArrayBase it came from; NULL: we do
  PyObject* info;             // ArrayInfo, computed once
  PyObject* dlpack_device;    // __dlpack_device__'s answer, asked of Go once
  gda_held* held;             // a held import, or NULL
  gda_dlpack_template* dlpack_template;  // __dlpack__'s last, made by Go's export (tensor.c), or NULL
} ArrayBaseObject;

// The Go handle of an ArrayBase, built from its held import on first need.
int array_base_handle(PyObject* o, uintptr_t* h) {
  ArrayBaseObject* a = (ArrayBaseObject*)o;
  if (!a->h && a->held) {
    gda_error e = {0};
    uintptr_t built = 0;
    if (gdaImportHeld(a->held, &built, &e)) {
      raise_error(&e);
      return -1;
    }
    a->h = built;
  }
  *h = a->h;
  return 0;
}

static ArrayBaseObject* array_base_alloc(PyTypeObject* type) {
  return (ArrayBaseObject*)((allocfunc)PyType_GetSlot(type, Py_tp_alloc))(type, 0);
}

static PyObject* ArrayBase_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  PyObject* owner;
  if ((kwds && PyDict_Size(kwds)) || PyTuple_Size(args) != 1) {
    PyObject* cls = PyObject_GetAttrString((PyObject*)type, "__name__");
    if (cls && kwds && PyDict_Size(kwds))
      PyErr_Format(GodevarrowTypeError, "%U() takes no keyword arguments", cls);
    else if (cls)
      PyErr_Format(GodevarrowTypeError, "%U() takes exactly one argument (%zd given)", cls, PyTuple_Size(args));
    Py_XDECREF(cls);
    return NULL;
  }
  owner = PyTuple_GetItem(args, 0);
  uintptr_t h;
  if (PyObject_TypeCheck(owner, ArrayBase_Type) || PyCapsule_IsValid(owner, HANDLE_NAME)) {
    // another view of the same Go array (an Array as a RecordBatch), or a handle
    if (get_handle(owner, &h)) return NULL;
  } else {
    PyObject* cls = PyObject_GetAttrString((PyObject*)type, "__name__");
    PyObject* got = cls ? type_name_of(owner) : NULL;
    if (got)
      PyErr_Format(GodevarrowTypeError,
                   "%U objects are made by godevarrow.array() and friends, not from an object of type %U", cls, got);
    Py_XDECREF(cls);
    Py_XDECREF(got);
    return NULL;
  }
  ArrayBaseObject* self = array_base_alloc(type);
  if (!self) return NULL;
  self->h = h;
  self->owner = Py_NewRef(owner);  // it releases h, so it lives as long as we do
  return (PyObject*)self;
}

PyObject* array_base_owning(PyTypeObject* type, uintptr_t h, gda_held* held) {
  ArrayBaseObject* self = array_base_alloc(type);
  if (!self) {
    if (h) gdaHandleRelease(h);
    if (held) gda_held_unref(held);
    return NULL;
  }
  self->h = h;
  self->held = held;
  return (PyObject*)self;
}

static void ArrayBase_dealloc(ArrayBaseObject* self) {
  Py_CLEAR(self->info);
  Py_CLEAR(self->dlpack_device);
  if (self->owner) {
    Py_CLEAR(self->owner);
  } else if (self->h) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    HOLDING_GIL(gdaHandleRelease(self->h));
    PyErr_Restore(type, value, tb);
  }
  self->h = 0;
  if (self->held) HOLDING_GIL(gda_held_unref(self->held));  // no Python is called: the producer's release is C
  self->held = NULL;
  free(self->dlpack_template);
  self->dlpack_template = NULL;
  PyTypeObject* type = Py_TYPE(self);
  ((freefunc)PyType_GetSlot(type, Py_tp_free))(self);
  Py_DECREF(type);  // instances of a heap type hold a reference to it (subclasses' dealloc leaves it to us)
}

static PyObject* ArrayBase_get_h(ArrayBaseObject* self, void* closure) { return Py_NewRef(self); }

static PyObject* ArrayBase_get_info(ArrayBaseObject* self, PyObject* unused) {
  uintptr_t h;
  if (!self->info && (array_base_handle((PyObject*)self, &h) || !(self->info = array_info_of(h)))) return NULL;
  return Py_NewRef(self->info);
}

// _is_struct(): whether the array is a struct array (a record batch); a held
// import answers from its held schema without Go.
static PyObject* ArrayBase_is_struct(ArrayBaseObject* self, PyObject* unused) {
  if (self->held) return PyBool_FromLong(gda_held_is_record_batch(self->held));
  PyObject* info = ArrayBase_get_info(self, NULL);
  if (!info) return NULL;
  PyObject* is_struct = Py_NewRef(PyStructSequence_GetItem(info, ARRAY_INFO_is_struct));
  Py_DECREF(info);
  return is_struct;
}

// The plain export of self (no requested schema): from C for a held import,
// else through its Go handle.
static PyObject* array_base_export(ArrayBaseObject* self, int device) {
  if (is_poisoned()) return refuse_poisoned();
  uintptr_t h = 0;
  // a held import answers from C, except a plain export of device data (Go
  // copies it) and a device export of an array whose event is put off (Go
  // records it)
  int held = self->held && (device ? !gda_held_put_off_stream(self->held) : gda_held_on_cpu(self->held));
  if (!held && array_base_handle((PyObject*)self, &h)) return NULL;
  struct ArrowSchema* s = calloc(1, sizeof(*s));
  void* a = calloc(1, device ? sizeof(struct ArrowDeviceArray) : sizeof(struct ArrowArray));
  if (!s || !a) {
    free(s);
    free(a);
    return PyErr_NoMemory();
  }
  gda_error e = {0};
  if (held ? gda_held_export(self->held, s, a, device) != 0 : gdaExportArray(h, 0, s, a, device, &e) != 0) {
    free(s);
    free(a);
    return held ? PyErr_NoMemory() : raise_error(&e);
  }
  return arrow_pair(s, a, device);
}

// Calls the Python method `name` of self with a vectorcall's arguments: the
// general path behind a protocol method's C fast path. (The Limited API of
// 3.10 has no vectorcall, so the arguments become a tuple and a dict.)
static PyObject* call_general_path(PyObject* self, const char* name, PyObject* const* args, Py_ssize_t nargs,
                                   PyObject* kwnames) {
  PyObject* method = PyObject_GetAttrString(self, name);
  PyObject* posargs = method ? PyTuple_New(nargs) : NULL;
  PyObject* kwargs = posargs && kwnames ? PyDict_New() : NULL;
  PyObject* result = NULL;
  if (posargs && (kwargs || !kwnames)) {
    int failed = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) PyTuple_SetItem(posargs, i, Py_NewRef(args[i]));
    Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    for (Py_ssize_t i = 0; !failed && i < nkw; i++)
      failed = PyDict_SetItem(kwargs, PyTuple_GetItem(kwnames, i), args[nargs + i]) < 0;
    if (!failed) result = PyObject_Call(method, posargs, kwargs);
  }
  Py_XDECREF(kwargs);
  Py_XDECREF(posargs);
  Py_XDECREF(method);
  return result;
}

// __arrow_c_device_array__(requested_schema=None, **kwargs). The common call
// (no requested schema, no keywords) is answered here; the rest goes to the
// Python method _c_device_array_requested, which handles requests and
// rejects unknown keywords.
static PyObject* ArrayBase_device_array(ArrayBaseObject* self, PyObject* const* args, Py_ssize_t nargs,
                                        PyObject* kwnames) {
  int plain = nargs == 0 || (nargs == 1 && args[0] == Py_None);
  Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t i = 0; plain && i < nkw; i++) plain = args[nargs + i] == Py_None;
  if (plain) return array_base_export(self, 1);
  return call_general_path((PyObject*)self, "_c_device_array_requested", args, nargs, kwnames);
}

// __arrow_c_array__(requested_schema=None): CPU data is exported here; data
// on another device (Go says "not implemented" for a plain export of it, and
// nothing else without a requested schema) and requests go to the Python
// method _c_array_slow, which copies to the host or casts.
static PyObject* ArrayBase_array(ArrayBaseObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  int plain = (nargs == 0 || (nargs == 1 && args[0] == Py_None)) && !kwnames;
  if (plain) {
    PyObject* pair = array_base_export(self, 0);
    if (pair || !PyErr_ExceptionMatches(ArrowNotImplementedError)) return pair;
    PyErr_Clear();
  }
  return call_general_path((PyObject*)self, "_c_array_slow", args, nargs, kwnames);
}

// __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None).
// The common call (the array where it is, no copy asked for) is answered
// here; a dl_device, copy=True, positional or unknown arguments go to the
// Python method _dlpack_general, which copies and words the errors.
static PyObject* ArrayBase_dlpack(ArrayBaseObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (is_poisoned()) return refuse_poisoned();
  PyObject *stream = NULL, *max_version = NULL;
  int general = nargs > 0;
  Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t i = 0; !general && i < nkw; i++) {
    PyObject *k = PyTuple_GetItem(kwnames, i), *v = args[nargs + i];
    if (PyUnicode_CompareWithASCIIString(k, "stream") == 0) {
      stream = v;
    } else if (PyUnicode_CompareWithASCIIString(k, "max_version") == 0) {
      max_version = v;
    } else if (PyUnicode_CompareWithASCIIString(k, "dl_device") == 0) {
      general = v != Py_None;
    } else if (PyUnicode_CompareWithASCIIString(k, "copy") == 0) {
      general = v != Py_None && v != Py_False;
    } else {
      general = 1;
    }
  }
  if (general) return call_general_path((PyObject*)self, "_dlpack_general", args, nargs, kwnames);
  int versioned = 0;
  if (max_version && max_version != Py_None) {
    PyObject* major = PySequence_GetItem(max_version, 0);
    long m = major ? PyLong_AsLong(major) : -1;
    Py_XDECREF(major);
    if (m == -1 && PyErr_Occurred()) return NULL;
    versioned = m >= 1;
  }
  uintptr_t h;
  if (array_base_handle((PyObject*)self, &h)) return NULL;
  // the array's template: later exports for the same consumer stream are
  // made in C while it says nothing needs waiting for (dlpack_c.h);
  // without memory for it, every export goes to Go
  if (!self->dlpack_template) self->dlpack_template = calloc(1, sizeof(gda_dlpack_template));
  return dlpack_export_of(h, versioned, 0, stream, (PyObject*)self, self->dlpack_template);
}

// An array's device never changes: a consumer asks __dlpack_device__ before
// every __dlpack__ (CuPy's and PyTorch's from_dlpack), and Go answers once.
static PyObject* ArrayBase_dlpack_device(ArrayBaseObject* self, PyObject* unused) {
  if (is_poisoned()) return refuse_poisoned();
  if (!self->dlpack_device) {
    uintptr_t h;
    if (array_base_handle((PyObject*)self, &h) || !(self->dlpack_device = dlpack_device_of(h))) return NULL;
  }
  return Py_NewRef(self->dlpack_device);
}

static PyObject* ArrayBase_schema_capsule(ArrayBaseObject* self, PyObject* unused) {
  if (!self->held) {
    PyObject* args[1] = {(PyObject*)self};
    return m_export_schema(NULL, args, 1);
  }
  if (is_poisoned()) return refuse_poisoned();
  struct ArrowSchema* s = calloc(1, sizeof(*s));
  if (!s || gda_held_export_schema(self->held, s) != 0) {
    free(s);
    return PyErr_NoMemory();
  }
  return arrow_capsule(s, &ARROW_SCHEMA);
}

// _to_device(device_type, device_id): a copy on that device, an instance of
// the array's own class (Array.to_device's call: one C call, not a handle
// wrapped again in Python).
static PyObject* ArrayBase_to_device(ArrayBaseObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (is_poisoned()) return refuse_poisoned();
  CHECK_NARGS(2, "_to_device");
  uintptr_t h, out = 0;
  int64_t dtype, id;
  if (get_handle((PyObject*)self, &h) || get_int64(args[0], &dtype) || get_int64(args[1], &id)) return NULL;
  if (dtype < INT32_MIN || dtype > INT32_MAX) return PyErr_Format(ArrowInvalid, "unknown device type %lld", (long long)dtype);
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaArrayToDevice(h, (int32_t)dtype, id, &out, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  return array_base_owning(Py_TYPE(self), out, NULL);
}

static PyMethodDef ArrayBase_methods[] = {
    {"__arrow_c_device_array__", (PyCFunction)(void (*)(void))ArrayBase_device_array, METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_device_array__(requested_schema=None, **kwargs) -> (schema capsule, device array capsule)\n\n"
     "Zero-copy export on any device; fresh, independent capsules per call."},
    {"__arrow_c_array__", (PyCFunction)(void (*)(void))ArrayBase_array, METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_array__(requested_schema=None) -> (schema capsule, array capsule)\n\n"
     "Zero-copy export of CPU data; data on another device is copied to the host."},
    {"__dlpack__", (PyCFunction)(void (*)(void))ArrayBase_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) -> DLPack capsule\n\n"
     "A DLPack capsule over the values of a 1-D numeric array without nulls."},
    {"__dlpack_device__", (PyCFunction)ArrayBase_dlpack_device, METH_NOARGS,
     "__dlpack_device__() -> (device_type, device_id)\n\n"
     "DLPack's device of the tensor __dlpack__ would export."},
    {"__arrow_c_schema__", (PyCFunction)ArrayBase_schema_capsule, METH_NOARGS,
     "__arrow_c_schema__() -> schema capsule of the array's field"},
    {"_is_struct", (PyCFunction)ArrayBase_is_struct, METH_NOARGS,
     "_is_struct() -> whether the array is a struct array (a record batch)"},
    {"_get_info", (PyCFunction)ArrayBase_get_info, METH_NOARGS, "_get_info() -> ArrayInfo (computed once)"},
    {"_to_device", (PyCFunction)(void (*)(void))ArrayBase_to_device, METH_FASTCALL,
     "_to_device(device_type, device_id) -> a copy on that device, of the array's class"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ArrayBase_getset[] = {
    {"_h", (getter)ArrayBase_get_h, NULL, "the handle to pass to _godevarrow functions (the object itself)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot ArrayBase_slots[] = {
    {Py_tp_dealloc, (void*)ArrayBase_dealloc},
    {Py_tp_doc, (void*)"The C part of godevarrow.Array: a handle to a Go array and its exchange protocols."},
    {Py_tp_methods, ArrayBase_methods},
    {Py_tp_getset, ArrayBase_getset},
    {Py_tp_new, (void*)ArrayBase_new},
    {0, NULL},
};

static PyType_Spec ArrayBase_spec = {"godevarrow._godevarrow.ArrayBase", sizeof(ArrayBaseObject), 0,
                                     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, ArrayBase_slots};

PyTypeObject* ArrayBase_Type;

int array_base_init(PyObject* module) {
  ArrayBase_Type = (PyTypeObject*)PyType_FromSpec(&ArrayBase_spec);
  return ArrayBase_Type && PyModule_AddObjectRef(module, "ArrayBase", (PyObject*)ArrayBase_Type) == 0 ? 0 : -1;
}

// ---------------------------------------------------------------- methods
// The array methods of methods.h (their Go halves are in array.go).

// The other work-around for foreign producers (cdevice/foreign_fixes.go; the
// first is schema_borrowed, schema.c), on a capsule that stays the producer's.
PyObject* m_device_array_stamp_device_of_data(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "device_array_stamp_device_of_data");
  struct ArrowDeviceArray* d = capsule_pointer(args[0], "arrow_device_array");
  if (!d) return NULL;
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaDeviceArrayStampDeviceOfData(d, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  Py_RETURN_NONE;
}

PyObject* m_export_array(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "export_array");
  uintptr_t h, req;
  int device;
  if (get_handle(args[0], &h) || get_optional_handle(args[1], &req) || get_bool(args[2], &device)) return NULL;
  struct ArrowSchema* s = calloc(1, sizeof(*s));
  void* a = calloc(1, device ? sizeof(struct ArrowDeviceArray) : sizeof(struct ArrowArray));
  gda_error e = {0};
  if (!s || !a) {
    free(s);
    free(a);
    return PyErr_NoMemory();
  }
  if (gdaExportArray(h, req, s, a, device, &e)) {
    free(s);
    free(a);
    return raise_error(&e);
  }
  return arrow_pair(s, a, device);
}

PyObject* array_info_of(uintptr_t h) { RETURN_RECORD(gda_array_info, gdaArrayInfo(h, &info_, &e_)); }

PyObject* m_array_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "array_info");
  return array_info_of(h);
}

GDA_CHILD_METHOD(array_column, gdaArrayColumn)
GDA_SLICE_METHOD(array_slice, gdaArraySlice)
GDA_VALIDATE_METHOD(array_validate, gdaArrayValidate)

PyObject* m_array_cast(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "array_cast");
  uintptr_t h, s;
  if (get_handle(args[0], &h) || get_handle(args[1], &s)) return NULL;
  RETURN_HANDLE(gdaArrayCast(h, s, &out_, &e_));
}

PyObject* m_array_with_validity(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "array_with_validity");
  uintptr_t h, v;
  int64_t nulls;
  if (get_handle(args[0], &h) || get_handle(args[1], &v) || get_int64(args[2], &nulls)) return NULL;
  RETURN_HANDLE_NOGIL(gdaArrayWithValidity(h, v, nulls, &out_, &e_));
}

PyObject* m_array_as_batch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "array_as_batch");
  RETURN_HANDLE(gdaArrayAsBatch(h, &out_, &e_));
}

PyObject* m_array_copy(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "array_copy");
  RETURN_HANDLE_NOGIL(gdaArrayCopy(h, &out_, &e_));
}

PyObject* m_array_known_null_counts(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "array_known_null_counts");
  RETURN_HANDLE_NOGIL(gdaArrayKnownNullCounts(h, &out_, &e_));
}

PyObject* m_checksums(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "checksums");
  uint32_t* sums = NULL;
  int64_t n = 0;
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaChecksums(h, &sums, &n, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  PyObject* out = PyList_New((Py_ssize_t)n);
  for (int64_t i = 0; out && i < n; i++) {
    PyObject* v = PyLong_FromUnsignedLong(sums[i]);
    if (!v) {
      Py_CLEAR(out);
      break;
    }
    PyList_SetItem(out, (Py_ssize_t)i, v);  // steals; cannot fail in range
  }
  free(sums);
  return out;
}

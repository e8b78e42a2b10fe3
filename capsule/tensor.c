// The tensor protocols' methods: DLPack and the CUDA Array Interface (their
// Go halves are in tensor.go).
#include "binding.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "../gosrc/device/backend.h"  // a backend's C fast paths (the caller's default stream)
#include "../gosrc/dlpack/dlpack.h"    // the DLPack version godevarrow reads and produces

// ------------------------------------------------------------------ DLPack
// A producer's capsule is named "dltensor[_versioned]" until a consumer takes
// it and renames it "used_dltensor[_versioned]"; only an untaken tensor is
// deleted by the capsule destructor (DLPack Python specification).

// Calls the deleter of tensor p, once (DLPack: the producer's, in C).
static void dlpack_delete(void* p, int versioned) {
  if (versioned) {
    struct DLManagedTensorVersioned* t = p;
    if (t->deleter) t->deleter(t);
  } else {
    DLManagedTensor* t = p;
    if (t->deleter) t->deleter(t);
  }
}

static void dlpack_capsule_destructor(PyObject* cap) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  const char* name = PyCapsule_GetName(cap);
  int versioned = name && strcmp(name, "dltensor_versioned") == 0;
  if (versioned || (name && strcmp(name, "dltensor") == 0)) {
    void* p = PyCapsule_GetPointer(cap, name);
    if (p) HOLDING_GIL(dlpack_delete(p, versioned));
  }
  PyErr_Clear();
  PyErr_Restore(et, ev, etb);
}

void gda_py_incref(void* obj) { Py_INCREF((PyObject*)obj); }

void gda_py_decref(void* obj) {
  // After interpreter shutdown the object is gone with it: leak, as numpy does.
  if (!Py_IsInitialized()) return;
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF((PyObject*)obj);
  PyGILState_Release(state);
}

// The stream argument of __dlpack__: None (*given 0) or an int that is not a
// bool; Go checks its value against DLPack's rules (dlpack.ConsumerStream).
static int get_dlpack_stream(PyObject* o, int64_t* stream, int* given) {
  *stream = 0;
  *given = 0;
  if (!o || o == Py_None) return 0;
  if (!PyLong_Check(o) || PyBool_Check(o)) {
    PyObject* got = type_name_of(o);
    if (got) PyErr_Format(ArrowInvalid, "stream must be an int or None, got %U", got);
    Py_XDECREF(got);
    return -1;
  }
  long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) return -1;
  *stream = v;
  *given = 1;
  return 0;
}

// A tensor of the array behind h (the ArrayBase keeper, when set, keeps it
// alive; see dlpack.ExportOptions.Keeper). tmpl, when set, is the array's
// DLPack template (ArrayBase's): a tensor for the consumer stream it fits
// (gda_dlpack_template_fits) is made from it in C, with no call into Go;
// otherwise Go exports and fills it for the next time.
PyObject* dlpack_export_of(uintptr_t h, int versioned, int copied, PyObject* stream_obj, PyObject* keeper,
                           gda_dlpack_template* tmpl) {
  int64_t stream;
  int given;
  if (get_dlpack_stream(stream_obj, &stream, &given)) return NULL;
  void* p = NULL;
  gda_error e = {0};
  // the tensor holds keeper (the Python array), and its deleter lets go of
  // it with no call into Go (dlpack.ExportOptions.Keeper)
  Py_XINCREF(keeper);
  if (tmpl && keeper && !copied && gda_dlpack_template_fits(tmpl, stream, given)) {
    if (!(p = gda_dlpack_from_template(tmpl, versioned, 0, 0, gda_py_decref, keeper))) {
      Py_DECREF(keeper);
      return PyErr_NoMemory();
    }
  } else if (gdaDLPackExport(h, versioned, copied, stream, given, keeper ? (void*)gda_py_decref : NULL, keeper, tmpl,
                             &p, &e)) {
    Py_XDECREF(keeper);
    return raise_error(&e);
  }
  PyObject* cap = PyCapsule_New(p, versioned ? "dltensor_versioned" : "dltensor", dlpack_capsule_destructor);
  if (!cap) dlpack_delete(p, versioned);
  return cap;
}

// dlpack_export(handle, versioned, copied, stream): stream as __dlpack__ got it.
PyObject* m_dlpack_export(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(4, "dlpack_export");
  uintptr_t h;
  int versioned, copied;
  if (get_handle(args[0], &h) || get_bool(args[1], &versioned) || get_bool(args[2], &copied)) return NULL;
  return dlpack_export_of(h, versioned, copied, args[3], NULL, NULL);
}

// The stream a consumer named to a producer (gdaDLPackConsumerStream): the
// handle passed as __dlpack__'s stream (0: none), and the pooled stream it
// is, which the import gives back (0: the caller's own default stream).
typedef struct {
  int64_t device_type, device_id;
  uintptr_t stream, owned;
} named_stream;

// Gives a named pooled stream back when no import follows (the producer failed).
static void named_stream_drop(named_stream* n) {
  if (n->owned) gdaHandleRelease(n->owned);
  n->owned = 0;
}

// Whether a tensor on dev may be held in C, ordered on the stream named to
// its producer (*put_off: that stream, or 0 when none was named): not on a
// pooled stream (Go gives it back after recording the event), and a named
// stream must still be the caller's default stream of the tensor's device
// (the producer ran Python code since it was asked, which may have made
// another context current).
static int holdable_on(const named_stream* named, DLDevice dev, uintptr_t* put_off) {
  *put_off = 0;
  if (named->owned) return 0;
  if (dev.device_type == kDLCPU || !named->stream) return 1;
  if (named->device_type != dev.device_type || named->device_id != dev.device_id) return 0;
  *put_off = named->stream;
  return gda_caller_default_stream(dev.device_type, dev.device_id) == named->stream;
}

// Takes the tensor of a producer's capsule (renaming it used first, so that
// from here on it is deleted exactly once) and imports it, ordered after the
// stream named to the producer (NULL: none), which it gives back: held in C
// when the fast path takes it (gda_dlpack_hold: *held, no call into Go),
// else by Go (a handle in *out). Only a CPU tensor's Go import can take time
// (booleans are packed into bits), so only it runs without the GIL; a device
// tensor's records an event and returns.
static int dlpack_take(PyObject* cap, named_stream* named, uintptr_t* out, gda_held** held) {
  named_stream none = {0};
  if (!named) named = &none;
  if (!PyCapsule_CheckExact(cap)) {
    PyObject* got = type_name_of(cap);
    if (got) PyErr_Format(GodevarrowTypeError, "__dlpack__() returned an object of type %U, not a PyCapsule", got);
    Py_XDECREF(got);
    named_stream_drop(named);
    return -1;
  }
  const char* name = PyCapsule_GetName(cap);
  int versioned = name && strcmp(name, "dltensor_versioned") == 0;
  if (!versioned && !(name && strcmp(name, "dltensor") == 0)) {
    PyErr_Format(ArrowInvalid, "expected a DLPack capsule named 'dltensor' or 'dltensor_versioned', got '%s'",
                 name ? name : "(NULL)");
    named_stream_drop(named);
    return -1;
  }
  void* p = PyCapsule_GetPointer(cap, name);
  if (!p || PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0) {
    named_stream_drop(named);
    return -1;
  }
  DLTensor* t = versioned ? &((struct DLManagedTensorVersioned*)p)->dl_tensor : &((DLManagedTensor*)p)->dl_tensor;
  uintptr_t put_off;
  if (holdable_on(named, t->device, &put_off) && gda_dlpack_hold(p, versioned, put_off, held) == 1) return 0;
  gda_error e = {0};
  int rc;
  if (t->device.device_type == kDLCPU) {
    Py_BEGIN_ALLOW_THREADS rc = gdaDLPackImport(p, versioned, named->device_type, named->device_id, named->stream,
                                                named->owned, out, &e);
    Py_END_ALLOW_THREADS
  } else {
    rc = gdaDLPackImport(p, versioned, named->device_type, named->device_id, named->stream, named->owned, out, &e);
  }
  named->owned = 0;  // given back by the import
  if (rc) {
    raise_error(&e);
    return -1;
  }
  return 0;
}

// dlpack_import(capsule): the tensor imported with no stream named (tests).
PyObject* m_dlpack_import(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "dlpack_import");
  uintptr_t h = 0;
  gda_held* held = NULL;
  if (dlpack_take(args[0], NULL, &h, &held)) return NULL;
  if (held) {  // a handle is asked for: Go's array of the held import
    gda_error e = {0};
    int rc = gdaImportHeld(held, &h, &e);
    gda_held_unref(held);
    if (rc) return raise_error(&e);
  }
  return wrap_handle(h);
}

// The device a producer's __dlpack_device__ (method) names: 0, or -1 with an error.
static int dlpack_device_of_producer(PyObject* method, int64_t* type, int64_t* id) {
  PyObject* dev = PyObject_CallNoArgs(method);
  if (!dev) return -1;
  PyObject *t = NULL, *i = NULL;
  if (PySequence_Check(dev) && PySequence_Size(dev) == 2) {
    t = PySequence_GetItem(dev, 0);
    i = t ? PySequence_GetItem(dev, 1) : NULL;
  } else if (!PyErr_Occurred()) {
    PyErr_SetString(PyExc_ValueError, "__dlpack_device__() must return a (device_type, device_id) pair");
  }
  int rc = -1;
  if (t && i) {
    *type = PyLong_AsLongLong(t);
    *id = *type == -1 && PyErr_Occurred() ? -1 : PyLong_AsLongLong(i);
    rc = PyErr_Occurred() ? -1 : 0;
  }
  Py_XDECREF(t);
  Py_XDECREF(i);
  Py_DECREF(dev);
  return rc;
}

// The DLPack consumer's side of an exchange, in C (gda.array(x) of a CuPy
// array or a PyTorch tensor takes it; docs/cuda.md, "DLPack"):
//   1. the tensor's device, from __dlpack_device__ (when the producer has it);
//   2. for a device type with streams, the stream to name to the producer
//      (dlpack.StreamForProducer decides: the caller's default stream when
//      its current context is the device's, else a pooled one);
//   3. __dlpack__(max_version=(1, 1), stream=...), or without max_version
//      for a producer that predates DLPack 1.0's keywords (TypeError);
//   4. the import, which records the array's event on that stream.
// Two calls into Go (2 and 4): the stream comes back as an integer, and the
// import gives a pooled one back itself.
static PyObject *str_dlpack, *str_dlpack_device, *str_stream, *str_max_version, *dlpack_version;

static PyObject* dlpack_import_object(PyObject* obj, PyObject* method, PyTypeObject* cls) {
  PyObject *kwargs = PyDict_New(), *cap = NULL, *result = NULL;
  named_stream named = {0};
  if (!kwargs) return NULL;
  PyObject* device_method = PyObject_GetAttr(obj, str_dlpack_device);  // a DLPack producer has it
  if (!device_method && PyErr_ExceptionMatches(PyExc_AttributeError)) {
    PyErr_Clear();  // one that predates it: no device, no stream
  } else if (!device_method) {
    goto done;
  } else {
    int64_t type, id;
    int failed = dlpack_device_of_producer(device_method, &type, &id);
    Py_DECREF(device_method);
    if (failed) goto done;
    int given = 0;
    gda_error e = {0};
    named.device_type = type;
    named.device_id = id > 0 ? id : 0;
    // the caller's default stream, asked of the backend's C vtable when it
    // has one (the common case: CuPy and PyTorch make the device's context
    // current); else Go decides (dlpack.StreamForProducer)
    if (type >= INT32_MIN && type <= INT32_MAX && named.device_id <= INT32_MAX &&
        (named.stream = gda_caller_default_stream((int32_t)type, (int)named.device_id)) != 0) {
      given = 1;
    } else if (gdaDLPackConsumerStream(type, named.device_id, &given, &named.stream, &named.owned, &e)) {
      raise_error(&e);
      goto done;
    }
    if (given) {
      PyObject* s = PyLong_FromUnsignedLongLong(named.stream);
      if (!s || PyDict_SetItem(kwargs, str_stream, s) < 0) {
        Py_XDECREF(s);
        goto done;
      }
      Py_DECREF(s);
    }
  }
  if (PyDict_SetItem(kwargs, str_max_version, dlpack_version) < 0) goto done;
  PyObject* no_args = PyTuple_New(0);
  if (!no_args) goto done;
  cap = PyObject_Call(method, no_args, kwargs);
  if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();  // a producer that predates DLPack 1.0's keywords
    if (PyDict_DelItem(kwargs, str_max_version) == 0) cap = PyObject_Call(method, no_args, kwargs);
  }
  Py_DECREF(no_args);
  if (!cap) goto done;
  uintptr_t h = 0;
  gda_held* held = NULL;
  if (dlpack_take(cap, &named, &h, &held) == 0) result = array_base_owning(cls, h, held);
done:
  named_stream_drop(&named);  // when no import took it
  Py_XDECREF(cap);
  Py_DECREF(kwargs);
  return result;
}

PyObject* dlpack_import_from(PyObject* obj, PyTypeObject* cls) {
  PyObject* method = PyObject_GetAttr(obj, str_dlpack);  // asked last: most objects here have it
  if (!method) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
    PyErr_Clear();
    Py_RETURN_NOTIMPLEMENTED;
  }
  PyObject* r = dlpack_import_object(obj, method, cls);
  Py_DECREF(method);
  return r;
}

int tensor_init(void) {
  return (str_dlpack = PyUnicode_InternFromString("__dlpack__")) &&
                 (str_dlpack_device = PyUnicode_InternFromString("__dlpack_device__")) &&
                 (str_stream = PyUnicode_InternFromString("stream")) &&
                 (str_max_version = PyUnicode_InternFromString("max_version")) &&
                 (dlpack_version = Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION))
             ? 0
             : -1;
}

// dlpack_import_from(obj, cls): obj as an instance of cls through DLPack, or
// NotImplemented when it has no __dlpack__.
PyObject* m_dlpack_import_from(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "dlpack_import_from");
  if (!PyType_Check(args[1]) || !PyType_IsSubtype((PyTypeObject*)args[1], ArrayBase_Type)) {
    PyErr_SetString(GodevarrowTypeError, "dlpack_import_from() needs a subclass of ArrayBase");
    return NULL;
  }
  return dlpack_import_from(args[0], (PyTypeObject*)args[1]);
}

PyObject* dlpack_device_of(uintptr_t h) {
  int32_t t = 0;
  int64_t id = 0;
  gda_error e = {0};
  if (gdaDLPackDevice(h, &t, &id, &e)) return raise_error(&e);
  return Py_BuildValue("(iL)", (int)t, (long long)id);
}

PyObject* m_dlpack_device(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "dlpack_device");
  return dlpack_device_of(h);
}

// dlpack_consumer_stream(device_type, device_id) -> (stream or None, pooled):
// the stream a consumer names to a producer (tests); a pooled one goes back
// to its backend at once.
PyObject* m_dlpack_consumer_stream(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "dlpack_consumer_stream");
  named_stream named = {0};
  int given = 0;
  if (get_int64(args[0], &named.device_type) || get_int64(args[1], &named.device_id)) return NULL;
  gda_error e = {0};
  if (gdaDLPackConsumerStream(named.device_type, named.device_id, &given, &named.stream, &named.owned, &e))
    return raise_error(&e);
  int pooled = named.owned != 0;
  named_stream_drop(&named);
  if (!given) return Py_BuildValue("(OO)", Py_None, Py_False);
  return Py_BuildValue("(KN)", (unsigned long long)named.stream, PyBool_FromLong(pooled));
}

PyObject* m_device_traits(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "device_traits");
  int64_t type;
  if (get_int64(args[0], &type)) return NULL;
  int host = 0, streams = 0, device_memory = 0;
  gdaDeviceTraits(type, &host, &streams, &device_memory);
  return Py_BuildValue("(NNN)", PyBool_FromLong(host), PyBool_FromLong(streams), PyBool_FromLong(device_memory));
}

PyObject* m_device_count(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "device_count");
  int64_t type;
  if (get_int64(args[0], &type)) return NULL;
  int64_t n;
  // the first call may open a driver
  Py_BEGIN_ALLOW_THREADS n = gdaDeviceCount(type);
  Py_END_ALLOW_THREADS return PyLong_FromLongLong((long long)n);
}

PyObject* m_tensor_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "tensor_info");
  uintptr_t h;
  int ready;
  if (get_handle(args[0], &h) || get_bool(args[1], &ready)) return NULL;
  RETURN_RECORD(gda_tensor_info, gdaTensorInfo(h, ready, &info_, &e_));
}

PyObject* m_wrap_cuda_pointer(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(5, "wrap_cuda_pointer");
  const char* format = PyUnicode_AsUTF8AndSize(args[1], NULL);
  if (!format) return NULL;
  unsigned long long data = PyLong_AsUnsignedLongLong(args[2]);
  if (data == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  int64_t length;
  if (get_int64(args[3], &length)) return NULL;
  unsigned long long stream = PyLong_AsUnsignedLongLong(args[4]);
  if (stream == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  RETURN_HANDLE(gdaWrapCUDAPointer(args[0], (char*)format, (uintptr_t)data, length, (uintptr_t)stream, &out_, &e_));
}

// The tensor protocols' methods: DLPack and the CUDA Array Interface (their
// Go halves are in tensor.go).
#include "binding.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"

// ------------------------------------------------------------------ DLPack
// A producer's capsule is named "dltensor[_versioned]" until a consumer takes
// it and renames it "used_dltensor[_versioned]"; only an untaken tensor is
// deleted by the capsule destructor (DLPack Python specification).

static void dlpack_capsule_destructor(PyObject* cap) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  const char* name = PyCapsule_GetName(cap);
  int versioned = name && strcmp(name, "dltensor_versioned") == 0;
  if (versioned || (name && strcmp(name, "dltensor") == 0)) {
    void* p = PyCapsule_GetPointer(cap, name);
    if (p) HOLDING_GIL(gdaDLPackDelete(p, versioned));
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

PyObject* m_dlpack_export(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(4, "dlpack_export");
  uintptr_t h;
  int versioned, copied;
  int64_t stream;
  if (get_handle(args[0], &h) || get_bool(args[1], &versioned) || get_bool(args[2], &copied) ||
      get_int64(args[3], &stream))
    return NULL;
  void* p = NULL;
  gda_error e = {0};
  if (gdaDLPackExport(h, versioned, copied, stream, &p, &e)) return raise_error(&e);
  PyObject* cap = PyCapsule_New(p, versioned ? "dltensor_versioned" : "dltensor", dlpack_capsule_destructor);
  if (!cap) gdaDLPackDelete(p, versioned);
  return cap;
}

// dlpack_import(capsule, stream_handle_or_None): the stream is the one the
// consumer passed to __dlpack__ (a handle from dlpack_consumer_stream).
PyObject* m_dlpack_import(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "dlpack_import");
  PyObject* cap = args[0];
  uintptr_t stream = 0;
  if (get_optional_handle(args[1], &stream)) return NULL;
  if (!PyCapsule_CheckExact(cap)) {
    PyObject* got = type_name_of(cap);
    if (got) PyErr_Format(GodevarrowTypeError, "__dlpack__() returned an object of type %U, not a PyCapsule", got);
    Py_XDECREF(got);
    return NULL;
  }
  const char* name = PyCapsule_GetName(cap);
  int versioned = name && strcmp(name, "dltensor_versioned") == 0;
  if (!versioned && !(name && strcmp(name, "dltensor") == 0)) {
    PyErr_Format(ArrowInvalid, "expected a DLPack capsule named 'dltensor' or 'dltensor_versioned', got '%s'",
                 name ? name : "(NULL)");
    return NULL;
  }
  void* p = PyCapsule_GetPointer(cap, name);
  if (!p) return NULL;
  // take ownership before anything else can fail: from here on Go deletes it
  if (PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0) return NULL;
  RETURN_HANDLE_NOGIL(gdaDLPackImport(p, versioned, stream, &out_, &e_));
}

PyObject* m_dlpack_device(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "dlpack_device");
  int32_t t = 0;
  int64_t id = 0;
  gda_error e = {0};
  if (gdaDLPackDevice(h, &t, &id, &e)) return raise_error(&e);
  return Py_BuildValue("(iL)", (int)t, (long long)id);
}

PyObject* m_dlpack_consumer_stream(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "dlpack_consumer_stream");
  int64_t type, dev;
  if (get_int64(args[0], &type) || get_int64(args[1], &dev)) return NULL;
  uintptr_t h = 0, stream = 0;
  gda_error e = {0};
  if (gdaDLPackConsumerStream(type, dev, &h, &stream, &e)) return raise_error(&e);
  PyObject* handle = wrap_handle(h);
  if (!handle) return NULL;
  return Py_BuildValue("(NK)", handle, (unsigned long long)stream);
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

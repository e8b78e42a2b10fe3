// The stream methods of methods.h (their Go halves are in stream.go):
// import and export, reads (blocking, ready-only, and the StreamIterator
// type), wake pipes, close, and the streams made from arrays, casts and
// read-ahead.
#include "binding.h"

#include <pthread.h>
#include <stdlib.h>

#include "_cgo_export.h"

PyObject* m_import_stream(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "import_stream");
  int device;
  if (get_bool(args[1], &device)) return NULL;
  const arrow_kind* k = device ? &ARROW_DEVICE_STREAM : &ARROW_STREAM;
  void* p = capsule_pointer(args[0], k->name);
  void* cell = p ? take_struct(p, k) : NULL;
  if (!cell) return NULL;
  uintptr_t h = 0;
  gda_error e = {0};
  int rc;
  // get_schema of a foreign stream may block
  Py_BEGIN_ALLOW_THREADS rc = gdaStreamImport(cell, device, &h, &e);
  Py_END_ALLOW_THREADS release_kind(cell, k);  // a no-op: Go moved it out or released it
  free(cell);
  if (rc) return raise_error(&e);
  return wrap_stream_handle(h);
}

PyObject* m_export_stream(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "export_stream");
  uintptr_t h, req;
  int device;
  if (get_handle(args[0], &h) || get_optional_handle(args[1], &req) || get_bool(args[2], &device)) return NULL;
  const arrow_kind* k = device ? &ARROW_DEVICE_STREAM : &ARROW_STREAM;
  void* s = calloc(1, k->size);
  if (!s) return PyErr_NoMemory();
  gda_error e = {0};
  if (gdaExportStream(h, req, s, device, &e)) {
    free(s);
    return raise_error(&e);
  }
  return arrow_capsule(s, k);
}

PyObject* m_stream_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "stream_info");
  RETURN_RECORD(gda_stream_info, gdaStreamInfo(h, &info_, &e_));
}

// The next array of the stream behind handle as a cls instance (held in C
// when the gate takes it), Py_None at the end, or NULL with an exception.
static PyObject* stream_read(PyObject* handle, PyTypeObject* cls) {
  uintptr_t h, out = 0;
  void* held = NULL;  // the array held in C (held.h), or a Go handle in out
  if (get_handle(handle, &h)) return NULL;
  gda_error e = {0};
  int rc;
  // A read-ahead stream, or another thread's read of this one, is waited on
  // in slices, so that Ctrl-C is handled promptly while a producer blocks;
  // other reads run to completion. The thread lets Go refuse a read from
  // inside this stream's own producer, which would wait for itself.
  uint64_t thread = (uint64_t)pthread_self();
  for (;;) {
    Py_BEGIN_ALLOW_THREADS rc = gdaStreamNext(h, 100, thread, &out, &held, &e);
    Py_END_ALLOW_THREADS if (rc != GDA_PENDING) break;
    if (PyErr_CheckSignals() < 0) return NULL;
  }
  if (rc) return raise_error(&e);
  if (!out && !held) Py_RETURN_NONE;
  if (PyErr_CheckSignals() < 0) {
    // a signal arrived during the read: raise it, and keep the array for
    // the next call instead of dropping it with the exception
    gdaStreamUnread(h, out, held);
    return NULL;
  }
  return array_base_owning(cls, out, held);
}

static int check_array_class(PyObject* cls, const char* caller) {
  if (PyType_Check(cls) && PyType_IsSubtype((PyTypeObject*)cls, ArrayBase_Type)) return 0;
  PyErr_Format(GodevarrowTypeError, "%s() needs a subclass of ArrayBase", caller);
  return -1;
}

// stream_try_next(handle, cls): the next array if one is ready now, None at
// the end, NotImplemented when nothing is ready (the GIL is held: nothing
// here waits or calls a producer).
PyObject* m_stream_try_next(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "stream_try_next");
  uintptr_t h, out = 0;
  void* held = NULL;
  if (check_array_class(args[1], "stream_try_next") || get_handle(args[0], &h)) return NULL;
  gda_error e = {0};
  int rc = gdaStreamTryNext(h, &out, &held, &e);
  if (rc == GDA_PENDING) Py_RETURN_NOTIMPLEMENTED;
  if (rc) return raise_error(&e);
  if (!out && !held) Py_RETURN_NONE;
  return array_base_owning((PyTypeObject*)args[1], out, held);
}

PyObject* m_stream_set_wake(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(2, "stream_set_wake");
  int64_t fd;
  if (get_int64(args[1], &fd)) return NULL;
  gda_error e = {0};
  if (gdaStreamSetWake(h, fd, &e)) return raise_error(&e);
  Py_RETURN_NONE;
}

PyObject* m_stream_arm_wake(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(2, "stream_arm_wake");
  int on;
  if (get_bool(args[1], &on)) return NULL;
  gda_error e = {0};
  if (gdaStreamArmWake(h, on, &e)) return raise_error(&e);
  Py_RETURN_NONE;
}

PyObject* m_stream_next(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "stream_next");
  if (check_array_class(args[1], "stream_next")) return NULL;
  return stream_read(args[0], (PyTypeObject*)args[1]);
}

// stream_iter(handle, cls): an iterator over the stream's arrays. A for loop
// over an ArrayStream runs no Python code per array: with a held array
// (held.h), one read is one call into Go, one into the producer, and the
// array object (docs/performance.md, "Reading a stream").
typedef struct {
  PyObject_HEAD PyObject* handle;
  PyObject* cls;
  int ready_first;  // a read-ahead stream: take a ready array before releasing the GIL
} StreamIterObject;

static PyTypeObject* StreamIter_Type;

static PyObject* StreamIter_next(PyObject* self) {
  StreamIterObject* it = (StreamIterObject*)self;
  PyObject* r = NULL;
  if (it->ready_first) {
    PyObject* args[2] = {it->handle, it->cls};
    if (!(r = m_stream_try_next(NULL, args, 2))) return NULL;
    if (r == Py_NotImplemented) Py_CLEAR(r);  // nothing ready: wait for it
  }
  if (!r) r = stream_read(it->handle, (PyTypeObject*)it->cls);
  if (r == Py_None) {
    Py_DECREF(r);
    return NULL;  // the end: StopIteration
  }
  return r;
}

static void StreamIter_dealloc(PyObject* self) {
  StreamIterObject* it = (StreamIterObject*)self;
  PyTypeObject* type = Py_TYPE(self);
  Py_CLEAR(it->handle);
  Py_CLEAR(it->cls);
  ((freefunc)PyType_GetSlot(type, Py_tp_free))(self);
  Py_DECREF(type);  // instances of a heap type hold a reference to it
}

static PyObject* StreamIter_iter(PyObject* self) { return Py_NewRef(self); }

static PyType_Slot StreamIter_slots[] = {
    {Py_tp_iter, (void*)StreamIter_iter},
    {Py_tp_iternext, (void*)StreamIter_next},
    {Py_tp_dealloc, (void*)StreamIter_dealloc},
    {Py_tp_doc, (void*)"An iterator over the arrays of a stream (made by ArrayStream.__iter__)."},
    {0, NULL},
};

static PyType_Spec StreamIter_spec = {"godevarrow._godevarrow.StreamIterator", sizeof(StreamIterObject), 0,
                                      Py_TPFLAGS_DEFAULT, StreamIter_slots};

int stream_iter_init(PyObject* module) {
  StreamIter_Type = (PyTypeObject*)PyType_FromSpec(&StreamIter_spec);
  return StreamIter_Type && PyModule_AddObjectRef(module, "StreamIterator", (PyObject*)StreamIter_Type) == 0 ? 0 : -1;
}

PyObject* m_stream_iter(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "stream_iter");
  uintptr_t h;
  int ready_first;
  if (check_array_class(args[1], "stream_iter") || get_handle(args[0], &h) || get_bool(args[2], &ready_first))
    return NULL;
  StreamIterObject* it = (StreamIterObject*)((allocfunc)PyType_GetSlot(StreamIter_Type, Py_tp_alloc))(StreamIter_Type, 0);
  if (!it) return NULL;
  it->handle = Py_NewRef(args[0]);
  it->cls = Py_NewRef(args[1]);
  it->ready_first = ready_first;
  return (PyObject*)it;
}

PyObject* m_stream_close(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "stream_close");
  // settle without the GIL (a read elsewhere may need it), release with it
  for (;;) {
    gda_error e = {0};
    int idle, rc;
    Py_BEGIN_ALLOW_THREADS idle = gdaStreamSettle(h, 100);
    Py_END_ALLOW_THREADS if (idle) {
      rc = gdaStreamClose(h, &e);
      if (rc == 0) Py_RETURN_NONE;
      if (rc != GDA_PENDING) return raise_error(&e);
    }
    if (PyErr_CheckSignals() < 0) return NULL;
  }
}

PyObject* m_stream_prefetch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "stream_prefetch");
  uintptr_t h, out = 0;
  int64_t depth;
  if (get_handle(args[0], &h) || get_int64(args[1], &depth)) return NULL;
  gda_error e = {0};
  return gdaStreamPrefetch(h, depth, &out, &e) ? raise_error(&e) : wrap_stream_handle(out);
}

PyObject* m_stream_cast(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "stream_cast");
  uintptr_t h, schema, out = 0;
  if (get_handle(args[0], &h) || get_handle(args[1], &schema)) return NULL;
  gda_error e = {0};
  return gdaStreamCast(h, schema, &out, &e) ? raise_error(&e) : wrap_stream_handle(out);
}

PyObject* m_stream_from_arrays(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "stream_from_arrays");
  uintptr_t schema, *hs, out = 0;
  Py_ssize_t n;
  if (get_optional_handle(args[1], &schema) || get_handles(args[0], &hs, &n)) return NULL;
  gda_error e = {0};
  int rc = gdaStreamFromArrays(hs, n, schema, &out, &e);
  free(hs);
  return rc ? raise_error(&e) : wrap_stream_handle(out);
}

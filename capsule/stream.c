// The stream methods of methods.h (their Go halves are in stream.go): import and export,
// and the streams made from arrays, casts and read-ahead; close (ArrayStream.close, whose C
// base is stream_base.c); the C bookkeeping of a stream (stream_state.h). The reads are
// stream_read.c's (the for loop's iterator: stream_iter.c; asyncio's awaitable and the wake
// pipe: stream_async.c).
#include "binding.h"

#include <stdlib.h>

#include "_cgo_export.h"
#include "stream_state.h"

// ---------------------------------------------------- the C bookkeeping

void stream_c_read_free(void* ctx) {
  stream_c_read* c = ctx;
  if (!c) return;
  gda_gate_unref(c->gate);
  free(c);
}

// Attaches what gdaStreamCRead gave to cap, with a reference to the gate
// (the capsule may outlive the stream's Go half by a moment: its
// destructor releases the handle first).
static int stream_c_read_set(PyObject* cap, void* gate, void* src, int flags) {
  if (!gate) return 0;
  stream_c_read* c = malloc(sizeof(*c));
  if (!c) return 0;  // out of memory: this stream's reads go through Go's gate calls
  gda_gate_ref(gate);
  *c = (stream_c_read){.gate = gate, .src = src, .flags = flags};
  if (PyCapsule_SetContext(cap, c) != 0) {
    stream_c_read_free(c);
    return -1;
  }
  return 0;
}

int stream_c_read_attach(PyObject* cap, uintptr_t h) {
  void *gate = NULL, *src = NULL;
  int flags = 0;
  gdaStreamCRead(h, &gate, &src, &flags);
  return stream_c_read_set(cap, gate, src, flags);
}

void* stream_c_read_of(PyObject* o) { return PyCapsule_CheckExact(o) ? PyCapsule_GetContext(o) : NULL; }

async_pace* stream_async_pace(void* c) { return c ? &((stream_c_read*)c)->pace : NULL; }

int stream_ref_of(PyObject* handle, stream_ref* out) {
  *out = (stream_ref){handle, 0, stream_c_read_of(handle)};
  return get_handle(handle, &out->h);
}

// Whether settling c is waiting for its gate alone, in C: it has bookkeeping
// and no read-ahead to stop.
static int settles_in_gate(stream_c_read* c) { return c && !(flags_of(c) & GDA_OVER_READ_AHEAD); }

int stream_settle(void* ctx, uintptr_t h, int timeout_ms) {
  stream_c_read* c = ctx;
  if (settles_in_gate(c)) return gda_gate_wait_idle(c->gate, timeout_ms);
  return gdaStreamSettle(h, timeout_ms);
}

int stream_settle_holding_gil(void* ctx, uintptr_t h, int timeout_ms) {
  stream_c_read* c = ctx;
  // A stream settled in its gate whose gate is idle is settled: checked
  // without a wait, which the gate's lock allows with the GIL held (nothing
  // holds that lock while it needs the GIL). Every close of a stream one
  // thread reads ends here, sparing the GIL's release and retaking.
  if (settles_in_gate(c) && gda_gate_wait_idle(c->gate, 0)) return 1;
  int idle;
  Py_BEGIN_ALLOW_THREADS idle = stream_settle(c, h, timeout_ms);
  Py_END_ALLOW_THREADS return idle;
}

// ---------------------------------------------------------------- imports

// The stream in a producer's stream capsule (an arrow_device_array_stream
// when device, else an arrow_array_stream), moved out and imported.
static PyObject* import_stream_capsule(PyObject* capsule, int device) {
  const arrow_kind* k = device ? &ARROW_DEVICE_STREAM : &ARROW_STREAM;
  void* p = capsule_pointer(capsule, k->name);
  void* cell = p ? take_struct(p, k) : NULL;
  if (!cell) return NULL;
  uintptr_t h = 0;
  void *gate = NULL, *src = NULL;
  int flags = 0;
  gda_error e = {0};
  int rc;
  // get_schema of a foreign stream may block
  Py_BEGIN_ALLOW_THREADS rc = gdaStreamImport(cell, device, &h, &gate, &src, &flags, &e);
  Py_END_ALLOW_THREADS release_kind(cell, k);  // a no-op: Go moved it out or released it
  free(cell);
  if (rc) return raise_error(&e);
  PyObject* cap = wrap_stream_handle_bare(h);
  if (cap && stream_c_read_set(cap, gate, src, flags) < 0) Py_CLEAR(cap);
  return cap;
}

PyObject* m_import_stream(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "import_stream");
  int device;
  if (get_bool(args[1], &device)) return NULL;
  return import_stream_capsule(args[0], device);
}

static PyObject* str_device_stream;
static PyObject* str_stream;

// import_stream_from(obj, requested_schema_capsule): the stream of obj's
// __arrow_c_device_stream__, else its __arrow_c_stream__ (the order arrays
// are asked in, import.c), or NotImplemented when it has neither. The
// producer is asked with the requested schema (a capsule, or None), and
// asked again with None when it refuses a request (pylibcudf raises
// ValueError for any, nanoarrow NotImplementedError): the Python layer then
// casts on our side. A producer's exception propagates unchanged.
//
// The protocols are looked up with PyObject_HasAttr, which (unlike a
// PyObject_GetAttr that fails) builds no AttributeError for an absent one:
// most producers have only the plain protocol, and that exception cost more
// than the rest of a short stream's set-up.
PyObject* m_import_stream_from(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "import_stream_from");
  PyObject *obj = args[0], *requested = args[1];
  int device = PyObject_HasAttr(obj, str_device_stream);
  if (!device && !PyObject_HasAttr(obj, str_stream)) Py_RETURN_NOTIMPLEMENTED;
  PyObject* name = device ? str_device_stream : str_stream;
  PyObject* capsule = PyObject_CallMethodObjArgs(obj, name, requested, NULL);
  if (!capsule && requested != Py_None &&
      (PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_NotImplementedError))) {
    PyErr_Clear();
    capsule = PyObject_CallMethodObjArgs(obj, name, Py_None, NULL);
  }
  if (!capsule) return NULL;
  PyObject* r = import_stream_capsule(capsule, device);
  Py_DECREF(capsule);
  return r;
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

int stream_init(void) {
  return (str_device_stream = PyUnicode_InternFromString("__arrow_c_device_stream__")) &&
                 (str_stream = PyUnicode_InternFromString("__arrow_c_stream__"))
             ? 0
             : -1;
}

int stream_reads_ahead(PyObject* handle, int otherwise) {
  stream_c_read* c = stream_c_read_of(handle);
  return c ? flags_of(c) & GDA_READS_AHEAD : otherwise;
}

PyObject* stream_close(PyObject* handle) {
  uintptr_t h;
  if (get_handle(handle, &h)) return NULL;
  stream_c_read* c = stream_c_read_of(handle);
  // settle, letting the GIL go while a read elsewhere (which may need it)
  // ends; release with it; settle again when the read waited for started a
  // read-ahead meanwhile
  for (;;) {
    gda_error e = {0};
    int idle, rc, flags = c ? flags_of(c) : 0;
    idle = stream_settle_holding_gil(c, h, 100);
    if (idle && (!c || flags_of(c) == flags)) {
      rc = gdaStreamClose(h, &e);
      if (rc == 0) Py_RETURN_NONE;
      if (rc != GDA_PENDING) return raise_error(&e);
    }
    if (PyErr_CheckSignals() < 0) return NULL;
  }
}

// stream_prefetch(handle, depth, when_slow): when_slow puts the read-ahead off until a read
// blocks (after_timed_read), for a stream with C bookkeeping and no read-ahead under it.
PyObject* m_stream_prefetch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "stream_prefetch");
  uintptr_t h, out = 0;
  int64_t depth;
  int when_slow;
  if (get_handle(args[0], &h) || get_int64(args[1], &depth) || get_bool(args[2], &when_slow)) return NULL;
  stream_c_read* c = stream_c_read_of(args[0]);
  when_slow = when_slow && c && !(flags_of(c) & (GDA_OVER_READ_AHEAD | GDA_AHEAD_WHEN_SLOW));
  gda_error e = {0};
  int rc = when_slow ? gdaStreamPrefetchWhenSlow(h, depth, &out, &e) : gdaStreamPrefetch(h, depth, &out, &e);
  return rc ? raise_error(&e) : wrap_stream_handle(out);
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

// The stream methods of methods.h (their Go halves are in stream.go): import and export, reads
// (blocking, ready-only, an event loop's), close, and the streams made from arrays, casts and
// read-ahead (the for loop's iterator: stream_iter.c; asyncio's awaitable and the wake pipe:
// stream_async.c).
#include "binding.h"

#include <pthread.h>
#include <stdlib.h>

#include "_cgo_export.h"
#include "gate.h"

// ---------------------------------------------------------------- imports

// A stream's bookkeeping in C (cdevice.OneShotStream.CRead), kept as its
// stream capsule's context: every read begins and ends in the stream's read
// gate here, with no call into Go for it. A foreign stream's reads run in C
// entirely (src); other streams' reads call Go once, for the read itself.
typedef struct {
  gda_read_gate* gate;     // a reference
  gda_stream_source* src;  // a foreign stream's C half, touched only inside the gate; or NULL
  int flags;               // GDA_READS_AHEAD, GDA_OVER_READ_AHEAD, GDA_AHEAD_WHEN_SLOW (atomic)
  gda_read_timer timer;    // GDA_AHEAD_WHEN_SLOW: which reads are timed (in the gate; gate.h)
  int probed;              // an event loop made its first read (stream_loop_read), with the GIL
  async_pace pace;         // an async for's (stream_async.c)
} stream_c_read;

static int flags_of(stream_c_read* c) { return __atomic_load_n(&c->flags, __ATOMIC_ACQUIRE); }

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
  *c = (stream_c_read){gate, src, flags, {0, 0, 0}, 0, {0, 0}};
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

int stream_settle(void* ctx, uintptr_t h, int timeout_ms) {
  stream_c_read* c = ctx;
  // no read-ahead to stop: settling is waiting for the read in progress
  if (c && !(flags_of(c) & GDA_OVER_READ_AHEAD)) return gda_gate_wait_idle(c->gate, timeout_ms);
  return gdaStreamSettle(h, timeout_ms);
}

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

// Hands out an array that a read returned (a Go handle in out, or a record
// held in C): as a cls instance, Py_None at the end, or NULL with the
// exception of a signal that arrived during the read, in which case the
// array is given back to the stream for the next read, not dropped.
static PyObject* deliver(uintptr_t h, stream_c_read* c, PyTypeObject* cls, uintptr_t out, void* held) {
  if (!out && !held) Py_RETURN_NONE;
  if (PyErr_CheckSignals() < 0) {
    if (c && held) {
      if (!gda_gate_unread(c->gate, (gda_gate_slot){.held = held})) HOLDING_GIL(gda_held_unref(held));
    } else {
      gdaStreamUnread(h, out, held);
    }
    return NULL;
  }
  return array_base_owning(cls, out, held);
}

// A read in the stream's read gate (see stream_c_read). A foreign stream's
// read is the producer's get_next and the held fast path, with no call into
// Go unless the outcome needs Go's words or Go's import (an error, an array
// the fast path declined); another stream's is one call into Go. A read
// behind another thread's, or of a read-ahead that has nothing yet, waits
// in slices, so that Ctrl-C is handled promptly. Reads that the gate
// refuses (the stream is closed, or the read comes from inside its own
// producer) return 0 with *result untouched: the Go read answers them from
// the same gate, in the same words.
// Where a prefetch(depth) stream reads (GDA_AHEAD_WHEN_SLOW): on the reading
// thread while reads are fast (a producer that needs the GIL gains nothing
// from a thread of its own, which would hand the GIL to and fro for every
// array), and ahead on a goroutine, for good, from the first read that
// blocks (gda_read_blocked, gate.h).

// Called in the gate after a read of c that began at t0: moves the stream to
// its read-ahead when the read blocked.
static void after_timed_read(uintptr_t h, stream_c_read* c, gda_read_clock t0) {
  if (!gda_read_timer_end(&c->timer, t0)) return;
  gdaStreamStartReadAhead(h);
  c->src = NULL;  // the read-ahead's goroutine reads the foreign stream from now on
  __atomic_store_n(&c->flags, (flags_of(c) & GDA_OF_STRUCTS) | GDA_READS_AHEAD | GDA_OVER_READ_AHEAD, __ATOMIC_RELEASE);
}

// Called in the gate after a read of c that Go made: a probe (ProbeHeld), and
// a read that took its array, change where the stream reads, which c learns.
static void learn_where_read(uintptr_t h, stream_c_read* c) {
  void *gate = NULL, *src = NULL;
  int flags = 0;
  gdaStreamCRead(h, &gate, &src, &flags);
  c->src = src;
  __atomic_store_n(&c->flags, flags, __ATOMIC_RELEASE);
}

static void after_go_read(uintptr_t h, stream_c_read* c) {
  if (flags_of(c) & GDA_PROBING) learn_where_read(h, c);
}

// An event loop's first read of a stream that reads ahead only once a read
// blocks (GDA_AHEAD_WHEN_SLOW): Go reads it on a goroutine while this thread
// waits up to PROBE_WAIT_NS without the GIL (ProbeHeld). A probe whose read
// did not block leaves the stream read in the loop's thread; one that
// blocked reads ahead. 1 with the array; 0 when it had not come in time
// (the loop waits for it on its wake pipe); -1 when the gate refuses the
// read (Go's read words why). The wait is as long as a read may take before
// it counts as slow: a slow first read blocks the loop no longer, and a
// fast one that missed it costs one wait on the pipe.
enum { PROBE_WAIT_NS = GDA_WAIT_READ_NS };

static int probe_read(uintptr_t h, stream_c_read* c, PyTypeObject* cls, PyObject** result) {
  gda_gate_slot slot = {0};
  uintptr_t out = 0;
  void* held = NULL;
  gda_error e = {0};
  int g, rc = 0;
  Py_BEGIN_ALLOW_THREADS g = gda_gate_begin(c->gate, 0, (uint64_t)pthread_self(), &slot);
  if (g == GDA_GATE_GO) {
    rc = gdaStreamProbeInGate(h, PROBE_WAIT_NS, &out, &held, &e);
    learn_where_read(h, c);
    gda_gate_end(c->gate);
  }
  Py_END_ALLOW_THREADS if (g == GDA_GATE_UNREAD) {
    held = slot.held;
    if (slot.array) gdaStreamAdoptUnread(slot.array, &out);
  } else if (g != GDA_GATE_GO) {
    return -1;
  } else if (rc == GDA_PENDING) {
    return 0;
  } else if (rc) {
    *result = raise_error(&e);
    return 1;
  }
  *result = deliver(h, c, cls, out, held);
  return 1;
}

// untimed: an event loop's read, timed only when the pacing of its `async
// for` found the loop's turns slow (stream_read_measure_next): the pacing's
// clock already runs per array, and a read's own two cost as much again.
static int c_read(uintptr_t h, stream_c_read* c, PyTypeObject* cls, int untimed, PyObject** result) {
  uint64_t thread = (uint64_t)pthread_self();
  gda_gate_slot slot = {0};
  uintptr_t out = 0;
  void* held = NULL;
  gda_error e = {0};
  int g, rc;
  for (;;) {
    rc = 0;
    Py_BEGIN_ALLOW_THREADS g = gda_gate_begin(c->gate, 100, thread, &slot);
    int timed = g == GDA_GATE_GO && (flags_of(c) & GDA_AHEAD_WHEN_SLOW) && gda_read_timer_due(&c->timer, untimed);
    gda_read_clock t0 = timed ? gda_read_timer_start(&c->timer) : (gda_read_clock){0};
    if (g == GDA_GATE_GO && c->src) {
      int failed = c->src->failed;
      gda_stream_read got = {0};
      if (!failed) got = gda_stream_source_next(c->src);
      if (failed || got.rc || got.cell || got.no_memory) {
        rc = gdaStreamFinishRead(h, failed ? NULL : &got, &out, &held, &e);
      } else {
        held = got.held;  // NULL: the end
      }
    } else if (g == GDA_GATE_GO) {
      rc = gdaStreamReadInGate(h, 100, &out, &held, &e);
      after_go_read(h, c);
    }
    if (timed && rc == 0) after_timed_read(h, c, t0);  // not after an error: the stream ended
    if (g == GDA_GATE_GO) gda_gate_end(c->gate);
    Py_END_ALLOW_THREADS if (g == GDA_GATE_GO && rc == GDA_PENDING) g = GDA_GATE_BUSY;
    if (g != GDA_GATE_BUSY) break;
    if (PyErr_CheckSignals() < 0) {
      *result = NULL;
      return 1;
    }
  }
  switch (g) {
    case GDA_GATE_UNREAD:
      held = slot.held;
      if (slot.array) gdaStreamAdoptUnread(slot.array, &out);
      break;
    case GDA_GATE_GO:
      if (rc) {
        *result = raise_error(&e);
        return 1;
      }
      break;
    default:
      return 0;
  }
  *result = deliver(h, c, cls, out, held);
  return 1;
}

// The next array of the stream s as a cls instance (held in C when the gate
// takes it), Py_None at the end, or NULL with an exception.
static PyObject* stream_read_untimed(const stream_ref* s, PyTypeObject* cls, int untimed) {
  uintptr_t h = s->h, out = 0;
  void* held = NULL;  // the array held in C (held.h), or a Go handle in out
  stream_c_read* c = s->c;
  PyObject* r;
  if (c && c_read(h, c, cls, untimed, &r)) return r;
  // the gate refused the read (its words are Go's), or the stream has no
  // bookkeeping in C (out of memory when its capsule was made): Go's read
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
  return deliver(h, NULL, cls, out, held);
}

PyObject* stream_read(PyObject* handle, PyTypeObject* cls) {
  stream_ref s;
  return stream_ref_of(handle, &s) ? NULL : stream_read_untimed(&s, cls, 0);
}

void stream_read_measure_next(void* c) {
  if (c) ((stream_c_read*)c)->timer.suspect = 1;
}

int check_array_class(PyObject* cls, const char* caller) {
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
  stream_c_read* c = stream_c_read_of(args[0]);
  gda_error e = {0};
  int rc = -3;  // not yet read
  if (c) {
    // the gate in C; a read it lets in is one call into Go (which never waits)
    gda_gate_slot slot = {0};
    switch (gda_gate_try_begin(c->gate, flags_of(c) & GDA_READS_AHEAD, &slot)) {
      case GDA_GATE_BUSY:
        Py_RETURN_NOTIMPLEMENTED;
      case GDA_GATE_UNREAD:
        held = slot.held;
        if (slot.array) gdaStreamAdoptUnread(slot.array, &out);
        rc = 0;
        break;
      case GDA_GATE_GO:
        rc = gdaStreamTryReadInGate(h, &out, &held, &e);
        after_go_read(h, c);
        gda_gate_end(c->gate);
        break;
      default:
        break;  // closed: Go words it
    }
  }
  if (rc == -3) rc = gdaStreamTryNext(h, &out, &held, &e);
  if (rc == GDA_PENDING) Py_RETURN_NOTIMPLEMENTED;
  if (rc) return raise_error(&e);
  if (!out && !held) Py_RETURN_NONE;
  return array_base_owning((PyTypeObject*)args[1], out, held);
}

// The next array for an event loop's __anext__ (with the GIL): one the
// read-ahead has ready; for a stream read on the reading thread, its first
// read probed (probe_read) and the others made here, in the loop's thread
// (where a GIL-bound producer is cheapest to read; a read that blocks moves
// the stream ahead, c_read); or NotImplemented when the loop must wait for
// its wake pipe. None at the end, NULL with an exception.
PyObject* stream_loop_read(const stream_ref* s, PyObject* cls) {
  stream_c_read* c = s->c;
  PyObject* args[2] = {s->handle, cls};
  if (!c || !(flags_of(c) & GDA_AHEAD_WHEN_SLOW)) return m_stream_try_next(NULL, args, 2);
  PyObject* r = NULL;
  if (!c->probed) {
    c->probed = 1;
    switch (probe_read(s->h, c, (PyTypeObject*)cls, &r)) {
      case 1:
        return r;
      case 0:  // the probe runs on: the stream reads ahead
        return m_stream_try_next(NULL, args, 2);
    }
  }
  return stream_read_untimed(s, (PyTypeObject*)cls, 1);
}

PyObject* m_stream_loop_read(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "stream_loop_read");
  stream_ref s;
  if (check_array_class(args[1], "stream_loop_read") || stream_ref_of(args[0], &s)) return NULL;
  return stream_loop_read(&s, args[1]);
}

// stream_of_structs(handle): from the C bookkeeping (no call into Go); None without one
PyObject* m_stream_of_structs(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  stream_c_read* c = nargs == 1 ? stream_c_read_of(args[0]) : NULL;
  return c ? PyBool_FromLong(flags_of(c) & GDA_OF_STRUCTS) : Py_NewRef(Py_None);
}

PyObject* m_stream_next(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "stream_next");
  if (check_array_class(args[1], "stream_next")) return NULL;
  return stream_read(args[0], (PyTypeObject*)args[1]);
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

PyObject* m_stream_close(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "stream_close");
  stream_c_read* c = stream_c_read_of(args[0]);
  // settle without the GIL (a read elsewhere may need it), release with it;
  // settle again when the read waited for started a read-ahead meanwhile
  for (;;) {
    gda_error e = {0};
    int idle, rc, flags = c ? flags_of(c) : 0;
    Py_BEGIN_ALLOW_THREADS idle = stream_settle(c, h, 100);
    Py_END_ALLOW_THREADS if (idle && (!c || flags_of(c) == flags)) {
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

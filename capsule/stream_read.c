// The reads of a stream (the methods.h entries stream_next, stream_try_next and
// stream_loop_read, and what the for loop's iterator and asyncio's awaitable
// call): in the stream's read gate, in C for a foreign stream, and where a
// prefetched stream reads (docs/design.md, "Where a prefetched stream
// reads").
#include "binding.h"

#include <pthread.h>

#include "_cgo_export.h"
#include "stream_state.h"

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

// Where a prefetch(depth) stream reads (GDA_AHEAD_WHEN_SLOW): on the reading
// thread while reads are fast (a producer that needs the GIL gains nothing
// from a thread of its own, which would hand the GIL to and fro for every
// array), and ahead on a goroutine, for good, once reads block (two
// measured reads in a row: gda_read_timer_end, gate.h).

// Called in the gate after a read of c that began at t0: moves the stream to
// its read-ahead when gda_read_timer_end says so.
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

// An event loop's probe of a stream that reads ahead only once a read
// blocks (GDA_AHEAD_WHEN_SLOW; its first read, and the one after a probe
// that missed the wait): Go reads it on a goroutine while this thread
// waits up to PROBE_WAIT_NS without the GIL (ProbeHeld). A probe whose read
// did not block leaves the stream read in the loop's thread (probing again
// next time if it missed the wait); one that blocked reads ahead. 1 with
// the array; 0 when it had not come in time (the loop waits for it on its
// wake pipe); -1 when the gate refuses the read (Go's read words why). The
// wait is as long as a read may take before it counts as slow: a slow first
// read blocks the loop no longer, and a fast one that missed it costs one
// wait on the pipe.
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

// A read in the stream's read gate (see stream_c_read). A foreign stream's
// read is the producer's get_next and the held fast path, with no call into
// Go unless the outcome needs Go's words or Go's import (an error, an array
// the fast path declined); another stream's is one call into Go. A read
// behind another thread's, or of a read-ahead that has nothing yet, waits
// in slices, so that Ctrl-C is handled promptly. Reads that the gate
// refuses (the stream is closed, or the read comes from inside its own
// producer) return 0 with *result untouched: the Go read answers them from
// the same gate, in the same words.
//
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
// read-ahead has ready; for a stream read on the reading thread, a probe
// when Go says one is due (probe_read: the first read, and the one after a
// probe the loop gave up waiting for) and the others made here, in the
// loop's thread (where a GIL-bound producer is cheapest to read; reads that
// block move the stream ahead, c_read); or NotImplemented when the loop must
// wait for its wake pipe. None at the end, NULL with an exception.
PyObject* stream_loop_read(const stream_ref* s, PyObject* cls) {
  stream_c_read* c = s->c;
  PyObject* args[2] = {s->handle, cls};
  if (!c || !(flags_of(c) & GDA_AHEAD_WHEN_SLOW)) return m_stream_try_next(NULL, args, 2);
  PyObject* r = NULL;
  if (flags_of(c) & GDA_PROBE_DUE) {
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

PyObject* m_stream_next(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "stream_next");
  if (check_array_class(args[1], "stream_next")) return NULL;
  return stream_read(args[0], (PyTypeObject*)args[1]);
}

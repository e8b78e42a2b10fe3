// The awaitable of ArrayStream.__anext__ (StreamAnext): at its first step it
// takes an array that the stream's read-ahead has ready, with no coroutine
// frame and no Python code, so that an `async for` over a stream that keeps
// up costs about what a for loop does. Only when nothing is ready does it
// hand over to the Python coroutine that waits on the wake pipe
// (ArrayStream._anext_wait), forwarding every step to it.
//
// It also paces the loop: an `async for` that always finds an array ready
// never awaits anything, so every ASYNC_TURN_ARRAYS arrays, or once
// ASYNC_TURN_NS have passed since the loop last had a turn (whichever comes
// first), the awaitable first yields once (a bare yield: asyncio runs the
// other ready tasks, then steps this one again). A wait on the pipe is a
// turn too. Nothing is read before the step that returns it, so a cancelled
// __anext__ loses nothing here either.
#include "binding.h"

#include <time.h>

#include "_cgo_export.h"
#include "gate.h"

static int64_t stream_async_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

// the pacing's state is the stream's, in its C bookkeeping (stream_state.h)
//
// A turn costs a whole pass of the event loop (its poll included, some
// microseconds): once every 64 arrays that was a tenth of a fast read's time.
//
// A turn due to time with fewer arrays taken than one per GDA_WAIT_READ_NS
// means slow arrays (a slow read, or a slow loop body): the loop's next read
// is then timed and measured (stream_read_measure_next), which is how a
// stream read in the loop's thread notices a producer that began to wait,
// without two clock readings per read (stream_read.c, c_read).
int stream_async_turn(const stream_ref* s) {
  async_pace* p = stream_async_pace(s->c);
  if (!p) return 0;
  int64_t now = stream_async_now();
  if (p->taken == 0) p->since = now;
  if (p->taken < ASYNC_TURN_ARRAYS && now - p->since < ASYNC_TURN_NS) return 0;
  if (p->taken < ASYNC_TURN_NS / GDA_WAIT_READ_NS) stream_read_measure_next(s->c);
  *p = (async_pace){0, now};
  return 1;
}

void stream_async_took(const stream_ref* s) {
  async_pace* p = stream_async_pace(s->c);
  if (p) p->taken++;
}

void stream_async_waited(const stream_ref* s) {
  async_pace* p = stream_async_pace(s->c);
  if (p) *p = (async_pace){0, 0};
}


typedef struct {
  PyObject_HEAD PyObject* stream;  // the ArrayStream: its _anext_wait is the slow path
  stream_ref ref;  // its handle (a reference) and the handle's parts, looked up once
  PyObject* cls;   // checked when the awaitable was made
  PyObject* sub;   // the slow path's coroutine, once taken
  int turn_first;
} AnextObject;

static PyTypeObject* Anext_Type;
static PyObject* str_anext_wait;

static PySendResult anext_send(PyObject* self, PyObject* arg, PyObject** result) {
  AnextObject* a = (AnextObject*)self;
  if (a->sub) return PyIter_Send(a->sub, arg, result);
  if (a->turn_first) {
    a->turn_first = 0;
    *result = Py_NewRef(Py_None);  // a bare yield: the loop runs its other tasks
    return PYGEN_NEXT;
  }
  PyObject* r = stream_loop_read(&a->ref, a->cls);
  if (r == Py_NotImplemented) {
    Py_DECREF(r);
    stream_async_waited(&a->ref);
    if (!(a->sub = PyObject_CallMethodObjArgs(a->stream, str_anext_wait, NULL))) r = NULL;
    else return PyIter_Send(a->sub, Py_None, result);
  }
  if (r == Py_None) {
    Py_DECREF(r);
    PyErr_SetNone(PyExc_StopAsyncIteration);
    r = NULL;
  }
  *result = r;
  if (!r) return PYGEN_ERROR;
  stream_async_took(&a->ref);
  return PYGEN_RETURN;
}

// send(value), and __next__: a step as Python sees it (a return is StopIteration)
static PyObject* anext_step(PyObject* self, PyObject* arg) {
  PyObject* r = NULL;
  switch (anext_send(self, arg, &r)) {
    case PYGEN_NEXT:
      return r;
    case PYGEN_RETURN: {
      PyObject* stop = PyObject_CallFunctionObjArgs(PyExc_StopIteration, r, NULL);
      Py_DECREF(r);
      if (stop) {
        PyErr_SetObject(PyExc_StopIteration, stop);
        Py_DECREF(stop);
      }
      return NULL;
    }
    default:
      return NULL;
  }
}

static PyObject* anext_next(PyObject* self) { return anext_step(self, Py_None); }

// throw(exc) (or the old throw(type, value, traceback)): into the slow path
// if it was taken, else raised here (nothing was read yet)
static PyObject* anext_throw(PyObject* self, PyObject* args) {
  AnextObject* a = (AnextObject*)self;
  if (a->sub) {
    PyObject* m = PyObject_GetAttrString(a->sub, "throw");
    PyObject* r = m ? PyObject_CallObject(m, args) : NULL;
    Py_XDECREF(m);
    return r;
  }
  PyObject *typ, *val = NULL, *tb = NULL;
  if (!PyArg_ParseTuple(args, "O|OO", &typ, &val, &tb)) return NULL;
  if (PyExceptionInstance_Check(typ)) PyErr_SetObject((PyObject*)Py_TYPE(typ), typ);
  else PyErr_SetObject(typ, val);
  return NULL;
}

static PyObject* anext_close(PyObject* self, PyObject* unused) {
  AnextObject* a = (AnextObject*)self;
  if (a->sub) return PyObject_CallMethod(a->sub, "close", NULL);
  Py_RETURN_NONE;
}

static PyObject* anext_await(PyObject* self) { return Py_NewRef(self); }

static void anext_dealloc(PyObject* self) {
  AnextObject* a = (AnextObject*)self;
  PyTypeObject* type = Py_TYPE(self);
  Py_CLEAR(a->stream);
  Py_CLEAR(a->ref.handle);
  Py_CLEAR(a->cls);
  Py_CLEAR(a->sub);
  ((freefunc)PyType_GetSlot(type, Py_tp_free))(self);
  Py_DECREF(type);
}

static PyMethodDef anext_methods[] = {
    {"send", anext_step, METH_O, "Steps the awaitable."},
    {"throw", anext_throw, METH_VARARGS, "Raises an exception into the awaitable."},
    {"close", anext_close, METH_NOARGS, "Closes the awaitable."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Anext_slots[] = {
    {Py_am_await, (void*)anext_await},
    {Py_am_send, (void*)anext_send},
    {Py_tp_iter, (void*)anext_await},
    {Py_tp_iternext, (void*)anext_next},
    {Py_tp_methods, anext_methods},
    {Py_tp_dealloc, (void*)anext_dealloc},
    {Py_tp_doc, (void*)"One ArrayStream.__anext__ (a coroutine made in C)."},
    {0, NULL},
};

static PyType_Spec Anext_spec = {"godevarrow._godevarrow.StreamAnext", sizeof(AnextObject), 0, Py_TPFLAGS_DEFAULT,
                                 Anext_slots};

// (handle and cls were checked by the caller)
static PyObject* new_anext(PyObject* stream, PyObject* handle, PyObject* cls) {
  AnextObject* a = (AnextObject*)((allocfunc)PyType_GetSlot(Anext_Type, Py_tp_alloc))(Anext_Type, 0);
  if (!a) return NULL;
  a->stream = Py_NewRef(stream);
  stream_ref_of(Py_NewRef(handle), &a->ref);
  a->cls = Py_NewRef(cls);
  a->turn_first = stream_async_turn(&a->ref);
  return (PyObject*)a;
}

static int check_args(PyObject* handle, PyObject* cls, const char* caller) {
  uintptr_t h;
  return get_handle(handle, &h) ? -1 : check_array_class(cls, caller);
}

// stream_anext(stream, handle, cls): the awaitable of one __anext__ of the
// read-ahead stream behind handle (see above)
PyObject* m_stream_anext(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "stream_anext");
  if (check_args(args[1], args[2], "stream_anext")) return NULL;
  return new_anext(args[0], args[1], args[2]);
}

// The object of ArrayStream.__aiter__ (StreamAsyncIterator): its __anext__
// is stream_anext's, with no Python frame between `async for` and the read.
typedef struct {
  PyObject_HEAD PyObject* stream;
  PyObject* handle;
  PyObject* cls;
  PyObject* spare;  // the last awaitable made: reused once nobody else holds it
} AiterObject;

static PyTypeObject* Aiter_Type;

// An `async for` drops each awaitable before it asks for the next, so one
// object serves the whole loop (an allocation per array cost about a tenth
// of a fast read).
static PyObject* aiter_anext(PyObject* self) {
  AiterObject* it = (AiterObject*)self;
  if (it->spare && Py_REFCNT(it->spare) == 1) {
    AnextObject* a = (AnextObject*)it->spare;
    Py_CLEAR(a->sub);
    a->turn_first = stream_async_turn(&a->ref);
    return Py_NewRef(it->spare);
  }
  Py_CLEAR(it->spare);
  it->spare = new_anext(it->stream, it->handle, it->cls);
  return Py_XNewRef(it->spare);
}

static void aiter_dealloc(PyObject* self) {
  AiterObject* it = (AiterObject*)self;
  PyTypeObject* type = Py_TYPE(self);
  Py_CLEAR(it->stream);
  Py_CLEAR(it->handle);
  Py_CLEAR(it->cls);
  Py_CLEAR(it->spare);
  ((freefunc)PyType_GetSlot(type, Py_tp_free))(self);
  Py_DECREF(type);
}

static PyType_Slot Aiter_slots[] = {
    {Py_am_aiter, (void*)anext_await},  // itself
    {Py_am_anext, (void*)aiter_anext},
    {Py_tp_dealloc, (void*)aiter_dealloc},
    {Py_tp_doc, (void*)"An asynchronous iterator over a read-ahead stream (made by ArrayStream.__aiter__)."},
    {0, NULL},
};

static PyType_Spec Aiter_spec = {"godevarrow._godevarrow.StreamAsyncIterator", sizeof(AiterObject), 0,
                                 Py_TPFLAGS_DEFAULT, Aiter_slots};

// stream_aiter(stream, handle, cls): that iterator
PyObject* m_stream_aiter(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "stream_aiter");
  if (check_args(args[1], args[2], "stream_aiter")) return NULL;
  AiterObject* it = (AiterObject*)((allocfunc)PyType_GetSlot(Aiter_Type, Py_tp_alloc))(Aiter_Type, 0);
  if (!it) return NULL;
  it->stream = Py_NewRef(args[0]);
  it->handle = Py_NewRef(args[1]);
  it->cls = Py_NewRef(args[2]);
  it->spare = NULL;
  return (PyObject*)it;
}

int stream_async_init(PyObject* module) {
  if (!(str_anext_wait = PyUnicode_InternFromString("_anext_wait"))) return -1;
  Anext_Type = (PyTypeObject*)PyType_FromSpec(&Anext_spec);
  if (!Anext_Type || PyModule_AddObjectRef(module, "StreamAnext", (PyObject*)Anext_Type) < 0) return -1;
  Aiter_Type = (PyTypeObject*)PyType_FromSpec(&Aiter_spec);
  return Aiter_Type && PyModule_AddObjectRef(module, "StreamAsyncIterator", (PyObject*)Aiter_Type) == 0 ? 0 : -1;
}

// The wake pipe of a read-ahead stream (ArrayStream._ready): its write end, and arming it.
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

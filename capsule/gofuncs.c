// Go functions called from Python (docs/design.md, "Go functions called
// from Python"): go_call unpacks the arguments, makes the call without the
// GIL, and packs the result. The call itself lives in gosrc/pyfunc.
//
// Ctrl-C during a call; the rules of this file's one fast path:
// - The function runs on the calling thread (a goroutine of its own would
//   cost two OS-thread switches per call: docs/performance.md, "A goroutine
//   per call", and the "Go functions" rows of docs/benchmarks.md).
// - Python runs signal handlers on its main thread between bytecodes, and
//   none run during the call. So while a call runs on the main thread,
//   SIGINT goes through sigint_chained: it calls the handler it replaced
//   (Python's, which makes the next PyErr_CheckSignals raise
//   KeyboardInterrupt, after the call returns), then writes a byte to the
//   Go side's pipe (the Go side cancels the contexts of the main thread's
//   calls).
// - Our handler is installed by the first such call and stays, chaining
//   to the handler it found (Python's). A handler another library installs
//   later (polars does, through signal-hook) chains to ours in turn; ours
//   is never put in front of such a one, which would make a loop of two
//   handlers calling each other. Only if Python puts its own handler back
//   (signal.signal) is ours installed in front of it again. Each call asks
//   for the current handler (one system call); only the main thread,
//   holding the GIL, does any of this.
// - A handler that is not a function (SIG_DFL, SIG_IGN: Python is not
//   handling SIGINT) is left alone, and Ctrl-C does what it says.
// - Only a function that takes a context is watched: nothing else could
//   be cancelled.
#include "binding.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "_cgo_export.h"

static volatile sig_atomic_t sigint_pending;  // a SIGINT since the handler was installed
static int sigint_fd = -1;
static struct sigaction replaced;

int gda_sigint_pending(void) { return sigint_pending; }

static void sigint_chained(int sig, siginfo_t* info, void* context) {
  int saved = errno;
  sigint_pending = 1;
  // Python's handler first: the signal delivered to another thread must be
  // recorded by Python before Go cancels the call and the main thread looks
  // for signals on its return, or the call ends in "context canceled" and
  // the KeyboardInterrupt comes later, somewhere else.
  if (replaced.sa_flags & SA_SIGINFO)
    replaced.sa_sigaction(sig, info, context);
  else
    replaced.sa_handler(sig);
  if (sigint_fd >= 0) {
    char byte = 1;
    ssize_t ignored = write(sigint_fd, &byte, 1);  // a full pipe already holds the news
    (void)ignored;
  }
  errno = saved;
}

static int is_main_thread(void) {
  static unsigned long main_ident;
  if (!main_ident) {
    PyObject* threading = PyImport_ImportModule("threading");
    PyObject* main = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
    PyObject* ident = main ? PyObject_GetAttrString(main, "ident") : NULL;
    main_ident = ident ? PyLong_AsUnsignedLong(ident) : 0;
    Py_XDECREF(ident);
    Py_XDECREF(main);
    Py_XDECREF(threading);
    if (PyErr_Occurred()) PyErr_Clear();  // unknown: no thread is taken for the main one
  }
  return main_ident && PyThread_get_thread_ident() == main_ident;
}

static int is_handler(const struct sigaction* a, const struct sigaction* b) {
  return (a->sa_flags & SA_SIGINFO) == (b->sa_flags & SA_SIGINFO) &&
         ((a->sa_flags & SA_SIGINFO) ? a->sa_sigaction == b->sa_sigaction : a->sa_handler == b->sa_handler);
}

// Whether a call of a function that takes a context is watched for SIGINT:
// on the main thread, with our handler installed (in front of Python's, or
// behind a later library's that chains to it).
static int watch_sigint(void) {
  static int installed;
  if (!is_main_thread()) return 0;
  struct sigaction current;
  if (sigaction(SIGINT, NULL, &current) != 0) return 0;
  if (!(current.sa_flags & SA_SIGINFO) && (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN)) return 0;
  sigint_pending = 0;
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == sigint_chained) return 1;
  if (installed && !is_handler(&current, &replaced)) return 1;  // another library's, in front of ours
  if (sigint_fd < 0) sigint_fd = gdaGoSigintFD();
  struct sigaction ours = current;
  ours.sa_flags |= SA_SIGINFO;
  ours.sa_sigaction = sigint_chained;
  replaced = current;
  installed = sigaction(SIGINT, &ours, NULL) == 0;
  return installed;
}

PyObject* m_go_functions(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(0, "go_functions");
  char* out = NULL;
  gda_error e = {0};
  if (gdaGoFunctions(&out, &e)) return raise_error(&e);
  return conv_STR(out);
}

// One Python argument as a gda_go_value (a str stays owned by the tuple):
// 0, or 1 when it has to be converted first (not a godevarrow array or
// handle, or an int beyond 64 bits), or -1 with an exception.
static int go_value_of(PyObject* o, gda_go_value* v) {
  if (PyBool_Check(o)) {
    v->kind = GDA_GO_BOOL;
    v->i = o == Py_True;
  } else if (PyLong_Check(o)) {
    int overflow = 0;
    v->kind = GDA_GO_INT;
    v->i = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow > 0) {
      v->kind = GDA_GO_UINT;
      v->u = PyLong_AsUnsignedLongLong(o);
    }
    if (overflow < 0 || (overflow > 0 && PyErr_Occurred())) {
      PyErr_Clear();
      return 1;
    }
    if (PyErr_Occurred()) return -1;
  } else if (PyFloat_Check(o)) {
    v->kind = GDA_GO_FLOAT;
    v->f = PyFloat_AsDouble(o);
  } else if (PyUnicode_Check(o)) {
    Py_ssize_t len;
    const char* s = PyUnicode_AsUTF8AndSize(o, &len);
    if (!s) return -1;
    v->kind = GDA_GO_STR;
    v->s = (char*)s;
    v->len = len;
  } else if (PyObject_TypeCheck(o, ArrayBase_Type) || PyCapsule_CheckExact(o)) {
    v->kind = GDA_GO_HANDLE;
    return get_handle(o, &v->h);
  } else {
    return 1;
  }
  return 0;
}

static PyObject* call_class(PyObject* cls, PyObject* capsule) {
  if (!capsule) return NULL;
  PyObject* r = PyObject_CallFunctionObjArgs(cls, capsule, NULL);
  Py_DECREF(capsule);
  return r;
}

static PyObject* go_result(gda_go_value* v, PyObject* classes) {
  switch (v->kind) {
    case GDA_GO_INT:
      return PyLong_FromLongLong(v->i);
    case GDA_GO_UINT:
      return PyLong_FromUnsignedLongLong(v->u);
    case GDA_GO_FLOAT:
      return PyFloat_FromDouble(v->f);
    case GDA_GO_BOOL:
      return PyBool_FromLong((long)v->i);
    case GDA_GO_STR: {
      PyObject* r = PyUnicode_FromStringAndSize(v->s, v->len);
      free(v->s);
      return r;
    }
    case GDA_GO_ARRAY:
      return array_base_owning((PyTypeObject*)PyTuple_GetItem(classes, v->i ? 1 : 0), v->h, NULL);
    case GDA_GO_CHUNKED:
      return call_class(PyTuple_GetItem(classes, v->i ? 3 : 2), wrap_handle(v->h));
    case GDA_GO_STREAM:
      return call_class(PyTuple_GetItem(classes, 4), wrap_stream_handle(v->h));
  }
  Py_RETURN_NONE;
}

// Releases a result nobody will take (with an exception set: no Python code runs).
static void drop_go_result(gda_go_value* v) {
  if (v->kind == GDA_GO_STR) free(v->s);
  if (v->kind == GDA_GO_ARRAY || v->kind == GDA_GO_CHUNKED || v->kind == GDA_GO_STREAM) HOLDING_GIL(gdaHandleRelease(v->h));
}

PyObject* m_go_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(5, "go_call");
  Py_ssize_t name_len;
  const char* name = PyUnicode_AsUTF8AndSize(args[0], &name_len);
  if (!name) return NULL;
  if (!PyTuple_Check(args[1]) || !PyTuple_Check(args[2]) || PyTuple_Size(args[2]) != 5) {
    PyErr_SetString(GodevarrowTypeError, "go_call() needs a tuple of arguments and a tuple of five classes");
    return NULL;
  }
  for (Py_ssize_t i = 0; i < 2; i++)
    if (!PyType_Check(PyTuple_GetItem(args[2], i)) ||
        !PyType_IsSubtype((PyTypeObject*)PyTuple_GetItem(args[2], i), ArrayBase_Type)) {
      PyErr_SetString(GodevarrowTypeError, "go_call(): the first two classes must derive from ArrayBase");
      return NULL;
    }
  Py_ssize_t n = PyTuple_Size(args[1]);
  gda_go_value small[8] = {{0}};
  gda_go_value* values = n <= 8 ? small : calloc((size_t)n, sizeof(gda_go_value));
  if (!values) return PyErr_NoMemory();
  int as_given = PyObject_IsTrue(args[4]), cancellable = PyObject_IsTrue(args[3]), bad = as_given < 0 || cancellable < 0;
  for (Py_ssize_t i = 0; !bad && i < n; i++) bad = go_value_of(PyTuple_GetItem(args[1], i), &values[i]);
  if (bad) {
    if (values != small) free(values);
    if (bad < 0) return NULL;
    if (as_given) Py_RETURN_NOTIMPLEMENTED;
    PyErr_SetString(GodevarrowTypeError, "go_call(): an argument is neither a godevarrow handle nor a 64-bit scalar");
    return NULL;
  }
  gda_error e = {0};
  gda_go_value out = {0};
  int watched = cancellable && watch_sigint(), rc;
  // the strings in values belong to args[1], alive throughout
  Py_BEGIN_ALLOW_THREADS rc = gdaGoCall((char*)name, name_len, values, n, watched, as_given, &out, &e);
  Py_END_ALLOW_THREADS if (values != small) free(values);
  if (PyErr_CheckSignals() < 0) {  // Ctrl-C during the call: KeyboardInterrupt, not its outcome
    if (rc) free(e.message);
    else drop_go_result(&out);
    return NULL;
  }
  if (rc == GDA_CONVERT) Py_RETURN_NOTIMPLEMENTED;
  if (rc) return raise_error(&e);
  return go_result(&out, args[2]);
}

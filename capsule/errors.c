// The exception classes of godevarrow._godevarrow and the raising of a Go
// error (errors.go maps Go errors to the kinds of module.h's
// GDA_EXCEPTIONS; this file maps the kinds to the classes), and the
// refusal of a poisoned library.
#include "binding.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"

PyObject* GodevarrowError;
#define GDA_EXCEPTION_DEF(kind, name, base, doc) PyObject* name;
GDA_EXCEPTIONS(GDA_EXCEPTION_DEF)
PyObject* StreamInvalid;

int gda_poisoned;
void gda_set_poisoned(void) { __atomic_store_n(&gda_poisoned, 1, __ATOMIC_RELEASE); }

// Replaces the exception being raised by KeyboardInterrupt(msg), with the
// original as its __cause__.
static void reraise_as_interrupt(const char* msg) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject* interrupt = PyObject_CallFunction(PyExc_KeyboardInterrupt, "s", msg);
  if (!interrupt) {
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return;
  }
  if (value && tb) PyException_SetTraceback(value, tb);
  PyException_SetCause(interrupt, value);  // steals value
  PyErr_SetObject(PyExc_KeyboardInterrupt, interrupt);
  Py_DECREF(interrupt);
  Py_XDECREF(type);
  Py_XDECREF(tb);
}

PyObject* raise_error(gda_error* e) {
  PyObject* cls = ArrowInvalid;
#define GDA_EXCEPTION_CASE(k, name, base, doc) \
  if (e->kind == k) cls = name;
  GDA_EXCEPTIONS(GDA_EXCEPTION_CASE)
  if (e->kind == GDA_ERR_MEMORY) cls = PyExc_MemoryError;
  const char* msg = e->message ? e->message : "unknown error";
  // EINVAL is how the C stream interface carries an invalid-data error (a
  // Python producer's ValueError, pyarrow's ArrowInvalid): the reader gets
  // a StreamError that is also an ArrowInvalid (a ValueError), as pyarrow
  // raises ValueError for it.
  if (cls == StreamError && e->errno_code == EINVAL) cls = StreamInvalid;
  if (cls == StreamError || cls == StreamInvalid) {
    PyObject* args = Py_BuildValue("(is)", e->errno_code, msg);
    if (args) {
      PyErr_SetObject(cls, args);
      Py_DECREF(args);
    }
    // A Python producer interrupted by Ctrl-C reports the interrupt as its
    // error: the user gets the KeyboardInterrupt they caused, caused by it.
    if (strstr(msg, "KeyboardInterrupt")) reraise_as_interrupt(msg);
  } else {
    PyErr_SetString(cls, msg);
  }
  free(e->message);
  e->message = NULL;
  return NULL;
}

PyObject* refuse_poisoned(void) {
  gda_error e = {0};
  gdaPoisonedError(&e);
  return raise_error(&e);
}

static PyObject* new_exception(PyObject* module, const char* name, PyObject* bases, const char* doc) {
  char qualname[128];
  snprintf(qualname, sizeof(qualname), "godevarrow.%s", name);
  PyObject* cls = bases ? PyErr_NewExceptionWithDoc(qualname, doc, bases, NULL) : NULL;
  Py_XDECREF(bases);
  if (!cls || PyModule_AddObject(module, name, Py_NewRef(cls)) < 0) {
    Py_XDECREF(cls);
    Py_XDECREF(cls);
    return NULL;
  }
  return cls;
}

int errors_init(PyObject* m) {
  if (!(GodevarrowError = new_exception(m, "GodevarrowError", PyTuple_Pack(1, PyExc_Exception),
                                        "Base class of every godevarrow exception.")))
    return -1;
#define GDA_EXCEPTION_INIT(kind, name, base, doc) \
  if (!(name = new_exception(m, #name, PyTuple_Pack(2, GodevarrowError, base), doc))) return -1;
  GDA_EXCEPTIONS(GDA_EXCEPTION_INIT)
  if (!(StreamInvalid = new_exception(m, "StreamInvalid", PyTuple_Pack(2, StreamError, ArrowInvalid),
                                      "A foreign stream's producer reported invalid data (errno EINVAL): a "
                                      "StreamError that is also an ArrowInvalid (ValueError).")))
    return -1;
  return 0;
}

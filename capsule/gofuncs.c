// Go functions called from Python (docs/design.md, "Go functions called
// from Python"): go_call unpacks the arguments, starts the call, waits for
// it without the GIL in slices (so that Ctrl-C cancels it promptly), and
// packs the result. The call itself lives in gosrc/pyfunc.
#include "binding.h"

#include <stdlib.h>

#include "_cgo_export.h"

PyObject* m_go_functions(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(0, "go_functions");
  char* out = NULL;
  gda_error e = {0};
  if (gdaGoFunctions(&out, &e)) return raise_error(&e);
  return conv_STR(out);
}

// One Python argument as a gda_go_value; a str stays owned by the tuple.
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
      v->u = PyLong_AsUnsignedLongLong(o);  // an OverflowError beyond 2**64-1
    } else if (overflow < 0) {
      PyErr_SetString(PyExc_OverflowError, "int too small to convert to a Go integer");
      return -1;
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
  } else {
    v->kind = GDA_GO_HANDLE;
    return get_handle(o, &v->h);
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

PyObject* m_go_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "go_call");
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
  int bad = 0;
  for (Py_ssize_t i = 0; !bad && i < n; i++) bad = go_value_of(PyTuple_GetItem(args[1], i), &values[i]);
  uintptr_t call = 0;
  gda_error e = {0};
  int rc = bad ? 0 : gdaGoStart((char*)name, name_len, values, n, &call, &e);
  if (values != small) free(values);
  if (bad) return NULL;
  if (rc) return raise_error(&e);
  gda_go_value out = {0};
  for (;;) {
    Py_BEGIN_ALLOW_THREADS rc = gdaGoWait(call, 100, &out, &e);
    Py_END_ALLOW_THREADS if (rc != GDA_PENDING) break;
    if (PyErr_CheckSignals() < 0) {
      gdaGoAbandon(call);  // cancels the call's context; its result is released when it comes
      return NULL;
    }
  }
  if (rc) return raise_error(&e);
  return go_result(&out, args[2]);
}

// The CPython module godevarrow._godevarrow: named records, the method
// table (methods.h, with the poison check in front of each method), the
// release guard, and module init. The methods themselves are in the topic
// files (schema.c, array.c, stream.c, ...); each unpacks its arguments,
// makes one call into Go (the gda* exports of its topic's .go file) and
// packs the result, releasing the GIL around calls that can block. The
// exception classes are in errors.c.
#include "binding.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// ---------------------------------------------------------------- records
// One PyStructSequence type per GDA_RECORDS entry. A packer consumes every
// field of its record (frees strings, wraps handles) even when it fails.

#define GDA_RECORD_TYPE_VAR(pyname, list, ctype, doc) static PyTypeObject* pyname##_Type;
GDA_RECORDS(GDA_RECORD_TYPE_VAR)

#define GDA_FIELD_DESC(type, name, conv) {#name, NULL},
#define GDA_RECORD_DESC(pyname, list, ctype, doc)                                                              \
  static PyStructSequence_Field pyname##_fields[] = {list(GDA_FIELD_DESC){NULL, NULL}};                       \
  static PyStructSequence_Desc pyname##_desc = {"godevarrow._godevarrow." #pyname, doc, pyname##_fields,      \
                                                (int)(sizeof(pyname##_fields) / sizeof(pyname##_fields[0]) - 1)};
GDA_RECORDS(GDA_RECORD_DESC)

PyObject* conv_INT(int64_t v) { return PyLong_FromLongLong(v); }
PyObject* conv_UINT(uint64_t v) { return PyLong_FromUnsignedLongLong(v); }
PyObject* conv_BOOL(int64_t v) { return PyBool_FromLong(v != 0); }
PyObject* conv_STR(char* s) {
  PyObject* r = PyUnicode_DecodeUTF8(s ? s : "", s ? (Py_ssize_t)strlen(s) : 0, "surrogateescape");
  free(s);
  return r;
}
PyObject* conv_BYTES(gda_bytes b) {
  PyObject* r = b.data ? PyBytes_FromStringAndSize(b.data, (Py_ssize_t)b.len) : Py_NewRef(Py_None);
  free(b.data);
  return r;
}
PyObject* conv_HANDLE(uintptr_t h) { return h ? wrap_handle(h) : Py_NewRef(Py_None); }

#define GDA_PACK_FIELD(type, name, conv)                  \
  {                                                       \
    PyObject* item = conv_##conv(v->name);                \
    if (item && r) {                                      \
      PyStructSequence_SetItem(r, i, item);              \
    } else {                                              \
      Py_XDECREF(item);                                   \
      failed = 1;                                         \
    }                                                     \
    i++;                                                  \
  }
#define GDA_RECORD_PACK(pyname, list, ctype, doc)                 \
  PyObject* pack_##ctype(ctype* v) {                       \
    PyObject* r = PyStructSequence_New(pyname##_Type);            \
    int failed = 0;                                               \
    Py_ssize_t i = 0;                                             \
    list(GDA_PACK_FIELD) if (failed) Py_CLEAR(r);                 \
    return r;                                                     \
  }
GDA_RECORDS(GDA_RECORD_PACK)

// ------------------------------------------------------------ method table
// Every method of methods.h marked REFUSE refuses work first when the
// library is poisoned, before it unpacks (and so takes) anything.

#define GDA_POISON_CHECK_REFUSE \
  if (is_poisoned()) return refuse_poisoned();
#define GDA_POISON_CHECK_ALWAYS
#define GDA_METHOD_WRAPPER(name, poison, doc, stub)                                   \
  static PyObject* py_##name(PyObject* self, PyObject* const* args, Py_ssize_t nargs) { \
    GDA_POISON_CHECK_##poison return m_##name(self, args, nargs);                     \
  }
GDA_METHODS(GDA_METHOD_WRAPPER)

#define GDA_METHOD_ENTRY(name, poison, doc, stub) \
  {#name, (PyCFunction)(void (*)(void))py_##name, METH_FASTCALL, doc},
static PyMethodDef methods[] = {GDA_METHODS(GDA_METHOD_ENTRY){NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_godevarrow",
    "The Go core of godevarrow (internal; use the godevarrow package).", -1, methods,
};

_Thread_local int gil_marked;

PyObject* type_name_of(PyObject* o) {
  PyObject* type = (PyObject*)Py_TYPE(o);
  PyObject* qualname = PyObject_GetAttrString(type, "__qualname__");
  if (!qualname) return NULL;
  PyObject* module = PyObject_GetAttrString(type, "__module__");
  if (!module) {
    PyErr_Clear();
    return qualname;
  }
  PyObject* name = PyUnicode_Check(module) && PyUnicode_CompareWithASCIIString(module, "builtins") != 0
                       ? PyUnicode_FromFormat("%U.%U", module, qualname)
                       : Py_NewRef(qualname);
  Py_DECREF(module);
  Py_DECREF(qualname);
  return name;
}

static int add_type(PyObject* m, const char* name, PyObject* type) {
  if (!type) return -1;
  if (PyModule_AddObject(m, name, Py_NewRef(type)) < 0) {
    Py_DECREF(type);
    return -1;
  }
  return 0;
}

// The release guard of held.h: a producer's release runs with the GIL, also
// when a consumer drops the last reference on a thread of its own (rule 8 of
// docs/design.md). After interpreter shutdown there is no GIL to take.
static void release_with_gil(void (*call)(void*), void* self) {
  if (gil_marked || !Py_IsInitialized()) {
    call(self);
    return;
  }
#ifdef GODEVARROW_FULL_API
  // the full API can ask first (benchmarks/abi3.py measures what not asking costs)
  if (PyGILState_Check()) {
    call(self);
    return;
  }
#endif
  // Ensure nests: on a thread that holds the GIL it only counts (the Limited
  // API has no PyGILState_Check to ask first).
  PyGILState_STATE state = PyGILState_Ensure();
  call(self);
  PyGILState_Release(state);
}

// ------------------------------------------------------ one Go runtime
// Each build of this library carries a Go runtime, and a process may run
// only one (docs/design.md, "Users' Go code in godevarrow's runtime"). The
// first copy to initialise marks the process in its environment with the
// pid and its own address; another copy (a second build loaded
// beside it) finds the mark and refuses. A child process inherits the mark
// with another pid, and is not refused.
#define RUNTIME_MARK "GODEVARROW_GO_RUNTIME"

static int claim_go_runtime(void) {
  char mine[64];
  snprintf(mine, sizeof mine, "%ld %p", (long)getpid(), (void*)&claim_go_runtime);
  const char* mark = getenv(RUNTIME_MARK);
  long pid = 0;
  void* owner = NULL;
  if (mark && sscanf(mark, "%ld %p", &pid, &owner) == 2 && pid == (long)getpid() &&
      owner != (void*)&claim_go_runtime) {
    PyErr_SetString(PyExc_ImportError,
                    "godevarrow: this process already runs another build of godevarrow's extension "
                    "(godevarrow._godevarrow.__file__ names it); loading a second one would start a second Go "
                    "runtime, which Go does not support. Use one build: the one `python -m godevarrow build-ext` "
                    "makes contains godevarrow's core and your functions, and GODEVARROW_EXTENSION chooses it "
                    "before godevarrow is first imported.");
    return -1;
  }
  setenv(RUNTIME_MARK, mine, 1);
  return 0;
}

PyMODINIT_FUNC PyInit__godevarrow(void) {
  if (claim_go_runtime() < 0) return NULL;
  if (import_init() < 0 || tensor_init() < 0 || pyarrow_init() < 0) return NULL;
  PyObject* m = PyModule_Create(&moduledef);
  if (!m) return NULL;
  if (array_base_init(m) < 0 || stream_iter_init(m) < 0 || stream_base_init(m) < 0 || stream_async_init(m) < 0) goto fail;
#define GDA_RECORD_INIT(pyname, list, ctype, doc)                                                         \
  if (!(pyname##_Type = PyStructSequence_NewType(&pyname##_desc)) || add_type(m, #pyname, (PyObject*)pyname##_Type) < 0) \
    goto fail;
  GDA_RECORDS(GDA_RECORD_INIT)
  if (errors_init(m) < 0) goto fail;
  gda_set_release_guard(release_with_gil);
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}


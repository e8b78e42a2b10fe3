// The CPython side of godevarrow._godevarrow: the method table, PyCapsules
// and their destructors, exceptions, and the GIL. Every method unpacks its
// arguments, makes exactly one call into Go, and packs the result.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "cdevice.h"
#include "_cgo_export.h"

#define HANDLE_NAME "godevarrow.handle"

static PyObject* GodevarrowError;
static PyObject* ArrowInvalid;
static PyObject* ArrowNotImplementedError;
static PyObject* DeviceError;
static PyObject* GodevarrowTypeError;
static PyObject* StreamError;
static PyObject* InternalError;
static PyObject* DLPackError;

// ------------------------------------------------------------------ errors

static PyObject* raise_error(gda_error* e) {
  PyObject* cls;
  switch (e->kind) {
    case GDA_ERR_NOT_IMPLEMENTED: cls = ArrowNotImplementedError; break;
    case GDA_ERR_DEVICE: cls = DeviceError; break;
    case GDA_ERR_TYPE: cls = GodevarrowTypeError; break;
    case GDA_ERR_STREAM: cls = StreamError; break;
    case GDA_ERR_INTERNAL: cls = InternalError; break;
    case GDA_ERR_BUFFER: cls = DLPackError; break;
    case GDA_ERR_MEMORY: cls = PyExc_MemoryError; break;
    default: cls = ArrowInvalid; break;
  }
  const char* msg = e->message ? e->message : "unknown error";
  if (cls == StreamError) {
    PyObject* args = Py_BuildValue("(is)", e->errno_code, msg);
    if (args) {
      PyErr_SetObject(cls, args);
      Py_DECREF(args);
    }
  } else {
    PyErr_SetString(cls, msg);
  }
  free(e->message);
  e->message = NULL;
  return NULL;
}

// ----------------------------------------------------------------- handles
// A handle is a Go object owned by Python: a capsule whose pointer is the
// cgo.Handle and whose destructor releases it (synchronously, with the GIL).

// Handles whose capsule context is STOP_FIRST own a read-ahead stream: its
// background read may need the GIL, so it is stopped without the GIL before
// the handle (and with it the producer's stream) is released with the GIL.
static char STOP_FIRST;

static void handle_destructor(PyObject* cap) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  uintptr_t h = (uintptr_t)PyCapsule_GetPointer(cap, HANDLE_NAME);
  if (h && PyCapsule_GetContext(cap) == &STOP_FIRST) {
    Py_BEGIN_ALLOW_THREADS gdaStreamStop(h);
    Py_END_ALLOW_THREADS
  }
  if (h) gdaHandleRelease(h);
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
}

static PyObject* wrap_handle(uintptr_t h) {
  PyObject* cap = PyCapsule_New((void*)h, HANDLE_NAME, handle_destructor);
  if (!cap) gdaHandleRelease(h);
  return cap;
}

static PyTypeObject ArrayBase_Type;
typedef struct {
  PyObject_HEAD uintptr_t h;  // the Go handle of a cdevice.Array; 0 until needed when held is set
  PyObject* owner;            // what releases h: the handle capsule or ArrayBase it came from; NULL: we do
  PyObject* info;             // array_info(), computed once
  gda_held* held;             // a held import (the C fast path, docs/design.md), or NULL
} ArrayBaseObject;

// The Go handle of an ArrayBase, built from its held import on first need.
static int array_base_handle(ArrayBaseObject* a, uintptr_t* h) {
  if (!a->h && a->held) {
    gda_error e = {0};
    uintptr_t built = 0;
    if (gdaImportHeld(a->held, &built, &e)) {
      raise_error(&e);
      return -1;
    }
    a->h = built;
  }
  *h = a->h;
  return 0;
}

static PyObject* array_base_owning(PyTypeObject* type, uintptr_t h, gda_held* held);

// ---------------------------------------------------------- pending streams
// A plain stream whose schema the Go import has read before (it is in the
// held-schema table) stays here, unread, until Go is needed: handing it on
// unread, the common pass-through, then never calls into Go (docs/design.md,
// "Streams passed through"). Every function taking a stream handle accepts a
// pending one; get_handle moves it into Go on first need, with the schema
// already read, so no producer callback runs then. All of it under the GIL.
#define PENDING_NAME "godevarrow.pending_stream"

typedef struct {
  struct ArrowArrayStream stream;  // the producer's; released (NULL) once moved to Go, handed on or closed
  struct ArrowSchema schema;       // its get_schema result; moved to Go with the stream, else kept for .schema
  uintptr_t h;                     // the Go handle once moved to Go, else 0
  int is_struct;                   // the schema is a record batch's
} pending_stream;

static int64_t live_pending;  // counted as imported streams by debug_counters

static void pending_drop(pending_stream* p) {
  if (p->schema.release) p->schema.release(&p->schema);
  if (p->stream.release) p->stream.release(&p->stream);
}

static void pending_destructor(PyObject* cap) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  pending_stream* p = PyCapsule_GetPointer(cap, PENDING_NAME);
  if (p) {
    if (p->h) gdaHandleRelease(p->h);
    if (p->stream.release) live_pending--;
    pending_drop(p);
    free(p);
  }
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
}

// The pending stream of o, or NULL when o is not a pending capsule.
static pending_stream* pending_of(PyObject* o) {
  return PyCapsule_IsValid(o, PENDING_NAME) ? PyCapsule_GetPointer(o, PENDING_NAME) : NULL;
}

// The pending stream of o if it is still unread and in C, else NULL.
static pending_stream* pending_in_c(PyObject* o) {
  pending_stream* p = pending_of(o);
  return p && !p->h && p->stream.release ? p : NULL;
}

static int pending_handle(pending_stream* p, uintptr_t* h) {
  gda_error e = {0};
  if (!p->h) {
    if (!p->stream.release) {  // handed on or closed while in C
      gdaStreamConsumed(&e);
      raise_error(&e);
      return -1;
    }
    live_pending--;
    if (gdaImportPeekedStream(&p->stream, &p->schema, 0, &p->h, &e)) {
      raise_error(&e);
      return -1;
    }
  }
  *h = p->h;
  return 0;
}

static int get_handle(PyObject* o, uintptr_t* h) {
  if (PyObject_TypeCheck(o, &ArrayBase_Type)) return array_base_handle((ArrayBaseObject*)o, h);
  pending_stream* pending = pending_of(o);
  if (pending) return pending_handle(pending, h);
  if (!PyCapsule_IsValid(o, HANDLE_NAME)) {
    PyErr_SetString(GodevarrowTypeError, "expected a godevarrow handle");
    return -1;
  }
  *h = (uintptr_t)PyCapsule_GetPointer(o, HANDLE_NAME);
  return 0;
}

// None or a handle → 0 or the handle
static int get_optional_handle(PyObject* o, uintptr_t* h) {
  if (o == Py_None) {
    *h = 0;
    return 0;
  }
  return get_handle(o, h);
}

// ---------------------------------------------------------- Arrow capsules

// Destructors release only what nobody consumed, and free our allocation.
// The consumer may have renamed the capsule, so ask it for its name.
static void release_schema(struct ArrowSchema* s) { s->release(s); }
static void release_array(struct ArrowArray* s) { s->release(s); }
static void release_device_array(struct ArrowDeviceArray* s) { s->array.release(&s->array); }
static void release_stream(struct ArrowArrayStream* s) { s->release(s); }
static void release_device_stream(struct ArrowDeviceArrayStream* s) { s->release(s); }

static void schema_capsule_destructor(PyObject* cap) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  struct ArrowSchema* s = PyCapsule_GetPointer(cap, PyCapsule_GetName(cap));
  if (s) {
    if (s->release) release_schema(s);
    free(s);
  }
  PyErr_Clear();
  PyErr_Restore(et, ev, etb);
}
static void array_capsule_destructor(PyObject* cap) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  struct ArrowArray* s = PyCapsule_GetPointer(cap, PyCapsule_GetName(cap));
  if (s) {
    if (s->release) release_array(s);
    free(s);
  }
  PyErr_Clear();
  PyErr_Restore(et, ev, etb);
}
static void device_array_capsule_destructor(PyObject* cap) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  struct ArrowDeviceArray* s = PyCapsule_GetPointer(cap, PyCapsule_GetName(cap));
  if (s) {
    if (s->array.release) release_device_array(s);
    free(s);
  }
  PyErr_Clear();
  PyErr_Restore(et, ev, etb);
}
static void stream_capsule_destructor(PyObject* cap) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  struct ArrowArrayStream* s = PyCapsule_GetPointer(cap, PyCapsule_GetName(cap));
  if (s) {
    if (s->release) release_stream(s);
    free(s);
  }
  PyErr_Clear();
  PyErr_Restore(et, ev, etb);
}
static void device_stream_capsule_destructor(PyObject* cap) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  struct ArrowDeviceArrayStream* s = PyCapsule_GetPointer(cap, PyCapsule_GetName(cap));
  if (s) {
    if (s->release) release_device_stream(s);
    free(s);
  }
  PyErr_Clear();
  PyErr_Restore(et, ev, etb);
}

// The pointer of a capsule that must carry `name`: TypeError for
// non-capsules, ValueError (ArrowInvalid) for a wrong name or NULL pointer.
static void* capsule_pointer(PyObject* cap, const char* name) {
  if (!PyCapsule_CheckExact(cap)) {
    PyErr_Format(GodevarrowTypeError, "expected a PyCapsule named '%s', got an object of type %.200s", name,
                 Py_TYPE(cap)->tp_name);
    return NULL;
  }
  const char* got = PyCapsule_GetName(cap);
  if (!got || strcmp(got, name) != 0) {
    PyErr_Format(ArrowInvalid, "expected a PyCapsule named '%s', got one named '%s'", name, got ? got : "(NULL)");
    return NULL;
  }
  void* p = PyCapsule_GetPointer(cap, name);
  if (!p) {
    PyErr_Clear();
    PyErr_Format(ArrowInvalid, "PyCapsule '%s' holds a NULL pointer", name);
  }
  return p;
}

// ----------------------------------------------------------------- methods

#define CHECK_NARGS(n, fname)                                                              \
  if (nargs != (n)) {                                                                      \
    PyErr_Format(GodevarrowTypeError, fname "() takes %d arguments (%zd given)", (n), nargs); \
    return NULL;                                                                           \
  }

static PyObject* m_import_schema(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "import_schema");
  void* p = capsule_pointer(args[0], "arrow_schema");
  if (!p) return NULL;
  int consume = PyObject_IsTrue(args[1]);
  uintptr_t h = 0;
  gda_error e = {0};
  if (gdaImportSchema(p, consume, &h, &e)) return raise_error(&e);
  return wrap_handle(h);
}

static PyObject* m_import_array(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "import_array");
  int device = PyObject_IsTrue(args[2]);
  void* sp = capsule_pointer(args[0], "arrow_schema");
  if (!sp) return NULL;
  void* ap = capsule_pointer(args[1], device ? "arrow_device_array" : "arrow_array");
  if (!ap) return NULL;
  uintptr_t h = 0;
  gda_error e = {0};
  if (gdaImportArray(sp, ap, device, &h, &e)) return raise_error(&e);
  return wrap_handle(h);
}

// A plain stream with all its callbacks: ask for the schema here, and keep
// the stream in C when Go has read that schema before (pending streams);
// otherwise Go takes it at once, schema included, and reports what is wrong.
static PyObject* import_plain_stream(struct ArrowArrayStream* src) {
  pending_stream* p = calloc(1, sizeof(*p));
  if (!p) return PyErr_NoMemory();  // the capsule still owns the stream
  p->stream = *src;
  src->release = NULL;
  int rc, is_struct = 0;
  // get_schema of a foreign stream may block
  Py_BEGIN_ALLOW_THREADS rc = p->stream.get_schema(&p->stream, &p->schema);
  Py_END_ALLOW_THREADS if (rc == 0 && gda_held_schema_known(&p->schema, &is_struct)) {
    PyObject* cap = PyCapsule_New(p, PENDING_NAME, pending_destructor);
    if (!cap) {
      pending_drop(p);
      free(p);
      return NULL;
    }
    p->is_struct = is_struct;
    live_pending++;
    return cap;
  }
  uintptr_t h = 0;
  gda_error e = {0};
  rc = gdaImportPeekedStream(&p->stream, &p->schema, rc, &h, &e);
  free(p);
  if (rc) return raise_error(&e);
  return wrap_handle(h);
}

static PyObject* m_import_stream(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "import_stream");
  int device = PyObject_IsTrue(args[1]);
  void* p = capsule_pointer(args[0], device ? "arrow_device_array_stream" : "arrow_array_stream");
  if (!p) return NULL;
  struct ArrowArrayStream* plain = p;
  if (!device && plain->release && plain->get_schema && plain->get_next && plain->get_last_error) {
    return import_plain_stream(plain);
  }
  uintptr_t h = 0;
  gda_error e = {0};
  int rc;
  // get_schema of a foreign stream may block
  Py_BEGIN_ALLOW_THREADS rc = gdaImportStream(p, device, &h, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  return wrap_handle(h);
}

// A capsule owning the filled, malloc'd schema s.
static PyObject* schema_capsule(struct ArrowSchema* s) {
  PyObject* cap = PyCapsule_New(s, "arrow_schema", schema_capsule_destructor);
  if (!cap) {
    s->release(s);
    free(s);
  }
  return cap;
}

static PyObject* m_export_schema(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "export_schema");
  uintptr_t h;
  if (get_handle(args[0], &h)) return NULL;
  struct ArrowSchema* s = calloc(1, sizeof(*s));
  if (!s) return PyErr_NoMemory();
  gda_error e = {0};
  if (gdaExportSchema(h, s, &e)) {
    free(s);
    return raise_error(&e);
  }
  return schema_capsule(s);
}

// The (schema capsule, array capsule) pair of freshly filled export structs
// (allocated with malloc), which the capsules then own.
static PyObject* array_pair(struct ArrowSchema* s, void* a, int device) {
  PyObject* scap = PyCapsule_New(s, "arrow_schema", schema_capsule_destructor);
  if (!scap) {
    s->release(s);
    free(s);
    if (device) {
      release_device_array(a);
    } else {
      release_array(a);
    }
    free(a);
    return NULL;
  }
  PyObject* acap = device ? PyCapsule_New(a, "arrow_device_array", device_array_capsule_destructor)
                          : PyCapsule_New(a, "arrow_array", array_capsule_destructor);
  if (!acap) {
    Py_DECREF(scap);
    if (device) {
      release_device_array(a);
    } else {
      release_array(a);
    }
    free(a);
    return NULL;
  }
  PyObject* t = PyTuple_New(2);
  if (!t) {
    Py_DECREF(scap);
    Py_DECREF(acap);
    return NULL;
  }
  PyTuple_SET_ITEM(t, 0, scap);
  PyTuple_SET_ITEM(t, 1, acap);
  return t;
}

// The pair of an export of handle h (cast to the requested schema handle
// req, 0: none), or of the held import `held` when it is not NULL.
static PyObject* export_array_pair(uintptr_t h, gda_held* held, uintptr_t req, int device) {
  struct ArrowSchema* s = calloc(1, sizeof(*s));
  void* a = calloc(1, device ? sizeof(struct ArrowDeviceArray) : sizeof(struct ArrowArray));
  if (!s || !a) {
    free(s);
    free(a);
    return PyErr_NoMemory();
  }
  gda_error e = {0};
  int failed = held ? gda_held_export(held, s, a, device) != 0 : gdaExportArray(h, req, s, a, device, &e) != 0;
  if (failed) {
    free(s);
    free(a);
    return held ? PyErr_NoMemory() : raise_error(&e);
  }
  return array_pair(s, a, device);
}

static PyObject* m_export_array(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "export_array");
  uintptr_t h, req;
  if (get_handle(args[0], &h) || get_optional_handle(args[1], &req)) return NULL;
  int device = PyObject_IsTrue(args[2]);
  if (device < 0) return NULL;
  return export_array_pair(h, NULL, req, device);
}

static PyObject* m_export_stream(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "export_stream");
  int device = PyObject_IsTrue(args[2]);
  pending_stream* pending = pending_in_c(args[0]);
  if (pending && !device && args[1] == Py_None) {
    // an unread stream handed on as it came: the producer's own struct
    struct ArrowArrayStream* out = malloc(sizeof(*out));
    if (!out) return PyErr_NoMemory();
    PyObject* cap = PyCapsule_New(out, "arrow_array_stream", stream_capsule_destructor);
    if (!cap) {
      free(out);
      return NULL;
    }
    *out = pending->stream;
    pending->stream.release = NULL;
    live_pending--;
    return cap;
  }
  uintptr_t h, req;
  if (get_handle(args[0], &h) || get_optional_handle(args[1], &req)) return NULL;
  void* s = calloc(1, device ? sizeof(struct ArrowDeviceArrayStream) : sizeof(struct ArrowArrayStream));
  if (!s) return PyErr_NoMemory();
  gda_error e = {0};
  if (gdaExportStream(h, req, s, device, &e)) {
    free(s);
    return raise_error(&e);
  }
  PyObject* cap = device ? PyCapsule_New(s, "arrow_device_array_stream", device_stream_capsule_destructor)
                         : PyCapsule_New(s, "arrow_array_stream", stream_capsule_destructor);
  if (!cap) {
    if (device) {
      release_device_stream(s);
    } else {
      release_stream(s);
    }
    free(s);
  }
  return cap;
}

static PyObject* array_info(uintptr_t h) {
  gda_array_info info;
  gda_error e = {0};
  if (gdaArrayInfo(h, &info, &e)) return raise_error(&e);
  return Py_BuildValue("(LLLiLLO)", (long long)info.length, (long long)info.offset, (long long)info.null_count,
                       (int)info.device_type, (long long)info.device_id, (long long)info.n_children,
                       info.is_struct ? Py_True : Py_False);
}

static PyObject* m_array_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "array_info");
  uintptr_t h;
  if (get_handle(args[0], &h)) return NULL;
  return array_info(h);
}

static PyObject* m_schema_of(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "schema_of");
  uintptr_t h, out = 0;
  if (get_handle(args[0], &h)) return NULL;
  gda_error e = {0};
  if (gdaSchemaOf(h, &out, &e)) return raise_error(&e);
  return wrap_handle(out);
}

static PyObject* m_schema_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "schema_info");
  uintptr_t h;
  if (get_handle(args[0], &h)) return NULL;
  char *format = NULL, *name = NULL, *metadata = NULL;
  int64_t md_len = 0, flags = 0, n_children = 0;
  int has_dict = 0;
  gda_error e = {0};
  if (gdaSchemaInfo(h, &format, &name, &metadata, &md_len, &flags, &n_children, &has_dict, &e))
    return raise_error(&e);
  PyObject* md = metadata ? PyBytes_FromStringAndSize(metadata, (Py_ssize_t)md_len) : (Py_INCREF(Py_None), Py_None);
  PyObject* fmt = PyUnicode_DecodeUTF8(format, (Py_ssize_t)strlen(format), "surrogateescape");
  PyObject* nm = PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "surrogateescape");
  free(format);
  free(name);
  free(metadata);
  if (!md || !fmt || !nm) {
    Py_XDECREF(md);
    Py_XDECREF(fmt);
    Py_XDECREF(nm);
    return NULL;
  }
  return Py_BuildValue("(NNLNLO)", fmt, nm, (long long)flags, md, (long long)n_children,
                       has_dict ? Py_True : Py_False);
}

static PyObject* m_schema_child(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "schema_child");
  uintptr_t h, out = 0;
  if (get_handle(args[0], &h)) return NULL;
  long long i = PyLong_AsLongLong(args[1]);
  if (i == -1 && PyErr_Occurred()) return NULL;
  gda_error e = {0};
  if (gdaSchemaChild(h, i, &out, &e)) return raise_error(&e);
  return wrap_handle(out);
}

static PyObject* m_schema_equal(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "schema_equal");
  uintptr_t a, b;
  if (get_handle(args[0], &a) || get_handle(args[1], &b)) return NULL;
  return PyBool_FromLong(gdaSchemaEqual(a, b));
}

static PyObject* m_schema_str(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "schema_str");
  uintptr_t h;
  if (get_handle(args[0], &h)) return NULL;
  char* s = NULL;
  gda_error e = {0};
  if (gdaSchemaString(h, &s, &e)) return raise_error(&e);
  PyObject* r = PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
  free(s);
  return r;
}

static PyObject* m_array_slice(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "array_slice");
  uintptr_t h, out = 0;
  if (get_handle(args[0], &h)) return NULL;
  long long off = PyLong_AsLongLong(args[1]);
  if (off == -1 && PyErr_Occurred()) return NULL;
  long long len = PyLong_AsLongLong(args[2]);
  if (len == -1 && PyErr_Occurred()) return NULL;
  gda_error e = {0};
  if (gdaArraySlice(h, off, len, &out, &e)) return raise_error(&e);
  return wrap_handle(out);
}

static PyObject* m_array_column(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "array_column");
  uintptr_t h, out = 0;
  if (get_handle(args[0], &h)) return NULL;
  long long i = PyLong_AsLongLong(args[1]);
  if (i == -1 && PyErr_Occurred()) return NULL;
  gda_error e = {0};
  if (gdaArrayColumn(h, i, &out, &e)) return raise_error(&e);
  return wrap_handle(out);
}

static PyObject* m_array_validate(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "array_validate");
  uintptr_t h;
  if (get_handle(args[0], &h)) return NULL;
  int full = PyObject_IsTrue(args[1]);
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaArrayValidate(h, full, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  Py_RETURN_NONE;
}

static PyObject* m_array_cast(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "array_cast");
  uintptr_t h, s, out = 0;
  if (get_handle(args[0], &h) || get_handle(args[1], &s)) return NULL;
  gda_error e = {0};
  if (gdaArrayCast(h, s, &out, &e)) return raise_error(&e);
  return wrap_handle(out);
}

static PyObject* m_stream_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "stream_info");
  uintptr_t h, schema = 0;
  pending_stream* p = pending_of(args[0]);
  if (p && !p->h && p->schema.release) {  // in C, or handed on or closed from there: its schema is here
    gda_error e = {0};
    if (gdaImportSchema(&p->schema, 0, &schema, &e)) return raise_error(&e);
    PyObject* sh = wrap_handle(schema);
    if (!sh) return NULL;
    return Py_BuildValue("(NiN)", sh, (int)ARROW_DEVICE_CPU, PyBool_FromLong(p->is_struct));
  }
  if (get_handle(args[0], &h)) return NULL;
  int32_t device_type = 0, is_struct = 0;
  gda_error e = {0};
  if (gdaStreamInfo(h, &schema, &device_type, &is_struct, &e)) return raise_error(&e);
  PyObject* sh = wrap_handle(schema);
  if (!sh) return NULL;
  return Py_BuildValue("(NiN)", sh, (int)device_type, PyBool_FromLong(is_struct));
}

// stream_next(handle[, cls]): the next array as a handle, or as an instance
// of cls (an ArrayBase subclass); None at the end.
static PyObject* m_stream_next(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1 && nargs != 2) {
    PyErr_Format(GodevarrowTypeError, "stream_next() takes 1 or 2 arguments (%zd given)", nargs);
    return NULL;
  }
  PyTypeObject* cls = NULL;
  if (nargs == 2) {
    if (!PyType_Check(args[1]) || !PyType_IsSubtype((PyTypeObject*)args[1], &ArrayBase_Type)) {
      PyErr_SetString(GodevarrowTypeError, "stream_next() needs a subclass of ArrayBase");
      return NULL;
    }
    cls = (PyTypeObject*)args[1];
  }
  uintptr_t h, out = 0;
  if (get_handle(args[0], &h)) return NULL;
  gda_error e = {0};
  int rc;
  // A read-ahead stream is waited on in slices, so that Ctrl-C is handled
  // promptly while its producer blocks; other reads run to completion.
  for (;;) {
    Py_BEGIN_ALLOW_THREADS rc = gdaStreamNext(h, 100, &out, &e);
    Py_END_ALLOW_THREADS if (rc != GDA_PENDING) break;
    if (PyErr_CheckSignals() < 0) return NULL;
  }
  if (rc) return raise_error(&e);
  if (!out) Py_RETURN_NONE;
  if (PyErr_CheckSignals() < 0) {
    // a signal arrived during the read: raise it, and keep the array for
    // the next call instead of dropping it with the exception
    gdaStreamUnread(h, out);
    gdaHandleRelease(out);
    return NULL;
  }
  return cls ? array_base_owning(cls, out, NULL) : wrap_handle(out);
}

static PyObject* m_stream_close(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "stream_close");
  pending_stream* pending = pending_of(args[0]);
  if (pending && !pending->h) {  // never in Go: released here, if still here
    if (pending->stream.release) {
      live_pending--;
      pending->stream.release(&pending->stream);
    }
    Py_RETURN_NONE;
  }
  uintptr_t h;
  if (get_handle(args[0], &h)) return NULL;
  if (PyCapsule_GetContext(args[0]) == &STOP_FIRST) {
    Py_BEGIN_ALLOW_THREADS gdaStreamStop(h);
    Py_END_ALLOW_THREADS
  }
  gda_error e = {0};
  if (gdaStreamClose(h, &e)) return raise_error(&e);
  Py_RETURN_NONE;
}

static PyObject* wrap_stop_first_handle(uintptr_t h) {
  PyObject* cap = wrap_handle(h);
  if (cap && PyCapsule_SetContext(cap, &STOP_FIRST) < 0) Py_CLEAR(cap);
  return cap;
}

// stream_prefetch(handle, depth) -> handle (moves the stream)
static PyObject* m_stream_prefetch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "stream_prefetch");
  uintptr_t h, out = 0;
  if (get_handle(args[0], &h)) return NULL;
  long long depth = PyLong_AsLongLong(args[1]);
  if (depth == -1 && PyErr_Occurred()) return NULL;
  gda_error e = {0};
  if (gdaStreamPrefetch(h, depth, &out, &e)) return raise_error(&e);
  return wrap_stop_first_handle(out);
}

static PyObject* m_stream_cast(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "stream_cast");
  uintptr_t h, schema, out = 0;
  if (get_handle(args[0], &h) || get_handle(args[1], &schema)) return NULL;
  gda_error e = {0};
  if (gdaStreamCast(h, schema, &out, &e)) return raise_error(&e);
  return PyCapsule_GetContext(args[0]) == &STOP_FIRST ? wrap_stop_first_handle(out) : wrap_handle(out);
}

static PyObject* m_stream_from_arrays(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "stream_from_arrays");
  uintptr_t schema;
  if (get_optional_handle(args[1], &schema)) return NULL;
  PyObject* seq = PySequence_Fast(args[0], "stream_from_arrays() needs a sequence of handles");
  if (!seq) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  uintptr_t* hs = calloc((size_t)(n ? n : 1), sizeof(uintptr_t));
  if (!hs) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    if (get_handle(PySequence_Fast_GET_ITEM(seq, i), &hs[i])) {
      free(hs);
      Py_DECREF(seq);
      return NULL;
    }
  }
  uintptr_t out = 0;
  gda_error e = {0};
  int rc = gdaStreamFromArrays(hs, n, schema, &out, &e);
  free(hs);
  Py_DECREF(seq);
  if (rc) return raise_error(&e);
  return wrap_handle(out);
}

static PyObject* m_debug_counters(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(0, "debug_counters");
  int64_t v[10];
  gdaDebugCounters(v);
  v[5] += live_pending;  // imported streams: those still pending in C too
  return Py_BuildValue("(LLLLLLLLLL)", (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3],
                       (long long)v[4], (long long)v[5], (long long)v[6], (long long)v[7], (long long)v[8],
                       (long long)v[9]);
}

static PyObject* m_checksums(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "checksums");
  uintptr_t h;
  if (get_handle(args[0], &h)) return NULL;
  Py_ssize_t n = PyLong_AsSsize_t(args[1]);
  if (n < 0) return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "negative column count");
  uint32_t* sums = calloc((size_t)(n ? n : 1), sizeof(uint32_t));
  if (!sums) return PyErr_NoMemory();
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaChecksums(h, sums, n, &e);
  Py_END_ALLOW_THREADS if (rc) {
    free(sums);
    return raise_error(&e);
  }
  PyObject* out = PyList_New(n);
  for (Py_ssize_t i = 0; out && i < n; i++) PyList_SET_ITEM(out, i, PyLong_FromUnsignedLong(sums[i]));
  free(sums);
  return out;
}

static PyObject* m_build_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(0, "build_info");
  char* s = gdaBuildInfo();
  PyObject* r = PyUnicode_FromString(s);
  free(s);
  return r;
}

// ------------------------------------------------------------------ DLPack
// A producer's capsule is named "dltensor[_versioned]" until a consumer takes
// it and renames it "used_dltensor[_versioned]"; only an untaken tensor is
// deleted by the capsule destructor (DLPack Python specification).

static void dlpack_capsule_destructor(PyObject* cap) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  const char* name = PyCapsule_GetName(cap);
  if (name && strcmp(name, "dltensor_versioned") == 0) {
    void* p = PyCapsule_GetPointer(cap, name);
    if (p) gdaDLPackDelete(p, 1);
  } else if (name && strcmp(name, "dltensor") == 0) {
    void* p = PyCapsule_GetPointer(cap, name);
    if (p) gdaDLPackDelete(p, 0);
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

// dlpack_export(handle, versioned, copied, stream): stream is the consumer's
// CUDA stream handle, or -1 for no synchronization.
static PyObject* m_dlpack_export(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(4, "dlpack_export");
  uintptr_t h;
  if (get_handle(args[0], &h)) return NULL;
  int versioned = PyObject_IsTrue(args[1]);
  int copied = PyObject_IsTrue(args[2]);
  long long stream = PyLong_AsLongLong(args[3]);
  if (stream == -1 && PyErr_Occurred()) return NULL;
  void* p = NULL;
  gda_error e = {0};
  if (gdaDLPackExport(h, versioned, copied, stream, &p, &e)) return raise_error(&e);
  PyObject* cap = PyCapsule_New(p, versioned ? "dltensor_versioned" : "dltensor", dlpack_capsule_destructor);
  if (!cap) gdaDLPackDelete(p, versioned);
  return cap;
}

// dlpack_import(capsule, stream_handle_or_None): the stream is the one the
// consumer passed to __dlpack__ (a handle from cuda_stream_new).
static PyObject* m_dlpack_import(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "dlpack_import");
  PyObject* cap = args[0];
  uintptr_t stream = 0;
  if (get_optional_handle(args[1], &stream)) return NULL;
  if (!PyCapsule_CheckExact(cap)) {
    PyErr_Format(GodevarrowTypeError, "__dlpack__() returned an object of type %.200s, not a PyCapsule",
                 Py_TYPE(cap)->tp_name);
    return NULL;
  }
  const char* name = PyCapsule_GetName(cap);
  int versioned;
  if (name && strcmp(name, "dltensor_versioned") == 0) {
    versioned = 1;
  } else if (name && strcmp(name, "dltensor") == 0) {
    versioned = 0;
  } else {
    PyErr_Format(ArrowInvalid, "expected a DLPack capsule named 'dltensor' or 'dltensor_versioned', got '%s'",
                 name ? name : "(NULL)");
    return NULL;
  }
  void* p = PyCapsule_GetPointer(cap, name);
  if (!p) return NULL;
  // take ownership before anything else can fail: from here on we delete it
  if (PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0) return NULL;
  uintptr_t h = 0;
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaDLPackImport(p, versioned, stream, &h, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  return wrap_handle(h);
}

// cuda_stream_new(device_id) -> (handle, stream as int): a stream of ours for
// a producer to order its work before (DLPack consumers pass it on).
static PyObject* m_cuda_stream_new(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "cuda_stream_new");
  long long dev = PyLong_AsLongLong(args[0]);
  if (dev == -1 && PyErr_Occurred()) return NULL;
  uintptr_t h = 0, stream = 0;
  gda_error e = {0};
  if (gdaCUDAStreamNew(dev, &h, &stream, &e)) return raise_error(&e);
  PyObject* handle = wrap_handle(h);
  if (!handle) return NULL;
  return Py_BuildValue("(NK)", handle, (unsigned long long)stream);
}

// tensor_info(handle, ready) -> (data, length, code, bits, device_type, device_id, stream)
static PyObject* m_tensor_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "tensor_info");
  uintptr_t h;
  if (get_handle(args[0], &h)) return NULL;
  int ready = PyObject_IsTrue(args[1]);
  gda_tensor_info t = {0};
  gda_error e = {0};
  if (gdaTensorInfo(h, ready, &t, &e)) return raise_error(&e);
  return Py_BuildValue("(KLiiiLK)", (unsigned long long)t.data, (long long)t.length, t.code, t.bits,
                       (int)t.device_type, (long long)t.device_id, (unsigned long long)t.stream);
}

// wrap_cuda_pointer(owner, format, data, length, stream) -> handle
static PyObject* m_wrap_cuda_pointer(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(5, "wrap_cuda_pointer");
  const char* format = PyUnicode_AsUTF8(args[1]);
  if (!format) return NULL;
  unsigned long long data = PyLong_AsUnsignedLongLong(args[2]);
  if (data == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  long long length = PyLong_AsLongLong(args[3]);
  if (length == -1 && PyErr_Occurred()) return NULL;
  unsigned long long stream = PyLong_AsUnsignedLongLong(args[4]);
  if (stream == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  uintptr_t h = 0;
  gda_error e = {0};
  if (gdaWrapCUDAPointer(args[0], (char*)format, (uintptr_t)data, length, (uintptr_t)stream, &h, &e))
    return raise_error(&e);
  return wrap_handle(h);
}

static PyObject* m_dlpack_device(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "dlpack_device");
  uintptr_t h;
  if (get_handle(args[0], &h)) return NULL;
  int32_t t = 0;
  int64_t id = 0;
  gda_error e = {0};
  if (gdaDLPackDevice(h, &t, &id, &e)) return raise_error(&e);
  return Py_BuildValue("(iL)", (int)t, (long long)id);
}

static PyObject* m_cuda_status(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(0, "cuda_status");
  int64_t count = 0;
  char *library = NULL, *message = NULL;
  int ok;
  Py_BEGIN_ALLOW_THREADS ok = gdaCUDAStatus(&count, &library, &message);
  Py_END_ALLOW_THREADS PyObject* r =
      Py_BuildValue("(OLss)", ok ? Py_True : Py_False, (long long)count, library ? library : "",
                    message ? message : "");
  free(library);
  free(message);
  return r;
}

static PyObject* m_array_to_device(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "array_to_device");
  uintptr_t h, out = 0;
  if (get_handle(args[0], &h)) return NULL;
  int dtype = (int)PyLong_AsLong(args[1]);
  if (dtype == -1 && PyErr_Occurred()) return NULL;
  long long id = PyLong_AsLongLong(args[2]);
  if (id == -1 && PyErr_Occurred()) return NULL;
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaArrayToDevice(h, dtype, id, &out, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  return wrap_handle(out);
}

static PyObject* m_array_with_validity(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "array_with_validity");
  uintptr_t h, v, out = 0;
  if (get_handle(args[0], &h) || get_handle(args[1], &v)) return NULL;
  long long nulls = PyLong_AsLongLong(args[2]);
  if (nulls == -1 && PyErr_Occurred()) return NULL;
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaArrayWithValidity(h, v, nulls, &out, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  return wrap_handle(out);
}

static PyObject* m_array_as_batch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "array_as_batch");
  uintptr_t h, out = 0;
  if (get_handle(args[0], &h)) return NULL;
  gda_error e = {0};
  if (gdaArrayAsBatch(h, &out, &e)) return raise_error(&e);
  return wrap_handle(out);
}

static PyObject* m_array_copy(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "array_copy");
  uintptr_t h, out = 0;
  if (get_handle(args[0], &h)) return NULL;
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaArrayCopy(h, &out, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  return wrap_handle(out);
}

static PyObject* m_debug_panic(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(0, "debug_panic");
  gda_error e = {0};
  if (gdaDebugPanic(&e)) return raise_error(&e);
  Py_RETURN_NONE;
}

// ---------------------------------------------------------------- ArrayBase
// The base class of godevarrow.Array. The exchange protocols of an array are
// called once per exchange, so they live here in C: one call into Go each,
// with no Python frames around it (docs/design.md, "The fixed cost").

static PyObject* ArrayBase_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  PyObject* owner;
  if (kwds && PyDict_GET_SIZE(kwds)) {
    PyErr_Format(GodevarrowTypeError, "%.200s() takes no keyword arguments", type->tp_name);
    return NULL;
  }
  if (!PyArg_UnpackTuple(args, type->tp_name, 1, 1, &owner)) return NULL;
  uintptr_t h;
  if (PyObject_TypeCheck(owner, &ArrayBase_Type)) {
    // another view of the same Go array (an Array as a RecordBatch)
    if (array_base_handle((ArrayBaseObject*)owner, &h)) return NULL;
  } else if (PyCapsule_IsValid(owner, HANDLE_NAME)) {
    h = (uintptr_t)PyCapsule_GetPointer(owner, HANDLE_NAME);
  } else {
    PyErr_Format(GodevarrowTypeError,
                 "%.200s objects are made by godevarrow.array() and friends, not from an object of type %.200s",
                 type->tp_name, Py_TYPE(owner)->tp_name);
    return NULL;
  }
  ArrayBaseObject* self = (ArrayBaseObject*)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->h = h;
  self->owner = Py_NewRef(owner);  // it releases h, so it lives as long as we do
  return (PyObject*)self;
}

// A new instance of type owning the Go handle h and/or the held import
// `held` (0/NULL: none); on failure both are released.
static PyObject* array_base_owning(PyTypeObject* type, uintptr_t h, gda_held* held) {
  ArrayBaseObject* self = (ArrayBaseObject*)type->tp_alloc(type, 0);
  if (!self) {
    if (h) gdaHandleRelease(h);
    if (held) gda_held_unref(held);
    return NULL;
  }
  self->h = h;
  self->held = held;
  return (PyObject*)self;
}

static void ArrayBase_dealloc(ArrayBaseObject* self) {
  Py_CLEAR(self->info);
  if (self->owner) {
    Py_CLEAR(self->owner);
  } else if (self->h) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    gdaHandleRelease(self->h);
    PyErr_Restore(type, value, tb);
  }
  self->h = 0;
  if (self->held) gda_held_unref(self->held);  // no Python is called: the producer's release is C
  self->held = NULL;
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* ArrayBase_get_h(ArrayBaseObject* self, void* closure) { return Py_NewRef(self); }

static PyObject* ArrayBase_get_info(ArrayBaseObject* self, PyObject* unused) {
  uintptr_t h;
  if (!self->info && (array_base_handle(self, &h) || !(self->info = array_info(h)))) return NULL;
  return Py_NewRef(self->info);
}

// _is_struct(): whether the array is a struct array (a record batch), as
// _get_info()[6] says; a held import answers from its held schema without Go.
static PyObject* ArrayBase_is_struct(ArrayBaseObject* self, PyObject* unused) {
  if (self->held) return PyBool_FromLong(gda_held_is_record_batch(self->held));
  PyObject* info = ArrayBase_get_info(self, NULL);
  if (!info) return NULL;
  PyObject* is_struct = Py_NewRef(PyTuple_GET_ITEM(info, 6));
  Py_DECREF(info);
  return is_struct;
}

// The plain export of self (no requested schema): from C for a held import,
// else through its Go handle.
static PyObject* array_base_export(ArrayBaseObject* self, int device) {
  uintptr_t h = 0;
  if (!self->held && array_base_handle(self, &h)) return NULL;
  return export_array_pair(h, self->held, 0, device);
}

// Calls the Python method `name` of self with a vectorcall's arguments: the
// general path behind a protocol method's C fast path.
static PyObject* call_general_path(PyObject* self, const char* name, PyObject* const* args, Py_ssize_t nargs,
                                   PyObject* kwnames) {
  PyObject* method = PyObject_GetAttrString(self, name);
  if (!method) return NULL;
  PyObject* result = PyObject_Vectorcall(method, args, (size_t)nargs, kwnames);
  Py_DECREF(method);
  return result;
}

// __arrow_c_device_array__(requested_schema=None, **kwargs). The common call
// (no requested schema, no keywords) is answered here; the rest goes to the
// Python method _c_device_array_requested, which handles requests and
// rejects unknown keywords.
static PyObject* ArrayBase_device_array(ArrayBaseObject* self, PyObject* const* args, Py_ssize_t nargs,
                                        PyObject* kwnames) {
  int plain = nargs == 0 || (nargs == 1 && args[0] == Py_None);
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; plain && i < nkw; i++) plain = args[nargs + i] == Py_None;
  if (plain) return array_base_export(self, 1);
  return call_general_path((PyObject*)self, "_c_device_array_requested", args, nargs, kwnames);
}

// __arrow_c_array__(requested_schema=None): CPU data is exported here; data
// on another device (Go says "not implemented" for a plain export of it, and
// nothing else without a requested schema) and requests go to the Python
// method _c_array_slow, which copies to the host or casts.
static PyObject* ArrayBase_array(ArrayBaseObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  int plain = (nargs == 0 || (nargs == 1 && args[0] == Py_None)) && !kwnames;
  if (plain) {
    PyObject* pair = array_base_export(self, 0);
    if (pair || !PyErr_ExceptionMatches(ArrowNotImplementedError)) return pair;
    PyErr_Clear();
  }
  return call_general_path((PyObject*)self, "_c_array_slow", args, nargs, kwnames);
}

static PyObject* ArrayBase_schema_capsule(ArrayBaseObject* self, PyObject* unused) {
  if (self->held) {
    struct ArrowSchema* s = calloc(1, sizeof(*s));
    if (!s || gda_schema_copy(gda_held_template(self->held), s) != 0) {
      free(s);
      return PyErr_NoMemory();
    }
    return schema_capsule(s);
  }
  PyObject* args[1] = {(PyObject*)self};
  return m_export_schema(NULL, args, 1);
}

static PyMethodDef ArrayBase_methods[] = {
    {"__arrow_c_device_array__", (PyCFunction)(void (*)(void))ArrayBase_device_array, METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_device_array__(requested_schema=None, **kwargs) -> (schema capsule, device array capsule)\n\n"
     "Zero-copy export on any device; fresh, independent capsules per call."},
    {"__arrow_c_array__", (PyCFunction)(void (*)(void))ArrayBase_array, METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_array__(requested_schema=None) -> (schema capsule, array capsule)\n\n"
     "Zero-copy export of CPU data; data on another device is copied to the host."},
    {"__arrow_c_schema__", (PyCFunction)ArrayBase_schema_capsule, METH_NOARGS,
     "__arrow_c_schema__() -> schema capsule of the array's field"},
    {"_is_struct", (PyCFunction)ArrayBase_is_struct, METH_NOARGS,
     "_is_struct() -> whether the array is a struct array (a record batch)"},
    {"_get_info", (PyCFunction)ArrayBase_get_info, METH_NOARGS,
     "_get_info() -> (length, offset, null_count, device_type, device_id, n_children, is_struct)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ArrayBase_getset[] = {
    {"_h", (getter)ArrayBase_get_h, NULL, "the handle to pass to _godevarrow functions (the object itself)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ArrayBase_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "godevarrow._godevarrow.ArrayBase",
    .tp_basicsize = sizeof(ArrayBaseObject),
    .tp_dealloc = (destructor)ArrayBase_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C part of godevarrow.Array: a handle to a Go array and its exchange protocols.",
    .tp_methods = ArrayBase_methods,
    .tp_getset = ArrayBase_getset,
    .tp_new = ArrayBase_new,
};

// Looks up an optional attribute: 1 and a new reference, 0 when absent, -1 on error.
static int optional_attr(PyObject* obj, PyObject* name, PyObject** out) {
#if PY_VERSION_HEX >= 0x030D0000
  return PyObject_GetOptionalAttr(obj, name, out);
#else
  return _PyObject_LookupAttr(obj, name, out);
#endif
}

static PyObject* str_device_array;
static PyObject* str_array;
static PyObject* str_pyarrow_lib;
static PyObject* str_pyarrow;
static PyObject* str_schema;
static PyObject* str_type;
static PyObject* str_equals;
static PyObject* str_export_to_c_device;
static PyObject* kw_check_metadata;  // ("check_metadata",)

// Whether t finds name where base does (the method base defines, not an override).
static int same_method(PyTypeObject* t, PyObject* base, PyObject* name) {
  PyObject* mine = PyObject_GetAttr((PyObject*)t, name);
  PyObject* theirs = mine ? PyObject_GetAttr(base, name) : NULL;
  int same = theirs && mine == theirs;
  Py_XDECREF(mine);
  Py_XDECREF(theirs);
  PyErr_Clear();
  return same;
}

// pyarrow.lib.Array and RecordBatch, once pyarrow (18 or newer) is imported.
enum { PA_ARRAY, PA_BATCH };
static PyObject* pyarrow_bases[2];
static int pyarrow_too_old;
static PyObject* pyarrow_decided;  // pyarrow subclass -> its way, bounded

// Looks for pyarrow's bases: 0 (found or not), -1 on error.
static int find_pyarrow_bases(void) {
  PyObject* lib = PyImport_GetModule(str_pyarrow_lib);
  if (!lib) return PyErr_Occurred() ? -1 : 0;
  PyObject* pa = PyImport_GetModule(str_pyarrow);
  PyObject* version = pa ? PyObject_GetAttrString(pa, "__version__") : NULL;
  const char* text = version && PyUnicode_Check(version) ? PyUnicode_AsUTF8(version) : NULL;
  PyObject* array = PyObject_GetAttrString(lib, "Array");
  PyObject* batch = PyObject_GetAttrString(lib, "RecordBatch");
  PyErr_Clear();
  if (text && array && batch && PyType_Check(array) && PyType_Check(batch)) {
    if (strtol(text, NULL, 10) >= 18) {
      pyarrow_bases[PA_ARRAY] = array, pyarrow_bases[PA_BATCH] = batch;
      array = batch = NULL;  // kept
    } else {
      pyarrow_too_old = 1;
    }
  }  // else: pyarrow is still being imported; look again next time
  Py_XDECREF(array);
  Py_XDECREF(batch);
  Py_XDECREF(version);
  Py_XDECREF(pa);
  Py_DECREF(lib);
  return 0;
}

// How import_from asks an object for its data.
enum {
  GENERAL_ORDER,   // __arrow_c_device_array__, else __arrow_c_array__
  PLAIN_FIRST,     // __arrow_c_array__ first (see pyarrow_way)
  KNOWN_ARRAY,     // PLAIN_FIRST, and the array alone when its type is known
  KNOWN_BATCH,     // PLAIN_FIRST, and the arrays alone when the schema is known
};

// The way of objects of type t. PLAIN_FIRST when __arrow_c_array__ and
// __arrow_c_device_array__ are pyarrow's own methods (those of
// pyarrow.lib.Array or RecordBatch, not overridden) and pyarrow is 18 or
// newer, whose __arrow_c_array__ raises NotImplementedError for data not on
// the CPU (the PyCapsule spec lets a producer raise or copy there). Then the
// plain protocol gives exactly what the device protocol gives, without
// pyarrow's device check, a walk over every buffer (12 µs for 1,000
// columns); data elsewhere raises and takes the device protocol. KNOWN_*
// when, in addition, the `type` (Array) or `schema` (RecordBatch) attribute
// and _export_to_c_device are pyarrow's own (see import_known). -1 on error. Only pyarrow's
// subclasses are remembered (no other type is kept alive by this), each
// decided once.
static int pyarrow_way(PyTypeObject* t) {
  if (!pyarrow_bases[0]) {
    if (pyarrow_too_old) return GENERAL_ORDER;
    if (find_pyarrow_bases() < 0) return -1;
    if (!pyarrow_bases[0]) return GENERAL_ORDER;
  }
  int which = PyType_IsSubtype(t, (PyTypeObject*)pyarrow_bases[PA_ARRAY])   ? PA_ARRAY
              : PyType_IsSubtype(t, (PyTypeObject*)pyarrow_bases[PA_BATCH]) ? PA_BATCH
                                                                            : -1;
  if (which < 0) return GENERAL_ORDER;
  PyObject* known = PyDict_GetItemWithError(pyarrow_decided, (PyObject*)t);
  if (known) return (int)PyLong_AsLong(known);
  if (PyErr_Occurred()) return -1;
  PyObject* base = pyarrow_bases[which];
  int way = GENERAL_ORDER;
  if (same_method(t, base, str_array) && same_method(t, base, str_device_array)) {
    way = PLAIN_FIRST;
    if (same_method(t, base, which == PA_ARRAY ? str_type : str_schema) &&
        same_method(t, base, str_export_to_c_device))
      way = which == PA_ARRAY ? KNOWN_ARRAY : KNOWN_BATCH;
  }
  PyObject* value = PyLong_FromLong(way);
  if (!value) return -1;
  if (PyDict_GET_SIZE(pyarrow_decided) >= 256) PyDict_Clear(pyarrow_decided);
  int rc = PyDict_SetItem(pyarrow_decided, (PyObject*)t, value);
  Py_DECREF(value);
  return rc < 0 ? -1 : way;
}

// Known schemas (docs/design.md, "pyarrow's schema, exported once"): for
// pyarrow arrays and batches, the pyarrow type or schema last imported into
// a flat held schema (gda_held_flat_schema), and that held schema.
typedef struct {
  PyObject* pyarrow;  // a pyarrow DataType (arrays) or Schema (batches)
  gda_held_schema* held;
} known_schema;
static known_schema known[2];  // [PA_ARRAY], [PA_BATCH]

static void remember(known_schema* k, PyObject* pyarrow, gda_held* held) {
  gda_held_schema* e = gda_held_flat_schema(held);
  if (!e) return;
  known_schema old = *k;
  k->pyarrow = Py_NewRef(pyarrow);
  k->held = e;
  if (old.held) gda_held_schema_unref(old.held);
  Py_XDECREF(old.pyarrow);
}

// Imports an array known to be of schema e when the held path declines it:
// the Go import (device arrays, errors) with a copy of e's template.
static PyObject* import_known_by_go(gda_held_schema* e, struct ArrowDeviceArray* d, PyTypeObject* cls) {
  struct ArrowSchema s;
  if (gda_schema_copy(gda_held_schema_template(e), &s) != 0) {
    if (d->array.release) d->array.release(&d->array);
    return PyErr_NoMemory();
  }
  uintptr_t h = 0;
  gda_error err = {0};
  int rc = gdaImportArray(&s, d, 1, &h, &err);
  if (s.release) s.release(&s);
  if (d->array.release) d->array.release(&d->array);
  if (rc) return raise_error(&err);
  return array_base_owning(cls, h, NULL);
}

static Py_ssize_t length_or_minus_one(PyObject* obj) {
  Py_ssize_t n = PyObject_Length(obj);
  if (n < 0) PyErr_Clear();
  return n;
}

// The import of a pyarrow array or batch whose type or schema (pyarrow, its
// `type` or `schema`) equals the known one k: pyarrow exports the array
// alone (_export_to_c_device; its schema is not exported again) and the held
// path takes it against k's held schema. 0 when pyarrow is not the known
// type or schema (nothing done), 1 with *out the import (NULL on error).
static int import_known(PyObject* obj, PyObject* pyarrow, known_schema* k, PyTypeObject* cls, PyObject** out) {
  if (!k->held) return 0;
  PyObject* known_pyarrow = Py_NewRef(k->pyarrow);
  gda_held_schema* e = k->held;
  gda_held_schema_ref(e);  // k may change while pyarrow runs
  int same = pyarrow == known_pyarrow;  // 1, 0, or -1 for an error
  // the column count tells most schemas apart, and costs less than equals
  if (!same && (k == &known[PA_ARRAY] || length_or_minus_one(pyarrow) == gda_held_schema_columns(e))) {
    // pyarrow's equality: a pointer comparison for the schema that the
    // batches of one source share, else fingerprints (see is_flat in held.c)
    PyObject* args[] = {pyarrow, known_pyarrow, Py_True};
    PyObject* r = PyObject_VectorcallMethod(str_equals, args, 2, kw_check_metadata);
    same = r ? PyObject_IsTrue(r) : -1;
    Py_XDECREF(r);
  }
  Py_DECREF(known_pyarrow);
  if (same != 1) {
    gda_held_schema_unref(e);
    *out = NULL;
    return same == -1;  // an error of equals; else no match
  }
  struct ArrowDeviceArray d;
  memset(&d, 0, sizeof(d));
  PyObject* address = PyLong_FromVoidPtr(&d);
  PyObject* r = address ? PyObject_CallMethodOneArg(obj, str_export_to_c_device, address) : NULL;
  Py_XDECREF(address);
  gda_held* held;
  if (!r) {
    if (d.array.release) d.array.release(&d.array);
    *out = NULL;
  } else if (gda_held_import_known(e, &d, &held) == 1) {
    *out = array_base_owning(cls, 0, held);
  } else {
    *out = import_known_by_go(e, &d, cls);
  }
  Py_XDECREF(r);
  gda_held_schema_unref(e);
  return 1;
}

// Imports obj's pair through the protocols, in the given way; *held, when
// given, is set to the held record of a held import (borrowed from the result).
static PyObject* import_by_protocol(PyObject* obj, PyTypeObject* cls, int plain_first, gda_held** held_out) {
  PyObject* pair = NULL;
  int device = 1;
  if (plain_first) {
    pair = PyObject_CallMethodNoArgs(obj, str_array);
    if (pair) {
      device = 0;
    } else if (PyErr_ExceptionMatches(PyExc_NotImplementedError)) {
      PyErr_Clear();  // not on the CPU: the device protocol says where
    } else {
      return NULL;
    }
  }
  if (!pair) {
    PyObject* method;
    int found = optional_attr(obj, str_device_array, &method);
    if (found == 0) {
      device = 0;
      found = optional_attr(obj, str_array, &method);
    }
    if (found < 0) return NULL;
    if (found == 0) Py_RETURN_NOTIMPLEMENTED;
    pair = PyObject_CallNoArgs(method);
    Py_DECREF(method);
    if (!pair) return NULL;
  }
  const char* what = device ? "__arrow_c_device_array__" : "__arrow_c_array__";
  if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
    if (PyTuple_Check(pair)) {
      PyErr_Format(GodevarrowTypeError,
                   "%s() must return a (schema capsule, array capsule) tuple, got tuple of length %zd", what,
                   PyTuple_GET_SIZE(pair));
    } else {
      PyErr_Format(GodevarrowTypeError, "%s() must return a (schema capsule, array capsule) tuple, got %.200s",
                   what, Py_TYPE(pair)->tp_name);
    }
    Py_DECREF(pair);
    return NULL;
  }
  uintptr_t h = 0;
  void* sp = capsule_pointer(PyTuple_GET_ITEM(pair, 0), "arrow_schema");
  void* ap = sp ? capsule_pointer(PyTuple_GET_ITEM(pair, 1), device ? "arrow_device_array" : "arrow_array") : NULL;
  if (!ap) {
    Py_DECREF(pair);
    return NULL;
  }
  gda_held* held;
  int taken = gda_held_import(sp, ap, device, &held);
  if (taken == 0) {
    // a schema seen for the first time: cache it in Go (which offers it to
    // the held-schema table), then try again
    gda_error e = {0};
    if (gdaCacheSchema(sp, &e)) {
      Py_DECREF(pair);
      return raise_error(&e);
    }
    taken = gda_held_import(sp, ap, device, &held);
  }
  if (taken == 1) {
    Py_DECREF(pair);  // the moved-out capsules only free their structs
    if (held_out) *held_out = held;
    return array_base_owning(cls, 0, held);
  }
  gda_error e = {0};
  int rc = gdaImportArray(sp, ap, device, &h, &e);
  Py_DECREF(pair);
  if (rc) return raise_error(&e);
  return array_base_owning(cls, h, NULL);
}

// debug_known_schemas(): the pyarrow type and schema import_from knows (None
// when it knows none), for tests.
static PyObject* m_debug_known_schemas(PyObject* module, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(0, "debug_known_schemas");
  PyObject* array = known[PA_ARRAY].pyarrow ? known[PA_ARRAY].pyarrow : Py_None;
  PyObject* batch = known[PA_BATCH].pyarrow ? known[PA_BATCH].pyarrow : Py_None;
  return PyTuple_Pack(2, array, batch);
}

// import_from(obj, cls, requested_schema): an instance of cls (an ArrayBase
// subclass) imported through obj's __arrow_c_device_array__ or
// __arrow_c_array__, called with no requested schema. NotImplemented, for the
// general path, when a schema is requested, obj is one of ours, or obj has
// neither method.
static PyObject* m_import_from(PyObject* module, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "import_from");
  PyObject* obj = args[0];
  if (!PyType_Check(args[1]) || !PyType_IsSubtype((PyTypeObject*)args[1], &ArrayBase_Type)) {
    PyErr_SetString(GodevarrowTypeError, "import_from() needs a subclass of ArrayBase");
    return NULL;
  }
  PyTypeObject* cls = (PyTypeObject*)args[1];
  if (args[2] != Py_None || PyObject_TypeCheck(obj, &ArrayBase_Type)) Py_RETURN_NOTIMPLEMENTED;
  int way = pyarrow_way(Py_TYPE(obj));
  if (way < 0) return NULL;
  if (way != KNOWN_ARRAY && way != KNOWN_BATCH) return import_by_protocol(obj, cls, way == PLAIN_FIRST, NULL);
  known_schema* k = &known[way == KNOWN_ARRAY ? PA_ARRAY : PA_BATCH];
  PyObject* pyarrow = PyObject_GetAttr(obj, way == KNOWN_ARRAY ? str_type : str_schema);
  if (!pyarrow) return NULL;
  PyObject* out;
  if (!import_known(obj, pyarrow, k, cls, &out)) {
    gda_held* held = NULL;
    out = import_by_protocol(obj, cls, 1, &held);
    if (held) remember(k, pyarrow, held);
  }
  Py_DECREF(pyarrow);
  return out;
}
static PyMethodDef methods[] = {
    {"debug_panic", (PyCFunction)(void (*)(void))m_debug_panic, METH_FASTCALL, "debug_panic(): test-only, needs GODEVARROW_ALLOW_PANIC_TEST=1"},
    {"cuda_status", (PyCFunction)(void (*)(void))m_cuda_status, METH_FASTCALL, "cuda_status() -> (available, device_count, library, message)"},
    {"array_to_device", (PyCFunction)(void (*)(void))m_array_to_device, METH_FASTCALL, "array_to_device(handle, device_type, device_id) -> handle"},
    {"array_with_validity", (PyCFunction)(void (*)(void))m_array_with_validity, METH_FASTCALL, "array_with_validity(handle, validity_handle, null_count) -> handle"},
    {"array_as_batch", (PyCFunction)(void (*)(void))m_array_as_batch, METH_FASTCALL, "array_as_batch(handle) -> handle (a one-column record batch, zero-copy)"},
    {"array_copy", (PyCFunction)(void (*)(void))m_array_copy, METH_FASTCALL, "array_copy(handle) -> handle (a copy on the same device)"},
    {"dlpack_export", (PyCFunction)(void (*)(void))m_dlpack_export, METH_FASTCALL, "dlpack_export(handle, versioned, copied, stream) -> capsule"},
    {"dlpack_import", (PyCFunction)(void (*)(void))m_dlpack_import, METH_FASTCALL, "dlpack_import(capsule, stream_handle) -> handle"},
    {"cuda_stream_new", (PyCFunction)(void (*)(void))m_cuda_stream_new, METH_FASTCALL, "cuda_stream_new(device_id) -> (handle, stream)"},
    {"tensor_info", (PyCFunction)(void (*)(void))m_tensor_info, METH_FASTCALL, "tensor_info(handle, ready) -> (data, length, code, bits, device_type, device_id, stream)"},
    {"wrap_cuda_pointer", (PyCFunction)(void (*)(void))m_wrap_cuda_pointer, METH_FASTCALL, "wrap_cuda_pointer(owner, format, data, length, stream) -> handle"},
    {"dlpack_device", (PyCFunction)(void (*)(void))m_dlpack_device, METH_FASTCALL, "dlpack_device(handle) -> (device_type, device_id)"},
    {"import_schema", (PyCFunction)(void (*)(void))m_import_schema, METH_FASTCALL, "import_schema(capsule, consume) -> handle"},
    {"import_from", (PyCFunction)(void (*)(void))m_import_from, METH_FASTCALL, "import_from(obj, cls, requested_schema) -> cls instance, or NotImplemented"},
    {"import_array", (PyCFunction)(void (*)(void))m_import_array, METH_FASTCALL, "import_array(schema_capsule, array_capsule, device) -> handle"},
    {"import_stream", (PyCFunction)(void (*)(void))m_import_stream, METH_FASTCALL, "import_stream(capsule, device) -> handle"},
    {"export_schema", (PyCFunction)(void (*)(void))m_export_schema, METH_FASTCALL, "export_schema(handle) -> capsule"},
    {"export_array", (PyCFunction)(void (*)(void))m_export_array, METH_FASTCALL, "export_array(handle, requested_schema_handle, device) -> (schema_capsule, array_capsule)"},
    {"export_stream", (PyCFunction)(void (*)(void))m_export_stream, METH_FASTCALL, "export_stream(handle, requested_schema_handle, device) -> capsule"},
    {"array_info", (PyCFunction)(void (*)(void))m_array_info, METH_FASTCALL, "array_info(handle) -> (length, offset, null_count, device_type, device_id, n_children, is_struct)"},
    {"schema_of", (PyCFunction)(void (*)(void))m_schema_of, METH_FASTCALL, "schema_of(handle) -> schema handle"},
    {"schema_info", (PyCFunction)(void (*)(void))m_schema_info, METH_FASTCALL, "schema_info(handle) -> (format, name, flags, metadata_blob, n_children, has_dictionary)"},
    {"schema_child", (PyCFunction)(void (*)(void))m_schema_child, METH_FASTCALL, "schema_child(handle, i) -> handle (i=-1: dictionary)"},
    {"schema_equal", (PyCFunction)(void (*)(void))m_schema_equal, METH_FASTCALL, "schema_equal(a, b) -> bool"},
    {"schema_str", (PyCFunction)(void (*)(void))m_schema_str, METH_FASTCALL, "schema_str(handle) -> str"},
    {"array_slice", (PyCFunction)(void (*)(void))m_array_slice, METH_FASTCALL, "array_slice(handle, offset, length) -> handle"},
    {"array_column", (PyCFunction)(void (*)(void))m_array_column, METH_FASTCALL, "array_column(handle, i) -> handle"},
    {"array_validate", (PyCFunction)(void (*)(void))m_array_validate, METH_FASTCALL, "array_validate(handle, full)"},
    {"array_cast", (PyCFunction)(void (*)(void))m_array_cast, METH_FASTCALL, "array_cast(handle, schema_handle) -> handle"},
    {"stream_info", (PyCFunction)(void (*)(void))m_stream_info, METH_FASTCALL, "stream_info(handle) -> (schema handle, device_type, is_struct)"},
    {"stream_next", (PyCFunction)(void (*)(void))m_stream_next, METH_FASTCALL, "stream_next(handle) -> handle or None"},
    {"stream_close", (PyCFunction)(void (*)(void))m_stream_close, METH_FASTCALL, "stream_close(handle)"},
    {"stream_prefetch", (PyCFunction)(void (*)(void))m_stream_prefetch, METH_FASTCALL, "stream_prefetch(handle, depth) -> handle (moves the stream)"},
    {"stream_cast", (PyCFunction)(void (*)(void))m_stream_cast, METH_FASTCALL, "stream_cast(handle, schema_handle) -> handle (moves the stream)"},
    {"stream_from_arrays", (PyCFunction)(void (*)(void))m_stream_from_arrays, METH_FASTCALL, "stream_from_arrays(handles, schema_handle) -> handle"},
    {"debug_counters", (PyCFunction)(void (*)(void))m_debug_counters, METH_FASTCALL, "debug_counters() -> tuple"},
    {"debug_known_schemas", (PyCFunction)(void (*)(void))m_debug_known_schemas, METH_FASTCALL,
     "debug_known_schemas() -> (type, schema)"},
    {"checksums", (PyCFunction)(void (*)(void))m_checksums, METH_FASTCALL, "checksums(handle, n_columns) -> list[int]"},
    {"build_info", (PyCFunction)(void (*)(void))m_build_info, METH_FASTCALL, "build_info() -> str"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_godevarrow",
    "The Go core of godevarrow (internal; use the godevarrow package).", -1, methods,
};

static PyObject* new_exception(PyObject* module, const char* name, PyObject* bases, const char* doc) {
  char qualname[128];
  snprintf(qualname, sizeof(qualname), "godevarrow.%s", name);
  PyObject* cls = PyErr_NewExceptionWithDoc(qualname, doc, bases, NULL);
  Py_XDECREF(bases);
  if (!cls) return NULL;
  Py_INCREF(cls);
  if (PyModule_AddObject(module, name, cls) < 0) {
    Py_DECREF(cls);
    Py_DECREF(cls);
    return NULL;
  }
  return cls;
}

PyMODINIT_FUNC PyInit__godevarrow(void) {
  if (PyType_Ready(&ArrayBase_Type) < 0) return NULL;
  if (!(str_device_array = PyUnicode_InternFromString("__arrow_c_device_array__")) ||
      !(str_array = PyUnicode_InternFromString("__arrow_c_array__")) ||
      !(str_pyarrow_lib = PyUnicode_InternFromString("pyarrow.lib")) ||
      !(str_pyarrow = PyUnicode_InternFromString("pyarrow")) ||
      !(str_schema = PyUnicode_InternFromString("schema")) || !(str_type = PyUnicode_InternFromString("type")) ||
      !(str_equals = PyUnicode_InternFromString("equals")) ||
      !(str_export_to_c_device = PyUnicode_InternFromString("_export_to_c_device")) ||
      !(kw_check_metadata = Py_BuildValue("(s)", "check_metadata")) || !(pyarrow_decided = PyDict_New()))
    return NULL;
  PyObject* m = PyModule_Create(&moduledef);
  if (!m) return NULL;
  if (PyModule_AddObjectRef(m, "ArrayBase", (PyObject*)&ArrayBase_Type) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  if (!(GodevarrowError = new_exception(m, "GodevarrowError", NULL, "Base class of every godevarrow exception.")) ||
      !(ArrowInvalid = new_exception(m, "ArrowInvalid", PyTuple_Pack(2, GodevarrowError, PyExc_ValueError),
                                     "Malformed, released or wrongly named capsules or structs, or invalid data.")) ||
      !(ArrowNotImplementedError =
            new_exception(m, "ArrowNotImplementedError", PyTuple_Pack(2, GodevarrowError, PyExc_NotImplementedError),
                          "A valid request that godevarrow does not support.")) ||
      !(DeviceError = new_exception(m, "DeviceError", PyTuple_Pack(2, GodevarrowError, PyExc_RuntimeError),
                                    "A device is unavailable or its driver failed.")) ||
      !(GodevarrowTypeError = new_exception(m, "GodevarrowTypeError", PyTuple_Pack(2, GodevarrowError, PyExc_TypeError),
                                            "An object of the wrong kind was passed.")) ||
      !(StreamError = new_exception(m, "StreamError", PyTuple_Pack(2, GodevarrowError, PyExc_OSError),
                                    "A foreign stream's producer reported an error (errno and message).")) ||
      !(InternalError = new_exception(m, "InternalError", PyTuple_Pack(2, GodevarrowError, PyExc_RuntimeError),
                                      "A bug in godevarrow; the library refuses further work afterwards.")) ||
      !(DLPackError = new_exception(m, "DLPackError", PyTuple_Pack(2, GodevarrowError, PyExc_BufferError),
                                    "The array cannot be described as a DLPack tensor (nulls, non-numeric type)."))) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}

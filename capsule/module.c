// The CPython module godevarrow._godevarrow: exceptions, named records,
// handle and Arrow capsules, the method wrappers and the method table
// (methods.h), and module init. Each method unpacks its arguments, makes one
// call into Go (the gda* exports) and packs the result; the GIL is released
// around calls that can block (a producer's callback, a device copy).
#include "binding.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"

// ----------------------------------------------------------------- errors

PyObject* GodevarrowError;
#define GDA_EXCEPTION_DEF(kind, name, base, doc) PyObject* name;
GDA_EXCEPTIONS(GDA_EXCEPTION_DEF)

int gda_poisoned;
void gda_set_poisoned(void) { __atomic_store_n(&gda_poisoned, 1, __ATOMIC_RELEASE); }

PyObject* raise_error(gda_error* e) {
  PyObject* cls = ArrowInvalid;
#define GDA_EXCEPTION_CASE(k, name, base, doc) \
  if (e->kind == k) cls = name;
  GDA_EXCEPTIONS(GDA_EXCEPTION_CASE)
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

PyObject* refuse_poisoned(void) {
  gda_error e = {0};
  gdaPoisonedError(&e);
  return raise_error(&e);
}

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

static PyObject* conv_INT(int64_t v) { return PyLong_FromLongLong(v); }
static PyObject* conv_UINT(uint64_t v) { return PyLong_FromUnsignedLongLong(v); }
static PyObject* conv_BOOL(int64_t v) { return PyBool_FromLong(v != 0); }
static PyObject* conv_STR(char* s) {
  PyObject* r = PyUnicode_DecodeUTF8(s ? s : "", s ? (Py_ssize_t)strlen(s) : 0, "surrogateescape");
  free(s);
  return r;
}
static PyObject* conv_BYTES(gda_bytes b) {
  PyObject* r = b.data ? PyBytes_FromStringAndSize(b.data, (Py_ssize_t)b.len) : Py_NewRef(Py_None);
  free(b.data);
  return r;
}
static PyObject* conv_HANDLE(uintptr_t h) { return h ? wrap_handle(h) : Py_NewRef(Py_None); }

#define GDA_PACK_FIELD(type, name, conv)                  \
  {                                                       \
    PyObject* item = conv_##conv(v->name);                \
    if (item && r) {                                      \
      PyStructSequence_SET_ITEM(r, i, item);              \
    } else {                                              \
      Py_XDECREF(item);                                   \
      failed = 1;                                         \
    }                                                     \
    i++;                                                  \
  }
#define GDA_RECORD_PACK(pyname, list, ctype, doc)                 \
  static PyObject* pack_##ctype(ctype* v) {                       \
    PyObject* r = PyStructSequence_New(pyname##_Type);            \
    int failed = 0;                                               \
    Py_ssize_t i = 0;                                             \
    list(GDA_PACK_FIELD) if (failed) Py_CLEAR(r);                 \
    return r;                                                     \
  }
GDA_RECORDS(GDA_RECORD_PACK)

// ---------------------------------------------------------------- handles
// A handle is a Go object owned by Python: a capsule whose pointer is the
// handle and whose destructor releases it (synchronously, with the GIL).

static void handle_destructor(PyObject* cap) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  uintptr_t h = (uintptr_t)PyCapsule_GetPointer(cap, HANDLE_NAME);
  if (h) gdaHandleRelease(h);
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
}

// A stream is settled without the GIL (its read-ahead may need it), then
// released with the GIL (docs/design.md, "A stream's life").
static void stream_handle_destructor(PyObject* cap) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  uintptr_t h = (uintptr_t)PyCapsule_GetPointer(cap, STREAM_HANDLE_NAME);
  if (h) {
    Py_BEGIN_ALLOW_THREADS gdaStreamSettle(h, 1 << 30);
    Py_END_ALLOW_THREADS gdaHandleRelease(h);
  }
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
}

static PyObject* wrap_named_handle(uintptr_t h, const char* name, PyCapsule_Destructor destructor) {
  PyObject* cap = PyCapsule_New((void*)h, name, destructor);
  if (!cap) gdaHandleRelease(h);
  return cap;
}
PyObject* wrap_handle(uintptr_t h) { return wrap_named_handle(h, HANDLE_NAME, handle_destructor); }
PyObject* wrap_stream_handle(uintptr_t h) { return wrap_named_handle(h, STREAM_HANDLE_NAME, stream_handle_destructor); }

int array_base_handle(PyObject* o, uintptr_t* h);

int get_handle(PyObject* o, uintptr_t* h) {
  if (PyObject_TypeCheck(o, &ArrayBase_Type)) return array_base_handle(o, h);
  const char* name = PyCapsule_CheckExact(o) ? PyCapsule_GetName(o) : NULL;
  if (name && (strcmp(name, HANDLE_NAME) == 0 || strcmp(name, STREAM_HANDLE_NAME) == 0)) {
    *h = (uintptr_t)PyCapsule_GetPointer(o, name);
    return 0;
  }
  PyErr_SetString(GodevarrowTypeError, "expected a godevarrow handle");
  return -1;
}

// None or a handle → 0 or the handle
static int get_optional_handle(PyObject* o, uintptr_t* h) {
  if (o == Py_None) {
    *h = 0;
    return 0;
  }
  return get_handle(o, h);
}

static int get_bool(PyObject* o, int* out) {
  *out = PyObject_IsTrue(o);
  return *out < 0 ? -1 : 0;
}

static int get_int64(PyObject* o, int64_t* out) {
  long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) return -1;
  *out = v;
  return 0;
}

// ---------------------------------------------------------- Arrow capsules
// One destructor for the five Arrow capsules: the capsule's context says
// where its struct keeps the release callback. It releases only what nobody
// consumed, and frees our allocation; the consumer may have renamed the
// capsule, so it asks the capsule for its name.

typedef struct {
  const char* name;
  size_t size;
  size_t release_offset;
} arrow_kind;

static const arrow_kind arrow_kinds[] = {
    {"arrow_schema", sizeof(struct ArrowSchema), offsetof(struct ArrowSchema, release)},
    {"arrow_array", sizeof(struct ArrowArray), offsetof(struct ArrowArray, release)},
    {"arrow_device_array", sizeof(struct ArrowDeviceArray), offsetof(struct ArrowDeviceArray, array.release)},
    {"arrow_array_stream", sizeof(struct ArrowArrayStream), offsetof(struct ArrowArrayStream, release)},
    {"arrow_device_array_stream", sizeof(struct ArrowDeviceArrayStream),
     offsetof(struct ArrowDeviceArrayStream, release)},
};

static const arrow_kind* arrow_kind_of(const char* name) {
  for (size_t i = 0; i < sizeof(arrow_kinds) / sizeof(arrow_kinds[0]); i++) {
    if (strcmp(arrow_kinds[i].name, name) == 0) return &arrow_kinds[i];
  }
  return NULL;
}

typedef void (*release_fn)(void*);

static release_fn release_of(void* p, const arrow_kind* k) {
  release_fn rel;
  memcpy(&rel, (char*)p + k->release_offset, sizeof(rel));
  return rel;
}

// Every Arrow struct's release takes the struct's own address (an
// ArrowDeviceArray's is that of its first member, the ArrowArray).
static void release_kind(void* p, const arrow_kind* k) {
  release_fn rel = release_of(p, k);
  if (rel) rel(p);
}

void release_arrow_struct(void* p, const char* name) { release_kind(p, arrow_kind_of(name)); }

static void arrow_capsule_destructor(PyObject* cap) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  void* p = PyCapsule_GetPointer(cap, PyCapsule_GetName(cap));
  const arrow_kind* k = PyCapsule_GetContext(cap);
  if (p && k) {
    release_kind(p, k);
    free(p);
  }
  PyErr_Clear();
  PyErr_Restore(et, ev, etb);
}

PyObject* arrow_capsule(void* p, const char* name) {
  const arrow_kind* k = arrow_kind_of(name);
  PyObject* cap = PyCapsule_New(p, k->name, arrow_capsule_destructor);
  if (!cap || PyCapsule_SetContext(cap, (void*)k) < 0) {
    if (cap) {
      PyCapsule_SetDestructor(cap, NULL);
      Py_DECREF(cap);
    }
    release_kind(p, k);
    free(p);
    return NULL;
  }
  return cap;
}

PyObject* arrow_pair(struct ArrowSchema* s, void* a, int device) {
  const char* array_name = device ? "arrow_device_array" : "arrow_array";
  PyObject* scap = arrow_capsule(s, "arrow_schema");
  if (!scap) {
    release_arrow_struct(a, array_name);
    free(a);
    return NULL;
  }
  PyObject* acap = arrow_capsule(a, array_name);
  if (!acap) {
    Py_DECREF(scap);
    return NULL;
  }
  PyObject* pair = PyTuple_Pack(2, scap, acap);
  Py_DECREF(scap);
  Py_DECREF(acap);
  return pair;
}

void* capsule_pointer(PyObject* cap, const char* name) {
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

// Moves the struct out of a producer's capsule into a new malloc'd cell (the
// capsule keeps a released struct), in one step under the GIL: two threads
// importing one capsule cannot both own it. NULL with MemoryError, the
// capsule untouched.
static void* take_struct(void* p, const arrow_kind* k) {
  void* cell = malloc(k->size);
  if (!cell) return PyErr_NoMemory();
  memcpy(cell, p, k->size);
  release_fn none = NULL;
  memcpy((char*)p + k->release_offset, &none, sizeof(none));
  return cell;
}

// ---------------------------------------------------------------- methods

// The handle result of a Go call, or its error.
#define RETURN_HANDLE(call)               \
  do {                                    \
    uintptr_t out_ = 0;                   \
    gda_error e_ = {0};                   \
    if (call) return raise_error(&e_);    \
    return wrap_handle(out_);             \
  } while (0)

// The first argument of a method with n arguments, as the handle h.
#define HANDLE_ARG(n, fname) \
  CHECK_NARGS(n, fname);     \
  uintptr_t h;               \
  if (get_handle(args[0], &h)) return NULL

// The record a Go call fills (a C type of GDA_RECORDS), or its error.
#define RETURN_RECORD(ctype, call)       \
  do {                                   \
    ctype info_ = {0};                   \
    gda_error e_ = {0};                  \
    if (call) return raise_error(&e_);   \
    return pack_##ctype(&info_);         \
  } while (0)

PyObject* m_import_schema(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "import_schema");
  void* p = capsule_pointer(args[0], "arrow_schema");
  int consume;
  if (!p || get_bool(args[1], &consume)) return NULL;
  RETURN_HANDLE(gdaImportSchema(p, consume, &out_, &e_));
}

PyObject* m_import_array(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "import_array");
  int device;
  if (get_bool(args[2], &device)) return NULL;
  void* sp = capsule_pointer(args[0], "arrow_schema");
  void* ap = sp ? capsule_pointer(args[1], device ? "arrow_device_array" : "arrow_array") : NULL;
  if (!ap) return NULL;
  RETURN_HANDLE(gdaImportArray(sp, ap, device, &out_, &e_));
}

PyObject* m_import_stream(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "import_stream");
  int device;
  if (get_bool(args[1], &device)) return NULL;
  const arrow_kind* k = arrow_kind_of(device ? "arrow_device_array_stream" : "arrow_array_stream");
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

PyObject* m_export_schema(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "export_schema");
  struct ArrowSchema* s = calloc(1, sizeof(*s));
  if (!s) return PyErr_NoMemory();
  gda_error e = {0};
  if (gdaExportSchema(h, s, &e)) {
    free(s);
    return raise_error(&e);
  }
  return arrow_capsule(s, "arrow_schema");
}

PyObject* m_export_array(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "export_array");
  uintptr_t h, req;
  int device;
  if (get_handle(args[0], &h) || get_optional_handle(args[1], &req) || get_bool(args[2], &device)) return NULL;
  struct ArrowSchema* s = calloc(1, sizeof(*s));
  void* a = calloc(1, device ? sizeof(struct ArrowDeviceArray) : sizeof(struct ArrowArray));
  gda_error e = {0};
  if (!s || !a) {
    free(s);
    free(a);
    return PyErr_NoMemory();
  }
  if (gdaExportArray(h, req, s, a, device, &e)) {
    free(s);
    free(a);
    return raise_error(&e);
  }
  return arrow_pair(s, a, device);
}

PyObject* m_export_stream(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "export_stream");
  uintptr_t h, req;
  int device;
  if (get_handle(args[0], &h) || get_optional_handle(args[1], &req) || get_bool(args[2], &device)) return NULL;
  const char* name = device ? "arrow_device_array_stream" : "arrow_array_stream";
  void* s = calloc(1, arrow_kind_of(name)->size);
  if (!s) return PyErr_NoMemory();
  gda_error e = {0};
  if (gdaExportStream(h, req, s, device, &e)) {
    free(s);
    return raise_error(&e);
  }
  return arrow_capsule(s, name);
}

PyObject* array_info_of(uintptr_t h) { RETURN_RECORD(gda_array_info, gdaArrayInfo(h, &info_, &e_)); }

PyObject* m_array_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "array_info");
  return array_info_of(h);
}

PyObject* m_schema_of(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "schema_of");
  RETURN_HANDLE(gdaSchemaOf(h, &out_, &e_));
}

PyObject* m_schema_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "schema_info");
  RETURN_RECORD(gda_schema_info, gdaSchemaInfo(h, &info_, &e_));
}

// A method (handle, index) -> handle.
#define GDA_CHILD_METHOD(name, go_export)                                          \
  PyObject* m_##name(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {    \
    CHECK_NARGS(2, #name);                                                         \
    uintptr_t h;                                                                   \
    int64_t i;                                                                     \
    if (get_handle(args[0], &h) || get_int64(args[1], &i)) return NULL;           \
    RETURN_HANDLE(go_export(h, i, &out_, &e_));                                    \
  }
GDA_CHILD_METHOD(schema_child, gdaSchemaChild)
GDA_CHILD_METHOD(array_column, gdaArrayColumn)

PyObject* m_schema_equal(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "schema_equal");
  uintptr_t a, b;
  if (get_handle(args[0], &a) || get_handle(args[1], &b)) return NULL;
  int equal = 0;
  gda_error e = {0};
  if (gdaSchemaEqual(a, b, &equal, &e)) return raise_error(&e);
  return PyBool_FromLong(equal);
}

PyObject* m_schema_str(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "schema_str");
  char* s = NULL;
  gda_error e = {0};
  if (gdaSchemaString(h, &s, &e)) return raise_error(&e);
  PyObject* r = PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
  free(s);
  return r;
}

PyObject* m_array_slice(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "array_slice");
  uintptr_t h;
  int64_t off, len;
  if (get_handle(args[0], &h) || get_int64(args[1], &off) || get_int64(args[2], &len)) return NULL;
  RETURN_HANDLE(gdaArraySlice(h, off, len, &out_, &e_));
}

PyObject* m_array_validate(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "array_validate");
  uintptr_t h;
  int full, rc;
  if (get_handle(args[0], &h) || get_bool(args[1], &full)) return NULL;
  gda_error e = {0};
  Py_BEGIN_ALLOW_THREADS rc = gdaArrayValidate(h, full, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  Py_RETURN_NONE;
}

PyObject* m_array_cast(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "array_cast");
  uintptr_t h, s;
  if (get_handle(args[0], &h) || get_handle(args[1], &s)) return NULL;
  RETURN_HANDLE(gdaArrayCast(h, s, &out_, &e_));
}

// The handle result of a Go call that may block: run without the GIL.
#define RETURN_HANDLE_NOGIL(call)                         \
  do {                                                    \
    uintptr_t out_ = 0;                                   \
    gda_error e_ = {0};                                   \
    int rc_;                                              \
    Py_BEGIN_ALLOW_THREADS rc_ = (call);                  \
    Py_END_ALLOW_THREADS if (rc_) return raise_error(&e_); \
    return wrap_handle(out_);                             \
  } while (0)

PyObject* m_array_to_device(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "array_to_device");
  uintptr_t h;
  int64_t dtype, id;
  if (get_handle(args[0], &h) || get_int64(args[1], &dtype) || get_int64(args[2], &id)) return NULL;
  if (dtype < INT32_MIN || dtype > INT32_MAX) return PyErr_Format(ArrowInvalid, "unknown device type %lld", (long long)dtype);
  RETURN_HANDLE_NOGIL(gdaArrayToDevice(h, (int32_t)dtype, id, &out_, &e_));
}

PyObject* m_array_with_validity(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "array_with_validity");
  uintptr_t h, v;
  int64_t nulls;
  if (get_handle(args[0], &h) || get_handle(args[1], &v) || get_int64(args[2], &nulls)) return NULL;
  RETURN_HANDLE_NOGIL(gdaArrayWithValidity(h, v, nulls, &out_, &e_));
}

PyObject* m_array_as_batch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "array_as_batch");
  RETURN_HANDLE(gdaArrayAsBatch(h, &out_, &e_));
}

PyObject* m_array_copy(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "array_copy");
  RETURN_HANDLE_NOGIL(gdaArrayCopy(h, &out_, &e_));
}

PyObject* m_array_known_null_counts(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "array_known_null_counts");
  RETURN_HANDLE_NOGIL(gdaArrayKnownNullCounts(h, &out_, &e_));
}

PyObject* m_checksums(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "checksums");
  uint32_t* sums = NULL;
  int64_t n = 0;
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaChecksums(h, &sums, &n, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  PyObject* out = PyList_New((Py_ssize_t)n);
  for (int64_t i = 0; out && i < n; i++) {
    PyObject* v = PyLong_FromUnsignedLong(sums[i]);
    if (!v) {
      Py_CLEAR(out);
      break;
    }
    PyList_SET_ITEM(out, (Py_ssize_t)i, v);
  }
  free(sums);
  return out;
}

// ---------------------------------------------------------------- streams

PyObject* m_stream_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "stream_info");
  RETURN_RECORD(gda_stream_info, gdaStreamInfo(h, &info_, &e_));
}

PyObject* m_stream_next(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "stream_next");
  if (!PyType_Check(args[1]) || !PyType_IsSubtype((PyTypeObject*)args[1], &ArrayBase_Type)) {
    PyErr_SetString(GodevarrowTypeError, "stream_next() needs a subclass of ArrayBase");
    return NULL;
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
    return NULL;
  }
  return array_base_owning((PyTypeObject*)args[1], out, NULL);
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
  int rc = 0;
  for (Py_ssize_t i = 0; rc == 0 && i < n; i++) rc = get_handle(PySequence_Fast_GET_ITEM(seq, i), &hs[i]);
  uintptr_t out = 0;
  gda_error e = {0};
  if (rc == 0) rc = gdaStreamFromArrays(hs, n, schema, &out, &e) ? 1 : 0;
  free(hs);
  Py_DECREF(seq);
  if (rc < 0) return NULL;
  if (rc) return raise_error(&e);
  return wrap_stream_handle(out);
}

// ------------------------------------------------------------------ DLPack
// A producer's capsule is named "dltensor[_versioned]" until a consumer takes
// it and renames it "used_dltensor[_versioned]"; only an untaken tensor is
// deleted by the capsule destructor (DLPack Python specification).

static void dlpack_capsule_destructor(PyObject* cap) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  const char* name = PyCapsule_GetName(cap);
  int versioned = name && strcmp(name, "dltensor_versioned") == 0;
  if (versioned || (name && strcmp(name, "dltensor") == 0)) {
    void* p = PyCapsule_GetPointer(cap, name);
    if (p) gdaDLPackDelete(p, versioned);
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

PyObject* m_dlpack_export(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(4, "dlpack_export");
  uintptr_t h;
  int versioned, copied;
  int64_t stream;
  if (get_handle(args[0], &h) || get_bool(args[1], &versioned) || get_bool(args[2], &copied) ||
      get_int64(args[3], &stream))
    return NULL;
  void* p = NULL;
  gda_error e = {0};
  if (gdaDLPackExport(h, versioned, copied, stream, &p, &e)) return raise_error(&e);
  PyObject* cap = PyCapsule_New(p, versioned ? "dltensor_versioned" : "dltensor", dlpack_capsule_destructor);
  if (!cap) gdaDLPackDelete(p, versioned);
  return cap;
}

// dlpack_import(capsule, stream_handle_or_None): the stream is the one the
// consumer passed to __dlpack__ (a handle from cuda_stream_new).
PyObject* m_dlpack_import(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
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
  int versioned = name && strcmp(name, "dltensor_versioned") == 0;
  if (!versioned && !(name && strcmp(name, "dltensor") == 0)) {
    PyErr_Format(ArrowInvalid, "expected a DLPack capsule named 'dltensor' or 'dltensor_versioned', got '%s'",
                 name ? name : "(NULL)");
    return NULL;
  }
  void* p = PyCapsule_GetPointer(cap, name);
  if (!p) return NULL;
  // take ownership before anything else can fail: from here on Go deletes it
  if (PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0) return NULL;
  RETURN_HANDLE_NOGIL(gdaDLPackImport(p, versioned, stream, &out_, &e_));
}

PyObject* m_dlpack_device(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "dlpack_device");
  int32_t t = 0;
  int64_t id = 0;
  gda_error e = {0};
  if (gdaDLPackDevice(h, &t, &id, &e)) return raise_error(&e);
  return Py_BuildValue("(iL)", (int)t, (long long)id);
}

PyObject* m_cuda_stream_new(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "cuda_stream_new");
  int64_t dev;
  if (get_int64(args[0], &dev)) return NULL;
  uintptr_t h = 0, stream = 0;
  gda_error e = {0};
  if (gdaCUDAStreamNew(dev, &h, &stream, &e)) return raise_error(&e);
  PyObject* handle = wrap_handle(h);
  if (!handle) return NULL;
  return Py_BuildValue("(NK)", handle, (unsigned long long)stream);
}

PyObject* m_tensor_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "tensor_info");
  uintptr_t h;
  int ready;
  if (get_handle(args[0], &h) || get_bool(args[1], &ready)) return NULL;
  RETURN_RECORD(gda_tensor_info, gdaTensorInfo(h, ready, &info_, &e_));
}

PyObject* m_wrap_cuda_pointer(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(5, "wrap_cuda_pointer");
  const char* format = PyUnicode_AsUTF8(args[1]);
  if (!format) return NULL;
  unsigned long long data = PyLong_AsUnsignedLongLong(args[2]);
  if (data == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  int64_t length;
  if (get_int64(args[3], &length)) return NULL;
  unsigned long long stream = PyLong_AsUnsignedLongLong(args[4]);
  if (stream == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  RETURN_HANDLE(gdaWrapCUDAPointer(args[0], (char*)format, (uintptr_t)data, length, (uintptr_t)stream, &out_, &e_));
}

// ------------------------------------------------------------- the process

PyObject* m_cuda_status(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(0, "cuda_status");
  gda_cuda_status st = {0};
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaCUDAStatus(&st, &e);
  Py_END_ALLOW_THREADS if (rc) {
    PyObject* discard = pack_gda_cuda_status(&st);  // frees what was filled
    Py_XDECREF(discard);
    return raise_error(&e);
  }
  return pack_gda_cuda_status(&st);
}

PyObject* m_build_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(0, "build_info");
  char* s = NULL;
  gda_error e = {0};
  if (gdaBuildInfo(&s, &e)) return raise_error(&e);
  return conv_STR(s);
}

PyObject* m_debug_counters(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(0, "debug_counters");
  RETURN_RECORD(gda_counters, gdaDebugCounters(&info_, &e_));
}

PyObject* m_debug_known_schemas(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(0, "debug_known_schemas");
  return pyarrow_known_schemas();
}

PyObject* m_debug_panic(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(0, "debug_panic");
  gda_error e = {0};
  if (gdaDebugPanic(&e)) return raise_error(&e);
  Py_RETURN_NONE;
}

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

static int add_type(PyObject* m, const char* name, PyObject* type) {
  if (!type) return -1;
  if (PyModule_AddObject(m, name, Py_NewRef(type)) < 0) {
    Py_DECREF(type);
    return -1;
  }
  return 0;
}

PyMODINIT_FUNC PyInit__godevarrow(void) {
  if (PyType_Ready(&ArrayBase_Type) < 0 || pyarrow_init() < 0) return NULL;
  PyObject* m = PyModule_Create(&moduledef);
  if (!m) return NULL;
  if (add_type(m, "ArrayBase", (PyObject*)&ArrayBase_Type) < 0) goto fail;
#define GDA_RECORD_INIT(pyname, list, ctype, doc)                                                         \
  if (!(pyname##_Type = PyStructSequence_NewType(&pyname##_desc)) || add_type(m, #pyname, (PyObject*)pyname##_Type) < 0) \
    goto fail;
  GDA_RECORDS(GDA_RECORD_INIT)
  if (!(GodevarrowError = new_exception(m, "GodevarrowError", PyTuple_Pack(1, PyExc_Exception),
                                        "Base class of every godevarrow exception.")))
    goto fail;
#define GDA_EXCEPTION_INIT(kind, name, base, doc) \
  if (!(name = new_exception(m, #name, PyTuple_Pack(2, GodevarrowError, base), doc))) goto fail;
  GDA_EXCEPTIONS(GDA_EXCEPTION_INIT)
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}

// What the C files of the binding share (module.c, errors.c, handles.c,
// capsules.c and the topic files beside their Go halves: schema.c, array.c,
// import.c, stream.c (its reads: stream_read.c, stream_iter.c,
// stream_async.c; ArrayStream's C base: stream_base.c), table.c, values.c, tensor.c, process.c, gofuncs.c; and
// pyarrow.c). Only these files include Python.h.
#pragma once
// The binding keeps to CPython's stable ABI of 3.10 (the Limited API), so one
// wheel serves every CPython from 3.10 up (docs/design.md, "Packaging").
// GODEVARROW_FULL_API builds against the full API instead, for the benchmark
// that compares the two (benchmarks/abi3.py).
#ifndef GODEVARROW_FULL_API
#define Py_LIMITED_API 0x030A0000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "dlpack_c.h"  // DLPack tensors made in C (gda_dlpack_template)

// The exception classes (errors.c), one variable per GDA_EXCEPTIONS entry.
#define GDA_EXCEPTION_VAR(kind, name, base, doc) extern PyObject* name;
GDA_EXCEPTIONS(GDA_EXCEPTION_VAR)
extern PyObject* GodevarrowError;

// The binding's deallocators and capsule destructors run with the GIL; they
// mark it while they release Go objects, so that a producer's release there
// goes straight through the release guard (module.c) instead of asking for a
// GIL this thread already holds: the Limited API has no PyGILState_Check,
// and PyGILState_Ensure costs a measurable share of a small import.
// Only code that cannot let go of the GIL runs marked.
extern _Thread_local int gil_marked;
#define HOLDING_GIL(stmt)     \
  do {                        \
    int prev_ = gil_marked;   \
    gil_marked = 1;           \
    stmt;                     \
    gil_marked = prev_;       \
  } while (0)

// Raises e as its exception class and frees its message; returns NULL.
PyObject* raise_error(gda_error* e);
// Raises the refusal of a poisoned library; returns NULL.
PyObject* refuse_poisoned(void);
// Makes the exception classes and adds them to the module: 0, or -1.
int errors_init(PyObject* module);

// ---- handles: a Go object owned by Python (handles.c) ----
// A capsule named HANDLE_NAME (or STREAM_HANDLE_NAME, whose destructor
// settles a stream before releasing it) whose pointer is the handle.
#define HANDLE_NAME "godevarrow.handle"
#define STREAM_HANDLE_NAME "godevarrow.stream"
PyObject* wrap_handle(uintptr_t h);
PyObject* wrap_stream_handle(uintptr_t h);
// wrap_stream_handle without the stream's bookkeeping in C (its caller
// attaches what it already has).
PyObject* wrap_stream_handle_bare(uintptr_t h);
// A stream capsule's context: the stream's bookkeeping in C (stream_state.h),
// attached by wrap_stream_handle (0, or -1 with an exception) and freed by
// its destructor (NULL: none).
int stream_c_read_attach(PyObject* cap, uintptr_t h);
void stream_c_read_free(void* ctx);
// The context of a stream capsule (stream_c_read), or NULL for any other object.
void* stream_c_read_of(PyObject* o);
// Stops the read-ahead under the stream of handle h (context ctx, from
// stream_c_read_of with the GIL), if any, and waits up to timeout_ms for a
// read in progress: 1 when it is idle (gdaStreamSettle; in C when no
// read-ahead is under it). Called without the GIL.
int stream_settle(void* ctx, uintptr_t h, int timeout_ms);
// stream_settle for a caller holding the GIL, which it lets go only when
// there is something to wait for (a read in progress, or a read-ahead).
int stream_settle_holding_gil(void* ctx, uintptr_t h, int timeout_ms);
// The handle of a handle capsule, stream capsule or ArrayBase: 0, or -1
// with GodevarrowTypeError.
int get_handle(PyObject* o, uintptr_t* h);

// Argument unpacking: 0, or -1 with the Python error set.
int get_optional_handle(PyObject* o, uintptr_t* h);  // None → 0
int get_bool(PyObject* o, int* out);                 // PyObject_IsTrue, whose -1 is an error
int get_int64(PyObject* o, int64_t* out);
// The handles of a sequence, in a calloc'd array the caller frees.
int get_handles(PyObject* seq, uintptr_t** hs, Py_ssize_t* n);

// ---- Arrow capsules (capsules.c) ----
// The five Arrow capsule kinds: X(id, capsule name, struct, release member).
#define GDA_ARROW_KINDS(X)                                                        \
  X(ARROW_SCHEMA, "arrow_schema", struct ArrowSchema, release)                    \
  X(ARROW_ARRAY, "arrow_array", struct ArrowArray, release)                       \
  X(ARROW_DEVICE_ARRAY, "arrow_device_array", struct ArrowDeviceArray, array.release) \
  X(ARROW_STREAM, "arrow_array_stream", struct ArrowArrayStream, release)          \
  X(ARROW_DEVICE_STREAM, "arrow_device_array_stream", struct ArrowDeviceArrayStream, release)
typedef struct {
  const char* name;
  size_t size;
  size_t release_offset;
  PyCapsule_Destructor destructor;  // releases what nobody consumed, frees the struct
} arrow_kind;
#define GDA_ARROW_KIND_DECL(id, name, type, release_member) extern const arrow_kind id;
GDA_ARROW_KINDS(GDA_ARROW_KIND_DECL)
// Every Arrow struct's release takes the struct's own address (an
// ArrowDeviceArray's is that of its first member, the ArrowArray). The
// capsule helpers are inline: they are on the path of every exchange.
static inline void release_kind(void* p, const arrow_kind* k) {
  void (*rel)(void*);
  memcpy(&rel, (char*)p + k->release_offset, sizeof(rel));
  if (rel) rel(p);
}

// Moves the struct out of a producer's capsule into a new malloc'd cell (the
// capsule keeps a released struct), in one step under the GIL: two threads
// importing one capsule cannot both own it. NULL with MemoryError, the
// capsule untouched.
void* take_struct(void* p, const arrow_kind* k);
// The pointer of a capsule that must carry `name`: TypeError for
// non-capsules, ValueError (ArrowInvalid) for a wrong name or NULL pointer.
void* capsule_pointer(PyObject* cap, const char* name);
// A new capsule of kind k owning the malloc'd, filled struct p; on failure p
// is released and freed.
static inline PyObject* arrow_capsule(void* p, const arrow_kind* k) {
  PyObject* cap = PyCapsule_New(p, k->name, k->destructor);
  if (!cap) {
    release_kind(p, k);
    free(p);
  }
  return cap;
}

// A (schema capsule, array capsule) tuple; on failure both are released.
static inline PyObject* arrow_pair(struct ArrowSchema* s, void* a, int device) {
  const arrow_kind* array_kind = device ? &ARROW_DEVICE_ARRAY : &ARROW_ARRAY;
  PyObject* pair = PyTuple_New(2);
  if (!pair) {
    release_kind(s, &ARROW_SCHEMA);
    free(s);
    release_kind(a, array_kind);
    free(a);
    return NULL;
  }
  PyObject* scap = arrow_capsule(s, &ARROW_SCHEMA);
  PyObject* acap = scap ? arrow_capsule(a, array_kind) : NULL;
  if (!acap) {
    if (!scap) {
      release_kind(a, array_kind);
      free(a);
    }
    Py_XDECREF(scap);
    Py_DECREF(pair);
    return NULL;
  }
  PyTuple_SetItem(pair, 0, scap);  // steals, and cannot fail on a new tuple of two
  PyTuple_SetItem(pair, 1, acap);
  return pair;
}

// The name of o's type as Python shows it ("int", "pyarrow.lib.Table"): a new
// reference, or NULL with an error set. The Limited API hides tp_name.
PyObject* type_name_of(PyObject* o);

// ---- ArrayBase (array.c) ----
extern PyTypeObject* ArrayBase_Type;  // a heap type, made by array_base_init
int array_base_init(PyObject* module);
// The Go handle of an ArrayBase, built from its held import on first need.
int array_base_handle(PyObject* o, uintptr_t* h);
// A new instance of type owning the Go handle h and/or the held import
// `held` (0/NULL: none); on failure both are released.
PyObject* array_base_owning(PyTypeObject* type, uintptr_t h, gda_held* held);
// DLPack (tensor.c): an export of handle h (stream as __dlpack__ got it), the
// consumer's side of an exchange (NotImplemented without __dlpack__), and the
// (device_type, device_id) of h.
PyObject* dlpack_export_of(uintptr_t h, int versioned, int copied, PyObject* stream, PyObject* keeper,
                           gda_dlpack_template* tmpl);
PyObject* dlpack_import_from(PyObject* obj, PyTypeObject* cls);
PyObject* dlpack_device_of(uintptr_t h);

// ---- imports (import.c) ----
// The array of obj through __arrow_c_device_array__, else __arrow_c_array__
// (each called with requested, a schema capsule or NULL), as an instance of
// cls; NotImplemented when obj has neither. plain_first asks the plain
// protocol first (see pyarrow.c); *held_out, when given, is the held import
// of the result (borrowed), if any.
PyObject* import_by_protocol(PyObject* obj, PyTypeObject* cls, PyObject* requested, int plain_first,
                             gda_held** held_out);
// The interned protocol method names ("__arrow_c_device_array__",
// "__arrow_c_array__"), made by import_init at module init.
extern PyObject* str_device_array;
extern PyObject* str_array;
int import_init(void);
// The interned names and the version tuple of the DLPack consumer (tensor.c).
int tensor_init(void);
// The import of an array known to be of schema e, moved out into d.
PyObject* import_known_array(gda_held_schema* e, struct ArrowDeviceArray* d, PyTypeObject* cls);

// ---- streams (stream.c; the reads: stream_read.c) ----
int stream_init(void);                                      // the names stream.c looks up
PyObject* stream_read(PyObject* handle, PyTypeObject* cls);  // the next array (None at the end), waiting for it
int stream_reads_ahead(PyObject* handle, int otherwise);    // whether reads take a read-ahead's queue (otherwise: no C bookkeeping)
// A stream handle capsule with its value and C bookkeeping (NULL: none)
// looked up once: an async for keeps one for its whole loop (the capsule,
// which it holds, keeps both valid).
typedef struct {
  PyObject* handle;
  uintptr_t h;
  void* c;
} stream_ref;
int stream_ref_of(PyObject* handle, stream_ref* out);            // -1 with an exception
PyObject* stream_loop_read(const stream_ref* s, PyObject* cls);  // an event loop's read (NotImplemented: wait; cls checked)
void stream_read_measure_next(void* c);                          // the loop's next read of the stream is timed and measured
int check_array_class(PyObject* cls, const char* caller);   // cls subclasses ArrayBase, else a TypeError
int stream_iter_init(PyObject* module);                     // the StreamIterator type (stream_iter.c)
// A StreamIterator over the stream of handle, yielding cls instances (both
// checked by the caller); ready_first: a read-ahead stream, whose ready arrays
// are taken with the GIL held (for a stream without C bookkeeping).
PyObject* stream_iter_new(PyObject* handle, PyObject* cls, int ready_first);
// Closes the stream of handle after a read in progress elsewhere (waited for
// without the GIL): None, or NULL with an exception.
PyObject* stream_close(PyObject* handle);
// ---- StreamBase (stream_base.c) ----
int stream_base_init(PyObject* module);  // the StreamBase type
// ---- asyncio (stream_async.c) ----
int stream_async_init(PyObject* module);  // the StreamAnext type
enum { ASYNC_TURN_ARRAYS = 1024 };        // an async for gives the loop a turn at least this often,
#define ASYNC_TURN_NS (2 * 1000 * 1000)   // and at least this often (ns)
typedef struct {
  int taken;      // arrays an async for took since the loop's last turn
  int64_t since;  // when that turn was (CLOCK_MONOTONIC_COARSE), with the GIL
} async_pace;
async_pace* stream_async_pace(void* c);          // a stream's C bookkeeping's, or NULL (stream.c)
int stream_async_turn(const stream_ref* s);       // whether an __anext__ gives the loop a turn first
void stream_async_took(const stream_ref* s);      // an __anext__ took a ready array
void stream_async_waited(const stream_ref* s);    // an __anext__ waits on the wake pipe (a turn)

// ---- pyarrow's shortcuts (pyarrow.c) ----
// Imports obj when it is a pyarrow array or batch that pyarrow.c knows a
// shorter way for: 1 with *out set (NULL on error), 0 when it is not.
int pyarrow_import(PyObject* obj, PyTypeObject* cls, PyObject** out);
int pyarrow_init(void);
PyObject* pyarrow_known_schemas(void);

// ---- records (module.c): pack_<C type> makes the Python record ----
#define GDA_RECORD_PACK_DECL(pyname, list, ctype, doc) PyObject* pack_##ctype(ctype* v);
GDA_RECORDS(GDA_RECORD_PACK_DECL)
PyObject* conv_STR(char* s);  // a malloc'd UTF-8 string as str (freed)
PyObject* array_info_of(uintptr_t h);  // ArrayInfo of an array handle

// ---- methods (methods.h): m_<name> unpacks, calls, packs ----
#include "methods.h"
#define GDA_METHOD_DECL(name, poison, doc, stub) PyObject* m_##name(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
GDA_METHODS(GDA_METHOD_DECL)

#define CHECK_NARGS(n, fname)                                                                   \
  if (nargs != (n)) {                                                                           \
    PyErr_Format(GodevarrowTypeError, fname "() takes %d arguments (%zd given)", (n), nargs);   \
    return NULL;                                                                                \
  }

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

// Method shapes that arrays and chunked arrays share (go_export: the Go half).
// (handle, index) -> handle.
#define GDA_CHILD_METHOD(name, go_export)                                       \
  PyObject* m_##name(PyObject* self, PyObject* const* args, Py_ssize_t nargs) { \
    CHECK_NARGS(2, #name);                                                      \
    uintptr_t h;                                                                \
    int64_t i;                                                                  \
    if (get_handle(args[0], &h) || get_int64(args[1], &i)) return NULL;        \
    RETURN_HANDLE(go_export(h, i, &out_, &e_));                                 \
  }
// (handle, offset, length) -> handle.
#define GDA_SLICE_METHOD(name, go_export)                                                             \
  PyObject* m_##name(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {                       \
    CHECK_NARGS(3, #name);                                                                            \
    uintptr_t h;                                                                                      \
    int64_t off, len;                                                                                 \
    if (get_handle(args[0], &h) || get_int64(args[1], &off) || get_int64(args[2], &len)) return NULL; \
    RETURN_HANDLE(go_export(h, off, len, &out_, &e_));                                                \
  }
// (handle, full) -> None; validation reads the data, so it runs without the GIL.
#define GDA_VALIDATE_METHOD(name, go_export)                                    \
  PyObject* m_##name(PyObject* self, PyObject* const* args, Py_ssize_t nargs) { \
    CHECK_NARGS(2, #name);                                                      \
    uintptr_t h;                                                                \
    int full, rc;                                                               \
    if (get_handle(args[0], &h) || get_bool(args[1], &full)) return NULL;      \
    gda_error e = {0};                                                          \
    Py_BEGIN_ALLOW_THREADS rc = go_export(h, full, &e);                         \
    Py_END_ALLOW_THREADS if (rc) return raise_error(&e);                        \
    Py_RETURN_NONE;                                                             \
  }
// (handle, device_type, device_id) -> handle; a copy, made without the GIL.
#define GDA_TO_DEVICE_METHOD(name, go_export)                                                         \
  PyObject* m_##name(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {                       \
    CHECK_NARGS(3, #name);                                                                            \
    uintptr_t h;                                                                                      \
    int64_t dtype, id;                                                                                \
    if (get_handle(args[0], &h) || get_int64(args[1], &dtype) || get_int64(args[2], &id)) return NULL; \
    if (dtype < INT32_MIN || dtype > INT32_MAX)                                                       \
      return PyErr_Format(ArrowInvalid, "unknown device type %lld", (long long)dtype);                \
    RETURN_HANDLE_NOGIL(go_export(h, (int32_t)dtype, id, &out_, &e_));                                \
  }

// Whether the library refuses work (a recovered panic, errors.go).
static inline int is_poisoned(void) { return __atomic_load_n(&gda_poisoned, __ATOMIC_ACQUIRE); }

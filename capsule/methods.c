// The methods of methods.h that are not about streams, tensors or the process: each
// unpacks its arguments, makes one call into Go (or held.h), packs the result.
#include "binding.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"


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


PyObject* m_export_schema(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "export_schema");
  struct ArrowSchema* s = calloc(1, sizeof(*s));
  if (!s) return PyErr_NoMemory();
  gda_error e = {0};
  if (gdaExportSchema(h, s, &e)) {
    free(s);
    return raise_error(&e);
  }
  return arrow_capsule(s, &ARROW_SCHEMA);
}

// The two work-arounds of cdevice/foreign_fixes.go, on a producer's
// capsule that stays the producer's (nothing is moved).
PyObject* m_schema_borrowed(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "schema_borrowed");
  struct ArrowSchema* src = capsule_pointer(args[0], "arrow_schema");
  if (!src) return NULL;
  struct ArrowSchema* s = calloc(1, sizeof(*s));
  if (!s) return PyErr_NoMemory();
  gda_error e = {0};
  if (gdaSchemaBorrow(src, s, &e)) {
    free(s);
    return raise_error(&e);
  }
  return arrow_capsule(s, &ARROW_SCHEMA);
}

PyObject* m_device_array_stamp_device_of_data(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(1, "device_array_stamp_device_of_data");
  struct ArrowDeviceArray* d = capsule_pointer(args[0], "arrow_device_array");
  if (!d) return NULL;
  gda_error e = {0};
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = gdaDeviceArrayStampDeviceOfData(d, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  Py_RETURN_NONE;
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
    PyList_SetItem(out, (Py_ssize_t)i, v);  // steals; cannot fail in range
  }
  free(sums);
  return out;
}

// The handles of a sequence of handle holders, in a calloc'd array the
// caller frees (*n of them): 0, or -1 with the Python error set.
int get_handles(PyObject* seq_obj, uintptr_t** hs, Py_ssize_t* n) {
  PyObject* seq = PySequence_Tuple(seq_obj);
  if (!seq) return -1;
  *n = PyTuple_Size(seq);
  *hs = calloc((size_t)(*n ? *n : 1), sizeof(uintptr_t));
  int rc = *hs ? 0 : (PyErr_NoMemory(), -1);
  for (Py_ssize_t i = 0; rc == 0 && i < *n; i++) rc = get_handle(PyTuple_GetItem(seq, i), &(*hs)[i]);
  Py_DECREF(seq);
  if (rc) {
    free(*hs);
    *hs = NULL;
  }
  return rc;
}

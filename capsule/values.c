// Values and tables: the methods that turn an array's values into Python
// objects (decoding the value encoding of gosrc/cdevice/values.h, which Go
// writes without the GIL), compare values, and wrap chunked arrays.
#include "binding.h"

#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "values.h"

typedef struct {
  const unsigned char* p;
  const unsigned char* end;
  PyObject* makers;  // a tuple of GDA_MAKE_COUNT callables
} value_reader;

static int read_u64(value_reader* r, uint64_t* v) {
  if (r->end - r->p < 8) {
    PyErr_SetString(InternalError, "value encoding ends inside a number");
    return -1;
  }
  memcpy(v, r->p, 8);  // little-endian on every platform Go's c-shared builds for here
  r->p += 8;
  return 0;
}

static PyObject* decode_value(value_reader* r, int depth);

// count values after a container tag, into a new list (or tuple). Numbers,
// nulls and strings, most of any conversion, are decoded inline.
static PyObject* decode_sequence(value_reader* r, int depth, int as_tuple) {
  uint64_t n;
  if (read_u64(r, &n)) return NULL;
  if (n > (uint64_t)(r->end - r->p)) {  // every value takes at least one byte
    PyErr_SetString(InternalError, "value encoding: a count beyond the data");
    return NULL;
  }
  PyObject* seq = as_tuple ? PyTuple_New((Py_ssize_t)n) : PyList_New((Py_ssize_t)n);
  if (!seq) return NULL;
  for (uint64_t i = 0; i < n; i++) {
    PyObject* v;
    const unsigned char* p = r->p;
    if (r->end - p >= 9 && (p[0] == GDA_VALUE_INT || p[0] == GDA_VALUE_FLOAT)) {
      uint64_t u;
      memcpy(&u, p + 1, 8);
      r->p = p + 9;
      if (p[0] == GDA_VALUE_INT) {
        v = PyLong_FromLongLong((long long)(int64_t)u);
      } else {
        double d;
        memcpy(&d, &u, sizeof d);
        v = PyFloat_FromDouble(d);
      }
    } else if (p < r->end && p[0] == GDA_VALUE_NULL) {
      r->p = p + 1;
      v = Py_NewRef(Py_None);
    } else {
      v = decode_value(r, depth + 1);
    }
    if (!v) {
      Py_DECREF(seq);
      return NULL;
    }
    if (as_tuple)
      PyTuple_SetItem(seq, (Py_ssize_t)i, v);
    else
      PyList_SetItem(seq, (Py_ssize_t)i, v);
  }
  return seq;
}

static PyObject* decode_dict(value_reader* r, int depth) {
  uint64_t n;
  if (read_u64(r, &n)) return NULL;
  PyObject* d = PyDict_New();
  if (!d) return NULL;
  for (uint64_t i = 0; i < n; i++) {
    PyObject* k = decode_value(r, depth + 1);
    PyObject* v = k ? decode_value(r, depth + 1) : NULL;
    if (!v || PyDict_SetItem(d, k, v)) {
      Py_XDECREF(k);
      Py_XDECREF(v);
      Py_DECREF(d);
      return NULL;
    }
    Py_DECREF(k);
    Py_DECREF(v);
  }
  return d;
}

static PyObject* decode_make(value_reader* r, int depth) {
  if (r->end - r->p < 2) {
    PyErr_SetString(InternalError, "value encoding ends inside a maker call");
    return NULL;
  }
  int maker = r->p[0], nargs = r->p[1];
  r->p += 2;
  if (maker >= GDA_MAKE_COUNT || maker >= PyTuple_Size(r->makers)) {
    PyErr_Format(InternalError, "value encoding names maker %d, which the binding does not have", maker);
    return NULL;
  }
  PyObject* args = PyTuple_New(nargs);
  if (!args) return NULL;
  for (int i = 0; i < nargs; i++) {
    PyObject* v = decode_value(r, depth + 1);
    if (!v) {
      Py_DECREF(args);
      return NULL;
    }
    PyTuple_SetItem(args, i, v);
  }
  PyObject* out = PyObject_CallObject(PyTuple_GetItem(r->makers, maker), args);
  Py_DECREF(args);
  return out;
}

static PyObject* decode_value(value_reader* r, int depth) {
  if (depth > 1000) {
    PyErr_SetString(InternalError, "value encoding nests too deep");
    return NULL;
  }
  if (r->p >= r->end) {
    PyErr_SetString(InternalError, "value encoding ends early");
    return NULL;
  }
  unsigned char tag = *r->p++;
  uint64_t u;
  switch (tag) {
    case GDA_VALUE_NULL:
      Py_RETURN_NONE;
    case GDA_VALUE_FALSE:
      Py_RETURN_FALSE;
    case GDA_VALUE_TRUE:
      Py_RETURN_TRUE;
    case GDA_VALUE_INT:
      return read_u64(r, &u) ? NULL : PyLong_FromLongLong((long long)(int64_t)u);
    case GDA_VALUE_UINT:
      return read_u64(r, &u) ? NULL : PyLong_FromUnsignedLongLong((unsigned long long)u);
    case GDA_VALUE_FLOAT: {
      double d;
      if (read_u64(r, &u)) return NULL;
      memcpy(&d, &u, sizeof d);
      return PyFloat_FromDouble(d);
    }
    case GDA_VALUE_STRING:
    case GDA_VALUE_BYTES: {
      if (read_u64(r, &u)) return NULL;
      if (u > (uint64_t)(r->end - r->p)) {
        PyErr_SetString(InternalError, "value encoding: a string beyond the data");
        return NULL;
      }
      const char* s = (const char*)r->p;
      r->p += u;
      return tag == GDA_VALUE_STRING ? PyUnicode_DecodeUTF8(s, (Py_ssize_t)u, "strict")
                                     : PyBytes_FromStringAndSize(s, (Py_ssize_t)u);
    }
    case GDA_VALUE_LIST:
      return decode_sequence(r, depth, 0);
    case GDA_VALUE_TUPLE:
      return decode_sequence(r, depth, 1);
    case GDA_VALUE_DICT:
      return decode_dict(r, depth);
    case GDA_VALUE_MAKE:
      return decode_make(r, depth);
  }
  PyErr_Format(InternalError, "value encoding has an unknown tag %d", (int)tag);
  return NULL;
}

PyObject* m_array_values(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(4, "array_values");
  uintptr_t h;
  int64_t start, length;
  if (get_handle(args[0], &h) || get_int64(args[1], &start) || get_int64(args[2], &length)) return NULL;
  if (!PyTuple_Check(args[3]) || PyTuple_Size(args[3]) != GDA_MAKE_COUNT)
    return PyErr_Format(GodevarrowTypeError, "array_values() needs a tuple of %d makers", GDA_MAKE_COUNT);
  char* buf = NULL;
  int64_t len = 0;
  gda_error e = {0};
  int rc;
  // reading device data, validating and encoding may take long: no GIL
  Py_BEGIN_ALLOW_THREADS rc = gdaArrayValues(h, start, length, &buf, &len, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  value_reader r = {(const unsigned char*)buf, (const unsigned char*)buf + len, args[3]};
  PyObject* out = decode_value(&r, 0);
  if (out && r.p != r.end) {
    Py_DECREF(out);
    out = PyErr_Format(InternalError, "value encoding has %lld bytes after its values", (long long)(r.end - r.p));
  }
  free(buf);
  return out;
}

PyObject* m_equal(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "equal");
  uintptr_t a, b;
  int check, rc;
  if (get_handle(args[0], &a) || get_handle(args[1], &b) || get_bool(args[2], &check)) return NULL;
  int32_t eq = 0;
  gda_error e = {0};
  Py_BEGIN_ALLOW_THREADS rc = gdaEqual(a, b, check, &eq, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  return PyBool_FromLong(eq);
}

// ------------------------------------------------------------ chunked arrays

PyObject* m_chunked_from_arrays(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "chunked_from_arrays");
  uintptr_t schema;
  if (get_optional_handle(args[1], &schema)) return NULL;
  PyObject* seq = PySequence_Tuple(args[0]);
  if (!seq) return NULL;
  Py_ssize_t n = PyTuple_Size(seq);
  uintptr_t* hs = calloc((size_t)(n ? n : 1), sizeof(uintptr_t));
  if (!hs) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  int rc = 0;
  for (Py_ssize_t i = 0; rc == 0 && i < n; i++) rc = get_handle(PyTuple_GetItem(seq, i), &hs[i]);
  uintptr_t out = 0;
  gda_error e = {0};
  if (rc == 0) rc = gdaChunkedFromArrays(hs, n, schema, &out, &e) ? 1 : 0;
  free(hs);
  Py_DECREF(seq);
  if (rc < 0) return NULL;
  if (rc) return raise_error(&e);
  return wrap_handle(out);
}

PyObject* m_chunked_read(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "chunked_read");
  RETURN_HANDLE_NOGIL(gdaChunkedRead(h, &out_, &e_));  // the producer may block
}

PyObject* m_chunked_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "chunked_info");
  RETURN_RECORD(gda_chunked_info, gdaChunkedInfo(h, &info_, &e_));
}

PyObject* m_chunked_chunk(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "chunked_chunk");
  uintptr_t h;
  int64_t i;
  if (get_handle(args[0], &h) || get_int64(args[1], &i)) return NULL;
  RETURN_HANDLE(gdaChunkedChunk(h, i, &out_, &e_));
}

PyObject* m_chunked_stream(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "chunked_stream");
  uintptr_t out = 0;
  gda_error e = {0};
  if (gdaChunkedStream(h, &out, &e)) return raise_error(&e);
  return wrap_stream_handle(out);
}

PyObject* m_chunked_slice(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "chunked_slice");
  uintptr_t h;
  int64_t off, len;
  if (get_handle(args[0], &h) || get_int64(args[1], &off) || get_int64(args[2], &len)) return NULL;
  RETURN_HANDLE(gdaChunkedSlice(h, off, len, &out_, &e_));
}

PyObject* m_chunked_column(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "chunked_column");
  uintptr_t h;
  int64_t i;
  if (get_handle(args[0], &h) || get_int64(args[1], &i)) return NULL;
  RETURN_HANDLE(gdaChunkedColumn(h, i, &out_, &e_));
}

PyObject* m_chunked_to_device(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(3, "chunked_to_device");
  uintptr_t h;
  int64_t dtype, id;
  if (get_handle(args[0], &h) || get_int64(args[1], &dtype) || get_int64(args[2], &id)) return NULL;
  if (dtype < INT32_MIN || dtype > INT32_MAX) return PyErr_Format(ArrowInvalid, "unknown device type %lld", (long long)dtype);
  RETURN_HANDLE_NOGIL(gdaChunkedToDevice(h, (int32_t)dtype, id, &out_, &e_));
}

PyObject* m_chunked_validate(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "chunked_validate");
  uintptr_t h;
  int full, rc;
  if (get_handle(args[0], &h) || get_bool(args[1], &full)) return NULL;
  gda_error e = {0};
  Py_BEGIN_ALLOW_THREADS rc = gdaChunkedValidate(h, full, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  Py_RETURN_NONE;
}

// Values: the methods that turn an array's values into Python objects
// (decoding the value encoding of gosrc/values/values.h, which Go writes
// without the GIL; values.go) and compare values.
#include "binding.h"

#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "values.h"

// A dict key seen before: the same bytes give the same str object (the
// field names of a struct repeat on every row).
typedef struct {
  const unsigned char* bytes;
  uint64_t len;
  PyObject* obj;
} cached_key;

#define KEY_CACHE 64

typedef struct {
  const unsigned char* p;
  const unsigned char* end;
  PyObject* makers;  // a tuple of GDA_MAKE_COUNT callables
  cached_key keys[KEY_CACHE];
  int n_keys;
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

// Puts v (stolen) at index i of seq, a new list or tuple.
static void set_item(PyObject* seq, int as_tuple, uint64_t i, PyObject* v) {
  if (as_tuple)
    PyTuple_SetItem(seq, (Py_ssize_t)i, v);
  else
    PyList_SetItem(seq, (Py_ssize_t)i, v);
}

// Reads a GDA_VALUE_BLOCK record (after its tag) into items [*i, *i+count)
// of seq, a list or tuple of n items.
static int decode_block(value_reader* r, PyObject* seq, int as_tuple, uint64_t* i, uint64_t n) {
  if (r->end - r->p < 41) {
    PyErr_SetString(InternalError, "value encoding ends inside a block");
    return -1;
  }
  int kind = r->p[0];
  uint64_t count, values, validity, bit, chars_at;
  memcpy(&count, r->p + 1, 8);
  memcpy(&values, r->p + 9, 8);
  memcpy(&validity, r->p + 17, 8);
  memcpy(&bit, r->p + 25, 8);
  memcpy(&chars_at, r->p + 33, 8);
  r->p += 41;
  const char* chars = (const char*)(uintptr_t)chars_at;
  if (count > n - *i) {
    PyErr_SetString(InternalError, "value encoding: a block beyond its list");
    return -1;
  }
  const uint8_t* valid = (const uint8_t*)(uintptr_t)validity;
  const void* base = (const void*)(uintptr_t)values;
  for (uint64_t k = 0; k < count; k++) {
    PyObject* v;
    uint64_t at = bit + k;
    if (valid && !(valid[at >> 3] >> (at & 7) & 1)) {
      v = Py_NewRef(Py_None);
    } else {
      switch (kind) {
        case GDA_BLOCK_I8: v = PyLong_FromLong(((const int8_t*)base)[k]); break;
        case GDA_BLOCK_I16: v = PyLong_FromLong(((const int16_t*)base)[k]); break;
        case GDA_BLOCK_I32: v = PyLong_FromLong(((const int32_t*)base)[k]); break;
        case GDA_BLOCK_I64: v = PyLong_FromLongLong(((const int64_t*)base)[k]); break;
        case GDA_BLOCK_U8: v = PyLong_FromLong(((const uint8_t*)base)[k]); break;
        case GDA_BLOCK_U16: v = PyLong_FromLong(((const uint16_t*)base)[k]); break;
        case GDA_BLOCK_U32: v = PyLong_FromUnsignedLong(((const uint32_t*)base)[k]); break;
        case GDA_BLOCK_U64: v = PyLong_FromUnsignedLongLong(((const uint64_t*)base)[k]); break;
        case GDA_BLOCK_F32: v = PyFloat_FromDouble(((const float*)base)[k]); break;
        case GDA_BLOCK_F64: v = PyFloat_FromDouble(((const double*)base)[k]); break;
        case GDA_BLOCK_BOOL: v = PyBool_FromLong(((const uint8_t*)base)[at >> 3] >> (at & 7) & 1); break;
        case GDA_BLOCK_UTF8:
        case GDA_BLOCK_BINARY: {
          const int32_t* o = (const int32_t*)base + k;
          v = kind == GDA_BLOCK_UTF8 ? PyUnicode_DecodeUTF8(chars + o[0], o[1] - o[0], "strict")
                                     : PyBytes_FromStringAndSize(chars + o[0], o[1] - o[0]);
          break;
        }
        case GDA_BLOCK_LARGE_UTF8:
        case GDA_BLOCK_LARGE_BINARY: {
          const int64_t* o = (const int64_t*)base + k;
          v = kind == GDA_BLOCK_LARGE_UTF8 ? PyUnicode_DecodeUTF8(chars + o[0], (Py_ssize_t)(o[1] - o[0]), "strict")
                                           : PyBytes_FromStringAndSize(chars + o[0], (Py_ssize_t)(o[1] - o[0]));
          break;
        }
        default:
          PyErr_Format(InternalError, "value encoding: unknown block kind %d", kind);
          return -1;
      }
    }
    if (!v) return -1;
    set_item(seq, as_tuple, *i + k, v);
  }
  *i += count;
  return 0;
}

// A dict key: a string, the same object for the same bytes.
static PyObject* decode_key(value_reader* r, int depth) {
  const unsigned char* p = r->p;
  if (r->end - p >= 9 && p[0] == GDA_VALUE_STRING) {
    uint64_t len;
    memcpy(&len, p + 1, 8);
    if (len <= (uint64_t)(r->end - p - 9)) {
      const unsigned char* bytes = p + 9;
      for (int k = 0; k < r->n_keys; k++) {
        cached_key* c = &r->keys[k];
        if (c->len == len && memcmp(c->bytes, bytes, len) == 0) {
          r->p = bytes + len;
          return Py_NewRef(c->obj);
        }
      }
      PyObject* key = decode_value(r, depth);
      if (key && r->n_keys < KEY_CACHE) r->keys[r->n_keys++] = (cached_key){bytes, len, Py_NewRef(key)};
      return key;
    }
  }
  return decode_value(r, depth);
}

// count values after a container tag, into a new list (or tuple). Numbers,
// nulls and strings, most of any conversion, are decoded inline.
static PyObject* decode_sequence(value_reader* r, int depth, int as_tuple) {
  uint64_t n;
  if (read_u64(r, &n)) return NULL;
  if (n > (uint64_t)PY_SSIZE_T_MAX) {
    PyErr_SetString(InternalError, "value encoding: a count beyond any list");
    return NULL;
  }
  // items not reached after an error stay NULL, which a list or tuple frees
  PyObject* seq = as_tuple ? PyTuple_New((Py_ssize_t)n) : PyList_New((Py_ssize_t)n);
  if (!seq) return NULL;
  for (uint64_t i = 0; i < n;) {
    PyObject* v;
    const unsigned char* p = r->p;
    if (p < r->end && p[0] == GDA_VALUE_BLOCK) {
      r->p = p + 1;
      if (decode_block(r, seq, as_tuple, &i, n)) {
        Py_DECREF(seq);
        return NULL;
      }
      continue;
    }
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
    set_item(seq, as_tuple, i, v);
    i++;
  }
  return seq;
}

static PyObject* decode_dict(value_reader* r, int depth) {
  uint64_t n;
  if (read_u64(r, &n)) return NULL;
  PyObject* d = PyDict_New();
  if (!d) return NULL;
  for (uint64_t i = 0; i < n; i++) {
    PyObject* k = decode_key(r, depth + 1);
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
  CHECK_NARGS(5, "array_values");
  uintptr_t h;
  int64_t start, length;
  int by_column;
  if (get_handle(args[0], &h) || get_int64(args[1], &start) || get_int64(args[2], &length) ||
      get_bool(args[4], &by_column))
    return NULL;
  if (!PyTuple_Check(args[3]) || PyTuple_Size(args[3]) != GDA_MAKE_COUNT)
    return PyErr_Format(GodevarrowTypeError, "array_values() needs a tuple of %d makers", GDA_MAKE_COUNT);
  char* buf = NULL;
  int64_t len = 0;
  uintptr_t keep = 0;  // the encoding and the data its blocks point into
  gda_error e = {0};
  int rc;
  // reading device data, validating and encoding may take long: no GIL
  Py_BEGIN_ALLOW_THREADS rc = gdaArrayValues(h, start, length, by_column, &buf, &len, &keep, &e);
  Py_END_ALLOW_THREADS if (rc) return raise_error(&e);
  value_reader r = {(const unsigned char*)buf, (const unsigned char*)buf + len, args[3], {0}, 0};
  PyObject* out = decode_value(&r, 0);
  if (out && r.p != r.end) {
    Py_DECREF(out);
    out = PyErr_Format(InternalError, "value encoding has %lld bytes after its values", (long long)(r.end - r.p));
  }
  for (int i = 0; i < r.n_keys; i++) Py_DECREF(r.keys[i].obj);
  if (keep)
    HOLDING_GIL(gdaHandleRelease(keep));
  else
    free(buf);  // an encoding that points into no data is ours
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

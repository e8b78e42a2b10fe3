// pyarrow's shortcuts: the one file of the binding that knows pyarrow. Its
// rules, each a fact about pyarrow that a benchmark row pays for
// (docs/performance.md, "pyarrow's schema, exported once"):
//
// 1. pyarrow 18 and newer raise NotImplementedError from __arrow_c_array__
//    for data not on the CPU, so for pyarrow's own Array and RecordBatch
//    (methods not overridden by a subclass) the plain protocol is asked
//    first: it gives what the device protocol gives, without pyarrow's
//    per-buffer device check (docs/performance.md, "pyarrow is asked for
//    the plain protocol first"). Data elsewhere raises and takes the device
//    protocol. Older pyarrow: the general order.
// 2. A pyarrow array or batch whose `type`/`schema` is, or equals (pyarrow's
//    `equals(..., check_metadata=True)`), the one last imported into a flat
//    held schema (held.h, gda_held_flat_schema) is asked for its array alone
//    through pyarrow's `_export_to_c_device(address)`, and the held-schema
//    gate takes it against the known schema: no schema export, comparison or
//    release. Only flat schemas qualify: pyarrow compares metadata as a map
//    and (older versions) ignores a list's child name.
// 3. Each pyarrow subclass is looked at once (its way is remembered; at most
//    256 types, then the memory starts again).
//
// Deleting this file (and pyarrow_import's call in import.c) leaves every
// import on the general path, with the same results.
#include "binding.h"

#include <stdlib.h>
#include <string.h>

static PyObject* str_pyarrow_lib;
static PyObject* str_pyarrow;
static PyObject* str_schema;
static PyObject* str_type;
static PyObject* str_equals;
static PyObject* str_export_to_c_device;
static PyObject* kw_check_metadata;  // {"check_metadata": True}

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
  const char* text = version && PyUnicode_Check(version) ? PyUnicode_AsUTF8AndSize(version, NULL) : NULL;
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

// How an object of a type is asked for its data (rules 1 and 2).
enum {
  GENERAL_ORDER,  // not pyarrow's: import.c's order
  PLAIN_FIRST,    // rule 1
  KNOWN_ARRAY,    // rules 1 and 2, for an Array
  KNOWN_BATCH,    // rules 1 and 2, for a RecordBatch
};

// The way of objects of type t (rule 3); -1 on error.
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
  if (PyDict_Size(pyarrow_decided) >= 256) PyDict_Clear(pyarrow_decided);
  int rc = PyDict_SetItem(pyarrow_decided, (PyObject*)t, value);
  Py_DECREF(value);
  return rc < 0 ? -1 : way;
}

// Rule 2's memory: the pyarrow type or schema last imported into a flat held
// schema, and that held schema.
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

static Py_ssize_t length_or_minus_one(PyObject* obj) {
  Py_ssize_t n = PyObject_Length(obj);
  if (n < 0) PyErr_Clear();
  return n;
}

// Rule 2: 0 when pyarrow (obj's `type` or `schema`) is not the known one
// (nothing done), 1 with *out the import (NULL on error).
static int import_known(PyObject* obj, PyObject* pyarrow, known_schema* k, PyTypeObject* cls, PyObject** out) {
  if (!k->held) return 0;
  PyObject* known_pyarrow = Py_NewRef(k->pyarrow);
  gda_held_schema* e = k->held;
  gda_held_schema_ref(e);  // k may change while pyarrow runs
  int same = pyarrow == known_pyarrow;  // 1, 0, or -1 for an error
  // the column count tells most schemas apart, and costs less than equals
  if (!same && (k == &known[PA_ARRAY] || length_or_minus_one(pyarrow) == gda_held_schema_columns(e))) {
    // pyarrow's equality: a pointer comparison for the schema that the
    // batches of one source share, else fingerprints
    PyObject* equals = PyObject_GetAttr(pyarrow, str_equals);
    PyObject* args = equals ? PyTuple_Pack(1, known_pyarrow) : NULL;
    PyObject* r = args ? PyObject_Call(equals, args, kw_check_metadata) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(equals);
    same = r ? PyObject_IsTrue(r) : -1;
    Py_XDECREF(r);
  }
  Py_DECREF(known_pyarrow);
  if (same != 1) {
    gda_held_schema_unref(e);
    *out = NULL;
    return same == -1;  // an error of equals or of its truth; else no match
  }
  struct ArrowDeviceArray d;
  memset(&d, 0, sizeof(d));
  PyObject* address = PyLong_FromVoidPtr(&d);
  PyObject* r = address ? PyObject_CallMethodObjArgs(obj, str_export_to_c_device, address, NULL) : NULL;
  Py_XDECREF(address);
  if (!r) {
    if (d.array.release) d.array.release(&d.array);
    *out = NULL;
  } else {
    *out = import_known_array(e, &d, cls);
  }
  Py_XDECREF(r);
  gda_held_schema_unref(e);
  return 1;
}

int pyarrow_import(PyObject* obj, PyTypeObject* cls, PyObject** out) {
  int way = pyarrow_way(Py_TYPE(obj));
  if (way < 0) {
    *out = NULL;
    return 1;
  }
  if (way == GENERAL_ORDER) return 0;
  if (way == PLAIN_FIRST) {
    *out = import_by_protocol(obj, cls, NULL, 1, NULL);
    return 1;
  }
  known_schema* k = &known[way == KNOWN_ARRAY ? PA_ARRAY : PA_BATCH];
  PyObject* pyarrow = PyObject_GetAttr(obj, way == KNOWN_ARRAY ? str_type : str_schema);
  if (!pyarrow) {
    *out = NULL;
    return 1;
  }
  if (!import_known(obj, pyarrow, k, cls, out)) {
    gda_held* held = NULL;
    *out = import_by_protocol(obj, cls, NULL, 1, &held);
    if (held) remember(k, pyarrow, held);
  }
  Py_DECREF(pyarrow);
  return 1;
}

// debug_known_schemas(): the pyarrow type and schema rule 2 knows (None when
// it knows none), for tests.
PyObject* pyarrow_known_schemas(void) {
  PyObject* array = known[PA_ARRAY].pyarrow ? known[PA_ARRAY].pyarrow : Py_None;
  PyObject* batch = known[PA_BATCH].pyarrow ? known[PA_BATCH].pyarrow : Py_None;
  return PyTuple_Pack(2, array, batch);
}

int pyarrow_init(void) {
  if (!(str_pyarrow_lib = PyUnicode_InternFromString("pyarrow.lib")) ||
      !(str_pyarrow = PyUnicode_InternFromString("pyarrow")) ||
      !(str_schema = PyUnicode_InternFromString("schema")) || !(str_type = PyUnicode_InternFromString("type")) ||
      !(str_equals = PyUnicode_InternFromString("equals")) ||
      !(str_export_to_c_device = PyUnicode_InternFromString("_export_to_c_device")) ||
      !(kw_check_metadata = Py_BuildValue("{s:O}", "check_metadata", Py_True)) || !(pyarrow_decided = PyDict_New()))
    return -1;
  return 0;
}

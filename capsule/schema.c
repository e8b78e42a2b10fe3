// The schema methods of methods.h (their Go halves are in schema.go):
// import and export, the members of a schema node, equality and the text
// form, and the borrowed copy of a producer's schema.
#include "binding.h"

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

// One of the two work-arounds for foreign producers (cschema/borrow.go; the
// other is device_array_stamp_device_of_data, array.c), on a producer's
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

PyObject* m_schema_of(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "schema_of");
  RETURN_HANDLE(gdaSchemaOf(h, &out_, &e_));
}

PyObject* m_schema_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "schema_info");
  RETURN_RECORD(gda_schema_info, gdaSchemaInfo(h, &info_, &e_));
}

GDA_CHILD_METHOD(schema_child, gdaSchemaChild)

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

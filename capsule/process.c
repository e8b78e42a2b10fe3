// The process methods of methods.h (their Go halves are in process.go):
// the CUDA backend's status, the build's versions, and what the tests read
// or provoke (live-object counters, the schemas pyarrow.c knows, a panic).
#include "binding.h"

#include "_cgo_export.h"

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


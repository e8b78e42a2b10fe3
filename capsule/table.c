// The chunked-array methods of methods.h (their Go halves are in
// table.go): a chunked array (a table when its chunks are record batches)
// from arrays or a stream, its facts, chunks, views, copies and validation.
#include "binding.h"

#include <stdlib.h>

#include "_cgo_export.h"

PyObject* m_chunked_from_arrays(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  CHECK_NARGS(2, "chunked_from_arrays");
  uintptr_t schema, *hs, out = 0;
  Py_ssize_t n;
  if (get_optional_handle(args[1], &schema) || get_handles(args[0], &hs, &n)) return NULL;
  gda_error e = {0};
  int rc = gdaChunkedFromArrays(hs, n, schema, &out, &e);
  free(hs);
  return rc ? raise_error(&e) : wrap_handle(out);
}

PyObject* m_chunked_read(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "chunked_read");
  RETURN_HANDLE_NOGIL(gdaChunkedRead(h, &out_, &e_));  // the producer may block
}

PyObject* m_chunked_info(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "chunked_info");
  RETURN_RECORD(gda_chunked_info, gdaChunkedInfo(h, &info_, &e_));
}

PyObject* m_chunked_stream(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_ARG(1, "chunked_stream");
  uintptr_t out = 0;
  gda_error e = {0};
  if (gdaChunkedStream(h, &out, &e)) return raise_error(&e);
  return wrap_stream_handle(out);
}

GDA_CHILD_METHOD(chunked_chunk, gdaChunkedChunk)
GDA_CHILD_METHOD(chunked_column, gdaChunkedColumn)
GDA_SLICE_METHOD(chunked_slice, gdaChunkedSlice)
GDA_VALIDATE_METHOD(chunked_validate, gdaChunkedValidate)
GDA_TO_DEVICE_METHOD(chunked_to_device, gdaChunkedToDevice)

// The for loop's iterator over a stream (StreamIterator, made by
// StreamBase's __iter__, stream_base.c): the reads themselves are
// stream_read.c's.
#include "binding.h"

// An iterator over the stream's arrays. A for loop over an ArrayStream runs
// no Python code per array: a foreign stream's read
// of a held array (held.h) is the read gate, one call into the producer and
// the array object, with no call into Go (docs/performance.md, "Reading a
// stream").
typedef struct {
  PyObject_HEAD PyObject* handle;
  PyObject* cls;
  int ready_first;  // a read-ahead stream: take a ready array before releasing the GIL
} StreamIterObject;

static PyTypeObject* StreamIter_Type;

static PyObject* StreamIter_next(PyObject* self) {
  StreamIterObject* it = (StreamIterObject*)self;
  PyObject* r = NULL;
  if (stream_reads_ahead(it->handle, it->ready_first)) {
    PyObject* args[2] = {it->handle, it->cls};
    if (!(r = m_stream_try_next(NULL, args, 2))) return NULL;
    if (r == Py_NotImplemented) Py_CLEAR(r);  // nothing ready: wait for it
  }
  if (!r) r = stream_read(it->handle, (PyTypeObject*)it->cls);
  if (r == Py_None) {
    Py_DECREF(r);
    return NULL;  // the end: StopIteration
  }
  return r;
}

static void StreamIter_dealloc(PyObject* self) {
  StreamIterObject* it = (StreamIterObject*)self;
  PyTypeObject* type = Py_TYPE(self);
  Py_CLEAR(it->handle);
  Py_CLEAR(it->cls);
  ((freefunc)PyType_GetSlot(type, Py_tp_free))(self);
  Py_DECREF(type);  // instances of a heap type hold a reference to it
}

static PyObject* StreamIter_iter(PyObject* self) { return Py_NewRef(self); }

static PyType_Slot StreamIter_slots[] = {
    {Py_tp_iter, (void*)StreamIter_iter},
    {Py_tp_iternext, (void*)StreamIter_next},
    {Py_tp_dealloc, (void*)StreamIter_dealloc},
    {Py_tp_doc, (void*)"An iterator over the arrays of a stream (made by ArrayStream.__iter__)."},
    {0, NULL},
};

static PyType_Spec StreamIter_spec = {"godevarrow._godevarrow.StreamIterator", sizeof(StreamIterObject), 0,
                                      Py_TPFLAGS_DEFAULT, StreamIter_slots};

int stream_iter_init(PyObject* module) {
  if (stream_init() < 0) return -1;
  StreamIter_Type = (PyTypeObject*)PyType_FromSpec(&StreamIter_spec);
  return StreamIter_Type && PyModule_AddObjectRef(module, "StreamIterator", (PyObject*)StreamIter_Type) == 0 ? 0 : -1;
}

PyObject* stream_iter_new(PyObject* handle, PyObject* cls, int ready_first) {
  StreamIterObject* it = (StreamIterObject*)((allocfunc)PyType_GetSlot(StreamIter_Type, Py_tp_alloc))(StreamIter_Type, 0);
  if (!it) return NULL;
  it->handle = Py_NewRef(handle);
  it->cls = Py_NewRef(cls);
  it->ready_first = ready_first;
  return (PyObject*)it;
}


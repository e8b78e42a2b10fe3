// StreamBase, the C base class of godevarrow.ArrayStream: the stream's
// handle and Python-side state, and the calls every short stream makes
// (construction, iteration, close), in C with no Python frame around them.
// A stream's set-up (import, first array, close) is a few microseconds, of
// which those three frames were a tenth (docs/performance.md, "A stream's
// set-up and an `async for`'s array"). Everything else of ArrayStream is Python
// (python/godevarrow/_stream.py), which reads and sets the same attributes.
#include "binding.h"

#include <structmember.h>  // PyMemberDef's T_OBJECT_EX, T_BOOL (the Limited API's names up to 3.11)

#include "stream_state.h"

typedef struct {
  PyObject_HEAD PyObject* h;  // _h: the stream handle capsule; prefetch and async for replace it
  PyObject* info;             // _info: (Schema, device type, array class) once asked, else None
  PyObject* wake;             // _wake: the event loop's wake pipe once made, else None
  char reads_ahead;           // _reads_ahead: the handle's stream has a read-ahead under it
} StreamBaseObject;

static PyObject* str_array_classes;  // "_array_classes": (Array, RecordBatch), a class attribute set by Python
static PyObject* str_stream_info;    // "_stream_info": Python's method that asks Go for the stream's facts
static PyObject* str_stream_closed;  // "stream_closed": the wake pipe's method (_WakePipe)

static PyObject* StreamBase_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  if ((kwds && PyDict_Size(kwds)) || PyTuple_Size(args) != 1 || !PyCapsule_IsValid(PyTuple_GetItem(args, 0), STREAM_HANDLE_NAME)) {
    PyObject* cls = PyObject_GetAttrString((PyObject*)type, "__name__");
    if (cls)
      PyErr_Format(GodevarrowTypeError, "%U objects are made by godevarrow.stream() and friends, not directly", cls);
    Py_XDECREF(cls);
    return NULL;
  }
  StreamBaseObject* self = (StreamBaseObject*)((allocfunc)PyType_GetSlot(type, Py_tp_alloc))(type, 0);
  if (!self) return NULL;
  self->h = Py_NewRef(PyTuple_GetItem(args, 0));
  self->info = Py_NewRef(Py_None);
  self->wake = Py_NewRef(Py_None);
  return (PyObject*)self;
}

// The wake pipe holds futures whose tasks may hold the stream: a cycle while
// an __anext__ waits, which the collector must see.
static int StreamBase_traverse(StreamBaseObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->h);
  Py_VISIT(self->info);
  Py_VISIT(self->wake);
  return 0;
}

static int StreamBase_clear(StreamBaseObject* self) {
  Py_CLEAR(self->h);
  Py_CLEAR(self->info);
  Py_CLEAR(self->wake);
  return 0;
}

static void StreamBase_dealloc(StreamBaseObject* self) {
  PyObject_GC_UnTrack(self);
  StreamBase_clear(self);  // the handle capsule's destructor releases the stream
  PyTypeObject* type = Py_TYPE(self);
  ((freefunc)PyType_GetSlot(type, Py_tp_free))(self);
  Py_DECREF(type);  // instances of a heap type hold a reference to it (subclasses' dealloc leaves it to us)
}

// The class of the stream's arrays (a new reference): from _info once asked;
// else Array or RecordBatch by the C bookkeeping's flag (no call into Go: a
// short stream's set-up need not build its schema); else from _stream_info().
static PyObject* array_class_of(StreamBaseObject* self) {
  PyObject* cls = NULL;
  if (self->info && PyTuple_Check(self->info) && PyTuple_Size(self->info) == 3) {
    cls = Py_NewRef(PyTuple_GetItem(self->info, 2));
  } else {
    stream_c_read* c = stream_c_read_of(self->h);  // self->h checked by the caller
    if (c) {
      PyObject* classes = PyObject_GetAttr((PyObject*)self, str_array_classes);
      if (classes && PyTuple_Check(classes) && PyTuple_Size(classes) == 2) {
        cls = Py_NewRef(PyTuple_GetItem(classes, (flags_of(c) & GDA_OF_STRUCTS) ? 1 : 0));
      } else if (classes) {
        PyErr_SetString(InternalError, "ArrayStream._array_classes is not (Array, RecordBatch)");
      }
      Py_XDECREF(classes);
    } else {
      PyObject* info = PyObject_CallMethodObjArgs((PyObject*)self, str_stream_info, NULL);
      if (info && PyTuple_Check(info) && PyTuple_Size(info) == 3) {
        cls = Py_NewRef(PyTuple_GetItem(info, 2));
      } else if (info) {
        PyErr_SetString(InternalError, "ArrayStream._stream_info() is not (Schema, device type, class)");
      }
      Py_XDECREF(info);
    }
  }
  if (cls && check_array_class(cls, "ArrayStream.__iter__")) Py_CLEAR(cls);
  return cls;
}

// The handle capsule, or NULL with AttributeError once Python deleted _h.
static PyObject* handle_of(StreamBaseObject* self) {
  if (!self->h) PyErr_SetString(PyExc_AttributeError, "the ArrayStream's _h was deleted");
  return self->h;
}

static PyObject* StreamBase_iter(StreamBaseObject* self) {
  if (is_poisoned()) return refuse_poisoned();
  uintptr_t h;
  if (!handle_of(self) || get_handle(self->h, &h)) return NULL;
  PyObject* cls = array_class_of(self);
  if (!cls) return NULL;
  PyObject* it = stream_iter_new(self->h, cls, self->reads_ahead);
  Py_DECREF(cls);
  return it;
}

static PyObject* StreamBase_close(StreamBaseObject* self, PyObject* unused) {
  if (is_poisoned()) return refuse_poisoned();
  PyObject* r = handle_of(self) ? stream_close(self->h) : NULL;
  if (!r || !self->wake || self->wake == Py_None) return r;
  Py_DECREF(r);
  // Go writes no more to the wake pipe: the pipe closes now, or after its last waiter
  return PyObject_CallMethodObjArgs(self->wake, str_stream_closed, NULL);
}

// __iter__ as a method too (METH_COEXIST puts it in the type's dict over the
// slot's wrapper), so that help() and the reference show its docstring.
static PyObject* StreamBase_iter_method(StreamBaseObject* self, PyObject* unused) { return StreamBase_iter(self); }

static PyMethodDef StreamBase_methods[] = {
    {"__iter__", (PyCFunction)StreamBase_iter_method, METH_NOARGS | METH_COEXIST,
     "__iter__() -> iterator of the arrays\n\nIterates the arrays (RecordBatch for a stream of struct arrays) until "
     "the end; a for loop runs no Python code per array."},
    {"close", (PyCFunction)StreamBase_close, METH_NOARGS,
     "close() -> None\n\nRelease the stream (idempotent). A read in progress in another thread is waited for, without "
     "holding the GIL."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef StreamBase_members[] = {
    {"_h", T_OBJECT_EX, offsetof(StreamBaseObject, h), 0, "the stream handle to pass to _godevarrow functions"},
    {"_info", T_OBJECT_EX, offsetof(StreamBaseObject, info), 0, "(Schema, device type, array class) once asked, else None"},
    {"_wake", T_OBJECT_EX, offsetof(StreamBaseObject, wake), 0, "the event loop's wake pipe once made, else None"},
    {"_reads_ahead", T_BOOL, offsetof(StreamBaseObject, reads_ahead), 0, "whether the stream has a read-ahead under it"},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot StreamBase_slots[] = {
    {Py_tp_new, (void*)StreamBase_new},
    {Py_tp_dealloc, (void*)StreamBase_dealloc},
    {Py_tp_traverse, (void*)StreamBase_traverse},
    {Py_tp_clear, (void*)StreamBase_clear},
    {Py_tp_iter, (void*)StreamBase_iter},
    {Py_tp_methods, StreamBase_methods},
    {Py_tp_members, StreamBase_members},
    {Py_tp_doc, (void*)"The C part of godevarrow.ArrayStream: its handle, iteration and close."},
    {0, NULL},
};

static PyType_Spec StreamBase_spec = {"godevarrow._godevarrow.StreamBase", sizeof(StreamBaseObject), 0,
                                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, StreamBase_slots};

int stream_base_init(PyObject* module) {
  if (!(str_array_classes = PyUnicode_InternFromString("_array_classes")) ||
      !(str_stream_info = PyUnicode_InternFromString("_stream_info")) ||
      !(str_stream_closed = PyUnicode_InternFromString("stream_closed")))
    return -1;
  PyObject* type = PyType_FromSpec(&StreamBase_spec);
  if (!type) return -1;
  int rc = PyModule_AddObjectRef(module, "StreamBase", type);
  Py_DECREF(type);
  return rc;
}

// The declarations the two halves of _godevarrow share: the Go exports
// (the <topic>.go files) fill these records, the CPython side (module.c
// and the <topic>.c files) packs them into Python objects. Each list below is declared once, as an X-macro, and expanded
// wherever it is needed: adding an exception class or a record field is one
// line here (and the stub generator, capsule/gen_stub.py, reads these lists
// for python/godevarrow/_godevarrow.pyi).
#pragma once
#include <stdint.h>

#include "arrow-c-abi.h"
#include "held.h"

// Exception classes: X(kind, Python name, Python base, docstring). Each also
// derives from GodevarrowError. errors.go maps Go errors to the kinds.
#define GDA_EXCEPTIONS(X)                                                                                          \
  X(GDA_ERR_INVALID, ArrowInvalid, PyExc_ValueError,                                                               \
    "Malformed, released or wrongly named capsules or structs, or invalid data.")                                  \
  X(GDA_ERR_NOT_IMPLEMENTED, ArrowNotImplementedError, PyExc_NotImplementedError,                                  \
    "A valid request that godevarrow does not support.")                                                           \
  X(GDA_ERR_DEVICE, DeviceError, PyExc_RuntimeError, "A device is unavailable or its driver failed.")             \
  X(GDA_ERR_TYPE, GodevarrowTypeError, PyExc_TypeError, "An object of the wrong kind was passed.")                \
  X(GDA_ERR_STREAM, StreamError, PyExc_OSError, "A foreign stream's producer reported an error (errno and message).") \
  X(GDA_ERR_INTERNAL, InternalError, PyExc_RuntimeError,                                                           \
    "A bug in godevarrow; the library refuses further work afterwards.")                                           \
  X(GDA_ERR_BUFFER, DLPackError, PyExc_BufferError,                                                                \
    "The array cannot be described as a DLPack tensor (nulls, non-numeric type).")                                  \
  X(GDA_ERR_GO, GoError, PyExc_RuntimeError,                                                                       \
    "A Go function called through godevarrow.go returned an error, or panicked (the message says which).")

#define GDA_KIND_ENUM(kind, name, base, doc) kind,
enum {
  GDA_OK = 0,
  GDA_EXCEPTIONS(GDA_KIND_ENUM)  // 1, 2, ...
  GDA_ERR_MEMORY,                // Python's own MemoryError: a failed host allocation
  GDA_PENDING = -1,              // not an error: the wait timed out, call again
  GDA_CONVERT = -2,              // not an error: an argument of go_call must be converted first
};

// What gdaStreamCRead says of a stream (flags).
enum {
  GDA_READS_AHEAD = 1,      // its reads take a read-ahead's queue
  GDA_OVER_READ_AHEAD = 2,  // a read-ahead is under it: settling stops it (Go)
  GDA_AHEAD_WHEN_SLOW = 4,  // read on the reading thread until a read blocks, then ahead (prefetch)
  GDA_OF_STRUCTS = 8,       // its arrays are struct arrays (RecordBatch in Python)
  GDA_PROBING = 16,         // its next read takes a probe's array, after which the flags change (Go)
  GDA_PROBE_DUE = 32,       // an event loop's next read is a probe (Go's ProbeDue)
};

typedef struct {
  int kind;
  int errno_code;
  char* message;  // malloc'd by Go, freed by the C side
} gda_error;

// Named records: X(C type, field, Python conversion). INT is a Python int,
// UINT an unsigned one (addresses), BOOL a bool.
#define GDA_ARRAY_INFO(X)                                                          \
  X(int64_t, length, INT) X(int64_t, offset, INT) X(int64_t, null_count, INT)      \
  X(int32_t, device_type, INT) X(int64_t, device_id, INT) X(int64_t, n_children, INT) \
  X(int32_t, is_struct, BOOL)

// A 1-D numeric array as a tensor: its address and length, its DLPack dtype
// (code: 0 int, 1 uint, 2 float; bits), device, and the stream a consumer
// must order its work after (0: none needed).
#define GDA_TENSOR_INFO(X)                                                         \
  X(uintptr_t, data, UINT) X(int64_t, length, INT) X(int32_t, code, INT)           \
  X(int32_t, bits, INT) X(int32_t, device_type, INT) X(int64_t, device_id, INT)    \
  X(uintptr_t, stream, UINT)

// debug_counters(): live objects of the Go core, for leak checks, the size
// of the schema import cache (entries, and bytes as counted against its
// budget), and what the device backends' pools keep for reuse (streams,
// events, pinned staging buffers, idle device memory): bounded, no leak;
// and, cumulative, the DLPack tensors made from an array's template in C
// (dlpack_c.h) (all int64_t).
#define GDA_COUNTERS(X)                                                                                      \
  X(int64_t, handles, INT) X(int64_t, exported_schemas, INT) X(int64_t, exported_arrays, INT)                \
  X(int64_t, exported_streams, INT) X(int64_t, imported_arrays, INT) X(int64_t, imported_streams, INT)       \
  X(int64_t, bytes_held, INT) X(int64_t, arrays, INT) X(int64_t, exported_tensors, INT)                      \
  X(int64_t, held_imports, INT) X(int64_t, schema_cache_entries, INT) X(int64_t, schema_cache_bytes, INT) \
  X(int64_t, pooled_streams, INT) X(int64_t, pooled_events, INT) X(int64_t, pooled_host_buffers, INT)         \
  X(int64_t, pooled_device_blocks, INT) X(int64_t, pooled_device_bytes, INT)                                 \
  X(int64_t, dlpack_template_exports, INT)

#define GDA_RECORD_FIELD(type, name, conv) type name;
// One argument or result of a Go function called from Python (go_call):
// the kind says which member holds it. A result's string is malloc'd by Go
// (the C side frees it); an ARRAY or CHUNKED result's i is 1 for struct data.
enum {
  GDA_GO_NONE,
  GDA_GO_HANDLE,  // an argument: an array, chunked array or stream handle
  GDA_GO_INT,
  GDA_GO_UINT,
  GDA_GO_FLOAT,
  GDA_GO_BOOL,
  GDA_GO_STR,
  GDA_GO_ARRAY,  // results: a handle of each kind
  GDA_GO_CHUNKED,
  GDA_GO_STREAM,
};
typedef struct {
  int32_t kind;
  int64_t i;
  uint64_t u;
  double f;
  uintptr_t h;
  char* s;
  int64_t len;
} gda_go_value;

typedef struct { GDA_ARRAY_INFO(GDA_RECORD_FIELD) } gda_array_info;
typedef struct { GDA_TENSOR_INFO(GDA_RECORD_FIELD) } gda_tensor_info;
typedef struct { GDA_COUNTERS(GDA_RECORD_FIELD) } gda_counters;

// Set by the Go side once a panic was recovered (errors.go): every method
// that takes ownership of anything checks it first, so a refused call
// leaves the caller's objects untouched.
extern int gda_poisoned;
void gda_set_poisoned(void);

// Reference counting of Python objects owned by imported arrays; the decref
// takes the GIL itself, so a release may run on any thread.
void gda_py_incref(void* obj);
void gda_py_decref(void* obj);

// Records with strings and handles (STR: a malloc'd UTF-8 string, freed when
// packed; BYTES: malloc'd bytes or NULL for None; HANDLE: a Go handle,
// packed as a handle capsule).
typedef struct {
  char* data;
  int64_t len;
} gda_bytes;

#define GDA_SCHEMA_INFO(X)                                                        \
  X(char*, format, STR) X(char*, name, STR) X(int64_t, flags, INT)                \
  X(gda_bytes, metadata, BYTES) X(int64_t, n_children, INT) X(int32_t, has_dictionary, BOOL)

#define GDA_STREAM_INFO(X) X(uintptr_t, schema, HANDLE) X(int32_t, device_type, INT) X(int32_t, is_struct, BOOL)

#define GDA_CHUNKED_INFO(X)                                                       \
  X(uintptr_t, schema, HANDLE) X(int64_t, length, INT) X(int64_t, n_chunks, INT)  \
  X(int32_t, device_type, INT) X(int32_t, is_struct, BOOL)

#define GDA_CUDA_STATUS(X)                                                        \
  X(int32_t, available, BOOL) X(int64_t, device_count, INT) X(char*, library, STR) X(char*, message, STR)

typedef struct { GDA_SCHEMA_INFO(GDA_RECORD_FIELD) } gda_schema_info;
typedef struct { GDA_STREAM_INFO(GDA_RECORD_FIELD) } gda_stream_info;
typedef struct { GDA_CUDA_STATUS(GDA_RECORD_FIELD) } gda_cuda_status;
typedef struct { GDA_CHUNKED_INFO(GDA_RECORD_FIELD) } gda_chunked_info;

// Every record, for the code that turns each into a Python type:
// X(Python name, record list, C type, docstring).
#define GDA_RECORDS(X)                                                                        \
  X(ArrayInfo, GDA_ARRAY_INFO, gda_array_info, "Facts about an array, from one Go call.")     \
  X(TensorInfo, GDA_TENSOR_INFO, gda_tensor_info, "A 1-D numeric array as a tensor (DLPack, CUDA Array Interface).") \
  X(Counters, GDA_COUNTERS, gda_counters, "Live objects of the Go core, for leak checks.")     \
  X(SchemaInfo, GDA_SCHEMA_INFO, gda_schema_info, "The members of one schema node.")          \
  X(StreamInfo, GDA_STREAM_INFO, gda_stream_info, "A stream's schema, device type and array class.") \
  X(ChunkedInfo, GDA_CHUNKED_INFO, gda_chunked_info, "A chunked array's schema, length, chunk count, device type and class.") \
  X(CudaStatus, GDA_CUDA_STATUS, gda_cuda_status, "The CUDA backend: available, devices, library, message.")

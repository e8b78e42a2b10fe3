// Shared between the Go exports and the CPython module of _godevarrow.
#pragma once
#include <stdint.h>

#include "arrow-c-abi.h"

// Exception classes an error is raised as (see errors.go, module.c).
enum {
  GDA_OK = 0,
  GDA_ERR_INVALID = 1,          // godevarrow.ArrowInvalid (ValueError)
  GDA_ERR_NOT_IMPLEMENTED = 2,  // godevarrow.ArrowNotImplementedError (NotImplementedError)
  GDA_ERR_DEVICE = 3,           // godevarrow.DeviceError (RuntimeError)
  GDA_ERR_TYPE = 4,             // godevarrow.GodevarrowTypeError (TypeError)
  GDA_ERR_STREAM = 5,           // godevarrow.StreamError (OSError)
  GDA_ERR_INTERNAL = 6,         // godevarrow.InternalError (RuntimeError)
  GDA_ERR_BUFFER = 7,           // godevarrow.DLPackError (BufferError)
  GDA_ERR_MEMORY = 8,           // MemoryError (a failed host allocation)
  GDA_PENDING = -1,             // not an error: the wait timed out, call again
};

typedef struct {
  int kind;
  int errno_code;
  char* message;  // malloc'd by Go, freed by the C side
} gda_error;

// Facts about an array, filled by one Go call.
typedef struct {
  int64_t length;
  int64_t offset;
  int64_t null_count;
  int32_t device_type;
  int64_t device_id;
  int64_t n_children;
  int is_struct;
} gda_array_info;

// A tensor-shaped array (DLPack / CUDA Array Interface), filled by one Go call.
typedef struct {
  uintptr_t data;
  int64_t length;
  int code, bits;
  int32_t device_type;
  int64_t device_id;
  uintptr_t stream;  // 0: none needed; 1: the legacy default stream
} gda_tensor_info;

// Reference counting of Python objects owned by imported arrays; the decref
// takes the GIL itself, so a release may run on any thread.
void gda_py_incref(void* obj);
void gda_py_decref(void* obj);

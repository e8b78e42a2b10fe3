// Package asyncv18 crosses godevarrow's async device streams with Arrow Go
// v18's (cdata.CreateAsyncDeviceStreamHandler, ExportAsyncRecordBatchStream).
// It is its own module so that v18 never enters godevarrow's dependencies.
package asyncv18

/*
#include <stdlib.h>
#include "../../gosrc/include/arrow-c-abi.h"
*/
import "C"

import "unsafe"

// NewHandler allocates a zeroed C ArrowAsyncDeviceStreamHandler.
func NewHandler() unsafe.Pointer {
	return C.calloc(1, C.sizeof_struct_ArrowAsyncDeviceStreamHandler)
}

// Free frees memory of NewHandler.
func Free(p unsafe.Pointer) { C.free(p) }

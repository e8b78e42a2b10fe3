package streams

/*
#include "gda.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cschema"
)

// The canonical stream structs of arrow-c-abi.h (cdevice has the array
// structs, cschema ArrowSchema: a cgo type belongs to the package that
// declares it).
type (
	CArrowArrayStream       = C.struct_ArrowArrayStream
	CArrowDeviceArrayStream = C.struct_ArrowDeviceArrayStream
)

// StreamAt and DeviceStreamAt view a pointer obtained elsewhere (a
// PyCapsule, another cgo package) as the struct.
func StreamAt(p unsafe.Pointer) *CArrowArrayStream             { return (*CArrowArrayStream)(p) }
func DeviceStreamAt(p unsafe.Pointer) *CArrowDeviceArrayStream { return (*CArrowDeviceArrayStream)(p) }

// Struct sizes, for callers that allocate the structs themselves.
const (
	SizeofArrowArrayStream       = C.sizeof_struct_ArrowArrayStream
	SizeofArrowDeviceArrayStream = C.sizeof_struct_ArrowDeviceArrayStream
)

func cSchema(s *cschema.CArrowSchema) *C.struct_ArrowSchema {
	return (*C.struct_ArrowSchema)(unsafe.Pointer(s))
}

func schemaOf(c *C.struct_ArrowSchema) *cschema.CArrowSchema {
	return cschema.SchemaAt(unsafe.Pointer(c))
}

var liveStreamExports, liveStreamImports atomic.Int64

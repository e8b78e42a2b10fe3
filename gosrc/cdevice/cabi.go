package cdevice

/*
#cgo CFLAGS: -O2 -std=c11 -I${SRCDIR}/../include
#include "gda.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cschema"
)

// The canonical C structs (arrow-c-abi.h).
type (
	CArrowArray       = C.struct_ArrowArray
	CArrowDeviceArray = C.struct_ArrowDeviceArray
)

// SchemaAt, ArrayAt, DeviceArrayAt, StreamAt and DeviceStreamAt view a
// pointer obtained elsewhere (a PyCapsule, another cgo package) as the struct.
func ArrayAt(p unsafe.Pointer) *CArrowArray             { return (*CArrowArray)(p) }
func DeviceArrayAt(p unsafe.Pointer) *CArrowDeviceArray { return (*CArrowDeviceArray)(p) }

// Struct sizes, for callers that allocate the structs themselves.
const (
	SizeofArrowArray       = C.sizeof_struct_ArrowArray
	SizeofArrowDeviceArray = C.sizeof_struct_ArrowDeviceArray
)

// StoreCPointer stores p (a C pointer) at slot, in C memory that may hold
// anything, as an integer: a store of a pointer type would run the GC's
// write barrier on the slot's old garbage, which kills the process if it
// points into a freed Go object (docs/design.md, Export).
func StoreCPointer(slot, p unsafe.Pointer) {
	*(*uintptr)(slot) = uintptr(p)
}

// cSchema and schemaOf convert between cschema's ArrowSchema type, which
// the public API uses, and this package's cgo view of the same struct.
func cSchema(s *cschema.CArrowSchema) *C.struct_ArrowSchema {
	return (*C.struct_ArrowSchema)(unsafe.Pointer(s))
}

func schemaOf(c *C.struct_ArrowSchema) *cschema.CArrowSchema {
	return cschema.SchemaAt(unsafe.Pointer(c))
}

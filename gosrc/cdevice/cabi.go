// Package cdevice is a Go implementation of the Arrow C Data, C Stream and C
// Device Data interfaces: import and export of ArrowSchema, ArrowArray,
// ArrowDeviceArray, ArrowArrayStream and ArrowDeviceArrayStream.
//
// The central type is Array: an arrow.ArrayData whose buffers live on a
// device.Device, with the exact cschema.Schema it was described by. Imports never copy
// data: the buffers of an imported Array point into the producer's memory and
// the producer's release callback runs exactly once, synchronously, when the
// last reference to any part of it is released (Array.Release). Exports never
// copy data either: every export is an independent C struct tree that keeps
// the Go data alive until its consumer releases it, from any thread.
//
// The C structs are the canonical ones of arrow-c-abi.h; cschema.CArrowSchema and its
// siblings are aliases that other cgo packages can convert to with
// unsafe.Pointer. Callers of this package need no cgo themselves.
//
// Errors wrap errs.ErrInvalid (malformed input), errs.ErrNotImplemented, errs.ErrConsumed or
// a device error, so callers can classify them with errors.Is.
//
// # Async device streams
//
// In the async interface the consumer allocates an
// ArrowAsyncDeviceStreamHandler and the producer calls it: on_schema first
// (with handler->producer populated), on_next_task once per array the
// consumer asked for with ArrowAsyncProducer.request, on_next_task(NULL) at
// the end or on_error on failure, and release last. ExportAsyncDeviceStream
// serves any ArrayReader to any C handler: one goroutine makes every handler
// call, so they are strictly serialized, while request and cancel only record
// what the consumer asked and wake it, so they may be called from any thread,
// also from inside on_schema and on_next_task. NewAsyncReader is the other
// side: a C handler for any producer plus an AsyncReader (an ArrayReader)
// that requests as many arrays as its queue holds and one more for each it
// hands out. See ExampleExportAsyncDeviceStream.
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

// Package cboundary is a C producer and consumer of the Arrow C interfaces
// for the Go tests: structs built and read by C code, with counted releases,
// so that the tests cross a real C boundary (test files cannot use cgo).
package cboundary

/*
#cgo CFLAGS: -std=gnu11 -Wall -I${SRCDIR}/../../gosrc/include
#include <stdlib.h>
#include "cboundary.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/streams"
)

// Structs are allocated in C memory and freed with Free.
func NewSchema() *cschema.CArrowSchema {
	return cschema.SchemaAt(C.calloc(1, C.sizeof_struct_ArrowSchema))
}
func NewArray() *cdevice.CArrowArray { return cdevice.ArrayAt(C.calloc(1, C.sizeof_struct_ArrowArray)) }
func NewDeviceArray() *cdevice.CArrowDeviceArray {
	return cdevice.DeviceArrayAt(C.calloc(1, C.sizeof_struct_ArrowDeviceArray))
}
func NewStream() *streams.CArrowArrayStream {
	return streams.StreamAt(C.calloc(1, C.sizeof_struct_ArrowArrayStream))
}
func NewDeviceStream() *streams.CArrowDeviceArrayStream {
	return streams.DeviceStreamAt(C.calloc(1, C.sizeof_struct_ArrowDeviceArrayStream))
}

// Free frees a struct allocated here (it does not release it).
func Free[T any](p *T) { C.free(unsafe.Pointer(p)) }

func cs(s *cschema.CArrowSchema) *C.struct_ArrowSchema {
	return (*C.struct_ArrowSchema)(unsafe.Pointer(s))
}
func ca(a *cdevice.CArrowArray) *C.struct_ArrowArray {
	return (*C.struct_ArrowArray)(unsafe.Pointer(a))
}
func cda(a *cdevice.CArrowDeviceArray) *C.struct_ArrowDeviceArray {
	return (*C.struct_ArrowDeviceArray)(unsafe.Pointer(a))
}

// Releases returns how many release callbacks of structs produced here ran.
func Releases() int64 { return int64(C.cb_releases()) }

// ResetReleases zeroes the release counter.
func ResetReleases() { C.cb_reset_releases() }

// Producer names the C producers.
type Producer int

// The C producers.
const (
	Int32 Producer = iota
	Utf8
	Struct
	List
	Dictionary
	Decimal32
	// an empty batch whose buffers are dangling pointers (0x1, 0x4, 0x8), as
	// polars exports empty columns
	DanglingEmpty
)

// Produce fills s and a with the named C-built array.
func Produce(p Producer, s *cschema.CArrowSchema, a *cdevice.CArrowArray) {
	switch p {
	case Int32:
		C.cb_make_int32(cs(s), ca(a), 10, 0, 1)
	case Utf8:
		C.cb_make_utf8(cs(s), ca(a))
	case Struct:
		C.cb_make_struct(cs(s), ca(a))
	case List:
		C.cb_make_list(cs(s), ca(a))
	case Dictionary:
		C.cb_make_dictionary(cs(s), ca(a))
	case Decimal32:
		C.cb_make_decimal32(cs(s), ca(a))
	case DanglingEmpty:
		C.cb_make_dangling_empty(cs(s), ca(a))
	}
}

// ProduceInt32 fills an int32 array of n values 0..offset+n-1 starting at
// offset; every third value is null when withNulls.
func ProduceInt32(s *cschema.CArrowSchema, a *cdevice.CArrowArray, n, offset int64, withNulls bool) {
	nulls := 0
	if withNulls {
		nulls = 1
	}
	C.cb_make_int32(cs(s), ca(a), C.int64_t(n), C.int64_t(offset), C.int(nulls))
}

// ProduceDeviceInt32 fills a device array of 4 int32 with the given device fields.
func ProduceDeviceInt32(s *cschema.CArrowSchema, a *cdevice.CArrowDeviceArray, deviceType int32, deviceID int64, syncEvent unsafe.Pointer) {
	C.cb_make_device_int32(cs(s), cda(a), C.int32_t(deviceType), C.int64_t(deviceID), syncEvent)
}

// MalformedKinds is the number of malformed producers.
func MalformedKinds() int { return int(C.cb_malformed_count()) }

// ProduceMalformed fills a malformed int32 array of the given kind.
func ProduceMalformed(kind int, s *cschema.CArrowSchema, a *cdevice.CArrowArray) {
	C.cb_make_malformed(C.int(kind), cs(s), ca(a))
}

// ProduceStream fills a stream of n int32 batches failing at failAt (-1: never).
func ProduceStream(s *streams.CArrowArrayStream, n, failAt int, schemaFails bool) {
	f := 0
	if schemaFails {
		f = 1
	}
	C.cb_make_stream((*C.struct_ArrowArrayStream)(unsafe.Pointer(s)), C.int(n), C.int(failAt), C.int(f))
}

// GetSchema calls the stream's get_schema, as a consumer that looks at the
// schema before importing the stream (streams.ImportPeekedArrayStream).
func GetSchema(s *streams.CArrowArrayStream, out *cschema.CArrowSchema) int {
	return int(C.cb_get_schema((*C.struct_ArrowArrayStream)(unsafe.Pointer(s)), cs(out)))
}

// ProduceDeviceStream fills a device stream declaring one device type whose
// arrays carry another.
func ProduceDeviceStream(s *streams.CArrowDeviceArrayStream, declared, actual int32) {
	C.cb_make_device_stream((*C.struct_ArrowDeviceArrayStream)(unsafe.Pointer(s)), C.int32_t(declared), C.int32_t(actual))
}

// Walk checks a whole exported tree in C; it returns the number of nodes or
// an explanation.
func Walk(s *cschema.CArrowSchema, a *cdevice.CArrowDeviceArray) (int64, string) {
	var why [256]C.char
	n := int64(C.cb_walk(cs(s), cda(a), &why[0], C.int(len(why))))
	if n < 0 {
		return n, C.GoString(&why[0])
	}
	return n, ""
}

// SumInt32 reads an int32 array in C.
func SumInt32(a *cdevice.CArrowArray) int64 { return int64(C.cb_sum_int32(ca(a))) }

// MoveChild0AndRelease moves child 0 of parent into out and releases parent.
func MoveChild0AndRelease(parent, out *cdevice.CArrowArray) {
	C.cb_move_child0_and_release(ca(parent), ca(out))
}

// ConsumeStream reads a stream in C until its end and releases it.
func ConsumeStream(s *streams.CArrowArrayStream) (rows, batches int64, errno int, msg string) {
	var buf [256]C.char
	var b C.int64_t
	r := int64(C.cb_consume_stream((*C.struct_ArrowArrayStream)(unsafe.Pointer(s)), &buf[0], C.int(len(buf)), &b))
	if r < 0 {
		return 0, int64(b), int(-r), C.GoString(&buf[0])
	}
	return r, int64(b), 0, ""
}

// ConsumeDeviceStream reads a device stream in C until its end and releases it.
func ConsumeDeviceStream(s *streams.CArrowDeviceArrayStream) (rows, batches int64, errno int, msg string) {
	var buf [256]C.char
	var b C.int64_t
	r := int64(C.cb_consume_device_stream((*C.struct_ArrowDeviceArrayStream)(unsafe.Pointer(s)), &buf[0], C.int(len(buf)), &b))
	if r < 0 {
		return 0, int64(b), int(-r), C.GoString(&buf[0])
	}
	return r, int64(b), 0, ""
}

// ReleaseSchema and ReleaseArray call the release callback if set.
func ReleaseSchema(s *cschema.CArrowSchema) { C.cb_release_schema(cs(s)) }
func ReleaseArray(a *cdevice.CArrowArray)   { C.cb_release_array(ca(a)) }

// LeaveInFreedMemory mallocs blocks of size bytes, fills them with word and
// frees them, so that the next mallocs of that size (glibc hands freed
// blocks back first) return memory holding word: what a block looks like
// after it held, say, a released export's pinned Go pointers.
func LeaveInFreedMemory(size int, word uintptr, blocks int) {
	ps := make([]unsafe.Pointer, blocks)
	for i := range ps {
		ps[i] = C.malloc(C.size_t(size))
		w := unsafe.Slice((*uintptr)(ps[i]), size/int(unsafe.Sizeof(word)))
		for j := range w {
			w[j] = word
		}
	}
	for _, p := range ps {
		C.free(p)
	}
}

package cdevice

/*
#include "cdevice.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/handle"
)

// Held imports (held.c) are the C fast path of a CPU or CUDA import, used by the
// Python layer: a pass-through exchange never calls into Go. Go's part is to
// fill the held-schema table (every schema added to the import cache whose
// layouts the C gate knows) and to build an Array from a held import when Go
// code needs one.

// gateNodes returns the C gate's preorder view of s, or false when a node's
// layout is one the gate does not check (those imports take the Go path).
func gateNodes(s *Schema, out []C.gda_gate_node) ([]C.gda_gate_node, bool) {
	info := s.info
	n := C.gda_gate_node{
		n_buffers:  C.int32_t(info.BufferCount()),
		n_children: C.int64_t(len(s.Children)),
	}
	if s.Dictionary != nil {
		n.has_dictionary = 1
	}
	if info.HasValidity() {
		n.has_validity = 1
	}
	switch info.Layout {
	case LayoutNull:
		n.kind = C.GDA_GATE_NULL
	case LayoutBool:
		n.kind = C.GDA_GATE_BOOL
	case LayoutFixedWidth:
		n.kind, n.width = C.GDA_GATE_FIXED, C.int64_t(info.ByteWidth)
	case LayoutBinary:
		n.kind, n.width = C.GDA_GATE_BINARY, 4
	case LayoutLargeBinary:
		n.kind, n.width = C.GDA_GATE_BINARY, 8
	case LayoutList, LayoutMap:
		n.kind, n.width = C.GDA_GATE_LIST, 4
	case LayoutLargeList:
		n.kind, n.width = C.GDA_GATE_LIST, 8
	case LayoutFixedSizeList:
		n.kind, n.width = C.GDA_GATE_FIXED_LIST, C.int64_t(info.ListSize)
	case LayoutStruct:
		n.kind = C.GDA_GATE_STRUCT
	default:
		return out, false
	}
	if _, err := s.DataType(); err != nil {
		return out, false // the Go import would fail: let it say why
	}
	out = append(out, n)
	for _, c := range s.Children {
		var ok bool
		if out, ok = gateNodes(c, out); !ok {
			return out, false
		}
	}
	if s.Dictionary != nil {
		return gateNodes(s.Dictionary, out)
	}
	return out, true
}

// heldSchemas holds the Go Schema of each entry of the held-schema table,
// which is the schema import cache (schema_cache.go): the C entry keeps the
// handle, and tells us when it goes (godevarrowHeldSchemaDropped).
var heldSchemas handle.Table

// addHeldSchema adds s (imported from a tree of the given hash, its template
// built) to the held-schema table.
func addHeldSchema(hash uint64, s *Schema) {
	nodes, ok := gateNodes(s, nil)
	if !ok {
		nodes = nil // known, but its arrays take the Go import
	}
	isRecordBatch := C.int(0)
	if s.IsRecordBatch() {
		isRecordBatch = 1
	}
	h := heldSchemas.Put(s)
	if C.gda_held_schema_add(C.uint64_t(hash), C.uintptr_t(h), s.template, isRecordBatch, unsafe.SliceData(nodes), C.int64_t(len(nodes))) != 0 {
		heldSchemas.Delete(h) // not cached: the next import reads the schema again
	}
}

// heldSchema returns the Go Schema of a held-schema entry's handle.
func heldSchema(h C.uintptr_t) *Schema {
	v, ok := heldSchemas.Get(handle.Handle(h))
	if !ok {
		panic("cdevice: a held-schema entry outlived its Go Schema")
	}
	return v.(*Schema)
}

//export godevarrowHeldSchemaDropped
func godevarrowHeldSchemaDropped(h C.uintptr_t) {
	defer recoverInto(func(error) {})
	heldSchemas.Delete(handle.Handle(h))
}

// ImportHeld builds the Array of a held import (a gda_held record made by the
// C fast path). The Array takes its own reference on the record; the caller
// keeps its own.
func ImportHeld(held unsafe.Pointer) (*Array, error) {
	h := (*C.gda_held)(held)
	schema := heldSchema(C.gda_held_go_schema(h))
	C.gda_held_ref(h)
	owner := &foreignOwner{release: func() { C.gda_held_unref(h) }}
	return importOwned(C.gda_held_array(h), schema, owner)
}

// ReleaseHeld drops the reference to a held import that ImportDevicePair
// returned (Arrays built from it with ImportHeld keep their own).
func ReleaseHeld(held unsafe.Pointer) { C.gda_held_unref((*C.gda_held)(held)) }

// ImportDevicePair imports a foreign schema and device array: held in C
// (held != nil) when the held-schema table and its gate take them, else as an
// Array built by ImportDeviceArray. Both structs are consumed whatever the
// outcome: each release is called exactly once. For a CUDA array this waits
// on the device (ImportDeviceArray does too); a driver failure of that wait is
// returned as the driver's error.
func ImportDevicePair(schema *CArrowSchema, array *CArrowDeviceArray) (held unsafe.Pointer, a *Array, err error) {
	if schema == nil || array == nil {
		return nil, nil, errorf(ErrInvalid, "ArrowSchema or ArrowDeviceArray pointer is NULL")
	}
	releaseArray := func() {
		if array.array.release != nil {
			C.gda_call_array_release(&array.array)
			array.array.release = nil
		}
	}
	for cached := false; schema.release != nil && array.array.release != nil; cached = true {
		var h *C.gda_held
		var call *C.char
		var result C.int
		switch C.gda_held_import_device(schema, array, &h, &call, &result) {
		case 1:
			return unsafe.Pointer(h), nil, nil
		case -2:
			t := device.Type(array.device_type)
			C.gda_call_schema_release(schema)
			schema.release = nil
			releaseArray()
			return nil, nil, driverFailure(t, C.GoString(call), int(result))
		case 0:
			if !cached {
				if _, err := CopySchema(schema); err == nil {
					continue // now in the table: the gate gets its turn
				}
			}
		}
		break
	}
	s, err := ImportSchema(schema)
	if err != nil {
		releaseArray()
		return nil, nil, err
	}
	a, err = ImportDeviceArray(array, s)
	return nil, a, err
}

// driverFailure is the error of a driver call that the C gate made through
// the C vtable of device type t.
func driverFailure(t device.Type, call string, result int) error {
	b, err := device.BackendFor(t)
	if err != nil {
		return err
	}
	return b.CallFailure(call, result)
}

// HeldImportAccepts reports whether the C fast path of the Python layer would
// take the pair as a held import (schema cached and held, CPU array passing
// the checks ImportArray makes); it touches neither struct. For tests that
// hold the fast path to ImportArray.
func HeldImportAccepts(schema *CArrowSchema, array *CArrowArray) bool {
	return C.gda_held_accepts(schema, array) != 0
}

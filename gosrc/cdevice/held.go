package cdevice

/*
#include "gda.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// Held imports (held.c) are the C fast path of a CPU or CUDA import, used by the
// Python layer: a pass-through exchange never calls into Go. Go's part is to
// fill the held-schema table (every schema added to the import cache whose
// layouts the C gate knows) and to build an Array from a held import when Go
// code needs one.

func importHeld(held unsafe.Pointer) (*Array, error) {
	h := (*C.gda_held)(held)
	schema := cschema.HeldSchema(uintptr(C.gda_held_go_schema(h)))
	C.gda_held_ref(h)
	owner := &foreignOwner{release: func() { C.gda_held_unref(h) }}
	// a held import ordered on the caller's default stream (a DLPack
	// tensor's, gosrc/dlpack/hold.c): its event is put off, as WrapForeign
	// puts an import's off on that stream
	var lazy *lazyEvent
	if putOff := uintptr(C.gda_held_put_off_stream(h)); putOff != 0 {
		cell := C.gda_held_array(h)
		b, err := device.BackendFor(device.Type(cell.device_type))
		var s device.Stream
		ok := false
		if err == nil {
			s, ok = b.CallerDefaultStreamOf(int(cell.device_id))
		}
		if !ok || s.Handle() != putOff || !canPutOff(b, s) {
			C.gda_held_unref(h)
			return nil, errs.Errorf(errs.ErrInternal, "a held import is put off on stream %#x, which is not the default stream of %s", putOff, device.Device{Type: device.Type(cell.device_type), ID: int64(cell.device_id)})
		}
		lazy = &lazyEvent{b: b, s: s}
		owner.release = func() {
			lazy.free()
			C.gda_held_unref(h)
		}
	}
	a, err := importOwned(C.gda_held_array(h), schema, owner)
	if err == nil && lazy != nil {
		a.eventOn, a.lazy = lazy.s, lazy
	}
	return a, err
}

func releaseHeld(held unsafe.Pointer) { C.gda_held_unref((*C.gda_held)(held)) }

func importDevicePair(schema *cschema.CArrowSchema, array *CArrowDeviceArray) (held unsafe.Pointer, a *Array, err error) {
	if schema == nil || array == nil {
		return nil, nil, errs.Errorf(errs.ErrInvalid, "ArrowSchema or ArrowDeviceArray pointer is NULL")
	}
	cs := cSchema(schema)
	releaseArray := func() {
		if array.array.release != nil {
			C.gda_call_array_release(&array.array)
			array.array.release = nil
		}
	}
	for cached := false; cs.release != nil && array.array.release != nil; cached = true {
		var h *C.gda_held
		var call *C.char
		var result C.int
		switch C.gda_held_import_device(cs, array, &h, &call, &result) {
		case 1:
			return unsafe.Pointer(h), nil, nil
		case -2:
			t := device.Type(array.device_type)
			C.gda_call_schema_release(cs)
			cs.release = nil
			releaseArray()
			return nil, nil, driverFailure(t, C.GoString(call), int(result))
		case 0:
			if !cached {
				if _, err := cschema.CopySchema(schema); err == nil {
					continue // now in the table: the gate gets its turn
				}
			}
		}
		break
	}
	s, err := cschema.ImportSchema(schema)
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
func HeldImportAccepts(schema *cschema.CArrowSchema, array *CArrowArray) bool {
	return C.gda_held_accepts(cSchema(schema), array) != 0
}

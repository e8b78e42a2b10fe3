package main

// The array imports (import.c calls them): a pair through the Go import,
// a pair moved out of its capsules (device data, imported without the
// GIL), a held import's Go array built when Go code first needs it, and a
// schema read into the held-schema table.

/*
#include "module.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
)

//export gdaImportArray
func gdaImportArray(schemaPtr, arrayPtr unsafe.Pointer, isDevice C.int, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := cschema.ImportSchema(cschema.SchemaAt(schemaPtr))
		if err != nil {
			return err // the array stays with its capsule, which releases it
		}
		var a *cdevice.Array
		if isDevice != 0 {
			a, err = cdevice.ImportDeviceArray(cdevice.DeviceArrayAt(arrayPtr), s)
		} else {
			a, err = cdevice.ImportArray(cdevice.ArrayAt(arrayPtr), s)
		}
		if err == nil {
			newHandle(a, out)
		}
		return err
	})
}

// gdaImportDevicePair imports a pair moved out of its capsules (both
// consumed): held in C (*held) or as a Go array (*out).
//
//export gdaImportDevicePair
func gdaImportDevicePair(schemaPtr, arrayPtr unsafe.Pointer, held *unsafe.Pointer, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		h, a, err := cdevice.ImportDevicePair(cschema.SchemaAt(schemaPtr), cdevice.DeviceArrayAt(arrayPtr))
		if err == nil && a != nil {
			newHandle(a, out)
		}
		*held = h
		return err
	})
}

// gdaImportHeld builds the Go array of a held import (held.h) when Go code
// first needs it.
//
//export gdaImportHeld
func gdaImportHeld(held unsafe.Pointer, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := cdevice.ImportHeld(held)
		if err == nil {
			newHandle(a, out)
		}
		return err
	})
}

// gdaCacheSchema reads a schema into the held-schema table without consuming it.
//
//export gdaCacheSchema
func gdaCacheSchema(schemaPtr unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error {
		_, err := cschema.CopySchema(cschema.SchemaAt(schemaPtr))
		return err
	})
}
